/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c - passive-target RMA between nodes: the seeds' operation table
 * on the origin side, and lock granting and op application on the target
 * side.
 *
 * Origin side.  Each (client, window) pair that posts remote operations
 * gets an origin state (struct rma_origin): its window state (NONE,
 * PER_TARGET, LOCK_ALL_CALLED/ISSUED/GRANTED), a slot array of target
 * elements hashed by rank, and a queue of synchronization requests.
 * Each target element holds its per-target lock state (LOCK_CALLED,
 * LOCK_ISSUED, LOCK_GRANTED) and the list of its pending ops; ops that
 * were sent but not answered are counted (nissued, nres), never listed,
 * since their answers name them by cookie.  Target elements come from a
 * window-local pool first, then from the global pool (target_pool).
 * When both are empty, the origin stalls its submissions and runs the
 * seeds' CLEANUP_WIN_AGGRESSIVE: in a lock_all epoch it switches to the
 * window protocol (lock every remote member, LOCKALL_BATCH at a time);
 * otherwise it picks one of its targets, in the order LOCK_GRANTED,
 * LOCK_ISSUED, LOCK_CALLED, completes its ops and frees the element,
 * remembering a granted lock so that UNLOCK still reaches it.
 *
 * issue_target()/progress_origin()/agent_rma_progress() are the seeds'
 * ISSUE_OPS_* and MAKE_RMA_PROGRESS_*; answers are cleaned up as they
 * arrive (CLEANUP_*).  Everything runs on the agent thread.
 *
 * Data: inline payloads come from the op element; larger origin buffers
 * are read in place (rmad_alloc_mem regions, mapped here) or through
 * process_vm_readv; results are written back the same way.  Transfers
 * larger than one active message are pipelined, CHUNKS_INFLIGHT chunks
 * per op at a time.
 *
 * Target side.  Every member's window starts with a control page whose
 * lock word same-node clients take with atomics.  The agent takes the
 * same word for remote origins, granting from a FIFO of requests drawn
 * from a bounded pool (lock_queue); a request that finds the pool empty
 * is answered LOCK_RETRY and the origin asks again later.  While the FIFO
 * is not empty the word carries RMAD_LW_QUEUED, and a same-node releaser
 * that sees it kicks our doorbell.  Ops are applied in arrival order
 * (the fabric keeps send-after-send order), accumulates with CPU atomics,
 * so local and remote accumulates are atomic with respect to each other.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "agent.h"
#include "atomics.h"
#include "counter.h"
#include "dtype.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

enum { WS_NONE, WS_PER_TARGET, WS_LOCK_ALL_CALLED, WS_LOCK_ALL_ISSUED,
       WS_LOCK_ALL_GRANTED };
enum { T_CALLED, T_ISSUED, T_GRANTED };

#define CHUNKS_INFLIGHT	16
#define XFER_PER_OP	8	/* fi_write/fi_read chunks per op */
#define XFER_MAX	64	/* ... and in all */
#define LOCKALL_BATCH	16
#define RETRY_NS	(200 * 1000ull)

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
	uint8_t nx;			/* of them, chunks in flight */
	uint8_t staged;			/* origin, result: staging offsets */
	uint64_t raddr, rkey;		/* rdma: target bytes, key */
	uint64_t wseq;			/* its place on the channel */
	uint16_t pflags;		/* RMAD_AMF_* it went out with */
	struct rma_origin *o;		/* set while it is in the table */
	uint8_t data[RMAD_OP_INLINE];
};

struct rma_target {
	struct rma_target *next;	/* slot chain or free list */
	int32_t rank;
	int node;
	uint8_t state, excl, nocheck, want_unlock, unlocking, evict, local;
	uint8_t sync_want;		/* a flush waits: ask for the ack */
	uint8_t release;		/* a flush_local waits: hold nothing */
	uint8_t lock_op;		/* the lock request rides on an op */
	uint8_t released;		/* an op's answer said UNLOCKED */
	uint8_t lock_now;		/* request the lock even with no op */
	uint32_t lseq;			/* place among the epoch's lock calls */
	uint32_t head, tail;		/* pending ops */
	uint32_t npend;			/* ... how many */
	uint32_t nissued;		/* sent, not fully answered */
	uint32_t nres;			/* of them, ops with results */
	uint32_t nrdma;			/* of them, fi_write/fi_read ops */
	uint32_t nacc;			/* of them, accumulates */
	uint8_t order_blocked;		/* an accumulate waits for them */
	/* ops on the ordered channel: sent, known applied, RMA_DONE asked */
	uint64_t sent_seq, done_seq, flush_seq;
	uint64_t retry_at;		/* LOCK_RETRY: ask again then */
	uint64_t noted_at;		/* last RMA_NOTE sent */
};

struct rma_origin {
	struct rma_origin *next;
	struct agent_win *w;
	uint32_t client, gen;
	int32_t rank;
	int state;
	int nocheck_all;
	int32_t err;			/* first async error, for the next sync */
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
	struct rmad_am_hdr *pkt;	/* the operation that came with it */
};

struct rma_lock {
	struct lock_ent *qhead, *qtail;	/* waiting, FIFO */
	struct lock_ent *holders;	/* granted to remote origins */
	struct rma_lock *wnext;		/* on the waiting list */
	int waiting;
	struct agent_win *w;
	struct win_local *l;
};

/*
 * One fi_write/fi_read chunk in flight.  Its data always passes through
 * a bounce buffer of the agent's (rdma_chunk bytes): the client's memory
 * may go away with the client while the provider still works on it, and
 * our own buffers cannot.
 */
struct rma_xfer {
	struct rmad_fabric_xfer fx;	/* first: the completion names it */
	struct rma_xfer *next;		/* free list */
	struct agent *a;
	uint32_t op, serial;
	uint64_t off, len;
	char *buf;
};

/* rmad_stats counts packets by RMAD_PKT_*, the wire's RMA types in order */
static_assert(RMAD_AM_RMA_RESP - RMAD_AM_RMA_LOCK == RMAD_PKT_RESP &&
	      RMAD_AM_RMA_NOTE - RMAD_AM_RMA_LOCK == RMAD_PKT_NOTE &&
	      RMAD_AM_TYPE_MAX - RMAD_AM_RMA_LOCK <= RMAD_PKT_TYPES,
	      "packet types");

static struct rma_op *sh;		/* by op index */
static uint32_t nsh;
static uint32_t serials;
static struct rma_target *tmem, *tfree;	/* global target pool */
static struct lock_ent *lmem, *lfree;	/* lock entries */
static struct rma_lock *lwait;		/* members with waiting requests */
static int retry_pending;
static int ordered;			/* the fabric keeps send-after-send */
static struct rma_xfer xfers[XFER_MAX], *xfree;
static char *bounce;			/* XFER_MAX x rdma_chunk, lazily */
static size_t bounce_len;
static struct rmad_fabric_mr *bounce_mr;
static void *bounce_desc;

/* ------------------------------------------------------ client memory */

static int client_io(struct agent *a, uint32_t c, uint64_t addr, void *buf,
		     size_t len, int write)
{
	void *p = agent_mem_lookup(a, c, addr, len);
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (p) {
		if (write)
			memcpy(p, buf, len);
		else
			memcpy(buf, p, len);
		return 0;
	}
	if (!a->cl[c].registered)
		return RMAD_ERR_AGENT;
	if (!a->p.cma || a->cl[c].staged)
		return RMAD_ERR_PERM;	/* it stages what it wants moved */
	n = write ? process_vm_writev(a->cl[c].pid, &l, 1, &r, 1, 0) :
		    process_vm_readv(a->cl[c].pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	rmad_warn("client %u: cannot %s %zu bytes at %#llx: %s", c,
		  write ? "write" : "read", len, (unsigned long long)addr,
		  n < 0 ? strerror(errno) : "short");
	return n < 0 && errno == EPERM ? RMAD_ERR_PERM : RMAD_ERR_ARG;
}

/* ------------------------------------------------------ origin sends */

/* Send for origin o, counting the packet in its statistics. */
static int osend(struct agent *a, struct rma_origin *o, int node,
		 struct rmad_am_hdr *h, const void *pl, size_t plen)
{
	if (h->type >= RMAD_AM_RMA_LOCK && h->type < RMAD_AM_TYPE_MAX) {
		o->st.pkts_sent[h->type - RMAD_AM_RMA_LOCK]++;
		o->st.pkts_sent_total++;
	}
	return agent_am_send(a, node, h, pl, plen);
}

static void orecv(struct rma_origin *o, const struct rmad_am_hdr *h)
{
	if (h->type >= RMAD_AM_RMA_LOCK && h->type < RMAD_AM_TYPE_MAX) {
		o->st.pkts_recv[h->type - RMAD_AM_RMA_LOCK]++;
		o->st.pkts_recv_total++;
	}
}

/* The client's staging area: where staged ops keep their data. */
/* Data of op at its client address (or staging offset) addr. */
static int op_io(struct agent *a, const struct rma_op *op, uint64_t addr,
		 void *buf, size_t len, int write)
{
	uint8_t *p;

	if (!op->staged)
		return client_io(a, op->client, addr, buf, len, write);
	/* checked at submission: addr + len lies inside the area */
	p = rmad_shm_staging_at(a->seg, &a->lay, op->client) + addr;
	if (write)
		memcpy(p, buf, len);
	else
		memcpy(buf, p, len);
	return 0;
}

/* ---------------------------------------------------------- lock word */

static void lw_release(uint32_t *lw, int excl)
{
	if (rmad_lw_release(lw, excl) & RMAD_LW_SLEEPERS)
		rmad_futex_wake(lw, INT_MAX);
}

static uint32_t *lock_word(struct win_local *l)
{
	return &((struct rmad_win_ctl *)l->base)->lock;
}

/* -------------------------------------------------------- answering */

static void answer(struct agent *a, const struct rmad_am_hdr *req, int type,
		   int status, uint16_t flags, const void *pl, size_t plen)
{
	struct rmad_am_hdr r = {
		.type = (uint8_t)type,
		.flags = flags,
		.job = req->job,
		.win = req->win,
		.origin = req->origin,
		.target = req->target,
		.dtype = req->dtype,
		.op = req->op,
		.disp = req->disp,
		.count = req->count,
		.seq = req->seq,
		.status = status,
		.wkey = req->wkey,
	};

	agent_am_send(a, (int)req->src_node, &r, pl, plen);
}

/* ------------------------------------------------- target-side locks */

static struct rma_lock *lock_of(struct agent_win *w, struct win_local *l)
{
	if (!l->lk) {
		l->lk = calloc(1, sizeof(*l->lk));
		if (l->lk) {
			l->lk->w = w;
			l->lk->l = l;
		}
	}
	return l->lk;
}

static void send_grant(struct agent *a, struct rma_lock *k,
		       struct lock_ent *e)
{
	struct rmad_am_hdr r = {
		.type = RMAD_AM_RMA_LOCK_GRANTED,
		.flags = (e->excl ? RMAD_AMF_LOCK_EXCL : RMAD_AMF_LOCK_SHARED) |
			 (e->waited ? RMAD_AMF_QUEUED : 0),
		.job = k->w->job->key,
		.origin = e->origin,
		.target = k->l->rank,
		.wkey = k->w->key,
	};

	agent_am_send(a, (int)e->node, &r, NULL, 0);
}

static void apply_op(struct agent *a, const struct rmad_am_hdr *h,
		     const uint8_t *pl, struct agent_win *w, uint16_t aflags);

/* Back to the pool, or to the heap it came from. */
static void ent_free(struct lock_ent *e)
{
	free(e->pkt);
	e->pkt = NULL;
	if (e->heap) {
		free(e);
		return;
	}
	e->next = lfree;
	lfree = e;
}

/*
 * A granted request moves to the heap: lock_queue bounds the requests
 * that wait, not the locks held, or holders that wait for locks
 * elsewhere could keep every entry and starve the requests that would
 * let them finish.  (Without memory the pooled entry stays.)
 */
static struct lock_ent *hold(struct lock_ent *e)
{
	struct lock_ent *h = malloc(sizeof(*h));

	if (!h)
		return e;
	*h = *e;
	h->heap = 1;
	e->pkt = NULL;
	e->next = lfree;
	lfree = e;
	return h;
}

/*
 * Grant every waiting request the word allows now; 1 if any.  A request
 * that came with an operation gets that operation applied and answered
 * instead of a LOCK_GRANTED.
 *
 * The rule is the same-node CAS's: a shared request is granted whenever
 * the word is not held exclusive, even past an exclusive request queued
 * before it; exclusive requests go in FIFO order.  Holding shared locks
 * while asking for more is what lock_all does (same-node ones at once,
 * remote ones later), so a queued exclusive request that kept later
 * shared ones out would close a cycle: A holds S(x) and waits for S(y)
 * behind E(y), which waits for B's S(y), while B waits for S(x) behind
 * an E(x) that waits for A.  Exclusive requests can starve under a
 * constant stream of shared ones; MPICH's rule is the same.
 */
static int try_grant(struct agent *a, struct rma_lock *k)
{
	uint32_t *lw = lock_word(k->l);
	struct lock_ent **pp = &k->qhead, *prev = NULL;
	int granted = 0, blocked = 0;

	while (*pp) {
		struct lock_ent *e = *pp;

		if ((blocked && e->excl) ||	/* FIFO among exclusives */
		    !rmad_lw_try(lw, e->excl, RMAD_LW_AGENT)) {
			uint32_t v = load_relaxed(lw);

			e->waited = 1;
			if (!(v & RMAD_LW_QUEUED) &&
			    !__atomic_compare_exchange_n(lw, &v,
							 v | RMAD_LW_QUEUED, 0,
							 __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;	/* raced with a release: again */
			blocked = 1;
			if (v & RMAD_LW_EXCL)
				break;		/* nobody else gets in */
			/* flagged: a later shared request may still fit */
			prev = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		if (k->qtail == e)
			k->qtail = prev;
		e = hold(e);
		e->next = k->holders;
		k->holders = e;
		granted = 1;
		if (e->pkt) {
			struct rmad_am_hdr *ph = e->pkt;
			uint16_t f = RMAD_AMF_GRANTED |
				     (e->waited ? RMAD_AMF_QUEUED : 0);

			e->pkt = NULL;
			/* (may release e again: an UNLOCK rode along; the
			 * walk goes on from *pp, which stays valid) */
			apply_op(a, ph, (const uint8_t *)(ph + 1), k->w, f);
			free(ph);
		} else {
			send_grant(a, k, e);
		}
	}
	if (!k->qhead)
		uatomic_and(lw, ~RMAD_LW_QUEUED);
	return granted;
}

static void lock_wait_add(struct rma_lock *k)
{
	if (k->waiting)
		return;
	k->waiting = 1;
	k->wnext = lwait;
	lwait = k;
}

static int retry_grants(struct agent *a)
{
	int n = 0;

	for (struct rma_lock **pp = &lwait; *pp;) {
		struct rma_lock *k = *pp;

		n += try_grant(a, k);
		if (!k->qhead) {
			k->waiting = 0;
			*pp = k->wnext;
		} else {
			pp = &k->wnext;
		}
	}
	return n;
}

/*
 * A lock request, alone (LOCK) or riding on an operation (pkt: a copy
 * of that packet, kept until the grant).  0 when queued or granted;
 * RMAD_ERR_NOMEM when there is no room to remember it.
 */
static int lock_enqueue(struct agent *a, const struct rmad_am_hdr *h,
			const uint8_t *pl, struct agent_win *w,
			struct win_local *l, int with_op)
{
	struct rma_lock *k = lock_of(w, l);
	struct lock_ent *e = lfree;

	if (!k || !e)
		return RMAD_ERR_NOMEM;
	e->pkt = NULL;
	if (with_op) {
		e->pkt = malloc(sizeof(*h) + h->payload_len);
		if (!e->pkt)
			return RMAD_ERR_NOMEM;
		memcpy(e->pkt, h, sizeof(*h));
		if (h->payload_len)
			memcpy(e->pkt + 1, pl, h->payload_len);
	}
	lfree = e->next;
	e->next = NULL;
	e->heap = 0;
	e->origin = h->origin;
	e->node = h->src_node;
	e->excl = !!(h->flags & RMAD_AMF_LOCK_EXCL);
	e->waited = 0;
	if (k->qtail)
		k->qtail->next = e;
	else
		k->qhead = e;
	k->qtail = e;
	try_grant(a, k);
	if (k->qhead)
		lock_wait_add(k);
	return 0;
}

static void lock_request(struct agent *a, const struct rmad_am_hdr *h,
			 struct agent_win *w, struct win_local *l)
{
	if (lock_enqueue(a, h, NULL, w, l, 0))
		answer(a, h, RMAD_AM_RMA_LOCK_RETRY, 0, 0, NULL, 0);
}

/* Release the lock origin holds here through node; 1 if it held one. */
static int holder_release(struct win_local *l, int32_t origin, uint32_t node)
{
	struct rma_lock *k = l->lk;

	for (struct lock_ent **pp = k ? &k->holders : NULL; pp && *pp;
	     pp = &(*pp)->next) {
		struct lock_ent *e = *pp;

		if (e->origin != origin || e->node != node)
			continue;
		*pp = e->next;
		lw_release(lock_word(l), e->excl);
		ent_free(e);
		if (k->qhead)
			lock_wait_add(k);	/* grant on the next turn */
		return 1;
	}
	return 0;
}

static void lock_release(struct agent *a, const struct rmad_am_hdr *h,
			 struct win_local *l)
{
	/* no holder: a NOCHECK epoch, or an element recreated after
	 * eviction; the seeds answer it all the same */
	holder_release(l, h->origin, h->src_node);
	answer(a, h, RMAD_AM_RMA_UNLOCK_ACK, 0, 0, NULL, 0);
	if (l->lk && l->lk->qhead)
		try_grant(a, l->lk);
}

/* A member's window goes away: drop its lock bookkeeping. */
static void lock_free(struct win_local *l)
{
	struct rma_lock *k = l->lk;

	if (!k)
		return;
	for (struct rma_lock **pp = &lwait; *pp; pp = &(*pp)->wnext)
		if (*pp == k) {
			*pp = k->wnext;
			break;
		}
	for (int pass = 0; pass < 2; pass++) {
		struct lock_ent *e = pass ? k->holders : k->qhead;

		while (e) {
			struct lock_ent *n = e->next;

			ent_free(e);
			e = n;
		}
	}
	free(k);
	l->lk = NULL;
}

/* ---------------------------------------------- target-side operations */

/*
 * Apply one operation to a member's window and answer it when the
 * origin needs an answer: results, an error, a requested ack, or
 * piggybacked synchronization (aflags: what the grant adds).  An UNLOCK
 * that rode along releases the origin's lock once the data is in.
 */
static void apply_op(struct agent *a, const struct rmad_am_hdr *h,
		     const uint8_t *pl, struct agent_win *w, uint16_t aflags)
{
	struct win_local *l = agent_win_local(w, h->target);
	size_t es = rmad_dtype_size(h->dtype);
	uint64_t len = h->count * es;
	uint8_t res[16384];
	size_t room = a->p.am_buf_size - sizeof(*h);
	int st = 0, type = h->type == RMAD_AM_RMA_PUT ||
			   h->type == RMAD_AM_RMA_ACC ?
			   RMAD_AM_RMA_ACK : RMAD_AM_RMA_RESP;
	uint8_t *dst;

	if (!l) {
		st = RMAD_ERR_RANK;
		goto out;
	}
	if (!es || h->count > room || len > room || len > sizeof(res)) {
		st = RMAD_ERR_TYPE;
		goto out;
	}
	if (h->disp > l->size || len > l->size - h->disp) {
		st = RMAD_ERR_DISP;
		goto out;
	}
	dst = (uint8_t *)l->base + RMAD_WIN_CTL_SIZE + h->disp;
	switch (h->type) {
	case RMAD_AM_RMA_PUT:
		if (h->payload_len != len) {
			st = RMAD_ERR_ARG;
			break;
		}
		memcpy(dst, pl, len);
		break;
	case RMAD_AM_RMA_ACC:
		st = rmad_op_check(h->dtype, h->op);
		if (!st && h->op == RMAD_NO_OP)
			st = RMAD_ERR_OP;
		if (!st && h->payload_len != len)
			st = RMAD_ERR_ARG;
		if (!st)
			rmad_acc_apply(dst, pl, NULL, h->dtype, h->op,
				       h->count);
		break;
	case RMAD_AM_RMA_GET:
		if (h->payload_len) {
			st = RMAD_ERR_ARG;
			break;
		}
		memcpy(res, dst, len);
		break;
	case RMAD_AM_RMA_GACC:
		st = rmad_op_check(h->dtype, h->op);
		if (!st && h->payload_len != (h->op == RMAD_NO_OP ? 0 : len))
			st = RMAD_ERR_ARG;
		if (!st)
			rmad_acc_apply(dst, h->op == RMAD_NO_OP ? NULL : pl,
				       res, h->dtype, h->op, h->count);
		break;
	case RMAD_AM_RMA_CAS:
		st = rmad_cas_check(h->dtype);
		if (!st && (h->count != 1 || h->payload_len != 2 * es))
			st = RMAD_ERR_ARG;
		if (!st)
			rmad_cas_apply(dst, pl, pl + es, res, h->dtype);
		break;
	}
	/* release: the window update is visible before the answer (and
	 * before an unlock lets the next holder in) */
	cmm_smp_mb();
out:
	if (st) {
		a->st.pkts_dropped++;
		rmad_warn("rma %u from node %u (rank %d -> %d): refused (%d)",
			  h->type, h->src_node, h->origin, h->target, st);
	}
	if (l && (h->flags & RMAD_AMF_UNLOCK)) {
		holder_release(l, h->origin, h->src_node);
		aflags |= RMAD_AMF_UNLOCKED;
	}
	if (st || type == RMAD_AM_RMA_RESP || aflags ||
	    (h->flags & (RMAD_AMF_ACK_REQ | RMAD_AMF_UNLOCK |
			 RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL)))
		answer(a, h, type, st, aflags, res,
		       type == RMAD_AM_RMA_RESP && !st ? len : 0);
}

/*
 * An operation that carries its lock request: applied at once when the
 * lock is free, else queued with the request and applied at the grant.
 * With no room to queue it, the origin hears LOCK_RETRY (with the op's
 * cookie) and sends it again later.
 */
static void lock_and_apply(struct agent *a, const struct rmad_am_hdr *h,
			   const uint8_t *pl, struct agent_win *w)
{
	struct win_local *l = agent_win_local(w, h->target);

	if (!l || !l->base) {
		apply_op(a, h, pl, w, 0);	/* answers the error */
		return;
	}
	if (h->payload_len > a->p.am_buf_size ||
	    lock_enqueue(a, h, pl, w, l, 1))
		answer(a, h, RMAD_AM_RMA_LOCK_RETRY, 0, 0, NULL, 0);
}

/* RMA_DONE: everything before it from this origin was applied (the
 * channel is ordered), so the answer goes right back. */
static void flush_request(struct agent *a, const struct rmad_am_hdr *h)
{
	answer(a, h, RMAD_AM_RMA_FLUSH_ACK, 0, 0, NULL, 0);
}

/* --------------------------------------------------- origin: elements */

static struct rma_target *target_find(struct rma_origin *o, int32_t rank)
{
	for (struct rma_target *t = o->slots[(uint32_t)rank % o->nslots]; t;
	     t = t->next)
		if (t->rank == rank)
			return t;
	return NULL;
}

static int evicted_has(struct rma_origin *o, int32_t rank)
{
	for (int i = 0; i < o->nevicted; i++)
		if (o->evicted[i] == rank)
			return 1;
	return 0;
}

static int evicted_take(struct rma_origin *o, int32_t rank)
{
	for (int i = 0; i < o->nevicted; i++)
		if (o->evicted[i] == rank) {
			o->evicted[i] = o->evicted[--o->nevicted];
			return 1;
		}
	return 0;
}

static struct rma_target *target_new(struct agent *a, struct rma_origin *o,
				     int32_t rank, int state)
{
	struct rma_target *t = o->lfree;
	int node = agent_rank_node(o->w->job, rank);

	if (node < 0)
		return NULL;
	if (t) {
		o->lfree = t->next;
	} else if ((t = tfree)) {
		tfree = t->next;
	} else {
		o->need_target = 1;
		return NULL;
	}
	memset(t, 0, sizeof(*t));
	t->local = o->lmem && t >= o->lmem && t < o->lmem + o->nlmem;
	t->rank = rank;
	t->node = node;
	t->state = (uint8_t)state;
	t->head = t->tail = RMAD_NIL;
	t->next = o->slots[(uint32_t)rank % o->nslots];
	o->slots[(uint32_t)rank % o->nslots] = t;
	if (++o->ntargets > (int)o->st.target_hwm)
		o->st.target_hwm = (uint32_t)o->ntargets;
	(void)a;
	return t;
}

static void target_free(struct rma_origin *o, struct rma_target *t)
{
	struct rma_target **pp = &o->slots[(uint32_t)t->rank % o->nslots];

	for (; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	o->ntargets--;
	if (t->local) {
		t->next = o->lfree;
		o->lfree = t;
	} else {
		t->next = tfree;
		tfree = t;
	}
}

/* ------------------------------------------------------ origin: issue */

static void set_err(struct rma_origin *o, int32_t st)
{
	if (st && !o->err)
		o->err = st;
}

static void op_finish(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &sh[i];
	int32_t st = op->status;

	set_err(o, st);
	if (op->opcode >= RMAD_OPC_PUT && op->opcode <= RMAD_OPC_CAS)
		o->st.ops_completed++;
	op->serial = 0;
	op->o = NULL;
	agent_complete_op(a, op->client, i, st);
}

static int am_type(uint16_t opc)
{
	switch (opc) {
	case RMAD_OPC_PUT: return RMAD_AM_RMA_PUT;
	case RMAD_OPC_GET: return RMAD_AM_RMA_GET;
	case RMAD_OPC_ACC: return RMAD_AM_RMA_ACC;
	case RMAD_OPC_GACC: return RMAD_AM_RMA_GACC;
	default: return RMAD_AM_RMA_CAS;
	}
}

static int has_result(uint16_t opc)
{
	return opc == RMAD_OPC_GET || opc == RMAD_OPC_GACC ||
	       opc == RMAD_OPC_CAS;
}

/* The accumulate family, which MPI keeps in order per origin and target
 * unless accumulate_ordering says otherwise. */
static int is_acc(uint16_t opc)
{
	return opc == RMAD_OPC_ACC || opc == RMAD_OPC_GACC ||
	       opc == RMAD_OPC_CAS;
}

static void count_issued(struct rma_target *t, struct rma_op *op)
{
	if (op->counted)
		return;
	op->counted = 1;
	op->o->st.ops_issued++;
	t->nissued++;
	if (has_result(op->opcode))
		t->nres++;
	if (op->rdma)
		t->nrdma++;
	if (is_acc(op->opcode))
		t->nacc++;
}

static void uncount_issued(struct rma_target *t, struct rma_op *op)
{
	if (!op->counted)
		return;
	op->counted = 0;
	t->nissued--;
	if (has_result(op->opcode))
		t->nres--;
	if (op->rdma)
		t->nrdma--;
	if (is_acc(op->opcode))
		t->nacc--;
}

static int progress_origin(struct agent *a, struct rma_origin *o);

/* A chunk landed (or failed): CLEANUP for rdma ops. */
static void xfer_done(struct rmad_fabric_xfer *fx, int status)
{
	struct rma_xfer *x = (struct rma_xfer *)fx;
	struct agent *a = x->a;
	struct rma_op *op = &sh[x->op];
	struct rma_origin *o = op->o;
	struct rma_target *t;

	if (op->serial != x->serial || !o) {
		/* the op ended without us (its window went away) */
		x->next = xfree;
		xfree = x;
		return;
	}
	op->nx--;
	if (status && !op->status)
		op->status = status;
	if (!status && !op->status && op->opcode == RMAD_OPC_GET) {
		int err = op_io(a, op, op->origin + x->off, x->buf, x->len,
				1);

		if (err)
			op->status = err;
	}
	op->done += x->len;
	x->next = xfree;
	xfree = x;
	t = target_find(o, op->target);
	if (op->done >= op->len && op->sent >= op->len) {
		if (t)
			uncount_issued(t, op);
		op_finish(a, o, x->op);
	}
	progress_origin(a, o);
}

/* The bounce buffers, made on first use (registered if the provider
 * wants local buffers registered). */
static int bounce_init(struct agent *a)
{
	size_t len = (size_t)a->p.rdma_chunk * XFER_MAX;
	void *p;

	if (bounce)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return RMAD_ERR_NOMEM;
	if (rmad_fabric_needs_local_mr(a->fab) &&
	    rmad_fabric_mr_reg(a->fab, p, len, 0, &bounce_mr, NULL, NULL,
			       &bounce_desc)) {
		munmap(p, len);
		return RMAD_ERR_FABRIC;
	}
	bounce = p;
	bounce_len = len;
	for (int k = 0; k < XFER_MAX; k++) {
		xfers[k].buf = bounce + (size_t)k * (size_t)a->p.rdma_chunk;
		xfers[k].a = a;
		xfers[k].fx.done = xfer_done;
		xfers[k].next = xfree;
		xfree = &xfers[k];
	}
	return 0;
}

/*
 * ISSUE for a put or get that moves by fi_write/fi_read: post what the
 * chunk credits allow.  The target's agent takes no part; a put counts
 * as done once its data is placed there (delivery complete).
 */
static int issue_rdma(struct agent *a, struct rma_origin *o,
		      struct rma_target *t, uint32_t i)
{
	struct rma_op *op = &sh[i];
	int put = op->opcode == RMAD_OPC_PUT, err = bounce_init(a);
	uint64_t now = rmad_now_ns();

	if (!err && op->sent == 0 &&
	    now - t->noted_at > (uint64_t)a->p.spin_us * 500) {
		/* wake the target's agent: our chunks need its polling */
		struct rmad_am_hdr h = {
			.type = RMAD_AM_RMA_NOTE,
			.job = o->w->job->key,
			.origin = o->rank,
			.target = op->target,
			.wkey = o->w->key,
		};

		osend(a, o, t->node, &h, NULL, 0);
		t->noted_at = now;
	}
	while (!err && op->sent < op->len) {
		uint64_t n = op->len - op->sent;
		struct rma_xfer *x = xfree;

		if (op->nx >= XFER_PER_OP)
			return 0;
		if (!x) {
			retry_pending = 1;	/* a chunk of another op ends */
			return 0;
		}
		if (n > (uint64_t)a->p.rdma_chunk)
			n = (uint64_t)a->p.rdma_chunk;
		if (put)
			err = op_io(a, op, op->origin + op->sent, x->buf,
				    (size_t)n, 0);
		if (err)
			break;
		err = put ? rmad_fabric_write(a->fab, t->node, x->buf,
					      (size_t)n, bounce_desc,
					      op->raddr + op->sent, op->rkey,
					      &x->fx) :
			    rmad_fabric_read(a->fab, t->node, x->buf,
					     (size_t)n, bounce_desc,
					     op->raddr + op->sent, op->rkey,
					     &x->fx);
		if (err == 1) {
			retry_pending = 1;	/* the provider is full */
			return 0;
		}
		if (err)
			break;
		if (put)
			o->st.rdma_writes++;
		else
			o->st.rdma_reads++;
		xfree = x->next;
		x->op = i;
		x->serial = op->serial;
		x->off = op->sent;
		x->len = n;
		op->nx++;
		op->sent += n;
	}
	if (err) {
		/* nothing more goes out; the op ends once what went out is
		 * done */
		op->status = err;
		op->len = op->sent;
	}
	if (op->done >= op->len && op->sent >= op->len) {
		uncount_issued(t, op);
		op_finish(a, o, i);
	}
	return 1;
}

/* ------------------------------------------------------ origin: routes */

static void origin_free(struct agent *a, struct rma_origin *o);

static struct rma_origin *origin_find(struct agent_win *w, uint32_t c,
				      uint32_t gen)
{
	for (struct rma_origin *o = w->origins; o; o = o->next)
		if (o->client == c && o->gen == gen && !o->dying)
			return o;
	return NULL;
}

static void list_add(uint32_t *head, uint32_t *tail, uint32_t i)
{
	sh[i].next = RMAD_NIL;
	if (*tail != RMAD_NIL)
		sh[*tail].next = i;
	else
		*head = i;
	*tail = i;
}

static uint32_t list_pop(uint32_t *head, uint32_t *tail)
{
	uint32_t i = *head;

	*head = sh[i].next;
	if (*head == RMAD_NIL)
		*tail = RMAD_NIL;
	return i;
}

/* Bytes of one active-message chunk of elements of size es. */
static size_t am_room(struct agent *a, size_t es)
{
	size_t room = (a->p.am_buf_size - sizeof(struct rmad_am_hdr)) / es * es;

	if (room > 16384 / 2)
		room = 16384 / 2 / es * es;
	return room;
}

/* Can op carry piggybacked synchronization: one active message? */
static int can_ride(struct agent *a, const struct rma_op *op)
{
	return !op->rdma && !op->sent &&
	       op->len <= am_room(a, rmad_dtype_size(op->dtype));
}

/*
 * Send what the credits allow of op i, with the piggybacked flags given
 * (only for an op of one message); 1 once every byte went out (or it
 * failed).  A put or accumulate of one message that asks for no answer
 * is done once it left: the ordered channel makes a later answer cover
 * it (ack elimination).
 */
static int issue_op(struct agent *a, struct rma_origin *o,
		    struct rma_target *t, uint32_t i, uint16_t flags)
{
	struct rma_op *op = &sh[i];
	size_t es = rmad_dtype_size(op->dtype);
	size_t room = am_room(a, es);
	uint8_t buf[16384];
	int data = op->opcode == RMAD_OPC_PUT || op->opcode == RMAD_OPC_ACC ||
		   (op->opcode == RMAD_OPC_GACC && op->op != RMAD_NO_OP) ||
		   op->opcode == RMAD_OPC_CAS;

	count_issued(t, op);
	if (op->rdma)
		return issue_rdma(a, o, t, i);
	if (op->len > room || !ordered)
		flags |= RMAD_AMF_ACK_REQ;	/* every chunk is answered */
	while (op->sent < op->len) {
		uint64_t n = op->len - op->sent;
		size_t plen = 0;
		struct rmad_am_hdr h = {
			.type = (uint8_t)am_type(op->opcode),
			.flags = flags,
			.job = o->w->job->key,
			.origin = o->rank,
			.target = op->target,
			.dtype = op->dtype,
			.op = op->op,
			.wkey = o->w->key,
		};

		if ((op->sent - op->done) / room >= CHUNKS_INFLIGHT)
			return 0;
		if (n > room)
			n = room;
		if (op->opcode == RMAD_OPC_CAS) {
			memcpy(buf, op->data, 2 * es);
			plen = 2 * es;
		} else if (data) {
			int err = op->is_inline ?
				  (memcpy(buf, op->data + op->sent, n), 0) :
				  op_io(a, op, op->origin + op->sent, buf, n, 0);
			if (err) {
				/* nothing more goes out; the op ends once
				 * what did go out is answered */
				op->status = err;
				op->len = op->sent;
				break;
			}
			plen = n;
		}
		h.disp = op->tdisp + op->sent;
		h.count = n / es;
		h.seq = ((uint64_t)op->serial << 32) | i;
		if (osend(a, o, t->node, &h, buf, plen)) {
			op->status = RMAD_ERR_FABRIC;
			op->len = op->sent;
			break;
		}
		if (!op->sent) {
			op->pflags = flags;
			op->wseq = ++t->sent_seq;
		}
		op->sent += n;
	}
	if (op->sent && op->sent >= op->len && !has_result(op->opcode) &&
	    !(op->pflags & (RMAD_AMF_ACK_REQ | RMAD_AMF_UNLOCK |
			    RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL))) {
		o->st.acks_saved++;
		op->done = op->len;
	}
	if (op->done >= op->len && op->sent >= op->len) {
		/* no answer comes, or everything failed before it left */
		uncount_issued(t, op);
		op_finish(a, o, i);
	}
	return 1;
}

static void send_lock_msg(struct agent *a, struct rma_origin *o, int32_t rank,
			  int node, int type, int excl)
{
	struct rmad_am_hdr h = {
		.type = (uint8_t)type,
		.flags = excl ? RMAD_AMF_LOCK_EXCL : RMAD_AMF_LOCK_SHARED,
		.job = o->w->job->key,
		.origin = o->rank,
		.target = rank,
		.wkey = o->w->key,
	};

	osend(a, o, node, &h, NULL, 0);
}

/* RMA_DONE for what went out unanswered, unless one is on its way. */
static int send_flush(struct agent *a, struct rma_origin *o,
		      struct rma_target *t)
{
	struct rmad_am_hdr h = {
		.type = RMAD_AM_RMA_FLUSH,
		.job = o->w->job->key,
		.origin = o->rank,
		.target = t->rank,
		.count = t->sent_seq,
		.wkey = o->w->key,
	};

	if (t->flush_seq >= t->sent_seq)
		return 0;
	t->flush_seq = t->sent_seq;
	osend(a, o, t->node, &h, NULL, 0);
	return 1;
}

static void tlist_add(struct rma_origin *o, struct rma_target *t, uint32_t i)
{
	list_add(&t->head, &t->tail, i);
	t->npend++;
	if (++o->nheld > o->st.ops_held_hwm)
		o->st.ops_held_hwm = o->nheld;
}

static uint32_t tlist_pop(struct rma_origin *o, struct rma_target *t)
{
	t->npend--;
	o->nheld--;
	return list_pop(&t->head, &t->tail);
}

/* Before the closing op: a plain get goes last, so that its answer
 * carries the ack (gets are not ordered with other operations). */
static void get_to_tail(struct agent *a, struct rma_target *t)
{
	uint32_t prev = RMAD_NIL;

	for (uint32_t i = t->head; i != RMAD_NIL && sh[i].next != RMAD_NIL;
	     prev = i, i = sh[i].next) {
		if (sh[i].opcode != RMAD_OPC_GET || !can_ride(a, &sh[i]))
			continue;
		if (prev == RMAD_NIL)
			t->head = sh[i].next;
		else
			sh[prev].next = sh[i].next;
		sh[t->tail].next = i;
		sh[i].next = RMAD_NIL;
		t->tail = i;
		return;
	}
}

/*
 * ISSUE_OPS_TARGET plus the target's lazy lock and release; 1 if moved.
 *
 * LOCK_CALLED: a lone short op waits for the epoch's end (single short
 * op: LOCK, op and UNLOCK in one packet); otherwise the first op carries
 * the lock request and the others wait for the grant.  LOCK_GRANTED:
 * ops go out as they come (up to piggyback_threshold of them wait for
 * the closing synchronization), the last before an unlock or flush
 * carrying UNLOCK or the request for an ack (RMA_DONE).
 */
/*
 * Per-target locks are acquired in the order they were called: t's
 * request waits while a lock called before it is not granted yet, and
 * that earlier lock is requested now even if it has no operation to
 * ride on.  So processes that lock targets in one order never hold a
 * later lock while waiting for an earlier one, and cannot deadlock each
 * other (rmad(7), "Lock order").  0 when t may go; 1 when it must wait,
 * 2 when it must wait and an earlier lock was just told to go.
 */
static int lock_order_wait(struct rma_origin *o, struct rma_target *t)
{
	int wait = 0;

	if (o->state != WS_PER_TARGET)
		return 0;
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *e = o->slots[s]; e; e = e->next) {
			if (e == t || e->state == T_GRANTED ||
			    e->lseq >= t->lseq)
				continue;
			if (!wait)
				wait = 1;
			if (e->state == T_CALLED && !e->lock_now) {
				e->lock_now = 1;
				wait = 2;
			}
		}
	return wait;
}

static int issue_target(struct agent *a, struct rma_origin *o,
			struct rma_target *t)
{
	uint64_t thr = (uint64_t)a->p.single_op_threshold;
	int moved = 0, closing;

	if (t->state == T_CALLED) {
		uint32_t i = t->head;

		if (i == RMAD_NIL && !t->evict && !t->lock_now) {
			if (t->want_unlock) {
				/* locked, never used: nothing to send */
				target_free(o, t);
				return 1;
			}
			return 0;
		}
		switch (lock_order_wait(o, t)) {
		case 1:
			return 0;
		case 2:
			return 1;	/* the earlier one goes first */
		}
		if (t->retry_at && rmad_now_ns() < t->retry_at) {
			retry_pending = 1;
			return 0;
		}
		t->retry_at = 0;
		if (i != RMAD_NIL && can_ride(a, &sh[i])) {
			int lone = sh[i].next == RMAD_NIL && thr &&
				   sh[i].len <= thr;
			uint16_t fl = t->excl ? RMAD_AMF_LOCK_EXCL :
						RMAD_AMF_LOCK_SHARED;

			if (lone && !t->want_unlock && !t->sync_want &&
			    !t->release && !t->evict && !o->no_hold &&
			    !t->lock_now)
				return 0;	/* until the epoch's end */
			if (lone && t->want_unlock)
				fl |= RMAD_AMF_UNLOCK;
			tlist_pop(o, t);
			t->state = T_ISSUED;
			issue_op(a, o, t, i, fl | RMAD_AMF_ACK_REQ);
			if (sh[i].pflags & fl &
			    (RMAD_AMF_LOCK_EXCL | RMAD_AMF_LOCK_SHARED)) {
				t->lock_op = 1;
				o->st.piggyback_lock++;
				if (fl & RMAD_AMF_UNLOCK) {
					t->unlocking = 1;
					o->st.piggyback_unlock++;
					o->st.single_op++;
				}
				return 1;
			}
			/* it failed before it left: the lock goes alone */
		}
		send_lock_msg(a, o, t->rank, t->node, RMAD_AM_RMA_LOCK,
			      t->excl);
		t->state = T_ISSUED;
		return 1;
	}
	if (t->state != T_GRANTED)
		return 0;
	closing = t->want_unlock || t->sync_want;
	if (!closing && !t->release && !t->evict && !o->no_hold &&
	    t->npend && t->npend <= (uint32_t)a->p.piggyback_threshold)
		return 0;	/* wait for the closing synchronization */
	if (closing)
		get_to_tail(a, t);
	while (t->head != RMAD_NIL) {
		uint32_t i = t->head;
		uint16_t fl = 0;

		if (!ordered && o->acc_order && is_acc(sh[i].opcode) &&
		    t->nacc) {
			/* an unordered channel: the previous accumulate must
			 * be answered before the next may go */
			if (!t->order_blocked)
				o->st.order_waits++;
			t->order_blocked = 1;
			return moved;
		}
		t->order_blocked = 0;
		if (closing && sh[i].next == RMAD_NIL &&
		    can_ride(a, &sh[i])) {
			fl = RMAD_AMF_ACK_REQ;
			if (t->want_unlock && !t->nocheck && !o->nocheck_all &&
			    !t->unlocking && !t->nrdma &&
			    (ordered || !t->nissued))
				fl |= RMAD_AMF_UNLOCK;
		}
		if (!issue_op(a, o, t, i, fl))
			return moved;
		if (sh[i].pflags & fl & RMAD_AMF_UNLOCK) {
			t->unlocking = 1;
			o->st.piggyback_unlock++;
		} else if (sh[i].pflags & fl & RMAD_AMF_ACK_REQ) {
			o->st.piggyback_flush++;
		}
		tlist_pop(o, t);
		moved = 1;
	}
	if (t->nissued || t->unlocking)
		return moved;
	if (t->want_unlock) {
		if (t->nocheck || o->nocheck_all) {
			/* no lock to release, but the ops must be in */
			if (t->done_seq != t->sent_seq)
				return send_flush(a, o, t) | moved;
			target_free(o, t);
			return 1;
		}
		t->unlocking = 1;
		send_lock_msg(a, o, t->rank, t->node, RMAD_AM_RMA_UNLOCK,
			      t->excl);
		return 1;
	}
	if (t->done_seq != t->sent_seq) {
		/* a flush waits, or the element goes: RMA_DONE first */
		if (t->sync_want || t->evict)
			return send_flush(a, o, t) | moved;
		return moved;
	}
	if (t->evict) {
		/* CLEANUP_WIN_AGGRESSIVE: its ops are done; keep the lock */
		if (o->state == WS_PER_TARGET && !t->nocheck) {
			if (o->nevicted == o->capevicted) {
				int cap = o->capevicted ? 2 * o->capevicted : 8;
				int32_t *p = realloc(o->evicted,
						     sizeof(*p) * (size_t)cap);

				if (!p)
					return moved;
				o->evicted = p;
				o->capevicted = cap;
			}
			o->evicted[o->nevicted++] = t->rank;
		}
		target_free(o, t);
		return 1;
	}
	return moved;
}

/*
 * Put op i where it belongs: a target's list, the sync queue, or done at
 * once.  0 when placed; -1 when it needs a target element that is not
 * there (the caller stalls it).
 */
static int route(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &sh[i];
	struct rma_target *t;

	switch (op->opcode) {
	case RMAD_OPC_LOCK:
		if (o->state != WS_NONE && o->state != WS_PER_TARGET) {
			op->status = RMAD_ERR_SYNC;
			op_finish(a, o, i);
			return 0;
		}
		t = target_find(o, op->target);
		if (t || evicted_has(o, op->target)) {
			op->status = RMAD_ERR_SYNC;
			op_finish(a, o, i);
			return 0;
		}
		t = target_new(a, o, op->target,
			       (op->dtype & RMAD_MODE_NOCHECK) ? T_GRANTED :
								 T_CALLED);
		if (!t)
			return -1;
		o->state = WS_PER_TARGET;
		o->no_hold = 0;
		t->lseq = ++o->lcalls;
		t->excl = op->op == RMAD_LOCK_EXCLUSIVE;
		t->nocheck = !!(op->dtype & RMAD_MODE_NOCHECK);
		op_finish(a, o, i);
		return 0;
	case RMAD_OPC_LOCK_ALL:
		if (o->state != WS_NONE || o->ntargets) {
			op->status = RMAD_ERR_SYNC;
			op_finish(a, o, i);
			return 0;
		}
		o->nocheck_all = !!(op->dtype & RMAD_MODE_NOCHECK);
		o->no_hold = 0;
		o->state = o->nocheck_all ? WS_LOCK_ALL_GRANTED :
					    WS_LOCK_ALL_CALLED;
		op_finish(a, o, i);
		return 0;
	case RMAD_OPC_UNLOCK:
		t = target_find(o, op->target);
		if (!t && evicted_take(o, op->target)) {
			t = target_new(a, o, op->target, T_GRANTED);
			if (!t) {
				/* put it back until an element frees */
				o->evicted[o->nevicted++] = op->target;
				return -1;
			}
		}
		if (t)
			t->want_unlock = 1;
		list_add(&o->yhead, &o->ytail, i);
		return 0;
	case RMAD_OPC_UNLOCK_ALL:
		for (uint32_t s = 0; s < o->nslots; s++)
			for (t = o->slots[s]; t; t = t->next)
				t->want_unlock = 1;
		if (o->state == WS_LOCK_ALL_GRANTED && !o->nocheck_all) {
			o->la_unlock = 1;
			o->la_next = 0;
		}
		list_add(&o->yhead, &o->ytail, i);
		return 0;
	case RMAD_OPC_LOCK_WAIT:
		/* a same-node lock is next: every lock called before it
		 * must be held first, ops or not */
		for (uint32_t s = 0; s < o->nslots; s++)
			for (t = o->slots[s]; t; t = t->next)
				if (t->state == T_CALLED)
					t->lock_now = 1;
		list_add(&o->yhead, &o->ytail, i);
		return 0;
	case RMAD_OPC_FLUSH:
	case RMAD_OPC_FLUSH_LOCAL:
		/* nothing waits for the epoch's end any more; a flush also
		 * wants its last op acknowledged (piggybacked RMA_DONE) */
		for (uint32_t s = 0; s < o->nslots; s++)
			for (t = o->slots[s]; t; t = t->next) {
				if (op->target >= 0 && t->rank != op->target)
					continue;
				t->release = 1;
				if (op->opcode == RMAD_OPC_FLUSH)
					t->sync_want = 1;
			}
		list_add(&o->yhead, &o->ytail, i);
		return 0;
	}
	/* a data op */
	t = target_find(o, op->target);
	if (!t) {
		int state;

		switch (o->state) {
		case WS_PER_TARGET:
			/* granted before, and its element was reclaimed */
			if (!evicted_take(o, op->target)) {
				op->status = RMAD_ERR_SYNC;
				op_finish(a, o, i);
				return 0;
			}
			t = target_new(a, o, op->target, T_GRANTED);
			if (!t) {
				o->evicted[o->nevicted++] = op->target;
				return -1;
			}
			break;
		case WS_LOCK_ALL_CALLED:
			state = T_CALLED;
			goto make;
		case WS_LOCK_ALL_GRANTED:
			state = T_GRANTED;
make:
			t = target_new(a, o, op->target, state);
			if (!t)
				return -1;
			break;
		case WS_LOCK_ALL_ISSUED:
			o->need_target = 1;
			return -1;
		default:
			op->status = RMAD_ERR_SYNC;
			op_finish(a, o, i);
			return 0;
		}
	}
	tlist_add(o, t, i);
	/* its client waits for it alone: hold nothing back */
	if (op->staged)
		t->release = 1;
	return 0;
}

/* Is sync request i satisfied?  (Everything before it was placed.) */
static int sync_done(struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &sh[i];
	int all = op->target < 0 || op->opcode == RMAD_OPC_UNLOCK_ALL;

	if (o->shead != RMAD_NIL)
		return 0;
	if (op->opcode == RMAD_OPC_UNLOCK_ALL &&
	    (o->la_unlock || o->la_inflight || o->state == WS_LOCK_ALL_ISSUED))
		return 0;
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *t = o->slots[s]; t; t = t->next) {
			if (!all && t->rank != op->target)
				continue;
			switch (op->opcode) {
			case RMAD_OPC_UNLOCK:
			case RMAD_OPC_UNLOCK_ALL:
				return 0;	/* freed once released */
			case RMAD_OPC_FLUSH:
				if (t->head != RMAD_NIL || t->nissued ||
				    t->done_seq != t->sent_seq)
					return 0;
				break;
			case RMAD_OPC_FLUSH_LOCAL:
				if (t->head != RMAD_NIL || t->nres)
					return 0;
				break;
			case RMAD_OPC_LOCK_WAIT:
				if (t->state != T_GRANTED)
					return 0;
				break;
			}
		}
	return 1;
}

/*
 * CLEANUP_WIN_AGGRESSIVE: free one of our target elements; 1 when it
 * chose one (the caller must look at the targets again: an element with
 * nothing in flight goes at once).
 */
static int aggressive(struct rma_origin *o)
{
	struct rma_target *pick = NULL;
	static const uint8_t order[] = { T_GRANTED, T_ISSUED, T_CALLED };

	if (o->state == WS_LOCK_ALL_CALLED) {
		/* per-target protocol out of elements: the window protocol */
		o->state = WS_LOCK_ALL_ISSUED;
		o->la_next = 0;
		return 1;
	}
	if (o->state == WS_LOCK_ALL_ISSUED)
		return 0;
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *t = o->slots[s]; t; t = t->next)
			if (t->evict)
				return 0;	/* one at a time */
	for (size_t k = 0; k < sizeof(order) && !pick; k++)
		for (uint32_t s = 0; s < o->nslots && !pick; s++)
			for (struct rma_target *t = o->slots[s]; t; t = t->next)
				if (t->state == order[k] && !t->want_unlock) {
					pick = t;
					break;
				}
	if (!pick)
		return 0;
	pick->evict = 1;
	return 1;
}

/* The window protocol of lock_all: lock (or unlock) every remote member
 * without an element, LOCKALL_BATCH at a time. */
static int lock_all_step(struct agent *a, struct rma_origin *o)
{
	int moved = 0;

	while (o->la_inflight < LOCKALL_BATCH && o->la_next < o->w->gsize) {
		int32_t r = agent_win_rank_of(o->w, o->la_next++);
		int node = agent_rank_node(o->w->job, r);

		if (r < 0 || node < 0 || node == a->node || target_find(o, r))
			continue;
		send_lock_msg(a, o, r, node, o->la_unlock ? RMAD_AM_RMA_UNLOCK :
				     RMAD_AM_RMA_LOCK, 0);
		o->la_inflight++;
		moved = 1;
	}
	if (o->la_next >= o->w->gsize && !o->la_inflight) {
		if (o->la_unlock) {
			o->la_unlock = 0;
			moved = 1;
		} else if (o->state == WS_LOCK_ALL_ISSUED) {
			o->state = WS_LOCK_ALL_GRANTED;
			moved = 1;
		}
	}
	return moved;
}

/* MAKE_RMA_PROGRESS for one origin; 1 if anything moved. */
static int progress_origin(struct agent *a, struct rma_origin *o)
{
	int moved = 0, again = 1, synced = 0;

	while (again) {
		again = 0;
		if (o->state == WS_LOCK_ALL_ISSUED || o->la_unlock)
			again |= lock_all_step(a, o);
		for (uint32_t s = 0; s < o->nslots; s++) {
			struct rma_target *t = o->slots[s], *n;

			for (; t; t = n) {
				n = t->next;
				again |= issue_target(a, o, t);
			}
		}
		while (o->shead != RMAD_NIL) {
			uint32_t i = o->shead, nx = sh[i].next;

			o->need_target = 0;
			/* route() links i into another list through the same
			 * next field: take i off this one by nx, not by it */
			if (route(a, o, i) < 0) {
				sh[i].next = nx;
				break;
			}
			o->shead = nx;
			if (nx == RMAD_NIL)
				o->stail = RMAD_NIL;
			again = 1;
		}
		if (o->shead != RMAD_NIL && o->need_target)
			again |= aggressive(o);
		while (o->yhead != RMAD_NIL && sync_done(o, o->yhead)) {
			uint32_t i = list_pop(&o->yhead, &o->ytail);
			struct rma_op *op = &sh[i];

			if (op->opcode == RMAD_OPC_UNLOCK_ALL ||
			    (op->opcode == RMAD_OPC_UNLOCK && !o->ntargets &&
			     !o->nevicted)) {
				o->state = WS_NONE;
				o->nocheck_all = 0;
			}
			/* the first async error of the epoch surfaces here */
			op->status = o->err;
			o->err = 0;
			op->serial = 0;
			agent_complete_op(a, op->client, i, op->status);
			again = 1;
			synced = 1;
		}
		moved |= again;
	}
	if (synced && o->yhead == RMAD_NIL)
		/* no flush waits any more: ops may wait again, unanswered */
		for (uint32_t s = 0; s < o->nslots; s++)
			for (struct rma_target *t = o->slots[s]; t;
			     t = t->next)
				t->sync_want = t->release = 0;
	if (o->dying && !o->ntargets && o->shead == RMAD_NIL &&
	    o->yhead == RMAD_NIL && !o->la_inflight && !o->la_unlock &&
	    !o->nevicted)
		origin_free(a, o);
	return moved;
}

/* ---------------------------------------------------- origin lifecycle */

static struct rma_origin *origin_new(struct agent *a, struct agent_win *w,
				     uint32_t c, uint32_t nslots,
				     uint32_t npool)
{
	struct rma_origin *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->slots = calloc(nslots, sizeof(*o->slots));
	o->lmem = npool ? calloc(npool, sizeof(*o->lmem)) : NULL;
	if (!o->slots || (npool && !o->lmem)) {
		free(o->slots);
		free(o->lmem);
		free(o);
		return NULL;
	}
	for (uint32_t k = 0; k < npool; k++) {
		o->lmem[k].next = o->lfree;
		o->lfree = &o->lmem[k];
	}
	o->nslots = nslots;
	o->nlmem = npool;
	o->w = w;
	o->client = c;
	o->gen = a->cl[c].gen;
	o->rank = a->cl[c].rank;
	o->shead = o->stail = o->yhead = o->ytail = RMAD_NIL;
	o->next = w->origins;
	w->origins = o;
	return o;
}

static void origin_free(struct agent *a, struct rma_origin *o)
{
	for (struct rma_origin **pp = &o->w->origins; *pp;
	     pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	for (uint32_t s = 0; s < o->nslots; s++)
		while (o->slots[s]) {
			struct rma_target *t = o->slots[s];

			o->slots[s] = t->next;
			if (!t->local) {
				t->next = tfree;
				tfree = t;
			}
		}
	(void)a;
	free(o->evicted);
	free(o->slots);
	free(o->lmem);
	free(o);
}

/* Drop every op an origin still holds: its client or window is gone. */
static void origin_drop_ops(struct agent *a, struct rma_origin *o, int st)
{
	while (o->shead != RMAD_NIL) {
		uint32_t i = list_pop(&o->shead, &o->stail);

		sh[i].status = st;
		op_finish(a, o, i);
	}
	while (o->yhead != RMAD_NIL) {
		uint32_t i = list_pop(&o->yhead, &o->ytail);

		sh[i].status = st;
		op_finish(a, o, i);
	}
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *t = o->slots[s]; t; t = t->next)
			while (t->head != RMAD_NIL) {
				uint32_t i = tlist_pop(o, t);

				if (sh[i].sent) {
					/* partly sent: its answers still
					 * come; stop sending the rest */
					sh[i].len = sh[i].sent;
					continue;
				}
				sh[i].status = st;
				op_finish(a, o, i);
			}
}

/* ---------------------------------------------------- submissions */

static int32_t check_data_op(struct agent *a, struct agent_win *w,
			     struct rma_op *op, uint64_t tdisp_units,
			     uint64_t count)
{
	uint64_t size;
	int32_t du;
	size_t es = rmad_dtype_size(op->dtype);
	int node;

	if (!es)
		return RMAD_ERR_TYPE;
	if (agent_win_target(w, op->target, &size, &du))
		return RMAD_ERR_RANK;
	node = agent_rank_node(w->job, op->target);
	if (node < 0 || node == a->node)
		return RMAD_ERR_RANK;	/* same node: the client's job */
	if (count == 0 || count > (1ull << 40) / es)
		return RMAD_ERR_ARG;
	op->len = count * es;
	if (tdisp_units > (1ull << 40) / (uint64_t)du)
		return RMAD_ERR_DISP;
	op->tdisp = tdisp_units * (uint64_t)du;
	if (op->tdisp > size || op->len > size - op->tdisp)
		return RMAD_ERR_DISP;
	switch (op->opcode) {
	case RMAD_OPC_ACC:
		if (op->op == RMAD_NO_OP)
			return RMAD_ERR_OP;
		/* fall through */
	case RMAD_OPC_GACC:
		if (rmad_op_check(op->dtype, op->op))
			return rmad_op_check(op->dtype, op->op);
		break;
	case RMAD_OPC_CAS:
		if (rmad_cas_check(op->dtype))
			return RMAD_ERR_TYPE;
		if (count != 1 || !op->is_inline || op->inline_len != 2 * es)
			return RMAD_ERR_ARG;
		break;
	}
	if (op->is_inline && op->opcode != RMAD_OPC_CAS &&
	    op->opcode != RMAD_OPC_GET &&
	    !(op->opcode == RMAD_OPC_GACC && op->op == RMAD_NO_OP) &&
	    op->inline_len != op->len)
		return RMAD_ERR_ARG;
	if (op->opcode == RMAD_OPC_CAS)
		op->len = es;	/* one result */
	if (op->staged) {
		/* its data and results lie in the client's staging area */
		uint64_t sz = a->lay.staging_size;
		int in = !op->is_inline &&
			 (op->opcode == RMAD_OPC_PUT ||
			  op->opcode == RMAD_OPC_ACC ||
			  op->opcode == RMAD_OPC_GET ||
			  (op->opcode == RMAD_OPC_GACC && op->op != RMAD_NO_OP));
		int out = op->opcode == RMAD_OPC_GACC ||
			  op->opcode == RMAD_OPC_CAS;

		if ((in && (op->origin > sz || op->len > sz - op->origin)) ||
		    (out && (op->result > sz || op->len > sz - op->result)))
			return RMAD_ERR_ARG;
	}
	/* large puts and gets go straight to the target's memory */
	if ((op->opcode == RMAD_OPC_GET ||
	     (op->opcode == RMAD_OPC_PUT && !op->is_inline)) &&
	    a->fab && a->p.rdma_threshold &&
	    op->len >= a->p.rdma_threshold &&
	    !agent_win_rkey(w, op->target, &op->rkey, &op->raddr)) {
		op->rdma = 1;
		op->raddr += op->tdisp;
	}
	return 0;
}

void agent_rma_op(struct agent *a, uint32_t c, uint32_t i)
{
	struct rmad_op_elem *e = rmad_shm_op_at(a->seg, &a->lay, i);
	struct agent_client *ac = &a->cl[c];
	struct rma_op *op = &sh[i];
	struct agent_win *w;
	struct win_local *l;
	struct rma_origin *o;
	uint64_t key, tdisp, count;
	uint32_t block, flags;
	int32_t st = 0;

	memset(op, 0, sizeof(*op));
	op->next = RMAD_NIL;
	op->client = c;
	op->opcode = load_relaxed(&e->opcode);
	flags = load_relaxed(&e->flags);
	block = load_relaxed(&e->win);
	key = load_relaxed(&e->ticket);
	op->target = load_relaxed(&e->target);
	op->dtype = (uint8_t)load_relaxed(&e->dtype);
	op->op = (uint8_t)load_relaxed(&e->op);
	count = load_relaxed(&e->count);
	tdisp = load_relaxed(&e->tdisp);
	op->origin = load_relaxed(&e->origin_off);
	op->result = load_relaxed(&e->result_addr);
	op->is_inline = !!(flags & RMAD_OPF_INLINE);
	op->staged = !!(flags & RMAD_OPF_STAGED);
	op->inline_len = load_relaxed(&e->inline_len);
	if (load_relaxed(&e->dtype) > 255 || load_relaxed(&e->op) > 255) {
		op->dtype = 0;
		op->op = 0;
	}
	if (op->is_inline) {
		if (op->inline_len > RMAD_OP_INLINE) {
			st = RMAD_ERR_ARG;
			op->is_inline = 0;
		} else {
			memcpy(op->data, e->data, op->inline_len);
		}
	}
	/* acquire: the element's fields were read above */
	cmm_smp_rmb();
	op->serial = ++serials ? serials : ++serials;
	w = agent_win_by_block(a, block, key);
	l = w ? agent_win_local(w, ac->rank) : NULL;
	if (!st && (!l || l->client != c || l->gen != ac->gen))
		st = RMAD_ERR_ARG;
	o = w ? origin_find(w, c, ac->gen) : NULL;
	if (!st) {
		switch (op->opcode) {
		case RMAD_OPC_LOCK:
		case RMAD_OPC_LOCK_ALL:
			if (op->opcode == RMAD_OPC_LOCK &&
			    ((op->op != RMAD_LOCK_SHARED &&
			      op->op != RMAD_LOCK_EXCLUSIVE) ||
			     agent_win_target(w, op->target, &key, &st) ||
			     agent_rank_node(w->job, op->target) == a->node)) {
				st = RMAD_ERR_ARG;
				break;
			}
			st = 0;
			if (!o) {
				uint32_t ns = tdisp ? (uint32_t)tdisp :
					      (uint32_t)a->p.win_slots;
				uint32_t np = count ? (uint32_t)count :
					      (uint32_t)a->p.win_target_pool;

				if (ns > 65536 || np > 65536) {
					st = RMAD_ERR_ARG;
					break;
				}
				o = origin_new(a, w, c, ns ? ns : 1, np);
				if (!o)
					st = RMAD_ERR_NOMEM;
			}
			if (o)
				o->acc_order = (op->inline_len &
						RMAD_LOCKF_ORDER) ?
					       op->inline_len & 0xffu :
					       15u;
			break;
		case RMAD_OPC_UNLOCK:
		case RMAD_OPC_UNLOCK_ALL:
		case RMAD_OPC_FLUSH:
		case RMAD_OPC_FLUSH_LOCAL:
		case RMAD_OPC_LOCK_WAIT:
			if (!o) {
				/* nothing was ever sent from here; an error
				 * that found no epoch surfaces now */
				st = ac->rma_err;
				ac->rma_err = 0;
				agent_complete_op(a, c, i, st);
				return;
			}
			break;
		default:
			st = o ? check_data_op(a, w, op, tdisp, count) :
				 RMAD_ERR_SYNC;
			break;
		}
	}
	if (st) {
		if (o)
			set_err(o, st);
		else if (!ac->rma_err)
			ac->rma_err = st;
		rmad_dbg("client %u: rma op %u refused (%d): window %s, %s",
			 c, op->opcode, st, w ? "found" : "unknown",
			 l ? "member" : "not a member");
		op->serial = 0;
		agent_complete_op(a, c, i, st);
		return;
	}
	op->o = o;
	if (o->shead != RMAD_NIL || route(a, o, i) < 0)
		list_add(&o->shead, &o->stail, i);
	progress_origin(a, o);
}

/* ---------------------------------------------------- packets */

static struct rma_origin *origin_of_rank(struct agent_win *w, int32_t rank)
{
	for (struct rma_origin *o = w->origins; o; o = o->next)
		if (o->rank == rank)
			return o;
	return NULL;
}

/* The answer to one of our ops said something about its target. */
static void answer_flags(struct rma_origin *o, struct rma_target *t,
			 const struct rmad_am_hdr *h, const struct rma_op *op)
{
	uint16_t flags = h->flags;

	if (!t)
		return;
	if (h->status && (op->pflags & (RMAD_AMF_LOCK_SHARED |
					RMAD_AMF_LOCK_EXCL | RMAD_AMF_UNLOCK))) {
		/* refused before any lock was touched: the epoch goes on
		 * (and ends) with the error */
		if (op->pflags & (RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL))
			flags |= RMAD_AMF_GRANTED;
		if (op->pflags & RMAD_AMF_UNLOCK)
			flags |= RMAD_AMF_UNLOCKED;
	}
	if ((flags & RMAD_AMF_GRANTED) && t->state == T_ISSUED) {
		t->state = T_GRANTED;
		t->lock_op = 0;
	}
	if (flags & RMAD_AMF_QUEUED)
		o->st.locks_queued++;
	if (flags & RMAD_AMF_UNLOCKED)
		t->released = 1;
}

static void got_answer(struct agent *a, const struct rmad_am_hdr *h,
		       const uint8_t *pl, struct agent_win *w)
{
	uint32_t i = (uint32_t)h->seq, serial = (uint32_t)(h->seq >> 32);
	struct rma_op *op;
	struct rma_origin *o;
	struct rma_target *t;
	uint64_t n, off;
	size_t es;

	if (i >= nsh || !serial || sh[i].serial != serial)
		goto bad;
	op = &sh[i];
	o = op->o;
	if (!o || o->w->key != h->wkey)
		goto bad;
	es = rmad_dtype_size(op->dtype);
	n = h->count * es;
	if (h->disp < op->tdisp || h->disp - op->tdisp > op->sent ||
	    n > op->sent - (h->disp - op->tdisp))
		goto bad;
	off = h->disp - op->tdisp;
	orecv(o, h);
	t = target_find(o, op->target);
	answer_flags(o, t, h, op);
	if (h->status) {
		if (!op->status)
			op->status = h->status;
	} else if (h->type == RMAD_AM_RMA_RESP) {
		uint64_t addr = op->opcode == RMAD_OPC_GET ? op->origin :
				op->result;

		if (!has_result(op->opcode) ||
		    h->payload_len != (op->opcode == RMAD_OPC_CAS ? es : n))
			goto bad;
		if (op->opcode == RMAD_OPC_CAS)
			n = es;
		if (!op->status) {
			int err = op_io(a, op, addr + off, (void *)pl,
					(size_t)n, 1);

			if (err)
				op->status = err;
		}
	}
	if (op->opcode == RMAD_OPC_CAS)
		n = op->len;
	op->done += n;
	if (op->done >= op->len && op->sent >= op->len) {
		if (t) {
			uncount_issued(t, op);
			/* in order: everything sent before it is in too */
			if (op->wseq > t->done_seq)
				t->done_seq = op->wseq;
		}
		op_finish(a, o, i);
	}
	if (t && t->released && !t->nissued)
		target_free(o, t);
	progress_origin(a, o);
	return;
bad:
	/* an op sent without asking for an answer failed at the target:
	 * its error belongs to the origin's epoch */
	o = h->status ? origin_of_rank(w, h->origin) : NULL;
	if (o) {
		orecv(o, h);
		set_err(o, h->status);
		progress_origin(a, o);
		return;
	}
	a->st.pkts_dropped++;
	rmad_warn("dropped a stale or bad rma answer from node %u",
		  h->src_node);
}

/* The target had no room for the op that carried our lock request: it
 * waits, and goes again (with the request) later. */
static void op_refused(struct rma_origin *o, const struct rmad_am_hdr *h)
{
	uint32_t i = (uint32_t)h->seq, serial = (uint32_t)(h->seq >> 32);
	struct rma_op *op;
	struct rma_target *t;

	if (i >= nsh || !serial || sh[i].serial != serial || sh[i].o != o)
		return;
	op = &sh[i];
	t = target_find(o, op->target);
	if (!t || t->state != T_ISSUED || !t->lock_op)
		return;
	uncount_issued(t, op);
	if (op->wseq == t->sent_seq)
		t->sent_seq--;
	op->sent = op->done = 0;
	op->wseq = 0;
	o->st.piggyback_lock--;
	if (op->pflags & RMAD_AMF_UNLOCK) {
		o->st.piggyback_unlock--;
		o->st.single_op--;
		t->unlocking = 0;
	}
	op->pflags = 0;
	sh[i].next = t->head;
	t->head = i;
	if (t->tail == RMAD_NIL)
		t->tail = i;
	t->npend++;
	o->nheld++;
	t->lock_op = 0;
	t->state = T_CALLED;
	t->retry_at = rmad_now_ns() + RETRY_NS;
	retry_pending = 1;
}

static void got_lock_answer(struct agent *a, const struct rmad_am_hdr *h,
			    struct agent_win *w)
{
	struct rma_origin *o = origin_of_rank(w, h->origin);
	struct rma_target *t = o ? target_find(o, h->target) : NULL;

	if (!o) {
		a->st.pkts_dropped++;
		return;
	}
	orecv(o, h);
	set_err(o, h->status);
	switch (h->type) {
	case RMAD_AM_RMA_LOCK_GRANTED:
		if (h->flags & RMAD_AMF_QUEUED)
			o->st.locks_queued++;
		if (t && t->state == T_ISSUED && !t->lock_op)
			t->state = T_GRANTED;
		else if (o->la_inflight)
			o->la_inflight--;
		break;
	case RMAD_AM_RMA_LOCK_RETRY:
		o->st.locks_queued++;
		if (h->seq) {
			op_refused(o, h);
		} else if (t && t->state == T_ISSUED) {
			t->state = T_CALLED;
			t->retry_at = rmad_now_ns() + RETRY_NS;
			retry_pending = 1;
		} else if (o->la_inflight) {
			/* window protocol: ask that one again */
			int node = agent_rank_node(w->job, h->target);

			send_lock_msg(a, o, h->target, node, RMAD_AM_RMA_LOCK,
				      0);
		}
		break;
	case RMAD_AM_RMA_UNLOCK_ACK:
		if (t && t->unlocking) {
			t->done_seq = t->sent_seq;
			target_free(o, t);
		} else if (o->la_inflight) {
			o->la_inflight--;
		}
		break;
	case RMAD_AM_RMA_FLUSH_ACK:
		if (t && h->count > t->done_seq && h->count <= t->sent_seq)
			t->done_seq = h->count;
		break;
	}
	progress_origin(a, o);
}

void agent_rma_am(struct agent *a, const struct rmad_am_hdr *h,
		  const void *payload, struct agent_job *j)
{
	struct agent_win *w = agent_win_by_key(j, h->wkey);
	struct win_local *l;

	if (!w) {
		int type = 0;

		a->st.pkts_dropped++;
		rmad_warn("rma %u from node %u for an unknown window",
			  h->type, h->src_node);
		/* requests get an error answer, so nobody waits forever */
		switch (h->type) {
		case RMAD_AM_RMA_LOCK: type = RMAD_AM_RMA_LOCK_GRANTED; break;
		case RMAD_AM_RMA_UNLOCK: type = RMAD_AM_RMA_UNLOCK_ACK; break;
		case RMAD_AM_RMA_PUT:
		case RMAD_AM_RMA_ACC: type = RMAD_AM_RMA_ACK; break;
		case RMAD_AM_RMA_GET:
		case RMAD_AM_RMA_GACC:
		case RMAD_AM_RMA_CAS: type = RMAD_AM_RMA_RESP; break;
		case RMAD_AM_RMA_FLUSH: type = RMAD_AM_RMA_FLUSH_ACK; break;
		}
		if (type)
			answer(a, h, type, RMAD_ERR_ARG, 0, NULL, 0);
		return;
	}
	switch (h->type) {
	case RMAD_AM_RMA_LOCK:
	case RMAD_AM_RMA_UNLOCK:
		l = agent_win_local(w, h->target);
		if (!l || !l->base ||
		    (w->ready && agent_win_target(w, h->origin,
						  &(uint64_t){ 0 },
						  &(int32_t){ 0 }))) {
			a->st.pkts_dropped++;
			rmad_warn("dropped a lock packet for rank %d",
				  h->target);
			if (h->type == RMAD_AM_RMA_UNLOCK)
				answer(a, h, RMAD_AM_RMA_UNLOCK_ACK,
				       RMAD_ERR_RANK, 0, NULL, 0);
			return;
		}
		if (h->type == RMAD_AM_RMA_LOCK)
			lock_request(a, h, w, l);
		else
			lock_release(a, h, l);
		return;
	case RMAD_AM_RMA_PUT:
	case RMAD_AM_RMA_ACC:
	case RMAD_AM_RMA_GET:
	case RMAD_AM_RMA_GACC:
	case RMAD_AM_RMA_CAS:
		if (h->flags & (RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL)) {
			if (w->ready && agent_win_target(w, h->origin,
							 &(uint64_t){ 0 },
							 &(int32_t){ 0 })) {
				a->st.pkts_dropped++;
				answer(a, h, h->type == RMAD_AM_RMA_PUT ||
					     h->type == RMAD_AM_RMA_ACC ?
					     RMAD_AM_RMA_ACK : RMAD_AM_RMA_RESP,
				       RMAD_ERR_RANK, 0, NULL, 0);
				return;
			}
			lock_and_apply(a, h, payload, w);
			return;
		}
		apply_op(a, h, payload, w, 0);
		l = agent_win_local(w, h->target);
		if (l && l->lk && l->lk->qhead)
			try_grant(a, l->lk);	/* an UNLOCK rode along */
		return;
	case RMAD_AM_RMA_FLUSH:
		flush_request(a, h);
		return;
	case RMAD_AM_RMA_ACK:
	case RMAD_AM_RMA_RESP:
		got_answer(a, h, payload, w);
		return;
	default:
		got_lock_answer(a, h, w);
		return;
	}
}

/* ---------------------------------------------------- the loop's part */

int agent_rma_progress(struct agent *a)
{
	int n = 0;

	if (lwait)
		n += retry_grants(a);
	if (retry_pending) {
		retry_pending = 0;
		for (struct agent_win *w = agent_win_first(); w; w = w->next)
			for (struct rma_origin *o = w->origins, *nx; o;
			     o = nx) {
				nx = o->next;
				n += progress_origin(a, o);
			}
	}
	return n;
}

/*
 * Did dead client c hold a shared count on l's lock word?  HELD says yes
 * and NONE no.  INTENT or RELEASING mean it died around its CAS: then
 * the count in the word, less the holders we know of (our remote grants
 * and the other slots that say HELD), tells.  Live clients pass through
 * INTENT and RELEASING in nanoseconds; we wait for a moment when none
 * does, and give up after a while (with a warning: the lock may stay
 * shared-held by one phantom, or lose a count).
 */
static int dead_shared(struct agent *a, struct win_local *l, uint32_t c)
{
	struct rmad_win_ctl *ctl = l->base;
	uint8_t b = load_acquire(&ctl->shared_by[c]);
	uint32_t nslots = (uint32_t)a->lay.max_clients;

	if (b == RMAD_SB_NONE)
		return 0;
	if (b != RMAD_SB_INTENT && b != RMAD_SB_RELEASING)
		return 1;	/* HELD, or a byte the client scribbled */
	if (nslots > sizeof(ctl->shared_by))
		nslots = sizeof(ctl->shared_by);
	for (int tries = 0; tries < 100000; tries++) {
		uint32_t v = load_acquire(&ctl->lock), known = 0;
		int busy = 0;

		for (struct lock_ent *e = l->lk ? l->lk->holders : NULL; e;
		     e = e->next)
			known += !e->excl;
		for (uint32_t s = 0; s < nslots && !busy; s++) {
			uint8_t o = load_acquire(&ctl->shared_by[s]);

			if (s == c)
				continue;
			if (o == RMAD_SB_HELD)
				known++;
			else if (o != RMAD_SB_NONE)
				busy = 1;
		}
		/* acquire: the word did not move while we counted */
		if (busy || load_acquire(&ctl->lock) != v) {
			sched_yield();
			continue;
		}
		if (v & RMAD_LW_EXCL)
			return 0;
		return (v & RMAD_LW_VALUE) == known + 1;
	}
	rmad_warn("rank %d's window: cannot tell whether dead client %u held "
		  "a shared lock; assuming not", l->rank, c);
	return 0;
}

/* A client is gone: its locks on this node's windows go, and its epochs
 * end (locks it holds elsewhere are released by messages). */
void agent_rma_client_gone(struct agent *a, uint32_t c)
{
	for (struct agent_win *w = agent_win_first(); w; w = w->next) {
		for (int32_t k = 0; k < w->nhere; k++) {
			struct win_local *l = &w->local[k];
			struct rmad_win_ctl *ctl = l->base;
			uint32_t v;

			if (!ctl)
				continue;
			v = load_acquire(&ctl->lock);
			if ((v & RMAD_LW_EXCL) &&
			    (v & RMAD_LW_VALUE) == c + 1) {
				rmad_info("released rank %d's window lock held"
					  " by dead client %u", l->rank, c);
				lw_release(&ctl->lock, 1);
			}
			if (c < sizeof(ctl->shared_by) &&
			    dead_shared(a, l, c))
				lw_release(&ctl->lock, 0);
			if (c < sizeof(ctl->shared_by))
				store_relaxed(&ctl->shared_by[c], RMAD_SB_NONE);
			if (l->lk && l->lk->qhead)
				try_grant(a, l->lk);
		}
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			nx = o->next;
			if (o->client != c || o->dying)
				continue;
			o->dying = 1;
			origin_drop_ops(a, o, RMAD_ERR_PROC_FAILED);
			for (uint32_t s = 0; s < o->nslots; s++)
				for (struct rma_target *t = o->slots[s]; t;
				     t = t->next)
					t->want_unlock = 1;
			while (o->nevicted) {
				struct rma_target *t =
					target_new(a, o,
						   o->evicted[o->nevicted - 1],
						   T_GRANTED);
				if (!t)
					break;	/* later, as elements free */
				o->nevicted--;
				t->want_unlock = 1;
			}
			if (o->state == WS_LOCK_ALL_GRANTED &&
			    !o->nocheck_all) {
				o->la_unlock = 1;
				o->la_next = 0;
			}
			o->state = WS_NONE;
			retry_pending = 1;
			progress_origin(a, o);
		}
	}
}

void agent_rma_win_gone(struct agent *a, struct agent_win *w)
{
	while (w->origins) {
		struct rma_origin *o = w->origins;

		origin_drop_ops(a, o, RMAD_ERR_ARG);
		/* ops still waiting for answers end now; the answers find
		 * no serial and are dropped */
		for (uint32_t i = 0; i < nsh; i++)
			if (sh[i].serial && sh[i].o == o) {
				sh[i].status = RMAD_ERR_ARG;
				op_finish(a, o, i);
			}
		origin_free(a, o);
	}
	for (int32_t k = 0; k < w->nhere; k++)
		lock_free(&w->local[k]);
}

/*
 * Client c waits for op elements that none can lend: the ops our
 * optimizations hold back (single short op, piggyback_threshold) go out
 * now, so that their elements come home (the seeds' "temporarily
 * disable optimizations to reclaim resources").
 */
void agent_rma_unhold(struct agent *a, uint32_t c)
{
	for (struct agent_win *w = agent_win_first(); w; w = w->next)
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			nx = o->next;
			if (o->client != c || o->no_hold || !o->nheld)
				continue;
			o->no_hold = 1;
			progress_origin(a, o);
		}
}

void agent_rma_win_stats(struct agent_win *w, uint32_t c, uint32_t gen,
			 struct rmad_stats *out)
{
	struct rma_origin *o = origin_find(w, c, gen);

	if (!o)
		return;		/* nothing went to other nodes */
	/* the process-counted fields are never set in o->st: zero */
	*out = o->st;
}

int agent_rma_init(struct agent *a)
{
	uint32_t nt = (uint32_t)a->p.target_pool;
	uint32_t nl = (uint32_t)a->p.lock_queue;

	nsh = rmad_shm_nops(&a->lay);
	/* without send-after-send order every op must be answered */
	ordered = rmad_fabric_ordered(a->fab) && a->p.am_ordering;
	sh = calloc(nsh, sizeof(*sh));
	tmem = calloc(nt, sizeof(*tmem));
	lmem = calloc(nl, sizeof(*lmem));
	if (!sh || !tmem || !lmem)
		return RMAD_ERR_NOMEM;
	for (uint32_t k = 0; k < nt; k++) {
		tmem[k].next = tfree;
		tfree = &tmem[k];
	}
	for (uint32_t k = 0; k < nl; k++) {
		lmem[k].next = lfree;
		lfree = &lmem[k];
	}
	return 0;
}

void agent_rma_fini(struct agent *a)
{
	(void)a;
	rmad_fabric_mr_close(bounce_mr);
	if (bounce)
		munmap(bounce, bounce_len);
	bounce = NULL;
	bounce_mr = NULL;
	bounce_desc = NULL;
	xfree = NULL;
	free(sh);
	free(tmem);
	free(lmem);
	sh = NULL;
	tmem = NULL;
	lmem = NULL;
	tfree = NULL;
	lfree = NULL;
	lwait = NULL;
}
