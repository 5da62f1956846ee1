/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_win.c - an origin's synchronization state changes, after the
 * seeds' FENCE, PSCW, LOCK_ALL and FLUSH algorithms: when a queued sync
 * request is done (rma_win_sync_done: its targets' ops issued, answered or
 * applied as it asks), what completing it does (rma_win_sync_finish), the
 * lock_all window protocol (rma_win_lock_all_step, lock every member
 * LOCKALL_BATCH at a time), and the fence: an origin's epoch complete,
 * it joins the window's barrier (winsync.c), whose release puts it in a
 * fence epoch (rma_win_fence_done, rma_win_fence_finish).  The PSCW notices are
 * rma_pscw.c; per-target lock and flush state moves with the target's
 * ops (rma_progress.c, rma_origin.c).
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
 * completes once their answers are in too (rma_win_fence_done).  Otherwise
 * t is freed before the barrier, as for every fence that does not ride.
 */
static int fence_may_pass(const struct rma_target *t)
{
	return t->close_rides && t->want_unlock &&
	       t->state == RMA_LOCK_GRANTED && t->head == RMAD_NIL &&
	       !t->unlocking && t->nissued == t->nride;
}

/* Is sync request i satisfied?  (Everything before it was placed.) */
int rma_win_sync_done(struct agent *a, struct rma_origin *o, uint32_t i)
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
	st = winsync_fence_arrive(a, o->w, l);
	if (st) {
		o->fence_op = RMAD_NIL;
		o->state = RMA_NONE;
		o->nocheck_all = 0;
	}
	return st;
}

/* o's FENCE completes with st: o is in a fence epoch (none after
 * NOSUCCEED, or after a failure) */
void rma_win_fence_finish(struct agent *a, struct rma_origin *o, int32_t st)
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
		oplist_set_err(o, st);
	else if (st)
		o->err = 0;
	op->status = st;
	op->serial = 0;
	completion_op_done(a, op->client, i, st);
}

/*
 * w's fence barrier released (status 0) or failed: each local origin's
 * FENCE completes, at once or, where its barrier message rode ahead of
 * answers still on their way (fence_may_pass), when they are in: an
 * epoch's gets have landed when the fence returns.
 */
void rma_win_fence_done(struct agent *a, struct agent_win *w, int status)
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
		rma_win_fence_finish(a, o, status);
	}
	/* the origins move on in the loop's next pass, not here: this may
	 * run inside one of their progress calls (see fence_arrive).  What
	 * waits in aggregates (the root's RELEASE, an answer) goes before
	 * the wakes (completion_flush_wakeups): a woken client may take our core */
	R->retry_pending = 1;
	completion_flush_wakeups(a);
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
int rma_win_lock_all_step(struct agent *a, struct rma_origin *o)
{
	int moved = 0;

	while (o->la_inflight < LOCKALL_BATCH && o->la_next < o->w->gsize) {
		int32_t r = agent_win_rank_of(o->w, o->la_next++);
		int node = agent_job_rank_node(o->w->job, r);

		if (r < 0 || node < 0 || node == a->node || oplist_target_find(o, r))
			continue;
		if (am_node_dead(a, node)) {
			oplist_set_err(o, RMAD_ERR_PROC_FAILED);
			continue;
		}
		origin_send_lock_msg(a, o, r, node, o->la_unlock ? RMAD_AM_RMA_UNLOCK :
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


/*
 * Sync request i, done (rma_win_sync_done) and taken off the sync queue,
 * completes: a FENCE arrives at the window's barrier (and completes
 * when it is released, rma_win_fence_done), a COMPLETE sends its notices,
 * the others report the epoch's first error.  1 when it completed
 * (the caller's synced), 0 for a fence now in its barrier.
 */
int rma_win_sync_finish(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &a->rma->sh[i];
	int32_t st;

	if (op->opcode == RMAD_OPC_FENCE) {
		/* the epoch is complete here: the barrier, which reports the
		 * epoch's errors too */
		st = fence_arrive(a, o, i);
		if (!st)
			return 0;
		if (!op->waited) {
			oplist_set_err(o, st);
		} else {
			/* reported: the epoch's errors go with it */
			o->err = 0;
			o->dead_seen = 0;
		}
		op->status = st;
		op->serial = 0;
		completion_op_done(a, op->client, i, st);
		return 1;
	}
	if (op->opcode == RMAD_OPC_COMPLETE) {
		st = pscw_complete(a, o, op);
		if (st && !op->waited)
			oplist_set_err(o, st);
		op->status = st;
		op->serial = 0;
		completion_op_done(a, op->client, i, st);
		return 1;
	}
	/* a dead rank at each sync that covers it (before any other error:
	 * a transfer to it that failed first says only FABRIC), else the
	 * first async error of the epoch surfaces here */
	op->status = sync_dead(a, o, op);
	if (!op->status)
		op->status = o->err;
	o->err = 0;
	if (op->opcode == RMAD_OPC_UNLOCK_ALL ||
	    (op->opcode == RMAD_OPC_UNLOCK && !o->ntargets && !o->nevicted)) {
		o->state = RMA_NONE;
		o->nocheck_all = 0;
		o->dead_seen = 0;
	}
	op->serial = 0;
	completion_op_done(a, op->client, i, op->status);
	return 1;
}
