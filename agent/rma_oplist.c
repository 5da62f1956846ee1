/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_oplist.c - the origin side's operation table as data, after the
 * seeds' "Data structures": per (client, window) an origin state
 * (struct rma_origin) with its slot array of target elements hashed by
 * rank; target elements from the origin's own pool first, then from
 * the global pool (target_pool); op elements (struct rma_op, by element
 * index) linked into a target's pending list, the stalled submissions or
 * the sync queue; an op's end (oplist_op_finish), and the epoch's first error
 * (oplist_set_err).  Nothing here sends: issuing is rma_origin.c, progress
 * rma_progress.c.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "windows.h"
#include "log.h"
#include "rmad_abi.h"
#include "rmad_opdesc.h"
#include "rma_internal.h"

struct rma_target *oplist_target_find(struct rma_origin *o, int32_t rank)
{
	for (struct rma_target *t = o->slots[(uint32_t)rank % o->nslots]; t;
	     t = t->next)
		if (t->rank == rank)
			return t;
	return NULL;
}

struct rma_target *oplist_target_new(struct agent *a, struct rma_origin *o,
				     int32_t rank, int state)
{
	struct rma_ctx *R = a->rma;

	struct rma_target *t = o->lfree;
	int node = agent_job_rank_node(o->w->job, rank);

	if (node < 0)
		return NULL;
	if (t) {
		o->lfree = t->next;
	} else if ((t = R->tfree)) {
		R->tfree = t->next;
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

void oplist_target_free(struct rma_origin *o, struct rma_target *t)
{
	struct rma_ctx *R = o->R;

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
		t->next = R->tfree;
		R->tfree = t;
	}
}

/*
 * The epoch's first asynchronous error, for its next synchronization.
 * A dead node is not one error among others: it is reported by every
 * sync that covers it (a flush or unlock of one of its ranks, found by
 * the node's state, and every flush_all or unlock_all of the epoch), and
 * never by a sync that covers only live ranks.
 */
void oplist_set_err(struct rma_origin *o, int32_t st)
{
	if (st == RMAD_ERR_PROC_FAILED)
		o->dead_seen = 1;
	else if (st && !o->err)
		o->err = st;
}

void oplist_op_finish(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_ctx *R = a->rma;

	struct rma_op *op = &R->sh[i];
	int32_t st = op->status;

	oplist_set_err(o, st);
	if (op->pull && op->nx)
		pull_op_end(a, i);	/* chunks out: their keys close */
	if (rmad_op_desc(op->opcode)->rma)
		o->st.ops_completed++;
	op->serial = 0;
	op->o = NULL;
	ty_op_free(a, op);
	completion_op_done(a, op->client, i, st);
}

struct rma_origin *oplist_origin_find(struct agent_win *w, uint32_t c,
				      uint32_t gen)
{
	for (struct rma_origin *o = w->origins; o; o = o->next)
		if (o->client == c && o->gen == gen && !o->dying)
			return o;
	return NULL;
}

void oplist_add(struct rma_ctx *R, uint32_t *head, uint32_t *tail,
		     uint32_t i)
{
	R->sh[i].next = RMAD_NIL;
	if (*tail != RMAD_NIL)
		R->sh[*tail].next = i;
	else
		*head = i;
	*tail = i;
}

uint32_t oplist_pop(struct rma_ctx *R, uint32_t *head, uint32_t *tail)
{
	uint32_t i = *head;

	*head = R->sh[i].next;
	if (*head == RMAD_NIL)
		*tail = RMAD_NIL;
	return i;
}

void oplist_tadd(struct rma_origin *o, struct rma_target *t, uint32_t i)
{
	struct rma_ctx *R = o->R;
	oplist_add(R, &t->head, &t->tail, i);
	t->npend++;
	if (++o->nheld > o->st.ops_held_hwm)
		o->st.ops_held_hwm = o->nheld;
}

uint32_t oplist_tpop(struct rma_origin *o, struct rma_target *t)
{
	struct rma_ctx *R = o->R;
	t->npend--;
	o->nheld--;
	return oplist_pop(R, &t->head, &t->tail);
}

struct rma_origin *oplist_origin_new(struct agent *a, struct agent_win *w,
				     uint32_t c, uint32_t nslots,
				     uint32_t npool)
{
	struct rma_origin *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->slots = calloc(nslots, sizeof(*o->slots));
	o->lmem = npool ? calloc(npool, sizeof(*o->lmem)) : NULL;
	o->la_node = calloc(a->nnodes > 0 ? (size_t)a->nnodes : 1,
			    sizeof(*o->la_node));
	if (!o->slots || (npool && !o->lmem) || !o->la_node) {
		free(o->slots);
		free(o->lmem);
		free(o->la_node);
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
	o->R = a->rma;
	o->client = c;
	o->gen = a->cl[c].gen;
	o->rank = a->cl[c].rank;
	o->shead = o->stail = o->yhead = o->ytail = RMAD_NIL;
	o->fence_op = RMAD_NIL;
	o->next = w->origins;
	if (!w->origins) {
		/* its first origin: w joins the windows with origins */
		w->oprev = NULL;
		w->onext = a->rma->owins;
		if (w->onext)
			w->onext->oprev = w;
		a->rma->owins = w;
	}
	w->origins = o;
	return o;
}

void oplist_origin_free(struct agent *a, struct rma_origin *o)
{
	struct rma_ctx *R = a->rma;

	for (struct rma_origin **pp = &o->w->origins; *pp;
	     pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	if (!o->w->origins) {
		/* its last: w leaves the list (onext stays, so that a pass
		 * over the list that freed it goes on) */
		struct agent_win *w = o->w;

		if (w->oprev)
			w->oprev->onext = w->onext;
		else if (R->owins == w)
			R->owins = w->onext;
		if (w->onext)
			w->onext->oprev = w->oprev;
		w->oprev = NULL;
	}
	for (uint32_t s = 0; s < o->nslots; s++)
		while (o->slots[s]) {
			struct rma_target *t = o->slots[s];

			o->slots[s] = t->next;
			if (!t->local) {
				t->next = R->tfree;
				R->tfree = t;
			}
		}
	am_forget_stats(a, &o->st);	/* its packets in open aggregates */
	free(o->evicted);
	free(o->pscw_got);
	free(o->slots);
	free(o->lmem);
	free(o->la_node);
	free(o);
}
