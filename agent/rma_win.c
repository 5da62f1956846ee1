/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_win.c - an origin's window-level progress, after the seeds:
 * MAKE_RMA_PROGRESS_WIN (issue every target's ops round robin, route the
 * stalled submissions, complete the synchronization requests that are
 * done), CLEANUP_WIN_AGGRESSIVE, the lock_all window protocol, and the
 * fence: an origin's epoch complete, it joins the window's barrier
 * (windows.c), whose release puts it in a fence epoch.
 *
 * The operation table itself, per target, is rma_origin.c.
 */
#include <stdlib.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "windows.h"
#include "winsync.h"
#include "log.h"
#include "rmad_abi.h"
#include "rma_internal.h"

/*
 * May a riding fence's barrier message leave while target element t is
 * still there?  Once t's ops have all left and what is unanswered are
 * ops with results whose requests the target applies as they arrive
 * (a get reads the window then): the barrier message follows them on
 * the ordered channel, so the target's agent has read (or updated) its
 * memory before it takes the message into account.  The FENCE itself
 * completes once their answers are in too (rma_fence_done).  Otherwise
 * t is freed before the barrier, as for every fence that does not ride.
 */
static int fence_may_pass(const struct rma_target *t)
{
	return t->close_rides && t->want_unlock &&
	       t->state == RMA_LOCK_GRANTED && t->head == RMAD_NIL &&
	       !t->unlocking && t->nissued == t->nride;
}

/* Is sync request i satisfied?  (Everything before it was placed.) */
static int sync_done(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_ctx *R = o->R;

	struct rma_op *op = &R->sh[i];
	int all = op->target < 0 || op->opcode == RMAD_OPC_UNLOCK_ALL ||
		  op->opcode == RMAD_OPC_FENCE;

	if (o->shead != RMAD_NIL)
		return 0;
	if (op->opcode == RMAD_OPC_FENCE && o->fence_op != RMAD_NIL)
		return 0;	/* the previous fence's barrier first */
	if (op->opcode == RMAD_OPC_COMPLETE)
		return pscw_sync_done(a, o, op);
	if (op->opcode == RMAD_OPC_UNLOCK_ALL &&
	    (o->la_unlock || o->la_inflight || o->state == RMA_LOCK_ALL_ISSUED))
		return 0;
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *t = o->slots[s]; t; t = t->next) {
			if (!all && t->rank != op->target)
				continue;
			switch (op->opcode) {
			case RMAD_OPC_FENCE:
				if (fence_may_pass(t))
					break;
				return 0;
			case RMAD_OPC_UNLOCK:
			case RMAD_OPC_UNLOCK_ALL:
				return 0;	/* freed once released */
			case RMAD_OPC_FLUSH:
				if (t->head != RMAD_NIL || t->nissued ||
				    t->done_seq != t->sent_seq)
					return 0;
				break;
			case RMAD_OPC_FLUSH_LOCAL:
				/* and no transfer reads the client's
				 * memory in place any more */
				if (t->head != RMAD_NIL || t->nres ||
				    t->ninplace)
					return 0;
				break;
			case RMAD_OPC_LOCK_WAIT:
				if (t->state != RMA_LOCK_GRANTED)
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

/* FENCE op i, its epoch complete, arrives at the window's barrier */
static int32_t fence_arrive(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct win_local *l = agent_win_local(o->w, o->rank);
	int32_t st;

	if (!l)
		return RMAD_ERR_ARG;
	/* before the call: when this node is the window's root and the
	 * last to arrive, the release runs inside it */
	o->fence_op = i;
	o->state = RMA_FENCE_ISSUED;
	if (o->ntargets)
		o->st.fence_ahead++;	/* fence_may_pass */
	st = agent_win_fence_arrive(a, o->w, l);
	if (st) {
		o->fence_op = RMAD_NIL;
		o->state = RMA_NONE;
		o->nocheck_all = 0;
	}
	return st;
}

/* o's FENCE completes with st: o is in a fence epoch (none after
 * NOSUCCEED, or after a failure) */
static void fence_finish(struct agent *a, struct rma_origin *o, int32_t st)
{
	struct rma_ctx *R = a->rma;
	uint32_t i = o->fence_op;
	struct rma_op *op = &R->sh[i];

	o->fence_op = RMAD_NIL;
	o->fence_held = 0;
	if (!st && o->err) {
		st = o->err;
		o->err = 0;
	}
	if (!st && o->dead_seen)
		st = RMAD_ERR_PROC_FAILED;
	o->dead_seen = 0;
	if (st || (op->dtype & RMAD_MODE_NOSUCCEED)) {
		o->state = RMA_NONE;
		o->nocheck_all = 0;
	} else {
		o->state = RMA_FENCE_GRANTED;
		o->nocheck_all = 1;
	}
	/* nobody waits for an opening fence: its error is the epoch's,
	 * for the next synchronization; one that is waited for reports
	 * the epoch's errors, which go with it */
	if (st && !op->waited)
		set_err(o, st);
	else if (st)
		o->err = 0;
	op->status = st;
	op->serial = 0;
	agent_complete_op(a, op->client, i, st);
}

/*
 * w's fence barrier released (status 0) or failed: each local origin's
 * FENCE completes, at once or, where its barrier message rode ahead of
 * answers still on their way (fence_may_pass), when they are in: an
 * epoch's gets have landed when the fence returns.
 */
void rma_fence_done(struct agent *a, struct agent_win *w, int status)
{
	struct rma_ctx *R = a->rma;

	for (struct rma_origin *o = w->origins; o; o = o->next) {
		if (o->fence_op == RMAD_NIL || o->fence_held)
			continue;
		if (o->ntargets) {
			o->fence_held = 1;
			o->fence_st = status;
			continue;
		}
		fence_finish(a, o, status);
	}
	/* the origins move on in the loop's next pass, not here: this may
	 * run inside one of their progress calls (see fence_arrive).  What
	 * waits in aggregates (the root's RELEASE, an answer) goes before
	 * the wakes (agent_flush_wakeups): a woken client may take our core */
	R->retry_pending = 1;
	agent_flush_wakeups(a);
}

/* RMAD_ERR_PROC_FAILED if sync op covers a dead rank (its process or
 * its node), else 0 */
static int32_t sync_dead(struct agent *a, struct rma_origin *o,
			 const struct rma_op *op)
{
	if (op->target < 0 || op->opcode == RMAD_OPC_UNLOCK_ALL ||
	    op->opcode == RMAD_OPC_FENCE)
		return o->dead_seen ? RMAD_ERR_PROC_FAILED : 0;
	return agent_job_rank_dead(a, o->w->job, op->target) ?
	       RMAD_ERR_PROC_FAILED : 0;
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
		if (am_node_dead(a, node)) {
			set_err(o, RMAD_ERR_PROC_FAILED);
			continue;
		}
		send_lock_msg(a, o, r, node, o->la_unlock ? RMAD_AM_RMA_UNLOCK :
				     RMAD_AM_RMA_LOCK, 0);
		o->la_inflight++;
		o->la_node[node]++;
		moved = 1;
	}
	if (o->la_next >= o->w->gsize && !o->la_inflight) {
		if (o->la_unlock) {
			o->la_unlock = 0;
			moved = 1;
		} else if (o->state == RMA_LOCK_ALL_ISSUED) {
			o->state = RMA_LOCK_ALL_GRANTED;
			moved = 1;
		}
	}
	return moved;
}

/* MAKE_RMA_PROGRESS for one origin; 1 if anything moved. */
/* ISSUE_OPS_WIN: every target element of the window, round robin. */
static int issue_ops_win(struct agent *a, struct rma_origin *o)
{
	int again = 0;

	for (uint32_t s = 0; s < o->nslots; s++) {
		struct rma_target *t = o->slots[s], *n;

		for (; t; t = n) {
			n = t->next;
			again |= issue_ops_target(a, o, t);
		}
	}
	return again;
}

/*
 * MAKE_RMA_PROGRESS_WIN: issue what can go (ISSUE_OPS_WIN), route the
 * stalled submissions, run CLEANUP_WIN_AGGRESSIVE when they wait for a
 * target element, and complete the sync requests that are done, until
 * nothing moves.
 */
int make_rma_progress_win(struct agent *a, struct rma_origin *o)
{
	struct rma_ctx *R = a->rma;

	int moved = 0, again = 1, synced = 0;

	while (again) {
		again = 0;
		if (o->state == RMA_LOCK_ALL_ISSUED || o->la_unlock)
			again |= lock_all_step(a, o);
		again |= issue_ops_win(a, o);
		while (o->shead != RMAD_NIL) {
			uint32_t i = o->shead, nx = R->sh[i].next;

			o->need_target = 0;
			/* route() links i into another list through the same
			 * next field: take i off this one by nx, not by it */
			if (route(a, o, i) < 0) {
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
		if (o->fence_held && !o->ntargets) {
			/* released, and the last answers are in */
			fence_finish(a, o, o->fence_st);
			again = 1;
			synced = 1;
		}
		while (o->yhead != RMAD_NIL && sync_done(a, o, o->yhead)) {
			uint32_t i = list_pop(R, &o->yhead, &o->ytail);
			struct rma_op *op = &R->sh[i];

			if (op->opcode == RMAD_OPC_FENCE) {
				/* the epoch is complete here: the barrier,
				 * which reports the epoch's errors too */
				int32_t st = fence_arrive(a, o, i);

				if (!st) {
					again = 1;
					continue;
				}
				if (!op->waited) {
					set_err(o, st);
				} else {
					/* reported: the epoch's errors go
					 * with it */
					o->err = 0;
					o->dead_seen = 0;
				}
				op->status = st;
				op->serial = 0;
				agent_complete_op(a, op->client, i, st);
				again = 1;
				synced = 1;
				continue;
			}

			if (op->opcode == RMAD_OPC_COMPLETE) {
				int32_t st = pscw_complete(a, o, op);

				if (st && !op->waited)
					set_err(o, st);
				op->status = st;
				op->serial = 0;
				agent_complete_op(a, op->client, i, st);
				again = 1;
				synced = 1;
				continue;
			}
			/* a dead rank at each sync that covers it (before
			 * any other error: a transfer to it that failed
			 * first says only FABRIC), else the first async
			 * error of the epoch surfaces here */
			op->status = sync_dead(a, o, op);
			if (!op->status)
				op->status = o->err;
			o->err = 0;
			if (op->opcode == RMAD_OPC_UNLOCK_ALL ||
			    (op->opcode == RMAD_OPC_UNLOCK && !o->ntargets &&
			     !o->nevicted)) {
				o->state = RMA_NONE;
				o->nocheck_all = 0;
				o->dead_seen = 0;
			}
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
