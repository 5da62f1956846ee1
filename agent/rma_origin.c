/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_origin.c - the origin side's issue, after the seeds: where a
 * submitted op goes (route: a target element's pending list, the sync
 * queue, or done at once, with the lock, PSCW and fence rules of the
 * epoch), and how one op leaves (origin_issue_op: as active messages,
 * CHUNKS_INFLIGHT chunks at a time, with the piggybacked lock, unlock,
 * ack request or PSCW complete; large contiguous puts and gets by
 * fi_write/fi_read through bounce buffers, issue_rdma; accumulates the
 * target reads, rma_pull.c), and what an issued op waits for (ordering
 * hazards, counts of what is out).
 *
 * The table's data (origins, target elements, op lists) is
 * rma_oplist.c; the seeds' ISSUE_OPS_* / CLEANUP_* / MAKE_RMA_PROGRESS_*
 * routines, which call in here, are rma_progress.c.
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
#include "hints.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

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

static int am_type(uint16_t opc)
{
	return rmad_op_desc(opc)->am_type;
}

int origin_has_result(uint16_t opc)
{
	return rmad_op_desc(opc)->result;
}

/* The accumulate family, which MPI keeps in order per origin and target
 * unless accumulate_ordering says otherwise. */
int origin_is_acc(uint16_t opc)
{
	return rmad_op_desc(opc)->acc;
}

/* Does op change the target's memory?  (A get-accumulate NO_OP and a
 * get read it only.) */
static int op_writes(const struct rma_op *op)
{
	return rmad_op_data_in(op->opcode, op->op);
}

/* The window bytes op may touch, [*lo, *hi): a derived target type's
 * footprint, from its lowest to its highest byte. */
static void op_span(const struct rma_op *op, uint64_t *lo, uint64_t *hi)
{
	if (op->ty) {
		ty_span(op, lo, hi);
	} else {
		*lo = op->tdisp;
		*hi = op->tdisp + op->len;
	}
}

static void span_add(uint64_t *lo, uint64_t *hi, int first,
		     const struct rma_op *op)
{
	uint64_t l, h;

	op_span(op, &l, &h);
	if (first || l < *lo)
		*lo = l;
	if (first || h > *hi)
		*hi = h;
}

static void count_issued(struct rma_target *t, struct rma_op *op)
{
	if (op->counted)
		return;
	op->counted = 1;
	op->o->st.ops_issued++;
	t->nissued++;
	if (origin_has_result(op->opcode))
		t->nres++;
	if (origin_has_result(op->opcode) && !op->rdma && !op->pull)
		t->nride++;
	if (op->rdma)
		t->nrdma++;
	if (op->pull)
		t->npull++;
	if (origin_is_acc(op->opcode))
		t->nacc++;
	/* applied after what follows it: later ops to its bytes wait
	 * (origin_order_hazard) */
	if (op_writes(op) && (op->pull || !op->o->R->ordered)) {
		span_add(&t->late_lo, &t->late_hi, !t->nlate, op);
		t->nlate++;
		op->late = 1;
		if (!origin_is_acc(op->opcode)) {
			span_add(&t->put_lo, &t->put_hi, !t->nlate_put, op);
			t->nlate_put++;
		}
	}
}

void origin_uncount_issued(struct rma_target *t, struct rma_op *op)
{
	if (!op->counted)
		return;
	op->counted = 0;
	t->nissued--;
	if (origin_has_result(op->opcode))
		t->nres--;
	if (origin_has_result(op->opcode) && !op->rdma && !op->pull)
		t->nride--;
	if (op->rdma)
		t->nrdma--;
	if (op->pull)
		t->npull--;
	if (origin_is_acc(op->opcode))
		t->nacc--;
	if (op->late) {
		op->late = 0;
		t->nlate--;
		if (!origin_is_acc(op->opcode))
			t->nlate_put--;
	}
	if (op->inplace) {
		op->inplace = 0;
		t->ninplace--;
	}
}

/*
 * The ordering promise (rmad(7), "Ordering"): a read (get,
 * get-accumulate, fetch-and-op, compare-and-swap) sees every earlier
 * write of its origin to its bytes, so it waits while such a write still
 * in flight may be applied after it (a later put is not held: MPI leaves
 * two writes to the same bytes unordered, and holding them would
 * serialize streams of large puts).  Two kinds of write can be
 * overtaken: one the target
 * applies only after what follows it (pulled: the target reads its
 * operands first, and answers once applied; any write on an unordered
 * channel), until its answer; and one sent as active messages, by a
 * get that moves by fi_read, which the target's provider serves without
 * its agent, until an answer or a FLUSH_ACK covers it (asked for here).
 * 1 when op i must wait.  Disjoint bytes never wait; the spans are
 * bounds, so a wait may be more than needed, never less.
 */
int origin_order_hazard(struct agent *a, struct rma_origin *o,
			struct rma_target *t, const struct rma_op *op)
{
	uint64_t lo, hi;

	/* only reads wait here; an accumulate after accumulates waits as
	 * the window's accumulate_ordering says (issue_ops_target) */
	if (!origin_has_result(op->opcode))
		return 0;
	op_span(op, &lo, &hi);
	if (t->nlate && lo < t->late_hi && t->late_lo < hi &&
	    (!origin_is_acc(op->opcode) || (o->acc_order & RMAD_ACC_ORDER_RAW)))
		return 1;
	if (t->nlate_put && lo < t->put_hi && t->put_lo < hi)
		return 1;
	if (op->rdma && !op->pull && !op_writes(op) &&
	    t->amw_seq > t->done_seq && t->amw_seq <= t->sent_seq &&
	    lo < t->amw_hi && t->amw_lo < hi) {
		origin_send_flush(a, o, t);
		return 1;
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
	struct rma_ctx *R = a->rma;

	struct rma_op *op = &R->sh[i];
	int put = op->opcode == RMAD_OPC_PUT, err = xfer_bounce_init(a);
	int direct = !op->staged && !rmad_fabric_needs_local_mr(a->fab);
	uint64_t now = rmad_now_ns();
	void *buf;

	if (op->status) {
		/* a chunk failed (rma_progress_xfer_done): no more go out, and the op
		 * ends once those out are done, with that error */
		op->len = op->sent;
		err = 0;
	}
	if (!err && op->sent == 0 &&
	    now - t->noted_at > (uint64_t)a->p.spin_us * 500 &&
	    !rmad_fabric_moves_alone(a->fab, put,
				     op->len < (uint64_t)a->p.rdma_chunk ?
					     (size_t)op->len :
					     (size_t)a->p.rdma_chunk)) {
		/* wake the target's agent: our chunks need its polling */
		struct rmad_am_hdr h = {
			.type = RMAD_AM_RMA_NOTE,
			.job = o->w->job->key,
			.origin = o->rank,
			.target = op->target,
			.wkey = o->w->key,
		};

		xfer_osend(a, o, t->node, &h, NULL, 0);
		t->noted_at = now;
	}
	while (!err && op->sent < op->len) {
		uint64_t n = op->len - op->sent;
		struct rma_xfer *x = R->xfree;

		if (op->nx >= XFER_PER_OP)
			return 0;
		if (!x) {
			R->retry_pending = 1;	/* a chunk of another op ends */
			return 0;
		}
		/* no bounce: the client's rmad_alloc_mem memory, mapped
		 * here, when the provider takes unregistered buffers */
		buf = NULL;
		if (direct) {
			/* a transfer the provider makes at once (shm's
			 * CMA) copies faster in larger pieces */
			uint64_t c = rmad_fabric_moves_alone(a->fab, put,
							     (size_t)n) ?
					     (uint64_t)a->p.direct_chunk :
					     (uint64_t)a->p.rdma_chunk;

			if (n > c)
				n = c;
			buf = agent_mem_hold(a, op->client,
					     op->origin + op->sent, n,
					     &x->held);
		}
		if (!buf && n > (uint64_t)a->p.rdma_chunk)
			n = (uint64_t)a->p.rdma_chunk;
		if (!buf && put)
			err = xfer_op_io(a, op, op->origin + op->sent, x->buf,
				    (size_t)n, 0);
		if (err)
			break;
		x->direct = buf != NULL;
		if (!buf)
			buf = x->buf;
		err = put ? rmad_fabric_write(a->fab, t->node, buf, (size_t)n,
					      x->direct ? NULL : R->bounce_desc,
					      op->raddr + op->sent, op->rkey,
					      &x->fx) :
			    rmad_fabric_read(a->fab, t->node, buf, (size_t)n,
					     x->direct ? NULL : R->bounce_desc,
					     op->raddr + op->sent, op->rkey,
					     &x->fx);
		if (err) {
			agent_mem_drop(a, x->held);
			x->held = NULL;
		}
		if (err == 1) {
			R->retry_pending = 1;	/* the provider is full */
			return 0;
		}
		if (err)
			break;
		if (put)
			o->st.rdma_writes++;
		else
			o->st.rdma_reads++;
		if (x->direct) {
			a->st.xfer_inplace++;
			note_inplace(t, op);	/* a flush_local waits */
		}
		R->xfree = x->next;
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
		origin_uncount_issued(t, op);
		oplist_op_finish(a, o, i);
	}
	return 1;
}

/* Bytes of one active-message chunk of elements of size es. */
static size_t am_room(struct agent *a, size_t es)
{
	size_t room = (a->p.am_buf_size - sizeof(struct rmad_am_hdr)) / es * es;

	if (room > RMAD_AM_MAX_PAYLOAD / 2)
		room = RMAD_AM_MAX_PAYLOAD / 2 / es * es;
	return room;
}

/* Can op carry piggybacked synchronization: one active message? */
int origin_can_ride(struct agent *a, const struct rma_op *op)
{
	return !op->rdma && !op->sent &&
	       op->len <= (op->ty ? ty_room(a, ty_unit(op)) :
			   am_room(a, rmad_dtype_size(op->dtype)));
}

/*
 * Send what the credits allow of op i, with the piggybacked flags given
 * (only for an op of one message); 1 once every byte went out (or it
 * failed).  A put or accumulate of one message that asks for no answer
 * is done once it left: the ordered channel makes a later answer cover
 * it (ack elimination).
 */
int origin_issue_op(struct agent *a, struct rma_origin *o,
		    struct rma_target *t, uint32_t i, uint16_t flags)
{
	struct rma_ctx *R = a->rma;

	struct rma_op *op = &R->sh[i];
	size_t es = rmad_dtype_size(op->dtype);
	size_t room = op->ty ? ty_room(a, ty_unit(op)) : am_room(a, es);
	uint8_t buf[RMAD_AM_MAX_PAYLOAD];
	int data = rmad_op_data_in(op->opcode, op->op);

	if (op->ty && !op->sent) {
		/* its type in the target's cache first (rma_type.c) */
		int err = ty_issue(a, o, op);

		if (err == 1)
			return 0;	/* every slot busy: later */
		if (err) {
			count_issued(t, op);
			op->status = err;
			op->len = 0;
		}
	}
	count_issued(t, op);
	if (op->pull) {
		int r = pull_issue(a, o, t, i);

		if (op->done >= op->len && op->sent >= op->len) {
			/* failed before anything went out */
			origin_uncount_issued(t, op);
			oplist_op_finish(a, o, i);
		}
		return r;
	}
	if (op->rdma)
		return issue_rdma(a, o, t, i);
	if (op->len > room || !R->ordered)
		flags |= RMAD_AMF_ACK_REQ;	/* every chunk is answered */
	if (op->ty)
		flags |= RMAD_AMF_TYPED;
	while (op->sent < op->len) {
		uint64_t n = op->len - op->sent;
		size_t plen = 0, head = 0;
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
		if (op->ty)
			head = plen = ty_chunk_head(op, buf);
		if (op->opcode == RMAD_OPC_CAS) {
			memcpy(buf, op->data, 2 * es);
			plen = 2 * es;
		} else if (data) {
			int err = op->is_inline ?
				  (memcpy(buf, op->data + op->sent, n), 0) :
				  xfer_op_io(a, op, op->origin + op->sent,
					buf + head, n, 0);
			if (err) {
				/* nothing more goes out; the op ends once
				 * what did go out is answered */
				op->status = err;
				op->len = op->sent;
				break;
			}
			plen = head + n;
		}
		h.disp = op->tdisp + op->sent;
		h.count = n / es;
		h.seq = ((uint64_t)op->serial << 32) | i;
		if (xfer_osend(a, o, t->node, &h, buf, plen)) {
			op->status = am_node_dead(a, t->node) ?
				     RMAD_ERR_PROC_FAILED : RMAD_ERR_FABRIC;
			op->len = op->sent;
			break;
		}
		if (!op->sent) {
			op->pflags = flags;
			op->wseq = ++t->sent_seq;
		}
		op->sent += n;
	}
	ty_sent(a, op);
	if (op->wseq && op_writes(op)) {
		/* a get by fi_read waits for it to be known applied */
		span_add(&t->amw_lo, &t->amw_hi,
			 t->amw_seq <= t->done_seq, op);
		t->amw_seq = op->wseq;
	}
	if (op->sent && op->sent >= op->len && !origin_has_result(op->opcode) &&
	    !(op->pflags & (RMAD_AMF_ACK_REQ | RMAD_AMF_UNLOCK |
			    RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL))) {
		o->st.acks_saved++;
		op->done = op->len;
	}
	if (op->done >= op->len && op->sent >= op->len) {
		/* no answer comes, or everything failed before it left */
		origin_uncount_issued(t, op);
		oplist_op_finish(a, o, i);
	}
	return 1;
}

void origin_send_lock_msg(struct agent *a, struct rma_origin *o, int32_t rank,
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

	xfer_osend(a, o, node, &h, NULL, 0);
}

/* RMA_DONE for what went out unanswered, unless one is on its way. */
int origin_send_flush(struct agent *a, struct rma_origin *o,
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
	xfer_osend(a, o, t->node, &h, NULL, 0);
	return 1;
}

/* Does an op after pending get i change bytes that i reads?  Then i
 * may not move behind it (the ordering promise). */
static int written_after(struct rma_ctx *R, uint32_t i)
{
	uint64_t lo, hi, l, h;

	op_span(&R->sh[i], &lo, &hi);
	for (uint32_t j = R->sh[i].next; j != RMAD_NIL; j = R->sh[j].next) {
		op_span(&R->sh[j], &l, &h);
		if (op_writes(&R->sh[j]) && l < hi && lo < h)
			return 1;
	}
	return 0;
}

/* Before the closing op: a plain get goes last, so that its answer
 * carries the ack, unless a later op writes its bytes (rmad(7),
 * "Ordering"). */
void origin_get_to_tail(struct agent *a, struct rma_target *t)
{
	struct rma_ctx *R = a->rma;

	uint32_t prev = RMAD_NIL;

	for (uint32_t i = t->head; i != RMAD_NIL && R->sh[i].next != RMAD_NIL;
	     prev = i, i = R->sh[i].next) {
		if (R->sh[i].opcode != RMAD_OPC_GET || !origin_can_ride(a, &R->sh[i]) ||
		    written_after(R, i))
			continue;
		if (prev == RMAD_NIL)
			t->head = R->sh[i].next;
		else
			R->sh[prev].next = R->sh[i].next;
		R->sh[t->tail].next = i;
		R->sh[i].next = RMAD_NIL;
		t->tail = i;
		return;
	}
}

/*
 * May a closing fence skip the RMA_DONE round trip?  Its barrier message
 * (the ARRIVE of a member node, the RELEASE of the root) then follows
 * the epoch's ops on the channel instead of their answer.  On an
 * ordered channel the target applies what comes in order, so the
 * barrier message finds them applied there (an op of several messages,
 * an fi_write, a pulled accumulate or one with results still waits for
 * its answers: nissued).  That covers every target only when the
 * window spans two nodes: each node's ops then all go to the node its
 * barrier message goes to.  With a third node, one released by the
 * root could reach a target before ops sent to it earlier by another
 * node, so the answers are waited for as before.
 */
static int fence_rides(struct agent *a, const struct rma_origin *o)
{
	return a->rma->ordered && o->w->nnodes == 2;
}

/* Op i ends at once with status: 0, placed. */
static int route_end(struct agent *a, struct rma_origin *o, uint32_t i,
		     int32_t status)
{
	a->rma->sh[i].status = status;
	oplist_op_finish(a, o, i);
	return 0;
}

/* A fence sequence that moved nothing ends at the next epoch's start. */
static void fence_idle_end(struct rma_origin *o)
{
	if (o->state == RMA_FENCE_GRANTED && !o->ntargets) {
		o->state = RMA_NONE;
		o->nocheck_all = 0;
	}
}

/* LOCK: a target element in LOCK_CALLED (the lock rides on its first
 * op), or LOCK_GRANTED under MPI_MODE_NOCHECK. */
static int route_lock(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &a->rma->sh[i];
	struct rma_target *t;

	if (o->state == RMA_FENCE_ISSUED)
		return -1;	/* after the fence's release */
	fence_idle_end(o);
	if (o->state != RMA_NONE && o->state != RMA_PER_TARGET)
		return route_end(a, o, i, RMAD_ERR_SYNC);
	if (oplist_target_find(o, op->target) || evicted_has(o, op->target))
		return route_end(a, o, i, RMAD_ERR_SYNC);
	t = oplist_target_new(a, o, op->target,
		       (op->dtype & RMAD_MODE_NOCHECK) ? RMA_LOCK_GRANTED :
							 RMA_LOCK_CALLED);
	if (!t)
		return -1;
	o->state = RMA_PER_TARGET;
	o->no_hold = 0;
	t->lseq = ++o->lcalls;
	t->excl = op->op == RMAD_LOCK_EXCLUSIVE;
	t->nocheck = !!(op->dtype & RMAD_MODE_NOCHECK);
	oplist_op_finish(a, o, i);
	return 0;
}

static int route_lock_all(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &a->rma->sh[i];

	if (o->state == RMA_FENCE_ISSUED)
		return -1;
	fence_idle_end(o);
	if (o->state != RMA_NONE || o->ntargets)
		return route_end(a, o, i, RMAD_ERR_SYNC);
	o->nocheck_all = !!(op->dtype & RMAD_MODE_NOCHECK);
	o->no_hold = 0;
	o->state = o->nocheck_all ? RMA_LOCK_ALL_GRANTED :
				    RMA_LOCK_ALL_CALLED;
	oplist_op_finish(a, o, i);
	return 0;
}

/* Every target element t of origin o. */
#define FOR_TARGETS(o, t) \
	for (uint32_t s_ = 0; s_ < (o)->nslots; s_++) \
		for ((t) = (o)->slots[s_]; (t); (t) = (t)->next)

/* UNLOCK, UNLOCK_ALL, FENCE, LOCK_WAIT, FLUSH, FLUSH_LOCAL: the sync
 * queue, with what each asks of the targets marked. */
static int route_sync(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_ctx *R = a->rma;
	struct rma_op *op = &R->sh[i];
	struct rma_target *t;
	int ride;

	switch (op->opcode) {
	case RMAD_OPC_UNLOCK:
		t = oplist_target_find(o, op->target);
		if (!t && evicted_take(o, op->target)) {
			t = oplist_target_new(a, o, op->target, RMA_LOCK_GRANTED);
			if (!t) {
				/* put it back until an element frees */
				o->evicted[o->nevicted++] = op->target;
				return -1;
			}
		}
		if (t)
			t->want_unlock = 1;
		break;
	case RMAD_OPC_UNLOCK_ALL:
		FOR_TARGETS(o, t)
			t->want_unlock = 1;
		if (o->state == RMA_LOCK_ALL_GRANTED && !o->nocheck_all) {
			o->la_unlock = 1;
			o->la_next = 0;
		}
		break;
	case RMAD_OPC_FENCE:
		if (o->state != RMA_NONE && o->state != RMA_FENCE_GRANTED &&
		    o->state != RMA_FENCE_ISSUED)	/* inside a lock epoch */
			return route_end(a, o, i, RMAD_ERR_SYNC);
		/* the epoch's ops complete at their targets (no lock to
		 * release: nocheck_all), then the barrier; in a two-node
		 * window on an ordered channel they need only have left
		 * (fence_rides) */
		ride = fence_rides(a, o);
		FOR_TARGETS(o, t) {
			t->want_unlock = 1;
			t->close_rides = (uint8_t)ride;
		}
		break;
	case RMAD_OPC_LOCK_WAIT:
		/* a same-node lock is next: every lock called before it
		 * must be held first, ops or not */
		FOR_TARGETS(o, t)
			if (t->state == RMA_LOCK_CALLED)
				t->lock_now = 1;
		break;
	default:	/* FLUSH, FLUSH_LOCAL */
		/* nothing waits for the epoch's end any more; a flush also
		 * wants its last op acknowledged (piggybacked RMA_DONE) */
		FOR_TARGETS(o, t) {
			if (op->target >= 0 && t->rank != op->target)
				continue;
			t->release = 1;
			if (op->opcode == RMAD_OPC_FLUSH)
				t->sync_want = 1;
		}
		break;
	}
	oplist_add(R, &o->yhead, &o->ytail, i);
	return 0;
}

/*
 * A data op's target element when there is none yet, as the epoch
 * allows: 1 with *t made, 0 when the op ended, -1 to stall it.
 */
static int data_target(struct agent *a, struct rma_origin *o, uint32_t i,
		       struct rma_target **t)
{
	struct rma_op *op = &a->rma->sh[i];
	int state = RMA_LOCK_GRANTED;

	switch (o->state) {
	case RMA_PER_TARGET:
		/* granted before, and its element was reclaimed */
		if (!evicted_take(o, op->target))
			return route_end(a, o, i, RMAD_ERR_SYNC);
		*t = oplist_target_new(a, o, op->target, RMA_LOCK_GRANTED);
		if (!*t) {
			o->evicted[o->nevicted++] = op->target;
			return -1;
		}
		return 1;
	case RMA_LOCK_ALL_CALLED:
		state = RMA_LOCK_CALLED;
		break;
	case RMA_LOCK_ALL_GRANTED:
	case RMA_FENCE_GRANTED:
		break;
	case RMA_LOCK_ALL_ISSUED:
		o->need_target = 1;
		return -1;
	case RMA_FENCE_ISSUED:
		return -1;	/* the target may not be in the fence */
	case RMA_PSCW:
		switch (pscw_ready(a, o, op->target)) {
		case 0:
			return -1;	/* until it posts */
		case -1:
			return route_end(a, o, i, RMAD_ERR_PROC_FAILED);
		}
		break;
	default:
		return route_end(a, o, i, RMAD_ERR_SYNC);
	}
	*t = oplist_target_new(a, o, op->target, state);
	return *t ? 1 : -1;
}

/*
 * Put op i where it belongs: a target's list, the sync queue, or done at
 * once.  0 when placed; -1 when it needs a target element that is not
 * there (the caller stalls it).
 */
int origin_route(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_op *op = &a->rma->sh[i];
	struct rma_target *t;
	int r;

	switch (op->opcode) {
	case RMAD_OPC_LOCK:
		return route_lock(a, o, i);
	case RMAD_OPC_LOCK_ALL:
		return route_lock_all(a, o, i);
	case RMAD_OPC_UNLOCK:
	case RMAD_OPC_UNLOCK_ALL:
	case RMAD_OPC_FENCE:
	case RMAD_OPC_LOCK_WAIT:
	case RMAD_OPC_FLUSH:
	case RMAD_OPC_FLUSH_LOCAL:
		return route_sync(a, o, i);
	case RMAD_OPC_START:
	case RMAD_OPC_COMPLETE:
		return pscw_route(a, o, i);
	}
	/* a data op */
	if (am_node_dead(a, agent_job_rank_node(o->w->job, op->target)))
		/* submitted before the node died, placed after: no target
		 * element is made there any more */
		return route_end(a, o, i, RMAD_ERR_PROC_FAILED);
	t = oplist_target_find(o, op->target);
	if (!t && (r = data_target(a, o, i, &t)) < 1)
		return r;
	oplist_tadd(o, t, i);
	/* its client waits for it alone (a staged op, or a request's):
	 * hold nothing back */
	if (op->staged || op->waited)
		t->release = 1;
	return 0;
}

