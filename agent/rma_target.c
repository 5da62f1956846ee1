/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_target.c - the target side of passive-target RMA: lock granting
 * and applying operations for remote origins.
 *
 * Every member's window starts with a control page whose lock word
 * same-node clients take with atomics.  The agent takes the same word
 * for remote origins, granting from a FIFO of requests drawn from a
 * bounded pool (lock_queue); a request that finds the pool empty is
 * answered LOCK_RETRY and the origin asks again later.  While the FIFO is
 * not empty the word carries RMAD_LW_QUEUED, and a same-node releaser
 * that sees it kicks our doorbell.  Ops are applied in arrival order (the
 * fabric keeps send-after-send order), accumulates with CPU atomics, so
 * local and remote accumulates are atomic with respect to each other.
 * A dead client's shared count on a lock word is settled here too.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "mem.h"
#include "windows.h"
#include "winsync.h"
#include "dynwin.h"
#include "atomics.h"
#include "counter.h"
#include "dtype.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

void target_lw_release(uint32_t *lw, int excl)
{
	if (rmad_lw_release(lw, excl) & RMAD_LW_SLEEPERS)
		rmad_futex_wake(lw, INT_MAX);
}

static uint32_t *lock_word(struct win_local *l)
{
	return &((struct rmad_win_ctl *)l->base)->lock;
}

void target_answer(struct agent *a, const struct rmad_am_hdr *req, int type,
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

	am_send(a, (int)req->src_node, &r, pl, plen);
}

static struct rma_lock *lock_of(struct rma_ctx *R, struct agent_win *w,
			       struct win_local *l)
{
	if (!l->lk) {
		l->lk = calloc(1, sizeof(*l->lk));
		if (l->lk) {
			l->lk->R = R;
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

	am_send(a, (int)e->node, &r, NULL, 0);
}

/* Back to the pool, or to the heap it came from. */
static void ent_free(struct rma_ctx *R, struct lock_ent *e)
{
	free(e->pkt);
	e->pkt = NULL;
	if (e->heap) {
		free(e);
		return;
	}
	e->next = R->lfree;
	R->lfree = e;
}

/*
 * A granted request moves to the heap: lock_queue bounds the requests
 * that wait, not the locks held, or holders that wait for locks
 * elsewhere could keep every entry and starve the requests that would
 * let them finish.  (Without memory the pooled entry stays.)
 */
static struct lock_ent *hold(struct rma_ctx *R, struct lock_ent *e)
{
	struct lock_ent *h = malloc(sizeof(*h));

	if (!h)
		return e;
	*h = *e;
	h->heap = 1;
	e->pkt = NULL;
	e->next = R->lfree;
	R->lfree = e;
	return h;
}

static void lock_wait_add(struct rma_lock *k);
static int apply_lim(struct agent *a, const struct rmad_am_hdr *h,
		     const uint8_t *pl, struct agent_win *w, uint16_t aflags,
		     uint64_t room, int defer);

/*
 * The op that came with granted request e, applied; or, when the
 * member's accumulate lock is held by a live client, kept in e (a
 * holder) with its flags and tried again by target_retry_grants, so that the
 * agent does not wait for it (acc_lock_timeout_ms after its first try
 * it fails there).  1 if kept; else e may be gone (an UNLOCK that rode
 * along released it).
 */
static int pend_apply(struct agent *a, struct rma_lock *k,
		      struct lock_ent *e)
{
	struct rma_ctx *R = a->rma;
	struct rmad_am_hdr *ph = e->pkt;
	uint8_t od = R->acc_defer;
	uint64_t os = R->acc_since;
	int was = e->gsince != 0, kept;

	e->pkt = NULL;
	R->acc_defer = 1;
	R->acc_since = e->gsince;
	kept = apply_lim(a, ph, (const uint8_t *)(ph + 1), k->w, e->gflags,
			 a->p.am_buf_size - sizeof(*ph), 2);
	R->acc_defer = od;
	R->acc_since = os;
	if (kept) {
		e->pkt = ph;
		if (!was) {
			e->gsince = rmad_now_ns() | 2;
			k->npend++;
			R->ngpend++;
		}
		lock_wait_add(k);
		return 1;
	}
	if (was) {
		k->npend--;
		R->ngpend--;
	}
	free(ph);
	return 0;
}

/* Holder e of k goes: the op it kept, if any, is counted out. */
static void holder_gone(struct rma_lock *k, struct lock_ent *e)
{
	if (e->pkt && e->gsince) {
		k->npend--;
		k->R->ngpend--;
	}
}

/* The kept ops of k's holders, tried again in turn (each may release
 * its holder and so change the list: the walk starts again after each
 * one applied); 1 if any was. */
static int retry_pending(struct agent *a, struct rma_lock *k)
{
	int any = 0, again = 1;

	while (k->npend && again) {
		again = 0;
		for (struct lock_ent *e = k->holders; e; e = e->next)
			if (e->pkt && e->gsince && !pend_apply(a, k, e)) {
				any = again = 1;
				break;
			}
	}
	return any;
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
int target_try_grant(struct agent *a, struct rma_lock *k)
{
	struct rma_ctx *R = a->rma;
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
		e = hold(R, e);
		e->next = k->holders;
		k->holders = e;
		granted = 1;
		if (e->pkt) {
			e->gflags = RMAD_AMF_GRANTED |
				    (e->waited ? RMAD_AMF_QUEUED : 0);
			e->gsince = 0;
			/* (may release e again: an UNLOCK rode along; the
			 * walk goes on from *pp, which stays valid) */
			pend_apply(a, k, e);
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
	struct rma_ctx *R = k->R;

	if (k->waiting)
		return;
	k->waiting = 1;
	k->wnext = R->lwait;
	R->lwait = k;
}

int target_retry_grants(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	int n = 0;

	for (struct rma_lock **pp = &R->lwait; *pp;) {
		struct rma_lock *k = *pp;

		n += retry_pending(a, k);
		n += target_try_grant(a, k);
		if (!k->qhead && !k->npend) {
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
	struct rma_ctx *R = a->rma;

	struct rma_lock *k = lock_of(a->rma, w, l);
	struct lock_ent *e = R->lfree;

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
	R->lfree = e->next;
	e->next = NULL;
	e->heap = 0;
	e->origin = h->origin;
	e->node = h->src_node;
	e->excl = !!(h->flags & RMAD_AMF_LOCK_EXCL);
	e->waited = 0;
	e->gflags = 0;
	e->gsince = 0;
	if (k->qtail)
		k->qtail->next = e;
	else
		k->qhead = e;
	k->qtail = e;
	target_try_grant(a, k);
	if (k->qhead)
		lock_wait_add(k);
	return 0;
}

void target_lock_request(struct agent *a, const struct rmad_am_hdr *h,
			 struct agent_win *w, struct win_local *l)
{
	if (lock_enqueue(a, h, NULL, w, l, 0))
		target_answer(a, h, RMAD_AM_RMA_LOCK_RETRY, 0, 0, NULL, 0);
}

/* Release the lock origin holds here through node; 1 if it held one. */
static int holder_release(struct win_local *l, int32_t origin, uint32_t node)
{
	struct rma_lock *k = l->lk;
	struct rma_ctx *R = k ? k->R : NULL;

	for (struct lock_ent **pp = k ? &k->holders : NULL; pp && *pp;
	     pp = &(*pp)->next) {
		struct lock_ent *e = *pp;

		if (e->origin != origin || e->node != node)
			continue;
		*pp = e->next;
		target_lw_release(lock_word(l), e->excl);
		holder_gone(k, e);
		ent_free(R, e);
		if (k->qhead)
			lock_wait_add(k);	/* grant on the next turn */
		return 1;
	}
	return 0;
}

void target_lock_release(struct agent *a, const struct rmad_am_hdr *h,
			 struct win_local *l)
{
	/* no holder: a NOCHECK epoch, or an element recreated after
	 * eviction; the seeds answer it all the same */
	holder_release(l, h->origin, h->src_node);
	target_answer(a, h, RMAD_AM_RMA_UNLOCK_ACK, 0, 0, NULL, 0);
	if (l->lk && l->lk->qhead)
		target_try_grant(a, l->lk);
}

void target_lock_drop_node(struct agent *a, struct win_local *l, uint32_t node)
{
	struct rma_lock *k = l->lk;
	struct lock_ent **pp, *prev = NULL;
	struct rma_ctx *R;

	if (!k)
		return;
	R = k->R;
	for (pp = &k->qhead; *pp;) {
		struct lock_ent *e = *pp;

		if (e->node != node) {
			prev = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		if (k->qtail == e)
			k->qtail = prev;
		ent_free(R, e);
	}
	for (pp = &k->holders; *pp;) {
		struct lock_ent *e = *pp;

		if (e->node != node) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		rmad_info("released rank %d's window lock held by rank %d of "
			  "dead node %u", l->rank, e->origin, node);
		target_lw_release(lock_word(l), e->excl);
		holder_gone(k, e);
		ent_free(R, e);
	}
	target_try_grant(a, k);	/* clears the queued bit when none wait */
}

/* A member's window goes away: drop its lock bookkeeping. */
void target_lock_free(struct win_local *l)
{
	struct rma_lock *k = l->lk;
	struct rma_ctx *R;

	if (!k)
		return;
	R = k->R;
	for (struct rma_lock **pp = &R->lwait; *pp; pp = &(*pp)->wnext)
		if (*pp == k) {
			*pp = k->wnext;
			break;
		}
	for (int pass = 0; pass < 2; pass++) {
		struct lock_ent *e = pass ? k->holders : k->qhead;

		while (e) {
			struct lock_ent *n = e->next;

			if (pass)
				holder_gone(k, e);
			ent_free(R, e);
			e = n;
		}
	}
	free(k);
	l->lk = NULL;
}

/*
 * Check operation h (data pl, up to room bytes) against member l's
 * window and apply it; its results (a get's, a get-accumulate's, a
 * compare-and-swap's: up to rroom bytes) land in res, *len says how
 * many.  0 or RMAD_ERR_*.
 */
static int apply_core(struct agent *a, struct win_local *l,
		      const struct rmad_am_hdr *h, const uint8_t *pl,
		      uint8_t *res, uint64_t rroom, uint64_t *len,
		      uint64_t room)
{
	size_t es = rmad_dtype_size(h->dtype);
	uint8_t *dst;
	int acc, st = 0;

	*len = h->count * es;
	if (!l || (!l->created && !l->data))
		return RMAD_ERR_RANK;
	if (h->flags & RMAD_AMF_TYPED) {
		/* a chunk of a derived target type (rma_type.c): up to
		 * what one message carries, or a pulled chunk's room */
		int rt = h->type != RMAD_AM_RMA_PUT &&
			 h->type != RMAD_AM_RMA_ACC;

		st = ty_apply(a, l, h, pl, res, len,
			      rt || room < rroom ? rroom : room);
		rmad_smp_mb();
		return st;
	}
	if (!es || h->count > room || *len > room ||
	    (h->type != RMAD_AM_RMA_ACC && h->type != RMAD_AM_RMA_PUT &&
	     *len > rroom))
		return RMAD_ERR_TYPE;
	if (l->dynamic ? dynwin_check(l, h->disp, *len) != 0 :
	    h->disp > l->size || *len > l->size - h->disp)
		return RMAD_ERR_DISP;
	/* checked first, then applied in one place or the other */
	switch (h->type) {
	case RMAD_AM_RMA_PUT:
		if (h->payload_len != *len)
			st = RMAD_ERR_ARG;
		break;
	case RMAD_AM_RMA_ACC:
		st = rmad_op_check(h->dtype, h->op);
		if (!st && h->op == RMAD_NO_OP)
			st = RMAD_ERR_OP;
		if (!st && h->payload_len != *len)
			st = RMAD_ERR_ARG;
		break;
	case RMAD_AM_RMA_GET:
		if (h->payload_len)
			st = RMAD_ERR_ARG;
		break;
	case RMAD_AM_RMA_GACC:
		st = rmad_op_check(h->dtype, h->op);
		if (!st &&
		    h->payload_len != (h->op == RMAD_NO_OP ? 0 : *len))
			st = RMAD_ERR_ARG;
		break;
	case RMAD_AM_RMA_CAS:
		st = rmad_cas_check(h->dtype);
		if (!st && (h->count != 1 || h->payload_len != 2 * es))
			st = RMAD_ERR_ARG;
		break;
	}
	if (st)
		return st;
	if (l->created) {
		st = xfer_created_apply(a, l, h, pl, res, *len);
		rmad_smp_mb();
		return st;
	}
	dst = (uint8_t *)l->data + h->disp;
	/* every accumulate under the accumulate lock: in bulk when large
	 * (accword.h), with atomics otherwise, plain for a wide type */
	acc = h->type == RMAD_AM_RMA_ACC || h->type == RMAD_AM_RMA_GACC ||
	      h->type == RMAD_AM_RMA_CAS;
	if (acc && (st = xfer_acc_lock(a, l)) != 0)
		return st;
	switch (h->type) {
	case RMAD_AM_RMA_PUT:
		memcpy(dst, pl, *len);
		break;
	case RMAD_AM_RMA_ACC:
		xfer_mapped_acc_apply(a, l, dst, pl, NULL, h->dtype, h->op,
				 h->count);
		break;
	case RMAD_AM_RMA_GET:
		memcpy(res, dst, *len);
		break;
	case RMAD_AM_RMA_GACC:
		xfer_mapped_acc_apply(a, l, dst, h->op == RMAD_NO_OP ? NULL : pl,
				 res, h->dtype, h->op, h->count);
		break;
	case RMAD_AM_RMA_CAS:
		rmad_cas_apply(dst, pl, pl + es, res, h->dtype);
		break;
	}
	if (acc)
		xfer_acc_unlock(l);
	/* release: the window update is visible before the target_answer (and
	 * before an unlock lets the next holder in) */
	rmad_smp_mb();
	return 0;
}

/*
 * Apply one operation to a member's window and answer it when the
 * origin needs an answer: results, an error, a requested ack, or
 * piggybacked synchronization (aflags: what the grant adds).  An UNLOCK
 * that rode along releases the origin's lock once the data is in.
 */
static int apply_lim(struct agent *a, const struct rmad_am_hdr *h,
		     const uint8_t *pl, struct agent_win *w, uint16_t aflags,
		     uint64_t room, int defer)
{
	struct rma_ctx *R = a->rma;
	struct win_local *l = agent_win_local(w, h->target);
	uint8_t res[RMAD_AM_MAX_PAYLOAD];
	int type = h->type == RMAD_AM_RMA_PUT || h->type == RMAD_AM_RMA_ACC ?
		   RMAD_AM_RMA_ACK : RMAD_AM_RMA_RESP;
	uint64_t len;
	int st;
	/* a busy accumulate lock: the packet waits in the am layer, and
	 * nothing of it happened (acc_lock comes before any change); the
	 * caller's mode (target_lock_and_apply's) stays otherwise */
	uint8_t od = R->acc_defer;
	uint64_t os = R->acc_since;

	if (defer == 1) {
		R->acc_defer = (uint8_t)a->am.in_handler;
		R->acc_since = am_deferred_since(a);
	}
	st = apply_core(a, l, h, pl, res, sizeof(res), &len, room);
	if (st == ACC_AGAIN) {
		/* kept by the am layer (1), or by our caller (2) */
		if (defer == 2 || (defer == 1 && am_defer(a))) {
			R->acc_defer = od;
			R->acc_since = os;
			return 1;
		}
		R->acc_defer = 0;	/* nowhere to keep it: wait */
		st = apply_core(a, l, h, pl, res, sizeof(res), &len, room);
	}
	R->acc_defer = od;
	R->acc_since = os;
	if (st) {
		a->st.pkts_dropped++;
		rmad_warn("rma %u from node %u (rank %d -> %d): refused (%d)",
			  h->type, h->src_node, h->origin, h->target, st);
	}
	if (l && (h->flags & RMAD_AMF_UNLOCK)) {
		holder_release(l, h->origin, h->src_node);
		aflags |= RMAD_AMF_UNLOCKED;
	}
	/* the origin's complete rode on it: counted even if the op
	 * failed (the answer says so), or the target's wait would hang */
	if (l && (h->flags & RMAD_AMF_PSCW_DONE) && w->ready &&
	    !agent_win_target(w, h->origin, &(uint64_t){ 0 },
			      &(int32_t){ 0 }) &&
	    agent_job_rank_node(w->job, h->origin) == (int)h->src_node)
		winsync_count_complete(a, l);
	if (st || type == RMAD_AM_RMA_RESP || aflags ||
	    (h->flags & (RMAD_AMF_ACK_REQ | RMAD_AMF_UNLOCK |
			 RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL)))
		target_answer(a, h, type, st, aflags, res,
		       type == RMAD_AM_RMA_RESP && !st ? len : 0);
	return 0;
}

void target_apply_op(struct agent *a, const struct rmad_am_hdr *h,
	      const uint8_t *pl, struct agent_win *w, uint16_t aflags)
{
	apply_lim(a, h, pl, w, aflags, a->p.am_buf_size - sizeof(*h), 0);
}

int target_apply_direct(struct agent *a, const struct rmad_am_hdr *h,
		 const uint8_t *pl, struct agent_win *w)
{
	return apply_lim(a, h, pl, w, 0, a->p.am_buf_size - sizeof(*h), 1);
}

int target_apply_pulled(struct agent *a, const struct rmad_am_hdr *h,
		 const uint8_t *data, struct agent_win *w, uint64_t since)
{
	struct rma_ctx *R = a->rma;
	int r;

	if ((h->type != RMAD_AM_RMA_ACC && h->type != RMAD_AM_RMA_PUT) ||
	    (h->flags & RMAD_AMF_PULL)) {
		target_answer(a, h, RMAD_AM_RMA_ACK, RMAD_ERR_ARG, 0, NULL, 0);
		return 0;
	}
	R->acc_defer = 1;
	R->acc_since = since;
	r = apply_lim(a, h, data, w, 0, RMAD_AM_PULL_MAX, 2);
	R->acc_defer = 0;
	return r;
}

int32_t target_apply_pulled_res(struct agent *a, const struct rmad_am_hdr *h,
			 const uint8_t *data, struct agent_win *w,
			 uint8_t *res, uint64_t *rlen, uint64_t since)
{
	struct rma_ctx *R = a->rma;
	struct win_local *l = agent_win_local(w, h->target);
	int32_t st;

	if (h->type != RMAD_AM_RMA_GACC || (h->flags & RMAD_AMF_PULL))
		return RMAD_ERR_ARG;
	R->acc_defer = 1;
	R->acc_since = since;
	st = apply_core(a, l, h, data, res, RMAD_AM_PULL_MAX, rlen,
			RMAD_AM_PULL_MAX);
	R->acc_defer = 0;
	return st;
}

int32_t target_read_pushed(struct agent *a, const struct rmad_am_hdr *h,
		    const struct rmad_am_typed *th, uint8_t *buf)
{
	struct agent_job *j = agent_job_find(a, h->job);
	struct agent_win *w = j ? agent_win_by_key(a, j, h->wkey) : NULL;
	struct win_local *l = w ? agent_win_local(w, h->target) : NULL;
	uint64_t len = h->count * rmad_dtype_size(h->dtype);

	if (!l || (!l->created && !l->data))
		return RMAD_ERR_RANK;
	if (h->type != RMAD_AM_RMA_GET || !len || len > RMAD_AM_PULL_MAX ||
	    !th != !(h->flags & RMAD_AMF_TYPED))
		return RMAD_ERR_ARG;
	if (th) {
		/* packed through the cached type, checked there */
		struct rmad_am_hdr g = *h;
		uint64_t rlen;

		g.payload_len = sizeof(*th);
		return ty_apply(a, l, &g, (const uint8_t *)th, buf, &rlen,
				RMAD_AM_PULL_MAX);
	}
	/* again: the window may have gone or a region been detached while
	 * the request waited for a buffer */
	if (l->dynamic ? dynwin_check(l, h->disp, len) != 0 :
	    h->disp > l->size || len > l->size - h->disp)
		return RMAD_ERR_DISP;
	if (l->created)
		return xfer_client_io(a, l->client, l->addr + h->disp, buf, len, 0);
	memcpy(buf, (const uint8_t *)l->data + h->disp, len);
	return 0;
}

/*
 * An operation that carries its lock request: applied at once when the
 * lock is free, else queued with the request and applied at the grant.
 * With no room to queue it, the origin hears LOCK_RETRY (with the op's
 * cookie) and sends it again later.
 */
void target_lock_and_apply(struct agent *a, const struct rmad_am_hdr *h,
			   const uint8_t *pl, struct agent_win *w)
{
	struct win_local *l = agent_win_local(w, h->target);

	if (!l || !l->base) {
		target_apply_op(a, h, pl, w, 0);	/* answers the error */
		return;
	}
	/* (granted with the accumulate lock held by a client, the op
	 * waits in its lock entry: pend_apply) */
	if (h->payload_len > a->p.am_buf_size ||
	    lock_enqueue(a, h, pl, w, l, 1))
		target_answer(a, h, RMAD_AM_RMA_LOCK_RETRY, 0, 0, NULL, 0);
}

/* RMA_DONE: everything before it from this origin was applied (the
 * channel is ordered), so the answer goes right back. */
void target_flush_request(struct agent *a, const struct rmad_am_hdr *h)
{
	target_answer(a, h, RMAD_AM_RMA_FLUSH_ACK, 0, 0, NULL, 0);
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
int target_dead_shared(struct agent *a, struct win_local *l, uint32_t c)
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
			agent_yield(a);
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
