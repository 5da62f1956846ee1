/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad_abi.h - the numbers that librmad, the agent and the tools share:
 * error codes, datatype and reduction-op numbering, lock types and
 * assert flags, packet types and struct rmad_stats.
 *
 * It stands on its own, so the agent, shared/ and proto/ never include
 * the library's public header.  rmad.h includes it, and it is installed
 * beside rmad.h; programs use these names through <rmad.h>.  Every
 * value here is part of the ABI: changing one means bumping
 * RMAD_ABI_VERSION (proto/rmad_shm.h) as well as the library version.
 */
#ifndef RMAD_ABI_H
#define RMAD_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Datatype and reduction-op handles: predefined ones are small
 * integers. */
typedef intptr_t rmad_datatype_t;
typedef int rmad_op_t;

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
#define RMAD_SHORT		((rmad_datatype_t)15)
#define RMAD_LONG_LONG		((rmad_datatype_t)16)
#define RMAD_SIGNED_CHAR	((rmad_datatype_t)17)
#define RMAD_UNSIGNED_CHAR	((rmad_datatype_t)18)
#define RMAD_UNSIGNED_SHORT	((rmad_datatype_t)19)
#define RMAD_UNSIGNED		((rmad_datatype_t)20)
#define RMAD_UNSIGNED_LONG	((rmad_datatype_t)21)
#define RMAD_UNSIGNED_LONG_LONG	((rmad_datatype_t)22)
#define RMAD_WCHAR		((rmad_datatype_t)23)
#define RMAD_C_BOOL		((rmad_datatype_t)24)
#define RMAD_LONG_DOUBLE	((rmad_datatype_t)25)
#define RMAD_C_FLOAT_COMPLEX	((rmad_datatype_t)26)
#define RMAD_C_DOUBLE_COMPLEX	((rmad_datatype_t)27)
#define RMAD_C_LONG_DOUBLE_COMPLEX ((rmad_datatype_t)28)
/* pair types, for MINLOC and MAXLOC: { value; int index } as C lays
 * them out (LONG_INT is { long; int }) */
#define RMAD_FLOAT_INT		((rmad_datatype_t)29)
#define RMAD_DOUBLE_INT		((rmad_datatype_t)30)
#define RMAD_LONG_INT		((rmad_datatype_t)31)
#define RMAD_2INT		((rmad_datatype_t)32)
#define RMAD_SHORT_INT		((rmad_datatype_t)33)
#define RMAD_LONG_DOUBLE_INT	((rmad_datatype_t)34)
/* Fortran's pair types (MPI_2REAL, MPI_2DOUBLE_PRECISION): { value;
 * index } both of one type, for MINLOC and MAXLOC */
#define RMAD_2FLOAT		((rmad_datatype_t)35)
#define RMAD_2DOUBLE		((rmad_datatype_t)36)
/* IEEE binary128 (Fortran's REAL*16; GCC's __float128, not x86's long
 * double) and its complex { re; im } (COMPLEX*32); where the compiler
 * that built rmad has no binary128 they are refused (RMAD_ERR_TYPE) */
#define RMAD_FLOAT128		((rmad_datatype_t)37)
#define RMAD_C_FLOAT128_COMPLEX	((rmad_datatype_t)38)

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
#define RMAD_MINLOC	13	/* pair types only */
#define RMAD_MAXLOC	14

/* Lock types and assert flags. */
#define RMAD_LOCK_SHARED	1
#define RMAD_LOCK_EXCLUSIVE	2

#define RMAD_MODE_NOCHECK	0x01
#define RMAD_MODE_NOSTORE	0x02
#define RMAD_MODE_NOPUT		0x04
#define RMAD_MODE_NOPRECEDE	0x08
#define RMAD_MODE_NOSUCCEED	0x10

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
	uint64_t order_waits;		/* ops held for ordering: an
					 * accumulate for the previous one's
					 * answer, a read for an earlier
					 * write to its bytes (rmad(7),
					 * "Ordering") */
	/* the window's fence barrier packets this process's agent sent
	 * and received (shared by the node's members of the window) */
	uint64_t fence_pkts_sent;
	uint64_t fence_pkts_recv;
	/* post and complete notices (RMAD_AM_WIN_POST/COMPLETE) this
	 * process's agent sent and received for the window's members on
	 * its node; same-node notices go through shared memory, uncounted */
	uint64_t pscw_pkts_sent;
	uint64_t pscw_pkts_recv;
	/* node-level aggregation: this window's packets that shared a
	 * fabric message with others (from any client and window of the
	 * node), and those messages (each counted once); packets per
	 * message = pkts_aggregated / aggr_msgs */
	uint64_t pkts_aggregated;
	uint64_t aggr_msgs;
	/* derived target types this process's agent sent ahead of this
	 * process's ops on the window (TYPE_DEF: the type was not in the
	 * target agent's cache, or had been evicted) */
	uint64_t type_defs;
	/* closing fences whose barrier message left before the answers
	 * of this process's gets (and other ops with results) were in:
	 * two-node windows on an ordered channel (rmad_win_fence(3)) */
	uint64_t fence_ahead;
};

#ifdef __cplusplus
}
#endif
#endif /* RMAD_ABI_H */
