/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * agent.h - the rmad agent's state: struct agent and the context structs
 * of its modules.  It declares no functions: each module's functions are
 * in its own header (am.h, completion.h, jobs.h, windows.h, mem.h,
 * rma.h, ctl.h, clients.h, pin.h), and doc/design.md maps them.
 *
 * One libevent loop thread owns everything here; nothing in this header
 * is touched by any other thread.  Shared-memory fields that clients
 * write are read through the checks in clients.c only.
 */
#ifndef RMAD_AGENT_H
#define RMAD_AGENT_H

#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <event2/event.h>

#include "boot.h"
#include "fabric.h"
#include "params.h"
#include "pool.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "rmad_wire.h"
#include "util.h"

struct agent;
struct agent_job;

/* Agent-private view of one client slot. */
struct agent_client {
	int fd;				/* the Unix socket; -1 if slot free */
	struct event *ev;
	pid_t pid;
	uid_t uid;
	uint32_t gen;
	int shares_core;		/* may run on the agent's core */
	uint32_t head;			/* private ring consumer position */
	int registered;
	int32_t rank;
	int32_t local_rank;
	struct agent_job *job;
	uint64_t bad_ops;		/* rejected submissions */
	int moved;			/* a wake is due at the pass's end */
	/*
	 * What this pass completed, published once at its end by
	 * completion_flush_wakeups: the elements given back (one push onto the
	 * client's list) and the counters' advances (one store each).
	 */
	struct rmad_pool_chain gb;
	uint32_t gb_cnt[RMAD_NCNT];
	uint64_t barrier_wait_op;	/* op index of a pending barrier + 1 */
	int32_t rma_err;		/* async RMA error with no epoch to
					 * report it in: the next sync's */
	int staged;			/* no in-place access to its memory */
	uint64_t accepted_ns;		/* connected (register_timeout_ms) */
};

/* Pending ping from a local client, keyed by cookie. */
struct agent_ping {
	uint32_t client;
	uint32_t gen;
	uint32_t op;
	uint64_t cookie;
	uint64_t t0;			/* sent at, for the timeout */
	int node;			/* the target rank's node */
	struct agent_ping *next;
};

/* One job (a PMIx namespace) that this agent serves. */
struct agent_job {
	int in_use;
	uint64_t key;			/* hash of nspace */
	char nspace[RMAD_NSPACE_MAX];
	int32_t size;			/* ranks in the job */
	int32_t local_size;		/* ranks expected on this node */
	int32_t nlocal;			/* registered and alive */
	int32_t nlocal_ever;		/* registered since the job began */
	int failed;			/* a rank died: barriers fail */
	uint64_t born_ns;		/* when this agent heard of it */
	/* rank -> node map, once every agent joined (runs sorted by rank) */
	struct rmad_am_rank_run *map;
	int32_t map_runs;
	int32_t map_filled;
	int map_ready;
	int joined;			/* our JOIN was sent */
	int join_wait;			/* ... waits for a root known alive */
	int root;			/* the node collecting the map: 0, or
					 * in a static mesh the lowest one up
					 * when this agent heard of the job */
	int root_held;			/* ... holds ranks of it (JOB_HELD) */
	int prev_root;			/* the one before, or -1 */
	/* root only: collecting joins */
	struct rmad_am_rank_run *jruns;
	int32_t jnruns, jcap, jranks;
	int32_t made_by;		/* the node whose JOIN made this entry
					 * (job_evict), + 1; 0: made here */
	/* barrier */
	uint64_t bar_epoch;		/* epoch now being collected */
	int32_t bar_local;		/* local arrivals for bar_epoch */
	int32_t bar_arrived[2];		/* root: agents arrived, by parity */
	int32_t job_nodes;		/* agents holding ranks of this job */
	int bar_root;			/* the lowest of them: the barrier's */
	/* once the map is ready, by node: JN_IN (holds ranks of the job),
	 * JN_ARRIVED << parity (root: its arrival for that epoch came) */
	uint8_t *node_bits;
	/* what liveness_watch was told: the root (-1: none), the map's nodes */
	int watched_root;
	int watched_map;
	/* windows.c: windows other nodes' joins made before a member here
	 * did (early), and by node the entries kept in them (nnodes) */
	int32_t win_early_all;
	int32_t *win_early;
	/* ranks whose process died (here, or as their node's JOB_FAIL
	 * said), sorted: O(deaths), never O(ranks) (jobs.c) */
	int32_t *dead;
	int32_t ndead, capdead;
};

struct agent_stats {
	uint64_t ops_done;
	uint64_t ops_bad;
	uint64_t pkts_sent[RMAD_AM_TYPE_MAX];
	uint64_t pkts_recv[RMAD_AM_TYPE_MAX];
	uint64_t pkts_dropped;
	uint64_t pkts_held;		/* kept behind a deferred one (am_held.c) */
	uint64_t wakeups;
	uint64_t sleeps;
	uint64_t clients_attached;
	uint64_t clients_died;
	uint64_t clients_refused;	/* not admitted, over quota, or
					 * never registered (clients.c) */
	uint64_t nodes_dead;		/* declared dead (heartbeats) */
	uint64_t nodes_suspect;		/* held suspect: no echo for
					 * heartbeat_timeout_ms (liveness.c) */
	uint64_t hb_gap_max_us;		/* longest wait for a node's next
					 * echo, of those that came */
	uint64_t tick_gap_max_us;	/* longest time between two runs
					 * of the agent's timer */
	uint64_t jobs_evicted;		/* failed to make room (jobs.c) */
	uint64_t acc_bulk;		/* accumulates applied in bulk */
	uint64_t aggr_msgs;		/* fabric messages of 2+ packets */
	uint64_t aggr_pkts;		/* the packets they carried */
	uint64_t typed_ops;		/* ops with a cached target type */
	uint64_t type_defs_sent;	/* TYPE_DEFs sent (cache fills) */
	uint64_t type_defs_recv;	/* TYPE_DEFs taken into the cache */
	uint64_t acc_pulls;		/* accumulate chunks read (fi_read)
					 * from their origins and applied
					 * (get-accumulate chunks too, once
					 * their results are written back) */
	uint64_t put_pulls;		/* ... put chunks, read and written
					 * to created or dynamic windows */
	uint64_t get_pushes;		/* get chunks read from created or
					 * dynamic windows and written
					 * (fi_write) into their origins */
	uint64_t xfer_inplace;		/* our chunks that the provider
					 * moved from or to the client's
					 * rmad_alloc_mem memory in place */
	uint64_t mem_kept;		/* such memory released while a
					 * transfer used it: kept mapped
					 * until it ended (mem.c) */
	uint64_t rt_lent;		/* SCHED_FIFO given up while busy */
	uint64_t wait_spins;		/* polls begun for sleeping clients */
	uint64_t wait_spins_lost;	/* ended: the core was taken */
	uint64_t wait_spins_raised;	/* ... found by the guard thread */
	uint32_t op_pool_hwm;
};


/* The active-message layer's handler table (am.c). */
typedef void (*am_handler_fn)(struct agent *a, const struct rmad_am_hdr *h,
			      const void *payload);
typedef void (*am_node_fn)(struct agent *a, int node);
#define AM_NODE_HOOKS	4

/* am.c: handlers by packet type, and what liveness.c knows of the other
 * nodes' liveness (heartbeats). */
struct am_ctx {
	am_handler_fn handler[RMAD_AM_TYPE_MAX];
	/* per node (liveness.c, hb_proof): our newest stamp it echoed (it
	 * lived then), our last heartbeat to it, and its newest stamp,
	 * which our heartbeats echo */
	uint64_t *last_rx, *last_tx, *echo;
	uint32_t *errs_seen;		/* per node: fabric send errors */
	/* per node (liveness.c, suspects): held suspect; until when an echo
	 * must come after send errors, and the proof it must beat; when
	 * to look for its agent on this host next; echoed once */
	uint8_t *suspect, *proved;
	uint64_t *err_until, *err_rx, *probe_next;
	uint64_t last_tick;
	/* a static mesh's idle nodes (liveness.c, am_busy): per node, the jobs
	 * of ours that need it (liveness_watch), until when a packet sent to it
	 * keeps it busy, until when a node that just became busy may take
	 * to answer, and whether it was busy at the last tick */
	uint32_t *watch_jobs;
	uint64_t *watch_until, *grace_until;
	uint8_t *busy, *used;		/* used: sent to since the last tick */
	uint64_t started_ns;
	uint8_t *dead;			/* per node: declared dead (a static
					 * mesh: not up) */
	int ndead;
	/* a static mesh (liveness.c): per node, our incarnation of what we hold
	 * about it, and the one of its we took (0: none) */
	uint64_t *mine, *theirs;
	am_node_fn node_dead[AM_NODE_HOOKS];
	int nnode_dead;
	/* node-level aggregation: packets for one node gathered into one
	 * fabric message until the end of the loop's pass (am_flush) */
	struct am_batch *batch;
	int nbatch;
	/* held packets (am_held.c): per node and window, in order */
	struct am_held *held;
	int in_handler;			/* a handler runs: am_defer may keep */
	int defer_now;			/* ... and it asked to */
	uint64_t handling_since;	/* that packet's first deferral */
};

/* One open aggregate (am_batch.c): whole packets bound for `node`, and for
 * each the per-window statistics to count it in (or NULL). */
#define AM_BATCHES	8
#define AM_BATCH_PKTS	128
struct am_batch {
	int node;			/* -1: free */
	uint32_t npkts;
	size_t len;
	struct rmad_stats *st[AM_BATCH_PKTS];
	uint8_t *buf;			/* am_buf_size bytes */
};

/*
 * The completion layer's private record of every op element (completion.c):
 * its owner (a client slot, or none when in the global pool), whether an
 * operation on it is in flight, what each client borrowed, and which
 * global elements are reserved to a client for a window's op pool (the
 * op_pool hint; not counted as borrowed, and always back to the client's
 * list while reserved, since the client sorts them by window).
 */
struct completion_ctx {
	uint16_t *op_owner;
	uint8_t *op_inflight;
	uint16_t *op_flags;		/* RMAD_OPF_* as submitted: the client
					 * cannot change them in flight */
	uint32_t *borrowed;		/* per client */
	uint8_t *op_resv;
	uint32_t *reserved;		/* per client */
	/*
	 * The global pool is a budget (agent->ngfree of op_pool_size);
	 * lending to client c hands it one of its own free lend slots,
	 * kept here per client (local indices).
	 */
	uint32_t **lend;		/* per client: free lend slots */
	uint32_t *nlend;
};

/* Barrier ops waiting for their epoch's release, per job slot (jobs.c). */
struct pending_bar;
struct jobs_ctx {
	struct pending_bar **bar_wait;
	int *bar_nwait;
};

struct agent_win;
struct win_joined;
struct rma_ctx;

/* Windows alive per user (windows.c: the max_windows quota). */
struct win_quota {
	uid_t uid;
	uint32_t n;
};

/*
 * The windows this agent serves (windows.c): a list of them all, a hash
 * by (job, key) for the lookups, and the window block of each, a number
 * the clients name it by in their ops.  Every table grows: only memory
 * (and max_windows, a quota per user) limits the windows.
 */
struct win_keep;
struct win_ctx {
	struct agent_win *wins;		/* doubly linked: next, prev */
	uint32_t nwins;
	struct agent_win **hash;	/* chains through hnext */
	uint32_t hmask;			/* buckets - 1 (0: no table yet) */
	uint64_t seed;			/* the hash's, random */
	struct agent_win **blocks;	/* by block, NULL where free */
	uint32_t nblocks;		/* its length */
	uint32_t bused;			/* blocks ever handed out */
	uint32_t *bfree;		/* freed blocks below bused */
	uint32_t nbfree;
	struct win_quota *quota;	/* users with windows here */
	int nquota, capquota;
	/* mappings of freed windows that were open to the fabric, kept
	 * until transfers still aimed at them have drained (windows.c) */
	struct win_keep *kept;
};

/* Client memory registered with the fabric, per client slot (mem.c). */
struct mem_region;
struct mem_ctx {
	struct mem_region **regions;
	int *nregions;
	struct mem_region *zombies;	/* gone but held by transfers */
};

/*
 * Upcalls from the jobs layer to the ones above it that own the state,
 * set by those at their init: jobs tell windows that a job failed or
 * ended (windows.c), and the RMA layer that a rank died (rma.c).
 */
struct job_hooks {
	void (*failed)(struct agent *a, struct agent_job *j);
	void (*freed)(struct agent *a, struct agent_job *j);
	/* rank of j died (here or on the node that says so): every
	 * operation on it ends */
	void (*rank_dead)(struct agent *a, struct agent_job *j,
			  int32_t rank);
};

/*
 * Upcalls from the windows layer (windows.c) to the modules above it,
 * its one hook: gone, fence and post are the RMA layer's (set by
 * agent_rma_init), ready is winsync.c's (the notices that came early).
 */
struct win_hooks {
	/* w is gone: the RMA layer's state for it goes too */
	void (*gone)(struct agent *a, struct agent_win *w);
	/* the fence barrier of w released (0) or failed */
	void (*fence)(struct agent *a, struct agent_win *w, int status);
	/* a post notice for a member of w came in */
	void (*post)(struct agent *a, struct agent_win *w);
	/* w became ready here (winsync.c: the notices that came before) */
	void (*ready)(struct agent *a, struct agent_win *w);
};

/* main.c, options.c: the command line, and the "one agent per place" lock. */
enum { PRINT_RUN_DIR = 1, PRINT_RANK_CPUS = 2, PRINT_VNODE_CORES = 4 };
struct main_ctx {
	char **set_args;		/* --set KEY=VALUE, applied again on
					 * every reload */
	int nset_args;
	int rank_cpus_agents;		/* --print-rank-cpus K */
	int vnode_cores_nodes;		/* --print-vnode-cores K */
	unsigned prints;		/* PRINT_*: what to print and exit */
	int lock_fd;			/* see take_agent_lock() */
	char pid_path[PATH_MAX];	/* agent[-K].pid, once written */
	uint64_t last_stats;		/* stats_interval_ms: last logged */
	/* --owner-pid: the launcher whose death stops the agent, and its
	 * start time (so that a reused pid is no owner) */
	int owner_pid;
	unsigned long long owner_start;
};

/* clients.c: the buffer of one control message from a client. */
struct clients_ctx {
	void *msg;
};

struct agent {
	struct rmad_params p;
	char conf_path[PATH_MAX];
	struct event_base *base;
	int stopping;
	int reload;
	int embedded;			/* started by a client; idle exit */
	int vnode;			/* -1: node's only agent */
	int mesh;			/* a static mesh (mesh.c): nodes come
					 * and go (liveness.c) */

	/* session and files */
	char session[64];
	char sdir[PATH_MAX];
	char sock_path[108];
	char lock_path[PATH_MAX];
	int listen_fd;
	struct event *listen_ev;

	/* shared memory: the header (sealed: read-only for clients), and
	 * every client's own segment, mapped at c * client_stride */
	int memfd;			/* the header */
	void *seg;			/* the client segments */
	size_t seg_size;		/* of the reservation */
	struct rmad_shm_hdr *hdr;	/* shared: only agent_flags is read */
	struct rmad_shm_hdr lay;	/* private copy of the layout: clients
					 * can write the shared header */
	uint32_t ngfree;		/* the global op pool's free budget */
	int doorbell;			/* eventfd */
	struct event *doorbell_ev;
	struct event *fab_ev;		/* the fabric's wait fd (fab_watch) */
	struct event *wake_ev;		/* a sleep's idle_poll_us timer */
	struct bell *bell;		/* bell.c: peers wake us (shm), or NULL */
	/* progress (loop.c): event-driven while the core is shared */
	int event_mode;
	int rt;				/* SCHED_FIFO now (rt_priority) */
	int rt_refused;			/* ... and the system said no */
	int rt_unsafe;			/* ... or a peer agent may share our
					 * core over shm (pin_core_peer) */
	int rt_lent;			/* SCHED_OTHER for now: busy too long
					 * (sched_busy, schedule.c) */
	uint64_t awake_since;		/* end of the last sleep */
	uint32_t rt_idle;		/* passes that found nothing to do
					 * and could not sleep */
	/* we poll, not sleep, until then (agent_expect_answer) */
	uint64_t expect_until;
	int nshare;			/* clients that may run on our core */
	int woke;			/* a client was woken since we looked */
	uint64_t woke_at;		/* when sched_idle_poll saw it */
	uint64_t ws_off_until;		/* no sched_idle_poll before then */
	uint64_t ws_off_ns;		/* the last such pause */
	uint64_t ws_prev;		/* while ws_idle: the last pass (loop.c) */
	uint64_t bell_next;		/* while polling: the doorbell's next
					 * read (doorbell_rung) */
	int ws_idle;			/* in SCHED_IDLE, polling (sched_idle_poll) */
	struct guard *guard;		/* guard.c: raises us if starved */
	uint32_t raised;		/* atomic, set by the guard thread: we
					 * run under SCHED_FIFO, rt says what
					 * not (sched_raise clears it) */
	int guard_failed;		/* ... no thread could start */

	/* clients and jobs */
	struct agent_client *cl;	/* max_clients */
	/* the registered slots, in no order: the loop's passes walk these,
	 * not all max_clients slots (clients.c) */
	uint32_t *live;			/* max_clients */
	uint32_t nlive;
	int nclients;
	int any_moved;			/* some client's moved is set */
	struct agent_job *jobs;		/* max_jobs */
	struct agent_ping *pings;
	uint64_t next_cookie;

	/* mesh */
	struct rmad_boot boot;
	struct rmad_fabric *fab;
	int node, nnodes;
	int core, ncores;
	cpu_set_t core_set;		/* its CPUs, when pinned (core >= 0) */
	char hostname[64];

	/* progress */
	uint64_t last_activity_ns;
	uint64_t idle_since_ns;		/* no clients since (embedded exit) */
	uint64_t shared_core_until;	/* spin by short sleeps until then */
	uint32_t spin_turns;		/* idle turns of the spin phase */
	struct event *tick_ev;
	struct event *sig_ev[3];
	struct agent_stats st;

	/* the modules' state */
	struct main_ctx m;
	struct clients_ctx clx;
	struct am_ctx am;
	struct completion_ctx cp;
	struct jobs_ctx jb;
	struct win_ctx wn;
	struct mem_ctx mm;
	struct job_hooks job_hooks;
	struct rma_ctx *rma;		/* rma.c */
	struct win_hooks win_hooks;
};

struct rma_lock;
struct rma_origin;

struct win_local {
	int32_t rank;			/* job rank */
	int32_t grank;
	uint32_t client, gen;
	int fd;
	void *base;			/* the agent's mapping: the control
					 * page, then the window unless
					 * created */
	void *data;			/* the window there, unless created */
	size_t map_len;
	int dead;			/* its process died (windows.c
					 * agent_win_member_dead) */
	int acc_stuck;			/* its acc_lock was held too long
					 * (rma_xfer.c acc_lock) */
	int status;			/* 0, or why it cannot take part
					 * (winmem.c): the window fails */
	int created;			/* rmad_win_create: the window is the
					 * client's memory at addr, reached
					 * with xfer_client_io (rma_xfer.c) */
	uint64_t addr;
	/* a dynamic window (dynwin.c): the regions attached, sorted by
	 * address, and their copy for same-node peers after the control
	 * page */
	int dynamic;
	struct rmad_dyn_region *reg;
	uint32_t nreg;
	struct rmad_win_dyn *pub;
	uint64_t size;
	int32_t disp_unit;
	int waiting;			/* a reply is owed (create or free) */
	int freeing;
	int fencing;			/* arrived at the fence barrier */
	/* post notices from targets on other nodes, not yet matched by a
	 * start: their ranks (at most one per target, so <= gsize) */
	int32_t *posts;
	int32_t nposts, capposts;
	struct rma_lock *lk;		/* remote lock requests (rma.c) */
	struct rmad_fabric_mr *mr;	/* the window, open to fi_write/read */
	uint64_t mr_key, mr_addr;
	uint8_t fab_open;		/* it was: transfers may still land in
					 * the mapping after mr closed, which
					 * is kept a while (windows.c) */
};

/* Where a member's window is open to fi_write/fi_read. */
struct win_rkey {
	uint64_t key;
	uint64_t addr;			/* of displacement 0 */
	int ok;
};

/* A post or complete notice of a window (winsync.c): its type
 * (RMAD_AM_WIN_POST or _COMPLETE), its sender and its ranks. */
struct winsync_notice {
	uint8_t type;
	uint32_t node;
	int32_t origin, target;
};

struct agent_win {
	struct agent_win *next, *prev;	/* win_ctx.wins */
	struct agent_win *hnext;	/* win_ctx.hash */
	struct agent_job *job;
	uint64_t key;
	int32_t gsize;
	int32_t *granks;		/* group ranks, NULL for all or unknown */
	int all;
	int32_t nlocal;			/* expected members on this node */
	int32_t nhere;			/* arrived */
	struct win_local *local;
	int dynamic;			/* displacements are addresses */
	int root;			/* node collecting the table */
	/* the table, once per node */
	struct rmad_am_win_member *meta;
	int32_t nmeta;			/* entries filled */
	/* entries nodes joined with before the group was known here
	 * (windows.c: joined_keep), by node */
	struct win_joined *joined;
	int32_t njoined;
	int uniform;
	uint64_t usize;
	int32_t udisp;
	int ready;
	int block;			/* window block, -1 until ready */
	int failed;
	int joined_first;		/* counted in job->win_early_all: made
					 * by a join, no member here yet */
	int charged;			/* counted in uid's quota */
	int quota_err;			/* ... or over it: RMAD_ERR_NOMEM */
	uid_t uid;
	/* root only */
	int *nodes;			/* member nodes that joined */
	int nnodes;
	int free_arrived;
	uint8_t *free_from;		/* root: member nodes freed, by index */
	int nfreeing;
	/* the fence barrier: local arrivals, the epoch, and (root only)
	 * the member nodes arrived, by the epoch's parity */
	int32_t fence_here;
	uint32_t fence_epoch;
	int fence_arrived[2];
	uint64_t fence_sent, fence_recv;	/* packets, not to ourselves */
	uint32_t *fence_from;		/* root: last epoch + 1 by member node */
	uint64_t pscw_sent, pscw_recv;	/* post and complete notices */
	/* notices that came before the window was ready here (a peer's
	 * READY and its post travel on different channels): kept, and
	 * taken when it is */
	struct winsync_notice *early;
	int32_t nearly, capearly;
	/* rma.c: origin state of each local client that used it, and the
	 * list of the windows that have some (rma_ctx.owins) */
	struct rma_origin *origins;
	struct agent_win *onext, *oprev;
	int meta_fd;			/* memfd with the sorted table, or -1 */
	/* rmad_win_allocate_shared: the node's memfd (the members' control
	 * pages, then their memory in group order), mapped here */
	int shared, noncontig;
	int sfd;
	void *smap;
	size_t slen;
	struct rmad_win_meta *sorted;	/* that table, NULL when "all, uniform" */
	struct win_rkey *rkeys;		/* like sorted (or by rank), or NULL */
};

/*
 * 1 if node was declared dead (liveness.c; a static mesh: it is not up):
 * sends to it fail (am.c) and its open aggregate is not sent
 * (am_batch.c).  Here, below both, since liveness.c writes the table
 * they read.
 */
static inline int am_node_dead(const struct agent *a, int node)
{
	return a->am.dead && node >= 0 && node < a->nnodes &&
	       a->am.dead[node];
}

/* Every module may note that work came in: the loop spins on a while. */
static inline void agent_note_activity(struct agent *a)
{
	a->last_activity_ns = rmad_now_ns();
}

/*
 * We sent another node a request that it answers.  While event-driven
 * under SCHED_FIFO, the agent polls for answer_spin_us from then on
 * rather than sleep (agent_answer_due): the answer finds it awake, and
 * so does the client's next operation, which its answer set free; each
 * saves a wakeup.
 */
static inline void agent_expect_answer(struct agent *a)
{
	if (a->rt && a->p.answer_spin_us)
		a->expect_until = rmad_now_ns() +
				  (uint64_t)a->p.answer_spin_us * 1000;
}

static inline int agent_answer_due(const struct agent *a, uint64_t now)
{
	return a->rt && now < a->expect_until;
}

/*
 * Wait a moment for another process: sched_yield() under SCHED_OTHER;
 * a short sleep (agent_nap) under SCHED_FIFO (rt_priority), where
 * sched_yield() gives the core to no process of the normal class, such
 * as the client that holds what we wait for.
 */
static inline void agent_nap(void)
{
	struct timespec ts = { 0, 20000 };

	nanosleep(&ts, NULL);
}

static inline void agent_yield(const struct agent *a)
{
	if (a->rt || __atomic_load_n(&a->raised, __ATOMIC_RELAXED))
		agent_nap();
	else
		sched_yield();
}

#endif
