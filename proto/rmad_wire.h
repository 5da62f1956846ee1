/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad_wire.h - the agent-to-agent active-message format on libfabric.
 *
 * Every message starts with this fixed header; a payload may follow.
 * Receivers check version, type, lengths, node and rank ranges before
 * acting, and drop (and log) anything that does not add up.
 */
#ifndef RMAD_WIRE_H
#define RMAD_WIRE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define RMAD_WIRE_VERSION 16

/*
 * The packet types, each with the struct its payload starts with (the
 * header's RMA fields are for RMAD_AM_RMA_* only; other types send them
 * as 0 and carry their values in their payload).
 */
enum {
	RMAD_AM_PING = 1,		/* rmad_am_ping; reply PONG */
	RMAD_AM_PONG = 2,		/* rmad_am_ping: the cookie echoed */
	RMAD_AM_JOB_JOIN = 3,		/* rmad_am_job + runs: agent -> root:
					 * my ranks of a job */
	RMAD_AM_JOB_MAP = 4,		/* rmad_am_job + runs: root ->
					 * agents: rank -> node map */
	RMAD_AM_BARRIER_ARRIVE = 5,	/* rmad_am_barrier: agent -> root */
	RMAD_AM_BARRIER_RELEASE = 6,	/* rmad_am_barrier: root -> agents */
	RMAD_AM_JOB_FAIL = 7,		/* rmad_am_job_fail: the job failed,
					 * or a rank of it (one of the
					 * sender's) died */
	RMAD_AM_WIN_JOIN = 8,		/* rmad_am_win + members: agent ->
					 * root: local members */
	RMAD_AM_WIN_READY = 9,		/* rmad_am_win + members: root ->
					 * members: all members */
	RMAD_AM_WIN_FREE_ARRIVE = 10,	/* rmad_am_win_sync: agent -> root:
					 * local frees done */
	RMAD_AM_WIN_FREE_DONE = 11,	/* rmad_am_win_sync: root -> members */
	/*
	 * RMA between agents, in the header: hdr.wkey names the window,
	 * hdr.target the target rank, hdr.disp the byte offset in its
	 * window, hdr.count the elements of hdr.dtype; hdr.seq is the
	 * origin agent's cookie, echoed in the answer together with
	 * hdr.status.
	 */
	RMAD_AM_RMA_LOCK = 12,		/* flags LOCK_SHARED or LOCK_EXCL */
	RMAD_AM_RMA_LOCK_GRANTED = 13,
	RMAD_AM_RMA_LOCK_RETRY = 14,	/* target's lock queue was full */
	RMAD_AM_RMA_UNLOCK = 15,	/* flags: the lock type */
	RMAD_AM_RMA_UNLOCK_ACK = 16,
	RMAD_AM_RMA_PUT = 17,		/* payload: data */
	RMAD_AM_RMA_ACC = 18,		/* payload: data; hdr.op */
	RMAD_AM_RMA_GET = 19,
	RMAD_AM_RMA_GACC = 20,		/* payload: data (none for NO_OP) */
	RMAD_AM_RMA_CAS = 21,		/* payload: value, compare */
	RMAD_AM_RMA_ACK = 22,		/* PUT/ACC done (or hdr.status) */
	RMAD_AM_RMA_RESP = 23,		/* GET/GACC/CAS: payload result */
	/*
	 * fi_write/fi_read chunks are on their way to the receiver's
	 * windows.  They need its polling to move (manual progress) but
	 * make no completion there, so this note keeps it awake.
	 */
	RMAD_AM_RMA_NOTE = 24,
	/*
	 * RMA_DONE: answer with FLUSH_ACK (hdr.count echoed: here the
	 * number of operations the origin sent, not elements) once every
	 * operation that came before it from this origin is applied.
	 */
	RMAD_AM_RMA_FLUSH = 25,
	RMAD_AM_RMA_FLUSH_ACK = 26,
	/*
	 * rmad_am_heartbeat, "I am alive": sent to every node every
	 * heartbeat_ms, whatever else goes.  One without RMAD_AMF_ECHO is
	 * answered at once with one that has it.  A node lives as of the
	 * newest of our stamps it echoed; no other packet is a sign of
	 * life, and heartbeat_timeout_ms past that stamp declares it dead.
	 */
	RMAD_AM_HEARTBEAT = 27,
	/* rmad_am_win_sync: a window's fence barrier (wkey, epoch) */
	RMAD_AM_WIN_FENCE_ARRIVE = 28,	/* member node -> window root */
	RMAD_AM_WIN_FENCE_RELEASE = 29,	/* root -> member nodes */
	/* rmad_am_win_sync: post/start/complete/wait notices (wkey, origin
	 * and target the ranks); POST goes to the origin's node, COMPLETE
	 * (sent once the origin's ops there are applied) to the target's */
	RMAD_AM_WIN_POST = 30,
	RMAD_AM_WIN_COMPLETE = 31,
	/*
	 * rmad_am_batch, then a sequence of whole packets (header +
	 * payload each) from the same source node, applied in order
	 * (node-level aggregation, agent/am.c).  Never nested.
	 */
	RMAD_AM_BATCH = 32,
	/*
	 * rmad_am_type_def, then a piece of a derived type's wire form
	 * (shared/dtree.h), for the receiver's cache of the sender's types
	 * (agent/rma_type.c): a form longer than one message comes in
	 * pieces, in order.  It replaces what the slot held.  With
	 * form_len 0 and no piece: forget the slot (evicted by the sender).
	 */
	RMAD_AM_TYPE_DEF = 33,
	/*
	 * rmad_am_job_held: collector -> a node that joined a job
	 * (hdr.job): the collector holds ranks of it too, so its death
	 * before the map is out fails the job there rather than moving the
	 * map to the next node up.
	 */
	RMAD_AM_JOB_HELD = 34,
	RMAD_AM_TYPE_MAX
};

/*
 * flags.  On LOCK: the lock type.  On an operation, piggybacked
 * synchronization: LOCK_* takes the lock first (the target queues the
 * operation with the request if it must wait, or answers LOCK_RETRY
 * with hdr.seq set when it cannot), UNLOCK releases it once the
 * operation is applied, ACK_REQ asks for an answer (put and accumulate
 * are otherwise not answered: the channel keeps send-after-send order,
 * so a later answer covers them).  An operation with LOCK_* or UNLOCK
 * is always answered.
 */
#define RMAD_AMF_LOCK_SHARED	0x0001
#define RMAD_AMF_LOCK_EXCL	0x0002
#define RMAD_AMF_UNLOCK		0x0004
#define RMAD_AMF_ACK_REQ	0x0010
/* the origin's PSCW access epoch to the target ends with this op: once
 * it is applied (and everything before it, which the origin made sure
 * of), the target counts the origin's complete (no WIN_COMPLETE goes) */
#define RMAD_AMF_PSCW_DONE	0x0020
/* the target layout is a cached derived type: the payload starts with a
 * struct rmad_am_typed; hdr.disp is the base displacement plus the
 * chunk's offset in the op's packed stream, hdr.count its bytes and
 * hdr.dtype RMAD_BYTE, so that answers are matched as a contiguous op's */
#define RMAD_AMF_TYPED		0x0040
/* on an ACC or a PUT: the operands are not in the payload, which is a
 * struct rmad_am_pull naming them in the origin agent's memory; the
 * target's agent reads them with fi_read (at most RMAD_AM_PULL_MAX
 * bytes), combines them in bulk (or stores them), and answers (ACK_REQ
 * is always set).  On a GET: the struct names where the bytes go; the
 * target's agent writes them there with fi_write and, once they are
 * placed, answers with a RESP without payload.  On a GACC: both, in
 * one chunk registered for remote reads and writes: the target reads
 * the operands there (none with NO_OP), applies them, writes the
 * results over them, then answers so.  Never with a lock request,
 * UNLOCK or PSCW_DONE */
#define RMAD_AMF_PULL		0x0080
/* on answers */
#define RMAD_AMF_GRANTED	0x0100	/* the piggybacked lock was granted */
#define RMAD_AMF_UNLOCKED	0x0200	/* ... and released after the op */
#define RMAD_AMF_QUEUED		0x0400	/* the lock request had to wait */
/* on a HEARTBEAT: an answer to one, itself not answered */
#define RMAD_AMF_ECHO		0x0800

/*
 * The most payload one active message carries after its header.  Larger
 * data moves as several messages or by fi_write/fi_read.
 */
#define RMAD_AM_MAX_PAYLOAD	16384

/*
 * The header.  version, type, flags, src_node, job, payload_len and
 * status are every packet's; win to wkey are an RMA operation's and its
 * answer's (RMAD_AM_RMA_*), and 0 in every other packet.
 */
struct rmad_am_hdr {
	uint8_t version;		/* RMAD_WIRE_VERSION */
	uint8_t type;			/* RMAD_AM_* */
	uint16_t flags;			/* RMAD_AMF_* */
	uint32_t src_node;		/* sending agent */
	uint64_t job;			/* job key (hash of the namespace) */
	uint32_t win;			/* RMA: window id */
	int32_t origin;			/* RMA: origin rank */
	int32_t target;			/* RMA: target rank */
	uint16_t dtype;			/* RMA: element type */
	uint8_t op;			/* RMA: accumulate op */
	uint8_t pad;
	uint64_t disp;			/* RMA: target displacement (bytes) */
	uint64_t count;			/* RMA: elements (FLUSH: ops) */
	uint64_t seq;			/* RMA: origin-agent cookie echoed */
	uint32_t payload_len;		/* bytes after the header */
	int32_t status;			/* answers: 0 or RMAD_ERR_* */
	uint64_t wkey;			/* RMA: window key */
};
static_assert(sizeof(struct rmad_am_hdr) == 72, "am hdr");
static_assert(offsetof(struct rmad_am_hdr, job) == 8, "am job");
static_assert(offsetof(struct rmad_am_hdr, disp) == 32, "am disp");
static_assert(offsetof(struct rmad_am_hdr, payload_len) == 56, "am plen");

/*
 * The payloads of the types that are not RMA, each exactly this (or
 * this first, then what the type says follows).  Receivers check the
 * length before they read, copy the struct out (a payload may be
 * unaligned) and check its values.
 */

/* PING and PONG: the pinging agent's cookie, echoed. */
struct rmad_am_ping {
	uint64_t cookie;
};
static_assert(sizeof(struct rmad_am_ping) == 8, "am ping");

/* BARRIER_ARRIVE and BARRIER_RELEASE. */
struct rmad_am_barrier {
	uint64_t epoch;			/* the job's barrier epoch */
};
static_assert(sizeof(struct rmad_am_barrier) == 8, "am barrier");

/* JOB_FAIL: the job fails; rank >= 0: that rank (one of the sender's)
 * died, so every operation on it ends; -1: no rank in particular. */
struct rmad_am_job_fail {
	int32_t rank;
	int32_t pad;
};
static_assert(sizeof(struct rmad_am_job_fail) == 8, "am job fail");

/* JOB_HELD. */
struct rmad_am_job_held {
	int32_t nranks;			/* the collector's ranks of the job */
	int32_t pad;
};
static_assert(sizeof(struct rmad_am_job_held) == 8, "am job held");

/* HEARTBEAT (agent/liveness.c). */
struct rmad_am_heartbeat {
	uint64_t stamp;			/* the sender's clock (CLOCK_MONOTONIC
					 * ns), never 0 */
	uint64_t echo;			/* the newest stamp the sender took
					 * from the node it goes to (0: none
					 * yet) */
	/* a static mesh's: the sender's incarnation of what it holds
	 * about the node it goes to, and its echo of that node's (0
	 * otherwise) */
	uint64_t incarnation;
	uint64_t inc_echo;
};
static_assert(sizeof(struct rmad_am_heartbeat) == 32, "am heartbeat");

/* BATCH: how many packets follow. */
struct rmad_am_batch {
	uint32_t npkts;
	uint32_t pad;
};
static_assert(sizeof(struct rmad_am_batch) == 8, "am batch");

/* TYPE_DEF: piece_off is where this message's piece (the rest of the
 * payload) starts in the wire form of form_len bytes. */
struct rmad_am_type_def {
	uint64_t key;			/* the type's key (dtree_key) */
	uint32_t slot;			/* in the receiver's cache */
	uint32_t form_len;		/* 0 and no piece: forget the slot */
	uint32_t piece_off;
	uint32_t pad;
};
static_assert(sizeof(struct rmad_am_type_def) == 24, "am type def");

/* WIN_FREE_ARRIVE/DONE (wkey), WIN_FENCE_ARRIVE/RELEASE (wkey, epoch),
 * WIN_POST/COMPLETE (wkey, origin, target); the rest 0. */
struct rmad_am_win_sync {
	uint64_t wkey;			/* the window's key */
	uint64_t epoch;			/* fence: the window's fence epoch */
	int32_t origin;			/* PSCW: the origin rank */
	int32_t target;			/* PSCW: the target rank */
};
static_assert(sizeof(struct rmad_am_win_sync) == 24, "am win sync");
static_assert(offsetof(struct rmad_am_win_sync, wkey) == 0, "sync wkey");

/* The payload of a PULL accumulate or put: hdr.count elements of
 * hdr.dtype at (raddr, key) in the origin agent's registered memory,
 * readable only until the answer (of a PULL get: writable only). */
struct rmad_am_pull {
	uint64_t raddr;
	uint64_t key;
};
static_assert(sizeof(struct rmad_am_pull) == 16, "am pull");
#define RMAD_AM_PULL_MAX	(512 * 1024)

/* The head of a TYPED packet's payload. */
struct rmad_am_typed {
	uint32_t slot;			/* in the target's cache of our types */
	uint32_t tcount;		/* instances of the type */
	uint64_t key;			/* the type's key, checked there */
	uint64_t base;			/* the displacement, in bytes */
};
static_assert(sizeof(struct rmad_am_typed) == 24, "am typed");

/* JOB_JOIN / JOB_MAP payload: runs of consecutive ranks on one node. */
struct rmad_am_rank_run {
	int32_t first;
	int32_t count;
	int32_t node;
	int32_t pad;
};
static_assert(sizeof(struct rmad_am_rank_run) == 16, "rank run");

/*
 * JOB_JOIN and JOB_MAP carry, before their runs, the job's size and the
 * namespace (so an agent that has no rank of the job can still name it
 * in logs).
 */
struct rmad_am_job {
	int32_t size;			/* ranks in the job */
	int32_t total_runs;		/* JOB_MAP: runs in the whole map */
	int32_t first_run;		/* JOB_MAP: index of the first run here */
	int32_t nruns;			/* runs that follow this struct */
	char nspace[256];
};
static_assert(sizeof(struct rmad_am_job) == 272, "am job");

/* WIN_JOIN / WIN_READY payload: this, then nentries members. */
struct rmad_am_win {
	uint64_t wkey;			/* the window's key */
	int32_t gsize;			/* members of the window */
	int32_t first;			/* WIN_READY: index of the first entry */
	int32_t nentries;		/* entries that follow this struct */
	int32_t pad;
};
struct rmad_am_win_member {
	int32_t grank;			/* index in the group */
	int32_t disp_unit;
	uint64_t size;
	/* the window's memory registered for fi_write/fi_read: bytes at
	 * offset d are at mr_addr + d under mr_key (has_mr: 1) */
	uint64_t mr_key;
	uint64_t mr_addr;
	int32_t has_mr;
	/* 0, or why the member's node refuses the window (RMAD_ERR_PERM:
	 * a created window's memory cannot be reached in place); any
	 * nonzero status fails the window on every member */
	int32_t status;
};
static_assert(sizeof(struct rmad_am_win) == 24, "am win");
static_assert(offsetof(struct rmad_am_win, wkey) == 0, "am win wkey");
static_assert(sizeof(struct rmad_am_win_member) == 40, "am win member");

#endif
