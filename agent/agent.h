/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * agent.h - the rmad agent's internal state.
 *
 * One libevent loop thread owns everything here; nothing in this header
 * is touched by any other thread.  Shared-memory fields that clients
 * write are read through the checks in clients.c only.
 */
#ifndef RMAD_AGENT_H
#define RMAD_AGENT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "boot.h"
#include "fabric.h"
#include "params.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "rmad_wire.h"

struct agent_job;

/* Agent-private view of one client slot. */
struct agent_client {
	int fd;				/* the Unix socket; -1 if slot free */
	struct event *ev;
	pid_t pid;
	uid_t uid;
	uint32_t gen;
	uint32_t head;			/* private ring consumer position */
	int registered;
	int32_t rank;
	int32_t local_rank;
	struct agent_job *job;
	uint64_t bad_ops;		/* rejected submissions */
	int moved;			/* counters advanced in this batch */
	uint64_t barrier_wait_op;	/* op index of a pending barrier + 1 */
	int32_t rma_err;		/* async RMA error with no epoch to
					 * report it in: the next sync's */
	int staged;			/* no in-place access to its memory */
};

/* Pending ping from a local client, keyed by cookie. */
struct agent_ping {
	uint32_t client;
	uint32_t gen;
	uint32_t op;
	uint64_t cookie;
	uint64_t t0;			/* sent at, for the timeout */
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
	/* rank -> node map, once every agent joined (runs sorted by rank) */
	struct rmad_am_rank_run *map;
	int32_t map_runs;
	int32_t map_filled;
	int map_ready;
	int joined;			/* our JOIN was sent */
	/* root only: collecting joins */
	struct rmad_am_rank_run *jruns;
	int32_t jnruns, jcap, jranks;
	/* barrier */
	uint64_t bar_epoch;		/* epoch now being collected */
	int32_t bar_local;		/* local arrivals for bar_epoch */
	int32_t bar_arrived[2];		/* root: agents arrived, by parity */
	int32_t job_nodes;		/* agents holding ranks of this job */
};

struct agent_stats {
	uint64_t ops_done;
	uint64_t ops_bad;
	uint64_t pkts_sent[RMAD_AM_TYPE_MAX];
	uint64_t pkts_recv[RMAD_AM_TYPE_MAX];
	uint64_t pkts_dropped;
	uint64_t wakeups;
	uint64_t sleeps;
	uint64_t clients_attached;
	uint64_t clients_died;
	uint32_t op_pool_hwm;
};

struct agent {
	struct rmad_params p;
	char conf_path[PATH_MAX];
	struct event_base *base;
	int stopping;
	int reload;
	int embedded;			/* started by a client; idle exit */
	int vnode;			/* -1: node's only agent */

	/* session and files */
	char session[64];
	char sdir[PATH_MAX];
	char sock_path[108];
	char lock_path[PATH_MAX];
	int listen_fd;
	struct event *listen_ev;

	/* shared segment */
	int memfd;
	void *seg;
	size_t seg_size;
	struct rmad_shm_hdr *hdr;	/* shared: only agent_flags is read */
	struct rmad_shm_hdr lay;	/* private copy of the layout: clients
					 * can write the shared header */
	uint32_t *gfree;		/* the global op pool, private */
	uint32_t ngfree;
	int doorbell;			/* eventfd */
	struct event *doorbell_ev;

	/* clients and jobs */
	struct agent_client *cl;	/* max_clients */
	int nclients;
	struct agent_job *jobs;		/* max_jobs */
	struct agent_ping *pings;
	uint64_t next_cookie;

	/* mesh */
	struct rmad_boot boot;
	struct rmad_fabric *fab;
	int node, nnodes;
	int core;
	char hostname[64];

	/* progress */
	uint64_t last_activity_ns;
	uint64_t idle_since_ns;		/* no clients since (embedded exit) */
	uint64_t shared_core_until;	/* spin by short sleeps until then */
	struct event *tick_ev;
	struct event *sig_ev[3];
	struct agent_stats st;
};

struct rma_lock;
struct rma_origin;

struct win_local {
	int32_t rank;			/* job rank */
	int32_t grank;
	uint32_t client, gen;
	int fd;
	void *base;			/* the agent's mapping */
	uint64_t size;
	int32_t disp_unit;
	int waiting;			/* a reply is owed (create or free) */
	int freeing;
	struct rma_lock *lk;		/* remote lock requests (rma.c) */
	struct rmad_fabric_mr *mr;	/* the window, open to fi_write/read */
	uint64_t mr_key, mr_addr;
};

/* Where a member's window is open to fi_write/fi_read. */
struct win_rkey {
	uint64_t key;
	uint64_t addr;			/* of displacement 0 */
	int ok;
};

struct agent_win {
	struct agent_win *next;
	struct agent_job *job;
	uint64_t key;
	int32_t gsize;
	int32_t *granks;		/* group ranks, NULL for all or unknown */
	int all;
	int32_t nlocal;			/* expected members on this node */
	int32_t nhere;			/* arrived */
	struct win_local *local;
	int root;			/* node collecting the table */
	/* the table, once per node */
	struct rmad_am_win_member *meta;
	int32_t nmeta;			/* entries filled */
	int uniform;
	uint64_t usize;
	int32_t udisp;
	int ready;
	int block;			/* window block, -1 until ready */
	int failed;
	/* root only */
	int *nodes;			/* member nodes that joined */
	int nnodes;
	int free_arrived;
	int nfreeing;
	/* rma.c: origin state of each local client that used it */
	struct rma_origin *origins;
	int meta_fd;			/* memfd with the sorted table, or -1 */
	struct rmad_win_meta *sorted;	/* that table, NULL when "all, uniform" */
	struct win_rkey *rkeys;		/* like sorted (or by rank), or NULL */
};

/* rma.c: the agent's counters for client c's use of window w (the
 * fields counted by the agent; the process-counted ones come back zero,
 * and *out is left alone when c never sent anything remote on w) */
struct rmad_stats;
/* client c found no op element to take: release what rma.c holds back */
void agent_rma_unhold(struct agent *a, uint32_t c);
void agent_rma_win_stats(struct agent_win *w, uint32_t c, uint32_t gen,
			 struct rmad_stats *out);

/* clients.c */
int agent_segment_create(struct agent *a);
void agent_segment_destroy(struct agent *a);
int agent_listen(struct agent *a);
void agent_unlisten(struct agent *a);
void agent_accept_pending(struct agent *a);
int agent_poll_rings(struct agent *a);
int agent_rings_empty(struct agent *a);
void agent_complete_op(struct agent *a, uint32_t client, uint32_t op,
		       int status);
void agent_flush_wakeups(struct agent *a);
void agent_op_abandon(struct agent *a, uint32_t op);
uint32_t agent_global_free(struct agent *a);
/* global elements reserved to windows' op pools (op_pool hint) */
uint32_t agent_global_reserved(struct agent *a);
void agent_drop_all_clients(struct agent *a);

/* jobs.c */
struct agent_job *agent_job_get(struct agent *a, const char *nspace,
				int32_t size, int32_t local_size, int *err);
void agent_job_put(struct agent *a, struct agent_job *j);
void agent_job_client_died(struct agent *a, struct agent_job *j);
void agent_job_client_joined(struct agent *a, struct agent_job *j);
void agent_op_barrier(struct agent *a, uint32_t client, uint32_t op);
void agent_op_ping(struct agent *a, uint32_t client, uint32_t op);
void agent_am_recv(void *arg, const void *msg, size_t len);
int agent_am_send(struct agent *a, int node, struct rmad_am_hdr *h,
		  const void *payload, size_t plen);
int agent_rank_node(struct agent_job *j, int32_t rank);
void agent_job_retry_barriers(struct agent *a, struct agent_job *j);
void agent_jobs_tick(struct agent *a);

/* windows.c */
int agent_win_init(struct agent *a);
void agent_win_fini(struct agent *a);
void agent_win_create(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_create *m, size_t len, int fd);
void agent_win_free(struct agent *a, uint32_t c,
		    const struct rmad_ctl_win_free *m);
void agent_win_am(struct agent *a, const struct rmad_am_hdr *h,
		  const void *payload, struct agent_job *j);
void agent_win_job_failed(struct agent *a, struct agent_job *j);
void agent_win_job_freed(struct agent *a, struct agent_job *j);

struct agent_win *agent_win_by_block(struct agent *a, uint32_t block,
				     uint64_t key);
struct agent_win *agent_win_by_key(struct agent_job *j, uint64_t key);
/* The window key of c's job, c a member not freeing it; or NULL. */
struct agent_win *agent_win_of_client(struct agent *a, uint32_t c,
				      uint64_t key);
struct agent_win *agent_win_first(void);
/* Size and unit of rank's window; RMAD_ERR_RANK if not a member. */
int agent_win_target(struct agent_win *w, int32_t rank, uint64_t *size,
		     int32_t *disp_unit);
struct win_local *agent_win_local(struct agent_win *w, int32_t rank);
/* Where rank's window is registered for one-sided transfers; 0 or -1. */
int agent_win_rkey(struct agent_win *w, int32_t rank, uint64_t *key,
		   uint64_t *addr);
int agent_win_rank_of(struct agent_win *w, int32_t grank);

/* rma.c: the operation table, remote operations and lock granting */
int agent_rma_init(struct agent *a);
void agent_rma_fini(struct agent *a);
void agent_rma_op(struct agent *a, uint32_t c, uint32_t op);
void agent_rma_am(struct agent *a, const struct rmad_am_hdr *h,
		  const void *payload, struct agent_job *j);
int agent_rma_progress(struct agent *a);
void agent_rma_client_gone(struct agent *a, uint32_t c);
void agent_rma_win_gone(struct agent *a, struct agent_win *w);

/* mem.c: rmad_alloc_mem regions, mapped here too */
int agent_mem_init(struct agent *a);
void agent_mem_fini(struct agent *a);
void agent_mem_reg(struct agent *a, uint32_t c, const struct rmad_ctl_mem *m,
		   int fd);
void agent_mem_probe(struct agent *a, uint32_t c,
		     const struct rmad_ctl_mem *m);
void agent_mem_dereg(struct agent *a, uint32_t c,
		     const struct rmad_ctl_mem *m);
void *agent_mem_lookup(struct agent *a, uint32_t c, uint64_t addr,
		       uint64_t len);
void agent_mem_release(struct agent *a, uint32_t c);

/* ctl.c: answer rmadctl's status request on fd (text or JSON) */
void agent_ctl_status(struct agent *a, int fd, int json);

/* pin.c */
int agent_pin(struct agent *a);
int agent_rank_cpus(const struct rmad_params *p, int nagents, char *out,
		    size_t len);

/* main.c */
void agent_note_activity(struct agent *a);

#endif
