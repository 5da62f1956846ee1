/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_pscw.c - post/start/complete/wait between nodes, after the seeds'
 * "Algorithm for POST-START-COMPLETE-WAIT": where the fence has a
 * barrier, PSCW has notices between the processes of the groups.  The
 * agents carry them, so a target that posted and went to compute never
 * holds its origins up.
 *
 *  - POST (target's client, one element per origin on another node):
 *    a WIN_POST notice to the origin's node, whose agent keeps it with
 *    the origin's window member (windows.c) until a start takes it.
 *  - START opens the origin's access epoch (RMA_PSCW): an op to a
 *    target whose post has not come waits, stalled in submission order,
 *    until it comes; a post taken is remembered for the epoch (pscw_got,
 *    O(targets of the epoch)) so that a target element reclaimed
 *    mid-epoch comes back without a second post.  Under NOCHECK the
 *    application promised the posts: nothing is waited for.
 *  - COMPLETE for target T: T's ops complete there (the last one asks
 *    for its answer; no lock to release), and T's agent counts the
 *    complete in T's control page (pscw_done, where T's wait looks):
 *    carried by that last op (RMAD_AMF_PSCW_DONE) when the ops before
 *    it are sure to be applied first (an ordered channel, or none in
 *    flight, no fi_write), otherwise a WIN_COMPLETE notice.  On an
 *    ordered channel neither waits for an target_answer (close_rides): the
 *    op that carries the complete asks for none, and the notice goes
 *    as soon as the ops have left (those answered anyway, such as
 *    fi_write's, once answered), behind them; a complete is local,
 *    and waiting for T's agent, which may share a core with a
 *    computing T, would make the origin wait for T.  Elsewhere the
 *    notice goes once the ops are all answered.  COMPLETE with target
 *    -1 ends the epoch.
 *
 * Same-node members exchange their notices in shared memory
 * (client/pscw.c); the agents see only the other nodes' part.
 */
#include <stdlib.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "log.h"
#include "windows.h"
#include "winsync.h"
#include "rma_internal.h"

static void notice(struct agent *a, struct agent_win *w, int type,
		   int32_t origin, int32_t target, int node)
{
	struct rmad_am_hdr h = {
		.type = (uint8_t)type,
		.job = w->job->key,
	};
	struct rmad_am_win_sync s = {
		.wkey = w->key,
		.origin = origin,
		.target = target,
	};

	w->pscw_sent++;
	am_send(a, node, &h, &s, sizeof(s));
}

/* POST element of member l: the notice to origin op->target.  0, or
 * why not (the element completes with it; nobody waits for it). */
int32_t pscw_post(struct agent *a, struct agent_win *w, struct win_local *l,
		  const struct rma_op *op)
{
	uint64_t size;
	int32_t du;
	int node;

	if (agent_win_target(w, op->target, &size, &du))
		return RMAD_ERR_RANK;
	node = agent_job_rank_node(w->job, op->target);
	if (node < 0 || node == a->node)
		return RMAD_ERR_ARG;	/* same node: shared memory */
	if (w->failed || w->job->failed || am_node_dead(a, node))
		return RMAD_ERR_PROC_FAILED;
	notice(a, w, RMAD_AM_WIN_POST, op->target, l->rank, node);
	return 0;
}

static int got_find(const struct rma_origin *o, int32_t rank)
{
	for (int32_t k = 0; k < o->npscw_got; k++)
		if (o->pscw_got[k] == rank)
			return k;
	return -1;
}

/*
 * May ops go to rank in o's access epoch?  1 once its post is here
 * (taken now if it just came), 0 while it is not.
 */
static int pscw_posted(struct agent *a, struct rma_origin *o, int32_t rank)
{
	struct win_local *l;

	(void)a;
	if (o->pscw_nocheck || got_find(o, rank) >= 0)
		return 1;
	l = agent_win_local(o->w, o->rank);
	if (!l || !winsync_post_take(l, rank))
		return 0;
	if (o->npscw_got == o->cappscw_got) {
		int32_t cap = o->cappscw_got ? 2 * o->cappscw_got : 8;
		int32_t *p = realloc(o->pscw_got, sizeof(*p) * (size_t)cap);

		if (!p) {
			/* put it back; the next pass tries again */
			l->posts[l->nposts++] = rank;
			return 0;
		}
		o->pscw_got = p;
		o->cappscw_got = cap;
	}
	o->pscw_got[o->npscw_got++] = rank;
	return 1;
}

/* Will rank's post never come?  Its node, or the job, is dead. */
static int pscw_hopeless(struct agent *a, struct rma_origin *o, int32_t rank)
{
	return o->w->failed || o->w->job->failed ||
	       am_node_dead(a, agent_job_rank_node(o->w->job, rank));
}

int pscw_ready(struct agent *a, struct rma_origin *o, int32_t rank)
{
	if (pscw_posted(a, o, rank))
		return 1;
	return pscw_hopeless(a, o, rank) ? -1 : 0;
}

/* origin_route(): START and COMPLETE; 0 when placed, -1 to stall. */
int pscw_route(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_ctx *R = a->rma;
	struct rma_op *op = &R->sh[i];
	struct rma_target *t;

	if (op->opcode == RMAD_OPC_START) {
		if (o->state == RMA_FENCE_ISSUED)
			return -1;	/* after the fence's release */
		if (o->state == RMA_FENCE_GRANTED && !o->ntargets) {
			o->state = RMA_NONE;	/* a fence sequence ends */
			o->nocheck_all = 0;
		}
		if (o->state != RMA_NONE || o->ntargets) {
			op->status = RMAD_ERR_SYNC;
			oplist_op_finish(a, o, i);
			return 0;
		}
		o->state = RMA_PSCW;
		o->nocheck_all = 1;	/* no lock: the posts stand for it */
		o->no_hold = 0;
		o->pscw_nocheck = !!(op->dtype & RMAD_MODE_NOCHECK);
		o->npscw_got = 0;
		oplist_op_finish(a, o, i);
		return 0;
	}
	/* COMPLETE */
	if (o->state != RMA_PSCW) {
		op->status = RMAD_ERR_SYNC;
		oplist_op_finish(a, o, i);
		return 0;
	}
	op->pflags = 0;
	for (uint32_t s = 0; s < o->nslots; s++)
		for (t = o->slots[s]; t; t = t->next)
			if (op->target < 0 || t->rank == op->target) {
				t->want_unlock = 1;
				/* on an ordered channel the complete notice
				 * follows the ops: no RMA_DONE round trip */
				t->close_rides = (uint8_t)R->ordered;
				/* its last op may carry the complete */
				if (op->target >= 0 && t->head != RMAD_NIL)
					t->pscw_close = i + 1;
			}
	oplist_add(R, &o->yhead, &o->ytail, i);
	return 0;
}

/* sync_done() for COMPLETE: every op before it placed (checked by the
 * caller), and those to its target (to every target: -1) complete. */
int pscw_sync_done(struct agent *a, struct rma_origin *o,
		   const struct rma_op *op)
{
	if (op->target < 0)
		return o->ntargets == 0;
	if (oplist_target_find(o, op->target))
		return 0;		/* freed once its ops are in */
	return pscw_posted(a, o, op->target) ||
	       pscw_hopeless(a, o, op->target);
}

/*
 * COMPLETE done here: for target T, the notice goes; for -1 the epoch
 * ends.  Returns the element's status.
 */
int32_t pscw_complete(struct agent *a, struct rma_origin *o,
		      const struct rma_op *op)
{
	int32_t st;
	int k;

	if (op->target < 0) {
		st = o->err ? o->err :
		     o->dead_seen ? RMAD_ERR_PROC_FAILED : 0;
		o->err = 0;
		o->dead_seen = 0;
		o->state = RMA_NONE;
		o->nocheck_all = 0;
		o->pscw_nocheck = 0;
		o->npscw_got = 0;
		return st;
	}
	k = got_find(o, op->target);
	if (k >= 0)
		o->pscw_got[k] = o->pscw_got[--o->npscw_got];
	if (pscw_hopeless(a, o, op->target))
		return RMAD_ERR_PROC_FAILED;
	if (op->pflags & RMAD_AMF_PSCW_DONE)
		return 0;	/* it rode on the last op, now answered */
	notice(a, o->w, RMAD_AM_WIN_COMPLETE, o->rank, op->target,
	       agent_job_rank_node(o->w->job, op->target));
	return 0;
}
