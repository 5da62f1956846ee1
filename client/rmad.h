/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad.h - the public C API of librmad.
 *
 * librmad gives an application MPI-3 RMA semantics while all progress
 * (lock granting, applying incoming operations, sending acks) is made by
 * the per-node agent, rmad(8).  The names and signatures below are a
 * contract: programs are written against them, so they never change.
 * See rmad(7) for the overview and one man page per function.
 */
#ifndef RMAD_H
#define RMAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMAD_VERSION_MAJOR 0
#define RMAD_VERSION_MINOR 1

/* Error codes: every function returns 0 or one of these (negative). */
#define RMAD_SUCCESS		0
#define RMAD_ERR_ARG		(-1)
#define RMAD_ERR_RANK		(-2)
#define RMAD_ERR_DISP		(-3)
#define RMAD_ERR_TYPE		(-4)
#define RMAD_ERR_OP		(-5)
#define RMAD_ERR_SYNC		(-6)
#define RMAD_ERR_NOMEM		(-7)
#define RMAD_ERR_AGENT		(-8)
#define RMAD_ERR_PROC_FAILED	(-9)
#define RMAD_ERR_BOOTSTRAP	(-10)
#define RMAD_ERR_FABRIC		(-11)
#define RMAD_ERR_VERSION	(-12)
#define RMAD_ERR_NOT_LOCAL	(-13)
#define RMAD_ERR_PERM		(-14)
#define RMAD_ERR_HINT		(-15)
#define RMAD_ERR_INTERNAL	(-16)
#define RMAD_ERR_LAST		(-16)

/* Opaque handles. */
typedef struct rmad_win_s *rmad_win_t;
typedef struct rmad_group_s *rmad_group_t;
typedef struct rmad_request_s *rmad_request_t;
typedef intptr_t rmad_datatype_t;
typedef int rmad_op_t;

#define RMAD_WIN_NULL		((rmad_win_t)0)
#define RMAD_GROUP_NULL		((rmad_group_t)0)
#define RMAD_REQUEST_NULL	((rmad_request_t)0)
#define RMAD_DATATYPE_NULL	((rmad_datatype_t)0)

/* Every rank of the job. */
#define RMAD_GROUP_ALL		((rmad_group_t)1)

/* Predefined datatypes (small integers; derived types are pointers). */
#define RMAD_BYTE	((rmad_datatype_t)1)
#define RMAD_CHAR	((rmad_datatype_t)2)
#define RMAD_INT	((rmad_datatype_t)3)
#define RMAD_LONG	((rmad_datatype_t)4)
#define RMAD_INT8	((rmad_datatype_t)5)
#define RMAD_INT16	((rmad_datatype_t)6)
#define RMAD_INT32	((rmad_datatype_t)7)
#define RMAD_INT64	((rmad_datatype_t)8)
#define RMAD_UINT8	((rmad_datatype_t)9)
#define RMAD_UINT16	((rmad_datatype_t)10)
#define RMAD_UINT32	((rmad_datatype_t)11)
#define RMAD_UINT64	((rmad_datatype_t)12)
#define RMAD_FLOAT	((rmad_datatype_t)13)
#define RMAD_DOUBLE	((rmad_datatype_t)14)

/* Reduction ops. */
#define RMAD_SUM	1
#define RMAD_PROD	2
#define RMAD_MIN	3
#define RMAD_MAX	4
#define RMAD_BAND	5
#define RMAD_BOR	6
#define RMAD_BXOR	7
#define RMAD_LAND	8
#define RMAD_LOR	9
#define RMAD_LXOR	10
#define RMAD_REPLACE	11
#define RMAD_NO_OP	12

/* Lock types and assert flags. */
#define RMAD_LOCK_SHARED	1
#define RMAD_LOCK_EXCLUSIVE	2

#define RMAD_MODE_NOCHECK	0x01
#define RMAD_MODE_NOSTORE	0x02
#define RMAD_MODE_NOPUT		0x04
#define RMAD_MODE_NOPRECEDE	0x08
#define RMAD_MODE_NOSUCCEED	0x10

/* Lifecycle. */
int rmad_init(int *argc, char ***argv);
int rmad_finalize(void);
int rmad_rank(int *rank);
int rmad_size(int *size);
int rmad_barrier(void);
double rmad_wtime(void);
const char *rmad_strerror(int err);

/*
 * Extensions beyond the API contract: where this process runs, and a
 * round trip through the agents (used by examples/hello and rmad-bench).
 */
struct rmad_info {
	int rank;		/* rank in the job */
	int size;		/* ranks in the job */
	int node;		/* node (agent) index serving this rank */
	int nnodes;		/* agents in the mesh */
	int local_rank;		/* rank among this node's ranks of the job */
	int local_size;		/* ranks of the job on this node */
	int agent_pid;		/* pid of the serving agent */
	int agent_core;		/* core the agent is pinned to, -1 if none */
	char hostname[64];	/* host of the serving agent */
	char provider[32];	/* libfabric provider of the mesh */
	char session[64];	/* session the agent serves */
};
int rmad_get_info(struct rmad_info *info);
int rmad_ping(int rank);

/* Groups. */
int rmad_group_incl(const int *ranks, int n, rmad_group_t *group);
int rmad_group_free(rmad_group_t *group);

/* Memory the agent reads and writes in place. */
int rmad_alloc_mem(size_t size, void **ptr);
int rmad_free_mem(void *ptr);

/* Windows. */
int rmad_win_allocate(size_t size, int disp_unit, const char *hints,
		      rmad_group_t group, void *base_out, rmad_win_t *win);
int rmad_win_free(rmad_win_t *win);
int rmad_win_shared_query(rmad_win_t win, int rank, size_t *size,
			  int *disp_unit, void *base_out);

/* Communication (MPI-3 RMA; predefined types, contiguous counts). */
int rmad_put(const void *origin, int ocount, rmad_datatype_t otype,
	     int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
	     rmad_win_t win);
int rmad_get(void *origin, int ocount, rmad_datatype_t otype, int target,
	     size_t tdisp, int tcount, rmad_datatype_t ttype, rmad_win_t win);
int rmad_accumulate(const void *origin, int ocount, rmad_datatype_t otype,
		    int target, size_t tdisp, int tcount,
		    rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win);
int rmad_get_accumulate(const void *origin, int ocount, rmad_datatype_t otype,
			void *result, int rcount, rmad_datatype_t rtype,
			int target, size_t tdisp, int tcount,
			rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win);
int rmad_fetch_and_op(const void *origin, void *result, rmad_datatype_t type,
		      int target, size_t tdisp, rmad_op_t op, rmad_win_t win);
int rmad_compare_and_swap(const void *origin, const void *compare,
			  void *result, rmad_datatype_t type, int target,
			  size_t tdisp, rmad_win_t win);

/* Passive-target synchronization. */
int rmad_win_lock(int lock_type, int target, int assert, rmad_win_t win);
int rmad_win_unlock(int target, rmad_win_t win);
int rmad_win_lock_all(int assert, rmad_win_t win);
int rmad_win_unlock_all(rmad_win_t win);
int rmad_win_flush(int target, rmad_win_t win);
int rmad_win_flush_all(rmad_win_t win);
int rmad_win_flush_local(int target, rmad_win_t win);
int rmad_win_flush_local_all(rmad_win_t win);
int rmad_win_sync(rmad_win_t win);

/*
 * Introspection: what this process did on one window, counted by the
 * process itself (posting, waiting) and by its agent (packets, the
 * operation table).  Packets are those the agent sent or received for
 * this process's operations on this window to other nodes; same-node
 * targets take no packets.  See rmad_win_stats(3).
 */
enum rmad_pkt {
	RMAD_PKT_LOCK,		/* lock request */
	RMAD_PKT_LOCK_GRANTED,
	RMAD_PKT_LOCK_RETRY,	/* the target's lock queue was full */
	RMAD_PKT_UNLOCK,
	RMAD_PKT_UNLOCK_ACK,
	RMAD_PKT_PUT,
	RMAD_PKT_ACC,
	RMAD_PKT_GET,
	RMAD_PKT_GET_ACC,	/* get_accumulate, fetch_and_op */
	RMAD_PKT_CAS,
	RMAD_PKT_ACK,		/* put/acc done */
	RMAD_PKT_RESP,		/* get/get_acc/cas result */
	RMAD_PKT_NOTE,		/* fi_write/fi_read chunks follow */
	RMAD_PKT_FLUSH,		/* RMA_DONE: answer once all is applied */
	RMAD_PKT_FLUSH_ACK,	/* RMA_DONE_ACK */
	RMAD_PKT_TYPES = 16
};

struct rmad_stats {
	/* counted by this process */
	uint64_t ops_posted;		/* data operations called */
	uint64_t ops_local;		/* of them, done in place (same node) */
	uint64_t ops_remote;		/* of them, handed to the agent */
	uint64_t sync_calls;		/* lock, unlock, flush... calls */
	uint64_t sync_wait_ns;		/* time spent in those calls */
	/* counted by the agent for this process and window */
	uint64_t ops_issued;		/* remote ops sent (or started) */
	uint64_t ops_completed;		/* remote ops completed */
	uint64_t pkts_sent[RMAD_PKT_TYPES];
	uint64_t pkts_recv[RMAD_PKT_TYPES];
	uint64_t pkts_sent_total;
	uint64_t pkts_recv_total;
	uint64_t piggyback_lock;	/* LOCK carried by an operation */
	uint64_t piggyback_unlock;	/* UNLOCK carried by an operation */
	uint64_t piggyback_flush;	/* RMA_DONE carried by an operation */
	uint64_t single_op;		/* epochs sent as one packet */
	uint64_t acks_saved;		/* ops sent without asking an ack */
	uint64_t locks_queued;		/* lock requests that had to wait */
	uint64_t rdma_writes;		/* fi_write chunks */
	uint64_t rdma_reads;		/* fi_read chunks */
	uint32_t target_hwm;		/* target elements held at once */
	uint32_t ops_held_hwm;		/* ops the agent held at once */
	uint64_t order_waits;		/* accumulates that waited for the
					 * previous one's answer (ordering
					 * on an unordered channel) */
	uint64_t reserved[7];
};

int rmad_win_stats(rmad_win_t win, struct rmad_stats *out);

/*
 * Communication, synchronization and datatypes (API.md) are
 * declared here as they are delivered; see rmad(7) for what this release
 * implements.
 */

#ifdef __cplusplus
}
#endif
#endif /* RMAD_H */
