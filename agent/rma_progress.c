/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_progress.c - the origin side's progress, the seeds' "Basic
 * routines" under their own names:
 *
 *  issue_ops_target        a target element's pending ops, with its lazy
 *                          lock (LOCK_CALLED: the lock rides on the first
 *                          op, or a lone short op waits for the epoch's
 *                          end) and the piggybacked unlock / ack request
 *  issue_ops_win           every target of one origin, round robin, and
 *                          the stalled submissions routed (rma_origin.c)
 *  issue_ops_global        issue_ops_win for every origin of the agent
 *  cleanup_target          a target whose ops are all out and answered:
 *                          its release (UNLOCK, RMA_DONE) and its element
 *                          freed (active target, nocheck, evicted)
 *  cleanup_win             one origin's fence released and its sync
 *                          requests done (rma_win.c says when and what)
 *  cleanup_win_aggressive  out of target elements: lock_all's window
 *                          protocol, or one target evicted
 *  cleanup_global          cleanup_win for every origin
 *  make_rma_progress_target / _win / _global
 *                          issue and clean up until nothing moves
 *
 * Answers are cleaned up as they arrive (rma_answer.c); a fi_write or
 * fi_read chunk as it lands (rma_progress_xfer_done here, the fabric's completion).
 * make_rma_progress_global runs in the agent's loop when something
 * asked for a retry; make_rma_progress_win after a submission, an
 * answer or a transfer; make_rma_progress_target where one target alone
 * can move (rma_progress_fast).
 */
#include <stdlib.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "mem.h"
#include "windows.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

/* A chunk landed (or failed): CLEANUP for rdma ops. */
void rma_progress_xfer_done(struct rmad_fabric_xfer *fx, int status)
{
	struct rma_xfer *x = (struct rma_xfer *)fx;
	struct agent *a = x->a;
	struct rma_ctx *R = a->rma;
	struct rma_op *op = &R->sh[x->op];
	struct rma_origin *o = op->o;
	struct rma_target *t;

	agent_mem_drop(a, x->held);
	x->held = NULL;
	if (op->serial != x->serial || !o) {
		/* the op ended without us (its window went away) */
		x->next = R->xfree;
		R->xfree = x;
		return;
	}
	op->nx--;
	if (status && agent_job_rank_dead(a, o->w->job, op->target))
		status = RMAD_ERR_PROC_FAILED;	/* that is why */
	if (status && !op->status)
		op->status = status;
	if (!status && !op->status && op->opcode == RMAD_OPC_GET &&
	    !x->direct) {
		int err = xfer_op_io(a, op, op->origin + x->off, x->buf, x->len,
				1);

		if (err)
			op->status = err;
	}
	op->done += x->len;
	x->next = R->xfree;
	R->xfree = x;
	t = oplist_target_find(o, op->target);
	if (op->done >= op->len && op->sent >= op->len) {
		if (t)
			origin_uncount_issued(t, op);
		oplist_op_finish(a, o, x->op);
	}
	make_rma_progress_win(a, o);
}

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

	if (o->state != RMA_PER_TARGET)
		return 0;
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *e = o->slots[s]; e; e = e->next) {
			if (e == t || e->state == RMA_LOCK_GRANTED ||
			    e->lseq >= t->lseq)
				continue;
			if (!wait)
				wait = 1;
			if (e->state == RMA_LOCK_CALLED && !e->lock_now) {
				e->lock_now = 1;
				wait = 2;
			}
		}
	return wait;
}

/*
 * ISSUE_OPS_TARGET in LOCK_CALLED: a lone short op waits for the epoch's
 * end (single short op: LOCK, op and UNLOCK in one packet); otherwise
 * the first op carries the lock request (or the lock goes alone) and
 * the others wait for the grant.  1 if moved.
 */
static int issue_lock_called(struct agent *a, struct rma_origin *o,
			     struct rma_target *t)
{
	struct rma_ctx *R = a->rma;
	uint64_t thr = (uint64_t)a->p.single_op_threshold;

	uint32_t i = t->head;

	if (i == RMAD_NIL && !t->evict && !t->lock_now) {
		if (t->want_unlock) {
			/* locked, never used: nothing to send */
			oplist_target_free(o, t);
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
		R->retry_pending = 1;
		return 0;
	}
	t->retry_at = 0;
	/* not a typed op: its chunks are applied as they arrive,
	 * never queued with a lock request (rma_type.c) */
	if (i != RMAD_NIL && origin_can_ride(a, &R->sh[i]) && !R->sh[i].ty) {
		int lone = R->sh[i].next == RMAD_NIL && thr &&
			   R->sh[i].len <= thr;
		uint16_t fl = t->excl ? RMAD_AMF_LOCK_EXCL :
					RMAD_AMF_LOCK_SHARED;

		if (lone && !t->want_unlock && !t->sync_want &&
		    !t->release && !t->evict && !o->no_hold &&
		    !t->lock_now)
			return 0;	/* until the epoch's end */
		if (lone && t->want_unlock)
			fl |= RMAD_AMF_UNLOCK;
		oplist_tpop(o, t);
		t->state = RMA_LOCK_ISSUED;
		origin_issue_op(a, o, t, i, fl | RMAD_AMF_ACK_REQ);
		if (R->sh[i].pflags & fl &
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
	origin_send_lock_msg(a, o, t->rank, t->node, RMAD_AM_RMA_LOCK,
		      t->excl);
	t->state = RMA_LOCK_ISSUED;
	return 1;
}

/*
 * ISSUE_OPS_TARGET in LOCK_GRANTED: ops go out as they come (up to
 * piggyback_threshold of them wait for the closing synchronization),
 * the last before an unlock or flush carrying UNLOCK or the request for
 * an ack (RMA_DONE), or the PSCW complete.  1 if moved.
 */
static int issue_granted(struct agent *a, struct rma_origin *o,
			 struct rma_target *t)
{
	struct rma_ctx *R = a->rma;
	int moved = 0, closing;

	closing = t->want_unlock || t->sync_want;
	if (!closing && !t->release && !t->evict && !o->no_hold &&
	    t->npend && t->npend <= (uint32_t)a->p.piggyback_threshold)
		return 0;	/* wait for the closing synchronization */
	if (closing)
		origin_get_to_tail(a, t);
	while (t->head != RMAD_NIL) {
		uint32_t i = t->head;
		uint16_t fl = 0;

		if (!R->sh[i].counted &&
		    ((o->acc_order && origin_is_acc(R->sh[i].opcode) &&
		      (t->npull || (!R->ordered && t->nacc))) ||
		     origin_order_hazard(a, o, t, &R->sh[i]))) {
			/* an unordered channel, or a pulled op (applied
			 * after what follows it; a pulled put holds it back
			 * too, more than MPI asks): the previous
			 * accumulate must be answered before the next may
			 * go (one partly sent goes on); and any op waits
			 * for an earlier write to its bytes that it could
			 * overtake (origin_order_hazard) */
			if (!t->order_blocked)
				o->st.order_waits++;
			t->order_blocked = 1;
			return moved;
		}
		t->order_blocked = 0;
		if (closing && R->sh[i].next == RMAD_NIL &&
		    origin_can_ride(a, &R->sh[i])) {
			/* a closing message that follows it (close_rides)
			 * needs no answer */
			fl = t->close_rides ? 0 : RMAD_AMF_ACK_REQ;
			if (t->want_unlock && !t->nocheck && !o->nocheck_all &&
			    !t->unlocking && !t->nrdma &&
			    (R->ordered || !t->nissued))
				fl |= RMAD_AMF_UNLOCK;
			/* the PSCW complete rides the same way, once every
			 * op before it is known to be applied first.  On an
			 * ordered channel it asks for no target_answer (close_rides
			 * is set): a complete is local (the target's wait
			 * sees the ops applied), so the origin need not wait
			 * for a busy target's agent */
			if (t->pscw_close && !t->nrdma &&
			    (R->ordered || !t->nissued))
				fl |= RMAD_AMF_PSCW_DONE;
		}
		if (!origin_issue_op(a, o, t, i, fl))
			return moved;
		if (R->sh[i].pflags & fl & RMAD_AMF_PSCW_DONE) {
			/* the COMPLETE op sends no notice of its own */
			R->sh[t->pscw_close - 1].pflags |= RMAD_AMF_PSCW_DONE;
			t->pscw_close = 0;
			o->st.piggyback_flush++;
		}
		if (R->sh[i].pflags & fl & RMAD_AMF_UNLOCK) {
			t->unlocking = 1;
			o->st.piggyback_unlock++;
		} else if (R->sh[i].pflags & fl & RMAD_AMF_ACK_REQ) {
			o->st.piggyback_flush++;
		}
		oplist_tpop(o, t);
		moved = 1;
	}
	return moved;
}

/* ISSUE_OPS_TARGET: what target element t may send now; 1 if moved. */
int issue_ops_target(struct agent *a, struct rma_origin *o,
		     struct rma_target *t)
{
	if (t->state == RMA_LOCK_CALLED)
		return issue_lock_called(a, o, t);
	if (t->state != RMA_LOCK_GRANTED)
		return 0;
	return issue_granted(a, o, t);
}

/*
 * CLEANUP_TARGET: granted target t has no pending op; once what went
 * out is answered, its release goes (UNLOCK, or RMA_DONE where no lock
 * is held) and its element is freed (an evicted one remembers its lock
 * for the epoch's UNLOCK).  1 if anything moved.
 */
static int cleanup_target(struct agent *a, struct rma_origin *o,
			  struct rma_target *t)
{
	if (t->nissued || t->unlocking)
		return 0;
	if (t->want_unlock) {
		if (t->close_rides) {
			/* the closing message (the fence's barrier
			 * message, the complete notice, or the complete
			 * riding on the last op) goes behind them all on
			 * the ordered channel: done here */
			oplist_target_free(o, t);
			return 1;
		}
		if (t->nocheck || o->nocheck_all) {
			/* no lock to release, but the ops must be in */
			if (t->done_seq != t->sent_seq)
				return origin_send_flush(a, o, t);
			oplist_target_free(o, t);
			return 1;
		}
		t->unlocking = 1;
		origin_send_lock_msg(a, o, t->rank, t->node, RMAD_AM_RMA_UNLOCK,
			      t->excl);
		return 1;
	}
	if (t->done_seq != t->sent_seq) {
		/* a flush waits, or the element goes: RMA_DONE first */
		if (t->sync_want || t->evict)
			return origin_send_flush(a, o, t);
		return 0;
	}
	if (t->evict) {
		/* CLEANUP_WIN_AGGRESSIVE: its ops are done; keep the lock */
		if (o->state == RMA_PER_TARGET && !t->nocheck) {
			if (o->nevicted == o->capevicted) {
				int cap = o->capevicted ? 2 * o->capevicted : 8;
				int32_t *p = realloc(o->evicted,
						     sizeof(*p) * (size_t)cap);

				if (!p)
					return 0;
				o->evicted = p;
				o->capevicted = cap;
			}
			o->evicted[o->nevicted++] = t->rank;
		}
		oplist_target_free(o, t);
		return 1;
	}
	return 0;
}

/*
 * MAKE_RMA_PROGRESS_TARGET: issue target t's ops, then clean it up when
 * it is granted and nothing of it waits any more; 1 if anything moved.
 */
int make_rma_progress_target(struct agent *a, struct rma_origin *o,
			     struct rma_target *t)
{
	int granted = t->state == RMA_LOCK_GRANTED;
	int moved = issue_ops_target(a, o, t);

	if (!granted || t->head != RMAD_NIL)
		return moved;	/* t may be gone (LOCK_CALLED), or waits */
	return cleanup_target(a, o, t) | moved;
}

/*
 * ROUTE and issue in one step, for a data op whose target is granted and
 * open (no closing synchronization, no release or eviction pending) while
 * nothing else of the origin is in motion (no stalled submission, no sync
 * waiting, no lock_all pass, not dying).  Then only that target can move,
 * and MAKE_RMA_PROGRESS_WIN would walk every target slot twice to issue
 * its ops alone; this issues them directly.  Returns 1 when op i went
 * this way, 0 (nothing done) when the caller takes the general path.
 */
int rma_progress_fast(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &a->rma->sh[i];
	struct rma_target *t;

	switch (op->opcode) {
	case RMAD_OPC_PUT:
	case RMAD_OPC_GET:
	case RMAD_OPC_ACC:
	case RMAD_OPC_GACC:
	case RMAD_OPC_CAS:
		break;
	default:
		return 0;
	}
	if (op->staged || op->waited || op->ty || o->shead != RMAD_NIL ||
	    o->yhead != RMAD_NIL || o->state == RMA_LOCK_ALL_ISSUED ||
	    o->la_unlock || o->dying || o->nevicted)
		return 0;
	t = oplist_target_find(o, op->target);
	if (!t || t->state != RMA_LOCK_GRANTED || t->want_unlock ||
	    t->sync_want || t->release || t->evict || t->pscw_close ||
	    am_node_dead(a, t->node))
		return 0;
	oplist_tadd(o, t, i);
	make_rma_progress_target(a, o, t);
	return 1;
}

/*
 * CLEANUP_WIN_AGGRESSIVE: free one of our target elements; 1 when it
 * chose one (the caller must look at the targets again: an element with
 * nothing in flight goes at once).
 */
static int cleanup_win_aggressive(struct rma_origin *o)
{
	struct rma_target *pick = NULL;
	static const uint8_t order[] = { RMA_LOCK_GRANTED, RMA_LOCK_ISSUED, RMA_LOCK_CALLED };

	if (o->state == RMA_LOCK_ALL_CALLED) {
		/* per-target protocol out of elements: the window protocol */
		rmad_dbg("rank %d: lock_all out of target elements: locking "
			 "every member", o->rank);
		o->state = RMA_LOCK_ALL_ISSUED;
		o->la_next = 0;
		return 1;
	}
	if (o->state == RMA_LOCK_ALL_ISSUED)
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


/*
 * ISSUE_OPS_WIN: for one origin, the lock_all window protocol's next
 * batch, every target element round robin (each with its cleanup, so
 * that an element that ends frees its slot for a stalled submission),
 * the stalled submissions routed in order, and CLEANUP_WIN_AGGRESSIVE
 * when they wait for a target element.  1 if anything moved.
 */
static int issue_ops_win(struct agent *a, struct rma_origin *o)
{
	struct rma_ctx *R = a->rma;
	int again = 0;

	if (o->state == RMA_LOCK_ALL_ISSUED || o->la_unlock)
		again |= rma_win_lock_all_step(a, o);
	for (uint32_t s = 0; s < o->nslots; s++) {
		struct rma_target *t = o->slots[s], *n;

		for (; t; t = n) {
			n = t->next;
			again |= make_rma_progress_target(a, o, t);
		}
	}
	while (o->shead != RMAD_NIL) {
		uint32_t i = o->shead, nx = R->sh[i].next;

		o->need_target = 0;
		/* origin_route() links i into another list through the same next
		 * field: take i off this one by nx, not by it */
		if (origin_route(a, o, i) < 0) {
			R->sh[i].next = nx;
			break;
		}
		o->shead = nx;
		if (nx == RMAD_NIL)
			o->stail = RMAD_NIL;
		again = 1;
	}
	if (o->shead != RMAD_NIL && o->need_target)
		again |= cleanup_win_aggressive(o);
	return again;
}

/*
 * CLEANUP_WIN: for one origin, a released fence whose last answers are
 * in completes, and so does each sync request that is done, in order.
 * 1 if anything moved; *synced set when a sync request completed.
 */
static int cleanup_win(struct agent *a, struct rma_origin *o, int *synced)
{
	struct rma_ctx *R = a->rma;
	int again = 0;

	if (o->fence_held && !o->ntargets) {
		/* released, and the last answers are in */
		rma_win_fence_finish(a, o, o->fence_st);
		again = 1;
		*synced = 1;
	}
	while (o->yhead != RMAD_NIL && rma_win_sync_done(a, o, o->yhead)) {
		uint32_t i = oplist_pop(R, &o->yhead, &o->ytail);

		if (rma_win_sync_finish(a, o, i))
			*synced = 1;
		again = 1;
	}
	return again;
}

/* After an origin's cleanup: with no flush waiting any more, ops may
 * wait again, unanswered; a dying origin with nothing left goes. */
static void cleanup_win_end(struct agent *a, struct rma_origin *o,
			    int synced)
{
	if (synced && o->yhead == RMAD_NIL)
		for (uint32_t s = 0; s < o->nslots; s++)
			for (struct rma_target *t = o->slots[s]; t;
			     t = t->next)
				t->sync_want = t->release = 0;
	if (o->dying && !o->ntargets && o->shead == RMAD_NIL &&
	    o->yhead == RMAD_NIL && !o->la_inflight && !o->la_unlock &&
	    !o->nevicted)
		oplist_origin_free(a, o);
}

/*
 * MAKE_RMA_PROGRESS_WIN: ISSUE_OPS_WIN and CLEANUP_WIN for one origin
 * until nothing moves; 1 if anything moved.  o may be freed.
 */
int make_rma_progress_win(struct agent *a, struct rma_origin *o)
{
	int moved = 0, again = 1, synced = 0;

	while (again) {
		again = issue_ops_win(a, o);
		again |= cleanup_win(a, o, &synced);
		moved |= again;
	}
	cleanup_win_end(a, o, synced);
	return moved;
}

/* ISSUE_OPS_GLOBAL: ISSUE_OPS_WIN for every origin; how many moved. */
static int issue_ops_global(struct agent *a)
{
	int n = 0;

	for (struct agent_win *w = a->rma->owins; w; w = w->onext)
		for (struct rma_origin *o = w->origins; o; o = o->next)
			n += issue_ops_win(a, o);
	return n;
}

/* CLEANUP_GLOBAL: CLEANUP_WIN for every origin; how many moved.  An
 * origin may be freed (the walk goes on by its successor). */
static int cleanup_global(struct agent *a)
{
	int n = 0;

	for (struct agent_win *w = a->rma->owins; w; w = w->onext)
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			int synced = 0;

			nx = o->next;
			n += cleanup_win(a, o, &synced);
			cleanup_win_end(a, o, synced);
		}
	return n;
}

/*
 * MAKE_RMA_PROGRESS_GLOBAL, from the agent's loop: the target side's
 * waiting lock requests, then, when something asked for a retry (a full
 * provider, no transfer slot, a lock retry's delay, a fence released),
 * ISSUE_OPS_GLOBAL and CLEANUP_GLOBAL until nothing moves.
 */
int make_rma_progress_global(struct agent *a)
{
	struct rma_ctx *R = a->rma;
	int n = 0, x, y;

	if (R->lwait)
		n += target_retry_grants(a);
	if (R->retry_pending) {
		R->retry_pending = 0;
		do {
			x = issue_ops_global(a);
			y = cleanup_global(a);
			n += x + y;
		} while (x + y != 0);
	}
	return n;
}

/* The transfer slots' completion: a chunk's end comes to rma_progress_xfer_done. */
void rma_progress_init(struct agent *a)
{
	for (int k = 0; k < XFER_MAX; k++)
		a->rma->xfers[k].fx.done = rma_progress_xfer_done;
}
