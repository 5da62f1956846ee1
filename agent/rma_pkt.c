/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_pkt.c - the RMA packets from other agents: requests for the
 * target side (rma_target.c) and answers for the origin side
 * (rma_origin.c), each checked against the window and the op it names
 * before anything is applied or completed.
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
#include "atomics.h"
#include "counter.h"
#include "dtype.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

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
	if ((flags & RMAD_AMF_GRANTED) && t->state == RMA_LOCK_ISSUED) {
		t->state = RMA_LOCK_GRANTED;
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
	struct rma_ctx *R = a->rma;

	uint32_t i = (uint32_t)h->seq, serial = (uint32_t)(h->seq >> 32);
	struct rma_op *op;
	struct rma_origin *o;
	struct rma_target *t;
	uint64_t n, off;
	size_t es;

	if (i >= R->nsh || !serial || R->sh[i].serial != serial)
		goto bad;
	op = &R->sh[i];
	o = op->o;
	if (!o || o->w->key != h->wkey)
		goto bad;
	es = rmad_dtype_size(op->dtype);
	n = h->count * es;
	if (h->disp < op->tdisp || h->disp - op->tdisp > op->sent ||
	    n > op->sent - (h->disp - op->tdisp))
		goto bad;
	off = h->disp - op->tdisp;
	/* a pulled op's answer carries no data (a pushed get's bytes were
	 * written into its chunk first); no such chunk out: a second
	 * answer */
	if (op->pull && (h->payload_len ||
			 pull_answered(a, i, off, n, h->status)))
		goto bad;
	xfer_orecv(o, h);
	t = oplist_target_find(o, op->target);
	answer_flags(o, t, h, op);
	if (h->status) {
		if (!op->status)
			op->status = h->status;
	} else if (h->type == RMAD_AM_RMA_RESP && !op->pull) {
		uint64_t addr = op->opcode == RMAD_OPC_GET ? op->origin :
				op->result;

		if (!origin_has_result(op->opcode) ||
		    h->payload_len != (op->opcode == RMAD_OPC_CAS ? es : n))
			goto bad;
		if (op->opcode == RMAD_OPC_CAS)
			n = es;
		if (!op->status) {
			int err = xfer_op_io(a, op, addr + off, (void *)pl,
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
			origin_uncount_issued(t, op);
			/* in order: everything sent before it is in too */
			if (op->wseq > t->done_seq)
				t->done_seq = op->wseq;
		}
		oplist_op_finish(a, o, i);
	}
	if (t && t->released && !t->nissued)
		oplist_target_free(o, t);
	make_rma_progress_win(a, o);
	return;
bad:
	if (pull_stale(a, h))
		return;		/* the late answer of an op that ended */
	/* the late refusal of an op that ended when its target died */
	if (h->status == RMAD_ERR_PROC_FAILED &&
	    agent_job_rank_dead(a, w->job, h->target))
		return;
	/* an op sent without asking for an answer failed at the target:
	 * its error belongs to the origin's epoch */
	o = h->status ? origin_of_rank(w, h->origin) : NULL;
	if (o) {
		xfer_orecv(o, h);
		oplist_set_err(o, h->status);
		make_rma_progress_win(a, o);
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
	struct rma_ctx *R = o->R;

	uint32_t i = (uint32_t)h->seq, serial = (uint32_t)(h->seq >> 32);
	struct rma_op *op;
	struct rma_target *t;

	if (i >= R->nsh || !serial || R->sh[i].serial != serial || R->sh[i].o != o)
		return;
	op = &R->sh[i];
	t = oplist_target_find(o, op->target);
	if (!t || t->state != RMA_LOCK_ISSUED || !t->lock_op)
		return;
	origin_uncount_issued(t, op);
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
	R->sh[i].next = t->head;
	t->head = i;
	if (t->tail == RMAD_NIL)
		t->tail = i;
	t->npend++;
	o->nheld++;
	t->lock_op = 0;
	t->state = RMA_LOCK_CALLED;
	t->retry_at = rmad_now_ns() + RETRY_NS;
	R->retry_pending = 1;
}

/* A lock_all request to a member on node was answered. */
static void la_answered(struct rma_origin *o, uint32_t node)
{
	o->la_inflight--;
	if (o->la_node[node])
		o->la_node[node]--;
}

/* A lock-protocol answer's origin and target element; NULL: dropped. */
static struct rma_origin *lock_answer_take(struct agent *a,
					   const struct rmad_am_hdr *h,
					   struct agent_win *w,
					   struct rma_target **t)
{
	struct rma_origin *o = origin_of_rank(w, h->origin);

	if (!o) {
		a->st.pkts_dropped++;
		return NULL;
	}
	*t = oplist_target_find(o, h->target);
	xfer_orecv(o, h);
	oplist_set_err(o, h->status);
	return o;
}

/* LOCK_GRANTED */
static void got_lock_granted(struct agent *a, const struct rmad_am_hdr *h,
			     const void *payload, struct agent_win *w)
{
	struct rma_target *t;
	struct rma_origin *o = lock_answer_take(a, h, w, &t);

	(void)payload;
	if (!o)
		return;
	if (h->flags & RMAD_AMF_QUEUED)
		o->st.locks_queued++;
	if (t && t->state == RMA_LOCK_ISSUED && !t->lock_op)
		t->state = RMA_LOCK_GRANTED;
	else if (o->la_inflight)
		la_answered(o, h->src_node);
	make_rma_progress_win(a, o);
}

/* LOCK_RETRY: the target's lock queue was full */
static void got_lock_retry(struct agent *a, const struct rmad_am_hdr *h,
			   const void *payload, struct agent_win *w)
{
	struct rma_ctx *R = a->rma;
	struct rma_target *t;
	struct rma_origin *o = lock_answer_take(a, h, w, &t);

	(void)payload;
	if (!o)
		return;
	o->st.locks_queued++;
	if (h->seq) {
		op_refused(o, h);
	} else if (t && t->state == RMA_LOCK_ISSUED) {
		t->state = RMA_LOCK_CALLED;
		t->retry_at = rmad_now_ns() + RETRY_NS;
		R->retry_pending = 1;
	} else if (o->la_inflight) {
		/* window protocol: ask that one again */
		int node = agent_job_rank_node(w->job, h->target);

		origin_send_lock_msg(a, o, h->target, node, RMAD_AM_RMA_LOCK, 0);
	}
	make_rma_progress_win(a, o);
}

/* UNLOCK_ACK */
static void got_unlock_ack(struct agent *a, const struct rmad_am_hdr *h,
			   const void *payload, struct agent_win *w)
{
	struct rma_target *t;
	struct rma_origin *o = lock_answer_take(a, h, w, &t);

	(void)payload;
	if (!o)
		return;
	if (t && t->unlocking) {
		t->done_seq = t->sent_seq;
		oplist_target_free(o, t);
	} else if (o->la_inflight) {
		la_answered(o, h->src_node);
	}
	make_rma_progress_win(a, o);
}

/* FLUSH_ACK: every op up to h->count applied */
static void got_flush_ack(struct agent *a, const struct rmad_am_hdr *h,
			  const void *payload, struct agent_win *w)
{
	struct rma_target *t;
	struct rma_origin *o = lock_answer_take(a, h, w, &t);

	(void)payload;
	if (!o)
		return;
	if (t && h->count > t->done_seq && h->count <= t->sent_seq)
		t->done_seq = h->count;
	make_rma_progress_win(a, o);
}

/* ACK, RESP: an op's answer */
static void got_op_answer(struct agent *a, const struct rmad_am_hdr *h,
			  const void *payload, struct agent_win *w)
{
	got_answer(a, h, payload, w);
}

void rma_pkt_refuse(struct agent *a, const struct rmad_am_hdr *h, int32_t status)
{
	int type = 0;

	a->st.pkts_dropped++;
	/* requests get an error answer, so nobody waits forever */
	switch (h->type) {
	case RMAD_AM_RMA_LOCK: type = RMAD_AM_RMA_LOCK_GRANTED; break;
	case RMAD_AM_RMA_UNLOCK: type = RMAD_AM_RMA_UNLOCK_ACK; break;
	case RMAD_AM_RMA_FLUSH: type = RMAD_AM_RMA_FLUSH_ACK; break;
	default: type = rmad_am_answer_of(h->type); break;
	}
	if (type)
		target_answer(a, h, type, status, 0, NULL, 0);
}

/* LOCK and UNLOCK: the member they name, or NULL: dropped. */
static struct win_local *lock_member(struct agent *a,
				     const struct rmad_am_hdr *h,
				     struct agent_win *w)
{
	struct win_local *l = agent_win_local(w, h->target);

	if (!l || !l->base ||
	    (w->ready && agent_win_target(w, h->origin, &(uint64_t){ 0 },
					  &(int32_t){ 0 }))) {
		a->st.pkts_dropped++;
		rmad_warn("dropped a lock packet for rank %d", h->target);
		return NULL;
	}
	return l;
}

/* LOCK */
static void on_lock(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload, struct agent_win *w)
{
	struct win_local *l = lock_member(a, h, w);

	(void)payload;
	if (l)
		target_lock_request(a, h, w, l);
}

/* UNLOCK */
static void on_unlock(struct agent *a, const struct rmad_am_hdr *h,
		      const void *payload, struct agent_win *w)
{
	struct win_local *l = lock_member(a, h, w);

	(void)payload;
	if (!l)
		target_answer(a, h, RMAD_AM_RMA_UNLOCK_ACK, RMAD_ERR_RANK, 0, NULL, 0);
	else
		target_lock_release(a, h, l);
}

/* PUT, ACC, GET, GACC, CAS: applied, or pulled first, or queued behind
 * the lock they carry */
static void on_data(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload, struct agent_win *w)
{
	struct win_local *l;

	if (h->flags & RMAD_AMF_PULL) {
		/* read from the origin first (rma_pull.c) */
		pull_request(a, h, payload, w);
		return;
	}
	if (h->flags & (RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL)) {
		if (w->ready && agent_win_target(w, h->origin,
						 &(uint64_t){ 0 },
						 &(int32_t){ 0 })) {
			a->st.pkts_dropped++;
			target_answer(a, h, rmad_am_answer_of(h->type),
			       RMAD_ERR_RANK, 0, NULL, 0);
			return;
		}
		target_lock_and_apply(a, h, payload, w);
		return;
	}
	if (target_apply_direct(a, h, payload, w))
		return;		/* kept: again later (am_retry) */
	l = agent_win_local(w, h->target);
	if (l && l->lk && l->lk->qhead)
		target_try_grant(a, l->lk);	/* an UNLOCK rode along */
}

/* FLUSH */
static void on_flush(struct agent *a, const struct rmad_am_hdr *h,
		     const void *payload, struct agent_win *w)
{
	(void)payload;
	(void)w;
	target_flush_request(a, h);
}

typedef void rma_pkt_fn(struct agent *a, const struct rmad_am_hdr *h,
			const void *payload, struct agent_win *w);

/* The handler of each RMA packet type, after rma_pkt_in's checks. */
static rma_pkt_fn *const rma_pkt_handler[RMAD_AM_TYPE_MAX] = {
	[RMAD_AM_RMA_LOCK] = on_lock,
	[RMAD_AM_RMA_UNLOCK] = on_unlock,
	[RMAD_AM_RMA_PUT] = on_data,
	[RMAD_AM_RMA_ACC] = on_data,
	[RMAD_AM_RMA_GET] = on_data,
	[RMAD_AM_RMA_GACC] = on_data,
	[RMAD_AM_RMA_CAS] = on_data,
	[RMAD_AM_RMA_FLUSH] = on_flush,
	[RMAD_AM_RMA_LOCK_GRANTED] = got_lock_granted,
	[RMAD_AM_RMA_LOCK_RETRY] = got_lock_retry,
	[RMAD_AM_RMA_UNLOCK_ACK] = got_unlock_ack,
	[RMAD_AM_RMA_FLUSH_ACK] = got_flush_ack,
	[RMAD_AM_RMA_ACK] = got_op_answer,
	[RMAD_AM_RMA_RESP] = got_op_answer,
};

/*
 * Every RMA packet: its job, ranks and window checked, then its type's
 * handler.  A request that cannot be served is answered with an error
 * (rma_pkt_refuse), so that its origin does not wait forever.
 */
static void rma_pkt_in(struct agent *a, const struct rmad_am_hdr *h,
		       const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);
	int is_ans = rma_answer_type(h->type);
	struct agent_win *w;

	if (!j) {
		/* the job ended here (its last process here went) or never
		 * ran here: a request is refused, not left unanswered */
		rmad_warn("rma %u from node %u for a job not here", h->type,
			  h->src_node);
		rma_pkt_refuse(a, h, RMAD_ERR_PROC_FAILED);
		return;
	}
	if (!j->map_ready || h->origin < 0 || h->origin >= j->size ||
	    h->target < 0 || h->target >= j->size) {
		a->st.pkts_dropped++;
		rmad_warn("dropped rma packet %u from node %u", h->type,
			  h->src_node);
		return;
	}
	if (agent_job_rank_node(j, is_ans ? h->target : h->origin) !=
	    (int)h->src_node) {
		a->st.pkts_dropped++;
		rmad_warn("dropped rma packet %u from node %u for rank %d, "
			  "which is not there", h->type, h->src_node,
			  is_ans ? h->target : h->origin);
		return;
	}
	if (is_ans && h->status == RMAD_ERR_PROC_FAILED)
		/* the target's node says its rank died (checked above that
		 * it is that rank's node): as its JOB_FAIL would */
		agent_job_rank_failed(a, j, h->target);
	w = agent_win_by_key(a, j, h->wkey);
	if (!w) {
		rmad_warn("rma %u from node %u for an unknown window",
			  h->type, h->src_node);
		rma_pkt_refuse(a, h, RMAD_ERR_ARG);
		return;
	}
	if (!is_ans && agent_job_proc_dead(j, h->target)) {
		/* a request for a member whose process died here: refused,
		 * never applied to what it left (its peers see the same,
		 * agent_win_member_dead) */
		rma_pkt_refuse(a, h, RMAD_ERR_PROC_FAILED);
		return;
	}
	rma_pkt_handler[h->type](a, h, payload, w);
}

/* RMA_NOTE: its arrival was the point (fi_write data landed): the loop
 * spins on. */
static void on_note(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload)
{
	(void)a;
	(void)h;
	(void)payload;
}

void rma_pkt_init(struct agent *a)
{
	for (int t = 0; t < RMAD_AM_TYPE_MAX; t++)
		if (rma_pkt_handler[t])
			am_register(a, t, rma_pkt_in);
	am_register(a, RMAD_AM_RMA_NOTE, on_note);
}
