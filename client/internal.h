/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - librmad's private state: the bootstrap view of the job
 * and the attachment to the node's agent.
 */
#ifndef RMAD_CLIENT_INTERNAL_H
#define RMAD_CLIENT_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include "atomics.h"
#include "hints.h"
#include "params.h"
#include "handle.h"
#include "mpi_api.h"
#include "rmad.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "util.h"

/* What the launcher (or its absence) tells us about the job. */
struct rmad_bootinfo {
	int rank, size;
	int local_rank, local_size;
	int vnodes;			/* >0: virtual nodes, agent per vnode */
	int vnode;			/* our vnode, -1 when not vnodes */
	int pmix;			/* PMIx_Init succeeded */
	int singleton;			/* no launcher */
	const struct rmad_boot_backend *be;	/* who told us (boot.h) */
	char nspace[RMAD_NSPACE_MAX];
	char session[64];		/* "" until chosen */
	int session_given;		/* from RMAD_SESSION */
};

struct rmad_win_s;

struct rmad_client {
	int initialized;
	struct rmad_params p;
	struct rmad_bootinfo b;
	int sock;
	int doorbell;
	uint32_t rung_epoch;	/* the agent's sleep_epoch we last rang in */
	void *seg;
	size_t seg_size;
	const struct rmad_shm_hdr *hdr;	/* read-only: sealed by the agent */
	struct rmad_shm_client *me;
	uint32_t slot;
	struct rmad_ctl_register_reply reg;
	pthread_mutex_t sync_lock;	/* serializes sync tickets */
	uint64_t sync_issued;		/* tickets handed out */
	uint64_t barrier_epoch;
	/*
	 * Window op pools (the op_pool hint): op_home[i] is the window
	 * that element i is reserved to, NULL for the rest.  Allocated at
	 * the first reservation; pool_lock guards it and every window's
	 * stash.  nresv_wins: windows holding a reservation; while 0,
	 * allocation needs neither.
	 */
	pthread_mutex_t pool_lock;
	struct rmad_win_s **op_home;
	int nresv_wins;
	int dead;			/* the agent is gone */
	int staged;			/* the agent cannot reach our memory:
					 * remote ops on it go through the
					 * staging area, one at a time */
};

extern struct rmad_client rmad_cl;

#define WIN_MAGIC	0x77696e64u	/* "wind" */

/* A same-node member of a window: its memory, mapped here. */
struct win_peer {
	int rank;
	int disp_unit;
	size_t size;
	void *base;			/* the window (after the control page) */
	struct rmad_win_ctl *ctl;	/* its control page: the lock word */
	size_t map_size;		/* 0: our own mapping */
	uint8_t locked;			/* our lock on it: 0, SHARED, EXCL */
	/* a created window (peer.c): accumulates take ctl->acc_lock; a
	 * peer's memory is not mapped here (base NULL) but reached at addr
	 * in process pid with process_vm_readv/writev */
	uint8_t created;
	pid_t pid;
	uint64_t addr;
	/* a dynamic window: the regions it attached, as its agent
	 * publishes them (the displacement is then an address) */
	struct rmad_win_dyn *dyn;
};

/* Did the peer's process die?  Its agent says so in its control page
 * (acquire: after what the agent released for it), and every access
 * and synchronization on it then fails with RMAD_ERR_PROC_FAILED: its
 * memory, mapped here, would take our loads and stores regardless. */
static inline int rmad_peer_dead(const struct win_peer *p)
{
	return p->ctl && __atomic_load_n(&p->ctl->dead, __ATOMIC_ACQUIRE);
}

/* A dynamic window's displacements are addresses below this. */
#define RMAD_DYN_SPAN	(1ull << 57)

/* peer.c: same-node data movement, in place or across processes. */
int rmad_peer_put(struct win_peer *p, uint64_t off, const void *src,
		  size_t len);
int rmad_peer_get(struct win_peer *p, uint64_t off, void *dst, size_t len);
int rmad_peer_acc(struct win_peer *p, uint64_t off, const void *origin,
		  void *result, uint32_t dt, uint32_t op, uint64_t count);
int rmad_peer_cas(struct win_peer *p, uint64_t off, const void *origin,
		  const void *compare, void *result, uint32_t dt);
/* One run of a derived op on a created or dynamic window (peer.c). */
struct rmad_peer_run {
	uint64_t off;			/* in the window */
	uint64_t len;
	const void *src;		/* data in (put, accumulate) or NULL */
	void *dst;			/* data out (get, get_accumulate) */
	uint32_t basic;
};
/* The n runs of one put, get or accumulate (opc) on a created or
 * dynamic window, as rmad_peer_put/get/acc would do each, batched: a
 * peer's memory in one process_vm_readv/writev per PEER_RUNS runs, an
 * accumulate's runs under one acc_lock per batch. */
int rmad_peer_runs(struct win_peer *p, uint16_t opc, uint32_t op,
		   const struct rmad_peer_run *r, size_t n);

/* Epochs of this process on one window (rma.c). */
enum { EPOCH_NONE = 0, EPOCH_LOCK = 1, EPOCH_LOCK_ALL = 2, EPOCH_FENCE = 3,
       EPOCH_PSCW = 4 /* a start's access epoch */ };

struct rmad_win_s {
	uint32_t magic;
	struct rmad_win_s *next, *prev;	/* win.c's list (rmad_ctl_lock) */
	int listed;			/* ... on it (rmad_ctl_lock) */
	uint64_t key;
	uint32_t block;
	int gsize;
	int uniform;
	void *base;
	struct rmad_win_ctl *ctl;	/* our control page, map_size mapped
					 * there (and the window behind it
					 * unless created) */
	size_t size, map_size;
	void *smap;			/* a shared window: the node's memfd */
	size_t slen;
	int disp_unit;
	struct rmad_hints hints;
	int flavor;			/* RMAD_WIN_FLAVOR_* */
	int32_t *granks;		/* its group's ranks; NULL: GROUP_ALL */
	char name[RMAD_MAX_OBJECT_NAME];	/* under rmad_cl.pool_lock */
	int npeers;
	struct win_peer *peers;
	int last_peer;			/* lookup cache */
	/* the node's table: two numbers, or a sorted table (mapped) */
	uint64_t usize;
	int udisp;
	const struct rmad_win_meta *meta;
	size_t meta_len;
	/* epochs (rma.c); O(locks held), never O(ranks) */
	int epoch;
	int lockall_nocheck;
	int32_t *rlocks;		/* remote targets locked */
	int nrlocks, caprlocks;
	int nlocal_locks;
	int remote_members;		/* members on other nodes exist */
	/* remote ops posted, ever (atomic), and how many of them the last
	 * flush_all or epoch end covered: equal means nothing to flush */
	uint64_t remote_posted, remote_flushed;
	int agent_epoch;		/* the agent knows of an epoch */
	/* post/start/complete/wait (pscw.c): the exposure epoch's origin
	 * count, and the access epoch's targets (sorted), O(the groups) */
	int exposed, post_n;
	int32_t *acc;
	int nacc, acc_remote;
	int fence_moved;		/* an op since the last fence (atomic) */
	int fence_seq;			/* in a sequence of fences: the last
					 * opened an epoch (no NOSUCCEED, no
					 * error); a lock epoch after it does
					 * not end it, so that every member
					 * closes at the next fence alike */
	/* its op pool (submit.c), under rmad_cl.pool_lock */
	uint32_t *stash;		/* free reserved elements */
	uint32_t nstash;
	uint32_t nresv;			/* elements reserved to it */
	/*
	 * rmad_win_stats: this process's counters.  Operations and flushes
	 * may come from several threads, so every update is a relaxed
	 * atomic add: each counter is exact on its own, and nothing else
	 * is ordered by it.
	 */
	uint64_t st_ops_posted;		/* calls that returned 0 */
	uint64_t st_ops_local;		/* done in place, same node */
	uint64_t st_ops_remote;		/* handed to the agent */
	uint64_t st_sync_calls;
	uint64_t st_sync_wait_ns;
};

/*
 * win.c: the window of an API handle, or NULL for a garbage, freed or
 * foreign handle (handle.h).  Inside librmad an rmad_win_t is the
 * window's address; only the API's handles are table slots.
 */
extern struct handle_table rmad_win_handles;
static inline rmad_win_t rmad_win_get(rmad_win_t handle)
{
	return handle_get(&rmad_win_handles, (uintptr_t)handle);
}

/* A live window (from rmad_win_get), or NULL */
static inline int rmad_win_ok(rmad_win_t w)
{
	return w && __atomic_load_n(&w->magic, __ATOMIC_RELAXED) == WIN_MAGIC;
}
int rmad_win_target(rmad_win_t w, int rank, struct win_peer **peer,
		    uint64_t *size, int *disp_unit);
/* win.c: w (readable: a window, or one in win.c's grave) is on the list
 * of live windows */
int rmad_win_live(rmad_win_t w);
/* a shared window whose members' memory is not contiguous */
static inline int rmad_win_noncontig(rmad_win_t w)
{
	return w->flavor == RMAD_WIN_FLAVOR_SHARED &&
	       w->hints.alloc_shared_noncontig;
}
void rmad_win_kick(struct rmad_client *c);
/* lock.c: the lock (or fence) fields of an element that opens an epoch:
 * the type, the assert bits and the window's hints for the agent */
void rmad_lock_fields(rmad_win_t w, int type, int assert,
		      struct rmad_op_lock *l);
/* lock.c: a fence sequence that moved nothing ends (RMAD_ERR_SYNC if it
 * moved something: that epoch is still open) */
int rmad_leave_fence(rmad_win_t w);
/* flush.c: every remote op posted so far is complete (no flush needed) */
void flushed_upto_all(rmad_win_t win);

/*
 * A counter of rmad_win_stats: a relaxed load and store, not an atomic
 * add, which would cost more than the same-node operations it counts.
 * Threads that post at the same moment may lose a count.
 */
static inline void rmad_win_count(uint64_t *ctr, uint64_t n)
{
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/*
 * What the one-sided files share: rma.c (the checks and the data ops),
 * rma_post.c (ops handed to the agent), lock.c (lock epochs) and
 * flush.c (flushes, and what the synchronization calls have in common).
 */
/* the target of a data op, as rma.c's check found it */
struct tref {
	struct win_peer *p;		/* same node, or NULL */
	uint64_t off;			/* bytes into the target's window */
	size_t len, es;
	uint32_t dt;
	int du;				/* the target's disp_unit (1 when
					 * tbytes) */
	int tbytes;			/* tdisp is in bytes: a piece of a
					 * derived type (RMAD_OPF_TBYTES) */
};
/* target RMAD_PROC_NULL: nothing to do, on a live window */
static inline int rmad_proc_null_w(rmad_win_t win)
{
	return rmad_win_ok(win) ? 0 : RMAD_ERR_ARG;
}

static inline int rmad_proc_null(rmad_win_t handle)
{
	return rmad_proc_null_w(rmad_win_get(handle));
}

/* lock.c's list of the remote targets w has locked: rank's place, or -1 */
static inline int rmad_rlock_find(const struct rmad_win_s *w, int rank)
{
	for (int i = 0; i < w->nrlocks; i++)
		if (w->rlocks[i] == rank)
			return i;
	return -1;
}

/*
 * Count a data operation that returned 0 for rmad_win_stats: in kind
 * (ops_local, ops_remote) too unless it moved nothing (count 0).
 */
static inline int rmad_count_op(rmad_win_t w, uint64_t *kind)
{
	if (w->epoch == EPOCH_FENCE &&
	    !__atomic_load_n(&w->fence_moved, __ATOMIC_RELAXED))
		__atomic_store_n(&w->fence_moved, 1, __ATOMIC_RELAXED);
	rmad_win_count(&w->st_ops_posted, 1);
	if (kind)
		rmad_win_count(kind, 1);
	return 0;
}

/* rma_post.c: hand an operation on a target of another node to the
 * agent (r NULL: no data op); rq, when not NULL, tracks it */
int rmad_post(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
	      int count, const struct tref *r, uint32_t op,
	      const void *origin, const void *cmp, void *result,
	      struct rmad_request_s *rq);
/* rma_post.c: a cleared element of ours for a synchronization op opc of
 * window w to target (the caller sets the rest, then submits it) */
int rmad_elem_new(rmad_win_t w, uint16_t opc, int target, uint32_t *idx,
		  struct rmad_op_elem **out);
/* flush.c: remote_flushed = max(remote_flushed, posted), against other
 * threads */
void rmad_flushed_upto(rmad_win_t win, uint64_t posted);
/* flush.c: a sync element for the agent, its answer waited for (and
 * the wait timed for rmad_win_stats) */
int rmad_agent_sync(rmad_win_t w, uint16_t opc, int target);
/* flush.c: a synchronization call's window: live, and rmad_init done */
int rmad_epoch_args(rmad_win_t win);
/* flush.c: count a public synchronization call for rmad_win_stats, as
 * long as w is a live window; returns err */
int rmad_sync_timed(rmad_win_t w, int err);

/* mem.c: may the agent read our memory in place?  Sets c->staged. */
int rmad_stage_probe(struct rmad_client *c);
/* mem.c: does [p, p + len) lie in rmad_alloc_mem memory? */
int rmad_mem_shared(const void *p, size_t len);

/*
 * ctl.c: the control socket.  rmad_ctl_lock: one request at a time on
 * it (it also guards win.c's list of windows and mem.c's regions).
 * rmad_ctl_recv: one message, waited for until the agent is gone;
 * rmad_ctl_reply_fd: the WIN_REPLY for key, with its descriptor in *fd
 * (NULL: none wanted; -1 when none came), its status;
 * rmad_ctl_call: send m (with fd unless -1) and wait for that reply,
 * under rmad_ctl_lock; rmad_ctl_request: the same, taking the lock.
 */
extern pthread_mutex_t rmad_ctl_lock;
long rmad_ctl_recv(struct rmad_client *c, void *buf, size_t len, int *fds,
		   int *nfds);
int rmad_ctl_reply_fd(struct rmad_client *c, uint64_t key,
		      struct rmad_ctl_win_reply *r, int *fd);
int rmad_ctl_reply(struct rmad_client *c, uint64_t key,
		   struct rmad_ctl_win_reply *r);
int rmad_ctl_call(struct rmad_client *c, const void *m, size_t len, int fd,
		  uint64_t key);
int rmad_ctl_request(const void *m, size_t len, uint64_t key);

/* submit.c: one op through the staging area, waited for: in (inlen
 * bytes) is copied to offset 0, the op's result (outlen bytes at offset
 * off) back to out. */
int rmad_staged_op(struct rmad_client *c, rmad_win_t w,
		   struct rmad_op_elem *t,
		   const void *in, size_t inlen, void *out, size_t outlen,
		   uint64_t off);

/*
 * request.c: request-based operations.  A request whose op went to the
 * agent keeps that op's element (KEEP) until the agent wrote its status
 * there (<= 0; RMAD_REQ_PENDING until then); completions are seen
 * through the client's RMAD_CNT_LOCAL counter, one futex for them all.
 */
#define RMAD_REQ_PENDING	1
struct rmad_request_s;
/* before an op element is taken for a request: at most REQ_KEEP_MAX
 * elements are held by requests (completed ones are reaped first) */
int rmad_req_room(struct rmad_client *c);
/* the op of rq went to the agent in element idx */
/* A request of the library's own, waited for (and freed) in the call
 * that made it: its op's status. */
struct rmad_request_s *rmad_req_internal(void);
int rmad_req_wait_internal(struct rmad_request_s *rq);
/* rq keeps tmp (freed) and ty (released) until its op completes; an
 * orphan is freed then too, with nobody waiting for it */
struct rmad_type_s;
void rmad_req_hold(struct rmad_request_s *rq, void *tmp,
		   struct rmad_type_s *ty, int orphan);
void rmad_req_track(struct rmad_client *c, struct rmad_request_s *rq,
		    uint32_t idx);
/* the entries librmad-mpi calls (rmad_put_req ... rmad_win_resolve): in
 * mpi_api.h, included above */

/*
 * types.c: what the operations need of a datatype.  A run is bytes
 * [off, off + len) of one basic type; rmad_type_runs() gives the merged
 * runs of `count` copies of a committed type laid out from offset 0 (at
 * most RMAD_TRUNS_MAX, else RMAD_ERR_NOMEM), malloc'd, their total
 * bytes and their lowest and highest byte.  rmad_type_check(): 0 for a
 * predefined or committed derived type, RMAD_ERR_TYPE otherwise.
 */
struct rmad_trun {
	int64_t off;
	uint64_t len;
	uint32_t basic;
};
#define RMAD_TRUNS_MAX	(1u << 22)
int rmad_type_check(rmad_datatype_t type);
int rmad_type_runs(rmad_datatype_t type, int count, struct rmad_trun **out,
		   size_t *n, uint64_t *nbytes, int64_t *lo, int64_t *hi);

/*
 * types.c: a committed derived type's tree (shared/dtree.h), held for
 * the caller (rmad_type_release), or NULL for a predefined type, an
 * uncommitted one, or one whose tree cannot be made.  rmad_tree_of()
 * gives the parsed tree and the wire form.
 */
struct dtree;
struct rmad_type_s *rmad_type_tree(rmad_datatype_t type);
const struct dtree *rmad_tree_of(const struct rmad_type_s *t,
				 const uint8_t **blob, size_t *len);
void rmad_type_release(struct rmad_type_s *t);

/* rma_derived.c: an op with a derived type anywhere */
int rmad_derived_op(rmad_win_t w, uint16_t opc, const void *origin,
		    int ocount, rmad_datatype_t otype, void *result,
		    int rcount, rmad_datatype_t rtype, int target,
		    size_t tdisp, int tcount, rmad_datatype_t ttype,
		    uint32_t op, struct rmad_request_s *rq);
/* rma_post.c and rma.c, for rma_derived.c */
int rmad_post_piece(rmad_win_t w, uint16_t opc, int target, uint64_t toff,
		    uint32_t dt, uint64_t len, uint32_t op, const void *origin,
		    void *result);
int rmad_covered(rmad_win_t w, int rank, struct win_peer *p);
/* count an op: local 1 (in place), 0 (to the agent), -1 (moved nothing) */
int rmad_counted(rmad_win_t w, int local);
int rmad_post_marker(rmad_win_t w, int target, struct rmad_request_s *rq);
/*
 * One op whose target layout is a derived type (RMAD_OPF_TTYPE): origin
 * and result packed, the type's wire form at blob.  With rq NULL it
 * waits until the op is complete at the origin; otherwise rq tracks the
 * op (rmad_req_hold: what it keeps).  0 or RMAD_ERR_*.
 */
int rmad_post_typed(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
		    int tcount, uint32_t op, const void *origin, void *result,
		    const uint8_t *blob, size_t blob_len,
		    struct rmad_request_s *rq);

/* group.c: the order of ints (ranks), for qsort and bsearch */
int rmad_cmp_int(const void *a, const void *b);
/* pscw.c: is rank a target of w's access epoch (its start's group)? */
int rmad_pscw_covers(rmad_win_t w, int rank);

/* group.c: member count (RMAD_ERR_ARG for a dead handle), i-th member */
int rmad_group_members(rmad_group_t g, int *n);
int rmad_group_rank(rmad_group_t g, int i);
uint64_t rmad_group_hash(rmad_group_t g);

/* boot.c */
int rmad_boot_client(struct rmad_bootinfo *b);
void rmad_boot_client_fini(struct rmad_bootinfo *b);

/* attach.c */
int rmad_attach(struct rmad_client *c);
void rmad_detach(struct rmad_client *c);
/* 0 while the agent is there; RMAD_ERR_AGENT once it is gone (a
 * rmad_counter_wait abort callback: "stop waiting if the agent is gone") */
int rmad_agent_gone(void *arg);

/* How long a waiter spins before it sleeps: client_spin_us, or not at
 * all while the agent runs event-driven (RMAD_AGENT_EVENT: it shares a
 * core with clients, and a spinning waiter would hold the core that the
 * work it waits for needs). */
static inline long rmad_spin_us(const struct rmad_client *c)
{
	return (__atomic_load_n(&c->hdr->agent_flags, __ATOMIC_RELAXED) &
		RMAD_AGENT_EVENT) ? 0 : c->p.client_spin_us;
}

/*
 * rmad_wait_spin(c, t0, n): 1 to spin on at turn n of a wait begun at
 * t0 that the agent may end, for rmad_spin_us.
 */
static inline int rmad_wait_spin(const struct rmad_client *c, uint64_t t0,
				 unsigned int n)
{
	/* the clock once every 64 turns */
	if ((n & 63) || rmad_now_ns() - t0 < (uint64_t)rmad_spin_us(c) * 1000) {
		caa_cpu_relax();
		return 1;
	}
	return 0;
}

/*
 * A wait for other clients of this node, not for the agent (a same-node
 * fence's barrier, a PSCW word): it spins client_spin_us in either mode,
 * since no agent's work is held up by it, and while the agent is
 * event-driven (clients may share cores) it gives the core away
 * (sched_yield) once every PEER_YIELD_TURNS turns, half a microsecond
 * of pauses, so that a member on the same core can arrive.  A yield on
 * every turn cost a member on another core a system call (1 us on a
 * virtual machine) between two looks at the word: a same-node PSCW
 * epoch took 2.2 us, twice Open MPI's.
 * rmad_peer_spin(c, t0, n): 1 to spin on at turn n of a wait begun at
 * t0.
 */
#define PEER_YIELD_TURNS	16
static inline int rmad_peer_spin(const struct rmad_client *c, uint64_t t0,
				 unsigned int n)
{
	uint64_t spin_ns = (uint64_t)c->p.client_spin_us * 1000;

	if (__atomic_load_n(&c->hdr->agent_flags, __ATOMIC_RELAXED) &
	    RMAD_AGENT_EVENT) {
		if (n % PEER_YIELD_TURNS) {
			caa_cpu_relax();
			return 1;
		}
		if (rmad_now_ns() - t0 >= spin_ns)
			return 0;
		sched_yield();
		return 1;
	}
	return rmad_wait_spin(c, t0, n);
}

/* submit.c: an element for an op on window w (NULL: on none) */
int rmad_op_alloc(struct rmad_client *c, rmad_win_t w, uint32_t *idx);
/*
 * submit.c: the one routine that fills in an op element of ours for the
 * agent: element idx gets t's fields from its opcode on (t NULL: zeros),
 * all but the link (see rmad_op_alloc), up to its inline area
 * (RMAD_OPFILL_HEAD) or through it (RMAD_OPFILL_WHOLE), and our slot
 * and generation as its owner.  The caller sets the rest, then submits.
 */
#define RMAD_OPFILL_HEAD	0
#define RMAD_OPFILL_WHOLE	1
struct rmad_op_elem *rmad_op_fill(struct rmad_client *c, uint32_t idx,
				  const struct rmad_op_elem *t, int whole);
void rmad_op_free(struct rmad_client *c, uint32_t idx);
int rmad_op_submit(struct rmad_client *c, uint32_t idx);
/* Submit a KEEP|SYNC op and wait for its status. */
int rmad_sync_op(struct rmad_client *c, uint16_t opcode, int32_t target,
		 uint64_t ticket);
/* Submit a prepared KEEP|SYNC element (fields after `owner_gen` are
 * taken from t) and wait for its status. */
int rmad_sync_elem(struct rmad_client *c, rmad_win_t w,
		   const struct rmad_op_elem *t);
/* Submit a copy of t (all but its link) that nobody waits for: the agent
 * frees it, and its error, if any, is the epoch's, for the next sync. */
int rmad_async_elem(struct rmad_client *c, rmad_win_t w,
		    const struct rmad_op_elem *t);
/* Window op pools: reserve want elements for w (fewer is no error), and
 * give them all back when it is freed. */
int rmad_op_pool_reserve(struct rmad_client *c, rmad_win_t w, long want);
void rmad_op_pool_return(struct rmad_client *c, rmad_win_t w);

/*
 * An op element goes from one thread of ours to the agent and back to
 * another thread of ours: the agent's release (its push onto our free
 * list) and our acquire (the pop) synchronize them, but ThreadSanitizer
 * sees only this process.  These tell it about the hand-off: a thread
 * releases the element when it submits or frees it, and the thread that
 * takes it next acquires it.  Nothing in other builds.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define RMAD_TSAN_ACQUIRE(p)	__tsan_acquire((void *)(p))
#define RMAD_TSAN_RELEASE(p)	__tsan_release((void *)(p))
#else
#define RMAD_TSAN_ACQUIRE(p)	((void)(p))
#define RMAD_TSAN_RELEASE(p)	((void)(p))
#endif

#endif
