/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_internal.h - what the RMA layer's files share: the op copies,
 * target elements, origin states, lock entries and transfers, the
 * layer's context (struct rma_ctx, owned by struct agent), and the
 * functions one file calls in another.  Nothing outside agent/rma*.c
 * includes it; the layer's interface upward is rma.h.
 */
#ifndef RMAD_AGENT_RMA_INTERNAL_H
#define RMAD_AGENT_RMA_INTERNAL_H

#include <assert.h>
#include <stdint.h>

#include "agent.h"
#include "fabric.h"
#include "rmad_abi.h"
#include "rmad_opdesc.h"

/*
 * The seeds' epoch states (MPIDI_RMA_* there).  The window states of
 * active target (FENCE_ISSUED/GRANTED, PSCW_ISSUED/GRANTED) come with
 * fence and PSCW.  Per-target states are used only in PER_TARGET and
 * LOCK_ALL_CALLED.
 */
enum win_state {
	RMA_NONE,
	RMA_PER_TARGET,
	RMA_LOCK_ALL_CALLED,
	RMA_LOCK_ALL_ISSUED,
	RMA_LOCK_ALL_GRANTED,
	RMA_FENCE_ISSUED,		/* in the window's barrier: new ops
					 * wait for its release */
	RMA_FENCE_GRANTED,		/* between fences: every member open,
					 * no lock taken (nocheck_all) */
	RMA_PSCW,			/* a start's access epoch: ops to a
					 * target wait for its post (the seeds'
					 * PSCW_ISSUED/GRANTED, per target) */
};

enum target_state {
	RMA_LOCK_CALLED,
	RMA_LOCK_ISSUED,
	RMA_LOCK_GRANTED,
};

#define CHUNKS_INFLIGHT	16
#define XFER_PER_OP	8	/* fi_write/fi_read chunks per op */
#define XFER_MAX	64	/* ... and in all */
#define LOCKALL_BATCH	16
#define RETRY_NS	(200 * 1000ull)
/* a bulk accumulate's wait for small ones, before it applies with
 * atomics instead: the agent does not stall its loop for a slow client */
#define ACC_SMALL_WAIT_NS	(100ull * 1000)

struct rma_ctx;

/* Private copy of a submitted op element: the client cannot change it. */
struct rma_op {
	uint32_t next;			/* in a pending list */
	uint32_t client;
	uint32_t serial;		/* cookie check; 0 when free */
	uint16_t opcode;
	uint8_t dtype, op;
	int32_t target;
	uint64_t tdisp;			/* bytes */
	uint64_t len;			/* bytes of data (or of results) */
	uint64_t origin, result;	/* client addresses */
	uint64_t sent, done;		/* bytes issued, bytes answered */
	int32_t status;
	uint32_t inline_len;
	uint8_t is_inline;
	uint8_t counted;		/* in its target's nissued/nres */
	uint8_t rdma;			/* moves by fi_write/fi_read */
	uint8_t pull;			/* ... an accumulate or put the
					 * target reads, a get it writes
					 * (rma_pull.c) */
	uint8_t nx;			/* of them, chunks in flight */
	uint8_t staged;			/* origin, result: staging offsets */
	uint8_t waited;			/* the client waits for it (KEEP) */
	uint8_t late;			/* counted in its target's nlate */
	uint8_t inplace;		/* counted in its target's ninplace */
	uint64_t raddr, rkey;		/* rdma: target bytes, key */
	uint64_t wseq;			/* its place on the channel */
	uint16_t pflags;		/* RMAD_AMF_* it went out with */
	struct rma_origin *o;		/* set while it is in the table */
	struct rma_typed *ty;		/* RMAD_OPF_TTYPE: its target type
					 * (rma_type.c) */
	uint8_t data[RMAD_OP_INLINE];
};

struct rma_target {
	struct rma_target *next;	/* slot chain or free list */
	int32_t rank;
	int node;
	uint8_t state;			/* enum target_state */
	uint8_t excl, nocheck, want_unlock, unlocking, evict, local;
	uint8_t sync_want;		/* a flush waits: ask for the ack */
	uint8_t release;		/* a flush_local waits: hold nothing */
	uint8_t lock_op;		/* the lock request rides on an op */
	uint8_t released;		/* an op's answer said UNLOCKED */
	uint8_t lock_now;		/* request the lock even with no op */
	uint32_t pscw_close;		/* PSCW: 1 + the COMPLETE op for this
					 * target, which its last op may
					 * carry (RMAD_AMF_PSCW_DONE); 0 */
	uint8_t close_rides;		/* the closing synchronization's own
					 * message (a two-node fence's ARRIVE
					 * or RELEASE, a PSCW complete, its
					 * notice or riding on the last op)
					 * follows the ops on an ordered
					 * channel: no RMA_DONE */
	uint32_t lseq;			/* place among the epoch's lock calls */
	uint32_t head, tail;		/* pending ops */
	uint32_t npend;			/* ... how many */
	uint32_t nissued;		/* sent, not fully answered */
	uint32_t nres;			/* of them, ops with results */
	uint32_t nrdma;			/* of them, fi_write/fi_read ops */
	uint32_t nacc;			/* of them, accumulates */
	uint32_t npull;			/* of them, pulled (accumulates, and
					 * puts and gets to created or dynamic
					 * windows) */
	uint32_t nride;			/* of them, ops with results applied
					 * as their requests arrive (neither
					 * fi_read nor pulled): a riding
					 * fence's barrier message may follow
					 * them before they are answered */
	uint8_t order_blocked;		/* an accumulate waits for them */
	/*
	 * The ordering promise (rmad(7), "Ordering"): a read waits while
	 * an earlier write to its bytes may still be applied after it.  nlate: issued writes the target applies after what
	 * follows them (pulled: read first; any, on an unordered channel),
	 * spanning [late_lo, late_hi) of the window; amw_seq: the last
	 * write sent as active messages, within [amw_lo, amw_hi), which a
	 * read served by the provider alone (fi_read) could overtake until
	 * done_seq reaches it.
	 */
	uint32_t nlate;
	uint64_t late_lo, late_hi;
	uint32_t nlate_put;		/* of them, puts: within [put_lo,
					 * put_hi) (accumulate_ordering
					 * releases a get-accumulate after
					 * accumulates, never after puts) */
	uint64_t put_lo, put_hi;
	uint64_t amw_seq, amw_lo, amw_hi;
	uint32_t ninplace;		/* of nissued, ops whose transfers use
					 * the client's memory in place: not
					 * complete at the origin before */
	/* ops on the ordered channel: sent, known applied, RMA_DONE asked */
	uint64_t sent_seq, done_seq, flush_seq;
	uint64_t retry_at;		/* LOCK_RETRY: ask again then */
	uint64_t noted_at;		/* last RMA_NOTE sent */
};

struct rma_origin {
	struct rma_origin *next;
	struct rma_ctx *R;
	struct agent_win *w;
	uint32_t client, gen;
	int32_t rank;
	enum win_state state;
	int nocheck_all;
	int32_t err;			/* first async error, for the next sync */
	int dead_seen;			/* a node of the epoch died: for the
					 * syncs that cover every target */
	int fence_held;			/* the barrier released fence_op, whose
					 * gets are still unanswered
					 * (fence_st: the release's status) */
	int32_t fence_st;
	uint32_t fence_op;		/* FENCE in the window's barrier, or
					 * RMAD_NIL */
	/* PSCW access epoch (rma_pscw.c): posts taken, O(its targets) */
	int pscw_nocheck;
	int32_t *pscw_got;
	int32_t npscw_got, cappscw_got;
	uint32_t nslots;
	struct rma_target **slots;
	int ntargets;
	struct rma_target *lfree;	/* window-local pool */
	struct rma_target *lmem;
	uint32_t nlmem;
	uint32_t shead, stail;		/* stalled submissions */
	uint32_t yhead, ytail;		/* sync requests */
	int need_target;
	uint32_t lcalls;		/* per-target lock calls so far */
	int32_t *evicted;		/* granted locks without an element */
	int nevicted, capevicted;
	/* lock_all window protocol */
	int32_t la_next;		/* next group index to lock/unlock */
	int la_inflight;
	uint32_t *la_node;		/* ... of them, by node */
	int la_unlock;			/* unlock pass running */
	int dying;
	int no_hold;			/* out of op elements: hold nothing */
	unsigned int acc_order;		/* accumulate_ordering bits */
	uint32_t nheld;			/* ops waiting in target lists */
	struct rmad_stats st;		/* the agent's half of rmad_stats */
};

/* Target side: lock requests of one member's window. */
struct lock_ent {
	struct lock_ent *next;
	int32_t origin;
	uint32_t node;
	uint8_t excl;
	uint8_t waited;			/* not granted at once */
	uint8_t heap;			/* a holder on the heap, not pooled */
	struct rmad_am_hdr *pkt;	/* the operation that came with it;
					 * in a holder, one granted whose
					 * member's accumulate lock a client
					 * held (rma_target.c, pend_apply) */
	uint16_t gflags;		/* ... what its answer adds */
	uint64_t gsince;		/* ... since when (0: not waiting) */
};

struct rma_lock {
	struct rma_ctx *R;
	struct lock_ent *qhead, *qtail;	/* waiting, FIFO */
	struct lock_ent *holders;	/* granted to remote origins */
	struct rma_lock *wnext;		/* on the waiting list */
	int waiting;
	uint32_t npend;			/* holders whose op waits (gsince) */
	struct agent_win *w;
	struct win_local *l;
};

/*
 * One fi_write/fi_read chunk in flight, or one chunk of an accumulate
 * that the target's agent reads (pull).  Its data passes through a
 * bounce buffer of the agent's (rdma_chunk bytes), unless the client's
 * buffer lies in its rmad_alloc_mem memory, which the agent maps itself
 * and the provider needs no registration for (direct; a pulled chunk is
 * registered either way): then the provider reads or writes the
 * client's memory through that mapping, held (agent_mem_hold) until the
 * chunk is done, so that it stays mapped even if the client frees it or
 * dies meanwhile.
 */
struct rma_xfer {
	struct rmad_fabric_xfer fx;	/* first: the completion names it */
	struct rma_xfer *next;		/* free list */
	struct agent *a;
	uint32_t op, serial;
	uint64_t off, len;
	char *buf;			/* the bounce buffer */
	uint8_t direct;			/* it moved from/to the client's
					 * mapped memory, not buf */
	struct mem_region *held;	/* that memory's region, held */
	uint8_t pull;			/* a pulled op's chunk (in buf, or
					 * held), registered (mr) until
					 * answered: 1;
					 * 2: its op ended first, the slot
					 * waits for the answer anyway */
	struct rmad_fabric_mr *mr;
	int node;			/* pull: its target's, and the */
	uint64_t disp, count;		/* request, as the answer echoes it */
};

/* rmad_stats counts packets by RMAD_PKT_*, the wire's RMA types in order */
static_assert(RMAD_AM_RMA_RESP - RMAD_AM_RMA_LOCK == RMAD_PKT_RESP &&
	      RMAD_AM_RMA_NOTE - RMAD_AM_RMA_LOCK == RMAD_PKT_NOTE &&
	      RMAD_AM_RMA_FLUSH_ACK + 1 - RMAD_AM_RMA_LOCK <= RMAD_PKT_TYPES,
	      "packet types");

/*
 * The RMA layer's state, owned by struct agent (a->rma): op copies by
 * element index, the global target pool, the target side's lock entries,
 * and the fi_write/fi_read chunks with their bounce buffers.
 */
struct rma_ctx {
	/* acc_lock's mode (rma_xfer.c): set while target_apply_direct applies a
	 * packet as it came, which a busy lock defers (ACC_AGAIN) instead
	 * of waiting for it; acc_since: that packet's first deferral */
	uint8_t acc_defer;
	uint64_t acc_since;
	struct rma_op *sh;		/* by op index */
	uint32_t nsh;
	uint32_t nty;			/* ops of sh with a ty (rma_type.c) */
	uint32_t serials;
	struct rma_target *tmem, *tfree;	/* global target pool */
	struct lock_ent *lmem, *lfree;	/* lock entries */
	struct rma_lock *lwait;		/* members with waiting requests, or
					 * granted ops that wait (npend) */
	uint32_t ngpend;		/* those ops, all members */
	/* the windows with origins here (w->origins not empty), through
	 * their onext/oprev: what the passes over every origin walk, not
	 * every window */
	struct agent_win *owins;
	int retry_pending;
	int ordered;			/* the fabric keeps send-after-send */
	struct rma_xfer xfers[XFER_MAX], *xfree;
	char *bounce;			/* XFER_MAX x rdma_chunk, lazily */
	size_t bounce_len;
	struct rmad_fabric_mr *bounce_mr;
	void *bounce_desc;
	/* rma_pull.c, target side: reads waiting for a buffer, reads in
	 * flight, and the buffers */
	struct pull_rd *pq_head, *pq_tail, *pfly, *pzombie;
	struct pull_rd *plock;		/* read, waiting for a member's
					 * accumulate lock (rma_pull.c) */
	uint32_t npq, npull_fly, npbuf;
	uint32_t npull_slots;		/* origin side: slots x->pull != 0 */
	struct pull_buf *pbfree;
	/* rma_type.c: per node, the mirror of its cache of our types and
	 * our cache of its types */
	struct ty_peer *typ;
	uint64_t tyclock;
	int ty_wait;			/* an op waits for a free slot */
};

/* rma_type.c: derived target types, the origin side (see there) */
struct rmad_op_ttype;
/* Check a TTYPE op and take its type: 0 or RMAD_ERR_*. */
int32_t ty_check_op(struct agent *a, struct agent_win *w, struct rma_op *op,
		    const struct rmad_op_ttype *d, uint64_t tdisp_units,
		    uint64_t count);
/* Before its first chunk: its type in a slot of the target's cache (a
 * TYPE_DEF goes first when it is not there); 0, 1 when it must wait for
 * a slot, or RMAD_ERR_*. */
int ty_issue(struct agent *a, struct rma_origin *o, struct rma_op *op);
/* A chunk's struct rmad_am_typed into buf; its size. */
size_t ty_chunk_head(struct rma_op *op, uint8_t *buf);
size_t ty_room(struct agent *a, uint32_t unit);
/* The window bytes a typed op reaches, [*lo, *hi) (ordering). */
void ty_span(const struct rma_op *op, uint64_t *lo, uint64_t *hi);
uint32_t ty_unit(const struct rma_op *op);
/* Every chunk of op went out (or it failed): its slot may be reused. */
void ty_sent(struct agent *a, struct rma_op *op);
void ty_op_free(struct agent *a, struct rma_op *op);

/* rma_type_apply.c: the target side of typed ops */
/* Our cache of one node's types (an entry per slot), and the mirror of
 * its cache of ours (struct ty_slot, rma_type.c's) */
struct ty_ent {				/* the target's cache */
	uint64_t key;
	struct dtree *t;
	uint32_t len;
};

/* What this agent keeps for one peer node. */
struct ty_peer {
	struct ty_slot *mir;		/* its cache of our types */
	struct ty_ent *cache;		/* our cache of its types */
	uint64_t bytes;			/* ... their wire forms' bytes */
	/* a definition that comes in several messages, in order */
	uint8_t *part;
	uint32_t part_total, part_got, part_slot;
	uint64_t part_key;
};

struct dtree;
/* Is op allowed on every basic type in t? */
int ty_ops_ok(const struct dtree *t, uint32_t op);
/* The unit a chunk of t holds whole: 1 but for accumulates (acc), whose
 * chunks hold whole basic elements (or whole instances of a mixed
 * type); 0: too large */
uint32_t ty_unit_of(const struct dtree *t, int acc);
/* Apply a TYPED packet to member l, a chunk of at most max packed
 * bytes: 0 or RMAD_ERR_*; *rlen result bytes in res. */
int ty_apply(struct agent *a, struct win_local *l,
	     const struct rmad_am_hdr *h, const uint8_t *pl, uint8_t *res,
	     uint64_t *rlen, uint64_t max);
void ty_node_dead(struct agent *a, int node);
void ty_init(struct agent *a);
void ty_fini(struct agent *a);

/* rma_target.c: node is dead; its origins' lock requests and locks
 * on member l's window go */
void target_lock_drop_node(struct agent *a, struct win_local *l, uint32_t node);

/* rma_xfer.c */
/* Does the target answer this request (RMA between agents)? */
static inline int am_wants_answer(const struct rmad_am_hdr *h)
{
	switch (h->type) {
	case RMAD_AM_RMA_LOCK:
	case RMAD_AM_RMA_UNLOCK:
	case RMAD_AM_RMA_GET:
	case RMAD_AM_RMA_GACC:
	case RMAD_AM_RMA_CAS:
	case RMAD_AM_RMA_FLUSH:
		return 1;
	case RMAD_AM_RMA_PUT:
	case RMAD_AM_RMA_ACC:
		return !!(h->flags & (RMAD_AMF_LOCK_SHARED |
				      RMAD_AMF_LOCK_EXCL | RMAD_AMF_UNLOCK |
				      RMAD_AMF_ACK_REQ));
	default:
		return 0;
	}
}
/* Send for origin o (statistics; answers due: agent_expect_answer). */
int xfer_osend(struct agent *a, struct rma_origin *o, int node,
		 struct rmad_am_hdr *h, const void *pl, size_t plen);
void xfer_orecv(struct rma_origin *o, const struct rmad_am_hdr *h);
/* Read or write len bytes of client c's memory at addr, in place. */
int xfer_client_io(struct agent *a, uint32_t c, uint64_t addr, void *buf,
	      size_t len, int write);
/* The same for n pieces of its memory at once, buf holding them end to
 * end (process_vm_readv/writev; never an alloc_mem mapping). */
struct iovec;
int xfer_client_iov(struct agent *a, uint32_t c, const struct iovec *remote,
	       unsigned long n, void *buf, size_t len, int write);
/* The member's accumulate lock (acc_lock in its control page): for
 * created windows, and for types wider than 8 bytes on every flavor.
 * 0, RMAD_ERR_SYNC, or with R->acc_defer ACC_AGAIN (held by a live
 * client: the packet waits; never an answer's status). */
#define ACC_AGAIN	1
int xfer_acc_lock(struct agent *a, struct win_local *l);
void xfer_acc_unlock(struct win_local *l);
/* Apply a checked op to a created window (l->created); 0 or RMAD_ERR_*. */
/* With acc_lock held: an accumulate on a mapped member's memory, in bulk
 * from acc_bulk_threshold bytes (accword.h), else with atomics */
void xfer_mapped_acc_apply(struct agent *a, struct win_local *l, void *dst,
		      const void *src, void *res, uint32_t dtype, uint32_t op,
		      uint64_t count);
int xfer_created_apply(struct agent *a, struct win_local *l,
		  const struct rmad_am_hdr *h, const uint8_t *pl,
		  uint8_t *res, uint64_t len);
int xfer_op_io(struct agent *a, const struct rma_op *op, uint64_t addr,
		 void *buf, size_t len, int write);
/* The bounce buffers and their transfer slots, made on first use
 * (registered for local access if the provider wants that): 0 or
 * RMAD_ERR_*. */
int xfer_bounce_init(struct agent *a);

/* rma_target.c */
void target_lw_release(uint32_t *lw, int excl);
void target_answer(struct agent *a, const struct rmad_am_hdr *req, int type,
		   int status, uint16_t flags, const void *pl, size_t plen);
int target_try_grant(struct agent *a, struct rma_lock *k);
int target_retry_grants(struct agent *a);
void target_lock_request(struct agent *a, const struct rmad_am_hdr *h,
			 struct agent_win *w, struct win_local *l);
void target_lock_release(struct agent *a, const struct rmad_am_hdr *h,
			 struct win_local *l);
void target_lock_free(struct win_local *l);
void target_apply_op(struct agent *a, const struct rmad_am_hdr *h,
		     const uint8_t *pl, struct agent_win *w, uint16_t aflags);
/* The same for a packet handled as it came (or as am_retry hands it
 * back): 1 if a busy accumulate lock deferred it (am_defer), and
 * nothing was done. */
int target_apply_direct(struct agent *a, const struct rmad_am_hdr *h,
		 const uint8_t *pl, struct agent_win *w);
/* An accumulate or put whose data was read from the origin
 * (rma_pull.c): checked and applied like target_apply_op's, up to
 * RMAD_AM_PULL_MAX bytes.  1 when the member's accumulate lock is held
 * by a live client (nothing done: the caller keeps it and tries again,
 * since: its first try, 0 the first time), else 0 (answered). */
int target_apply_pulled(struct agent *a, const struct rmad_am_hdr *h,
		 const uint8_t *data, struct agent_win *w, uint64_t since);
/* A get-accumulate whose operands were read from the origin (none for
 * RMAD_NO_OP): checked and applied like target_apply_op's, up to
 * RMAD_AM_PULL_MAX bytes, its *rlen result bytes left in res (room for
 * RMAD_AM_PULL_MAX) for the caller to write back, unanswered; 0,
 * RMAD_ERR_*, or ACC_AGAIN as target_apply_pulled's 1. */
int32_t target_apply_pulled_res(struct agent *a, const struct rmad_am_hdr *h,
			 const uint8_t *data, struct agent_win *w,
			 uint8_t *res, uint64_t *rlen, uint64_t since);
/* A get whose bytes the target's agent writes into the origin's memory
 * (rma_pull.c): checked again against the window now, then its
 * h->count elements read into buf (up to RMAD_AM_PULL_MAX bytes), or,
 * with th (RMAD_AMF_TYPED), that many bytes of the packed stream of
 * the cached type th names; 0 or RMAD_ERR_*. */
int32_t target_read_pushed(struct agent *a, const struct rmad_am_hdr *h,
		    const struct rmad_am_typed *th, uint8_t *buf);
void target_lock_and_apply(struct agent *a, const struct rmad_am_hdr *h,
			   const uint8_t *pl, struct agent_win *w);
void target_flush_request(struct agent *a, const struct rmad_am_hdr *h);
int target_dead_shared(struct agent *a, struct win_local *l, uint32_t c);

/* rma_pull.c: accumulates (and puts to created and dynamic windows)
 * whose data the target's agent reads, and gets from created and
 * dynamic windows whose bytes it writes into the origin's.
 * Origin side: post what the transfer slots allow of op i's chunks (1
 * once every byte went out or it failed, with op->status set; 0 to go
 * on later); a chunk was answered (0, or -1 when no such chunk is
 * out; a get's bytes go to the client unless status says it
 * failed); op i ends: its chunks' slots are released. */
int pull_issue(struct agent *a, struct rma_origin *o, struct rma_target *t,
	       uint32_t i);
int pull_answered(struct agent *a, uint32_t i, uint64_t off, uint64_t len,
		  int32_t status);
void pull_op_end(struct agent *a, uint32_t i);
/* An answer that names no live op: the chunk of an op that ended
 * early (1: it was, and its slot is free now; 0: not one of those). */
int pull_stale(struct agent *a, const struct rmad_am_hdr *h);
/* node died: the slots that waited for its answers are free
 * (rma_pull_origin.c, the origin side; the rest is rma_pull.c's) */
void pull_origin_node_dead(struct agent *a, int node);
/* Target side: a PULL accumulate, put or get came (checked, then read
 * and applied, or read from the window and written, or answered with
 * an error); node died; reads or writes in flight or waiting;
 * everything freed. */
void pull_request(struct agent *a, const struct rmad_am_hdr *h,
		  const void *pl, struct agent_win *w);
void pull_node_dead(struct agent *a, int node);
int pull_busy(struct agent *a);
/* Reads applied yet, waiting for a member's accumulate lock; try them
 * again. */
int pull_waiting(struct agent *a);
void pull_retry(struct agent *a);
void pull_fini(struct agent *a);

/* rma_pkt.c: a request that cannot be served is answered with status
 * (nothing answers an answer), so that its origin does not wait forever */
void rma_pkt_refuse(struct agent *a, const struct rmad_am_hdr *h, int32_t status);
/* rma_pkt.c: the RMA packets' handlers registered, one per type */
void rma_pkt_init(struct agent *a);

/* rma_oplist.c: the operation table's data */
struct rma_target *oplist_target_find(struct rma_origin *o, int32_t rank);
struct rma_target *oplist_target_new(struct agent *a, struct rma_origin *o,
				     int32_t rank, int state);
void oplist_target_free(struct rma_origin *o, struct rma_target *t);
void oplist_set_err(struct rma_origin *o, int32_t st);
void oplist_op_finish(struct agent *a, struct rma_origin *o, uint32_t i);
struct rma_origin *oplist_origin_find(struct agent_win *w, uint32_t c,
				      uint32_t gen);
void oplist_add(struct rma_ctx *R, uint32_t *head, uint32_t *tail,
		     uint32_t i);
uint32_t oplist_pop(struct rma_ctx *R, uint32_t *head, uint32_t *tail);
/* op i onto / off target t's pending list (the origin's count held) */
void oplist_tadd(struct rma_origin *o, struct rma_target *t, uint32_t i);
uint32_t oplist_tpop(struct rma_origin *o, struct rma_target *t);
struct rma_origin *oplist_origin_new(struct agent *a, struct agent_win *w,
				     uint32_t c, uint32_t nslots,
				     uint32_t npool);
void oplist_origin_free(struct agent *a, struct rma_origin *o);

/* rma_pscw.c: post/start/complete/wait between nodes */
int32_t pscw_post(struct agent *a, struct agent_win *w, struct win_local *l,
		  const struct rma_op *op);
/* may ops go to rank in o's access epoch: 1 (its post is here), 0 (not
 * yet), -1 (never: its node or the job died) */
int pscw_ready(struct agent *a, struct rma_origin *o, int32_t rank);
/* origin_route() of START and COMPLETE: 0 when placed, -1 to stall */
int pscw_route(struct agent *a, struct rma_origin *o, uint32_t i);
int pscw_sync_done(struct agent *a, struct rma_origin *o,
		   const struct rma_op *op);
int32_t pscw_complete(struct agent *a, struct rma_origin *o,
		      const struct rma_op *op);

/* rma_origin.c: routing and issuing ops */
int origin_has_result(uint16_t opc);
/* the accumulate family, kept in order unless accumulate_ordering says
 * otherwise */
int origin_is_acc(uint16_t opc);
void origin_uncount_issued(struct rma_target *t, struct rma_op *op);
/* A transfer of op uses its client's memory in place: op is not
 * complete at the origin (a flush_local waits) until it ends, when
 * origin_uncount_issued counts it out.  (Here, for rma_pull.c below too.) */
static inline void note_inplace(struct rma_target *t, struct rma_op *op)
{
	if (op->inplace || !op->counted)
		return;
	op->inplace = 1;
	t->ninplace++;
}
/* Must op, next on t, wait for an earlier write it could overtake?  1
 * when it must (a FLUSH may go to hurry the answer). */
int origin_order_hazard(struct agent *a, struct rma_origin *o,
			struct rma_target *t, const struct rma_op *op);
/* Can op carry piggybacked synchronization: one active message? */
int origin_can_ride(struct agent *a, const struct rma_op *op);
/* Send what the credits allow of op i with the piggybacked flags; 1
 * once every byte went out (or it failed). */
int origin_issue_op(struct agent *a, struct rma_origin *o,
		    struct rma_target *t, uint32_t i, uint16_t flags);
/* RMA_DONE (a FLUSH) for what went out unanswered; 1 if one went. */
int origin_send_flush(struct agent *a, struct rma_origin *o,
		      struct rma_target *t);
/* Before the closing op: a plain get goes last (its answer carries the
 * ack), unless a later op writes its bytes. */
void origin_get_to_tail(struct agent *a, struct rma_target *t);
void origin_send_lock_msg(struct agent *a, struct rma_origin *o, int32_t rank,
			  int node, int type, int excl);
int origin_route(struct agent *a, struct rma_origin *o, uint32_t i);

/* rma_win.c: synchronization state changes */
/* Is sync request i satisfied?  (Everything before it was placed.) */
int rma_win_sync_done(struct agent *a, struct rma_origin *o, uint32_t i);
/* Sync request i, done and off the queue, completes: 1, or 0 for a
 * fence now in its window's barrier. */
int rma_win_sync_finish(struct agent *a, struct rma_origin *o, uint32_t i);
/* o's FENCE completes with st */
void rma_win_fence_finish(struct agent *a, struct rma_origin *o, int32_t st);
/* w's fence barrier released (0) or failed (the windows' fence hook) */
void rma_win_fence_done(struct agent *a, struct agent_win *w, int status);
/* lock_all's window protocol, its next batch: 1 if moved */
int rma_win_lock_all_step(struct agent *a, struct rma_origin *o);

/* rma_progress.c: the seeds' basic routines (see there) */
int issue_ops_target(struct agent *a, struct rma_origin *o,
		     struct rma_target *t);
int make_rma_progress_target(struct agent *a, struct rma_origin *o,
			     struct rma_target *t);
int make_rma_progress_win(struct agent *a, struct rma_origin *o);
/* origin_route() and make_rma_progress_target() alone, when only op i's target
 * can move: 1 when done, 0 for the general path (make_rma_progress_win) */
int rma_progress_fast(struct agent *a, struct rma_origin *o, uint32_t i);
/* a fi_write/fi_read chunk landed (the transfer slots' completion) */
void rma_progress_xfer_done(struct rmad_fabric_xfer *fx, int status);
void rma_progress_init(struct agent *a);

/* rma.c: an origin's end */
void agent_rma_drop_ops(struct agent *a, struct rma_origin *o, int st);

/* An answer to one of our requests, not a request: it comes from its
 * target's node, a request from its origin's. */
static inline int rma_answer_type(int type)
{
	switch (type) {
	case RMAD_AM_RMA_LOCK_GRANTED:
	case RMAD_AM_RMA_LOCK_RETRY:
	case RMAD_AM_RMA_UNLOCK_ACK:
	case RMAD_AM_RMA_ACK:
	case RMAD_AM_RMA_RESP:
	case RMAD_AM_RMA_FLUSH_ACK:
		return 1;
	}
	return 0;
}

#endif
