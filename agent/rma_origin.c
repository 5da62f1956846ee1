/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_origin.c - the origin side's operation table, after the seeds.
 *
 * Each (client, window) pair that posts remote operations gets an origin
 * state (struct rma_origin): its window state (enum win_state), a slot
 * array of target elements hashed by rank, and a queue of
 * synchronization requests.  Each target element holds its per-target
 * lock state (enum target_state) and the list of its pending ops; ops
 * that were sent but not answered are counted (nissued, nres), never
 * listed, since their answers name them by cookie.  Target elements
 * come from a window-local pool first, then from the global pool
 * (target_pool).  When both are empty the origin stalls its submissions
 * and runs CLEANUP_WIN_AGGRESSIVE: in a lock_all epoch it switches to the
 * window protocol (lock every remote member, LOCKALL_BATCH at a time);
 * otherwise it picks one of its targets, in the order LOCK_GRANTED,
 * LOCK_ISSUED, LOCK_CALLED, completes its ops and frees the element,
 * remembering a granted lock so that UNLOCK still reaches it.
 *
 * The seeds' routines: issue_ops_target() here; issue_ops_win(),
 * make_rma_progress_win() and cleanup_win_aggressive() in rma_win.c
 * (make_rma_progress_global() in rma.c); answers are cleaned up as they arrive
 * (rma_pkt.c).  Transfers larger than one active message are pipelined,
 * CHUNKS_INFLIGHT chunks per op at a time, and large contiguous ones move
 * by fi_write/fi_read (issue_rdma) through bounce buffers.
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

struct rma_target *target_find(struct rma_origin *o, int32_t rank)
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

struct rma_target *target_new(struct agent *a, struct rma_origin *o,
				     int32_t rank, int state)
{
	struct rma_ctx *R = a->rma;

	struct rma_target *t = o->lfree;
	int node = agent_rank_node(o->w->job, rank);

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

void target_free(struct rma_origin *o, struct rma_target *t)
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
void set_err(struct rma_origin *o, int32_t st)
{
	if (st == RMAD_ERR_PROC_FAILED)
		o->dead_seen = 1;
	else if (st && !o->err)
		o->err = st;
}

void op_finish(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_ctx *R = a->rma;

	struct rma_op *op = &R->sh[i];
	int32_t st = op->status;

	set_err(o, st);
	if (op->pull && op->nx)
		pull_op_end(a, i);	/* chunks out: their keys close */
	if (rmad_op_desc(op->opcode)->rma)
		o->st.ops_completed++;
	op->serial = 0;
	op->o = NULL;
	ty_op_free(a, op);
	agent_complete_op(a, op->client, i, st);
}

static int am_type(uint16_t opc)
{
	return rmad_op_desc(opc)->am_type;
}

int has_result(uint16_t opc)
{
	return rmad_op_desc(opc)->result;
}

/* The accumulate family, which MPI keeps in order per origin and target
 * unless accumulate_ordering says otherwise. */
static int is_acc(uint16_t opc)
{
	return rmad_op_desc(opc)->acc;
}

static int send_flush(struct agent *a, struct rma_origin *o,
		      struct rma_target *t);

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
	if (has_result(op->opcode))
		t->nres++;
	if (has_result(op->opcode) && !op->rdma && !op->pull)
		t->nride++;
	if (op->rdma)
		t->nrdma++;
	if (op->pull)
		t->npull++;
	if (is_acc(op->opcode))
		t->nacc++;
	/* applied after what follows it: later ops to its bytes wait
	 * (order_hazard) */
	if (op_writes(op) && (op->pull || !op->o->R->ordered)) {
		span_add(&t->late_lo, &t->late_hi, !t->nlate, op);
		t->nlate++;
		op->late = 1;
		if (!is_acc(op->opcode)) {
			span_add(&t->put_lo, &t->put_hi, !t->nlate_put, op);
			t->nlate_put++;
		}
	}
}

void uncount_issued(struct rma_target *t, struct rma_op *op)
{
	if (!op->counted)
		return;
	op->counted = 0;
	t->nissued--;
	if (has_result(op->opcode))
		t->nres--;
	if (has_result(op->opcode) && !op->rdma && !op->pull)
		t->nride--;
	if (op->rdma)
		t->nrdma--;
	if (op->pull)
		t->npull--;
	if (is_acc(op->opcode))
		t->nacc--;
	if (op->late) {
		op->late = 0;
		t->nlate--;
		if (!is_acc(op->opcode))
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
static int order_hazard(struct agent *a, struct rma_origin *o,
			struct rma_target *t, const struct rma_op *op)
{
	uint64_t lo, hi;

	/* only reads wait here; an accumulate after accumulates waits as
	 * the window's accumulate_ordering says (issue_ops_target) */
	if (!has_result(op->opcode))
		return 0;
	op_span(op, &lo, &hi);
	if (t->nlate && lo < t->late_hi && t->late_lo < hi &&
	    (!is_acc(op->opcode) || (o->acc_order & RMAD_ACC_ORDER_RAW)))
		return 1;
	if (t->nlate_put && lo < t->put_hi && t->put_lo < hi)
		return 1;
	if (op->rdma && !op->pull && !op_writes(op) &&
	    t->amw_seq > t->done_seq && t->amw_seq <= t->sent_seq &&
	    lo < t->amw_hi && t->amw_lo < hi) {
		send_flush(a, o, t);
		return 1;
	}
	return 0;
}

/* A chunk landed (or failed): CLEANUP for rdma ops. */
void xfer_done(struct rmad_fabric_xfer *fx, int status)
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
		int err = op_io(a, op, op->origin + x->off, x->buf, x->len,
				1);

		if (err)
			op->status = err;
	}
	op->done += x->len;
	x->next = R->xfree;
	R->xfree = x;
	t = target_find(o, op->target);
	if (op->done >= op->len && op->sent >= op->len) {
		if (t)
			uncount_issued(t, op);
		op_finish(a, o, x->op);
	}
	R->progress_win(a, o);
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
	int put = op->opcode == RMAD_OPC_PUT, err = rma_bounce_init(a);
	int direct = !op->staged && !rmad_fabric_needs_local_mr(a->fab);
	uint64_t now = rmad_now_ns();
	void *buf;

	if (op->status) {
		/* a chunk failed (xfer_done): no more go out, and the op
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

		osend(a, o, t->node, &h, NULL, 0);
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
			err = op_io(a, op, op->origin + op->sent, x->buf,
				    (size_t)n, 0);
		if (err)
			break;
		x->direct = buf != NULL;
		x->fx.done = xfer_done;
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
		uncount_issued(t, op);
		op_finish(a, o, i);
	}
	return 1;
}

struct rma_origin *origin_find(struct agent_win *w, uint32_t c,
				      uint32_t gen)
{
	for (struct rma_origin *o = w->origins; o; o = o->next)
		if (o->client == c && o->gen == gen && !o->dying)
			return o;
	return NULL;
}

void list_add(struct rma_ctx *R, uint32_t *head, uint32_t *tail,
		     uint32_t i)
{
	R->sh[i].next = RMAD_NIL;
	if (*tail != RMAD_NIL)
		R->sh[*tail].next = i;
	else
		*head = i;
	*tail = i;
}

uint32_t list_pop(struct rma_ctx *R, uint32_t *head, uint32_t *tail)
{
	uint32_t i = *head;

	*head = R->sh[i].next;
	if (*head == RMAD_NIL)
		*tail = RMAD_NIL;
	return i;
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
static int can_ride(struct agent *a, const struct rma_op *op)
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
static int issue_op(struct agent *a, struct rma_origin *o,
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
			uncount_issued(t, op);
			op_finish(a, o, i);
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
				  op_io(a, op, op->origin + op->sent,
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
		if (osend(a, o, t->node, &h, buf, plen)) {
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

void send_lock_msg(struct agent *a, struct rma_origin *o, int32_t rank,
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
	struct rma_ctx *R = o->R;
	list_add(R, &t->head, &t->tail, i);
	t->npend++;
	if (++o->nheld > o->st.ops_held_hwm)
		o->st.ops_held_hwm = o->nheld;
}

uint32_t tlist_pop(struct rma_origin *o, struct rma_target *t)
{
	struct rma_ctx *R = o->R;
	t->npend--;
	o->nheld--;
	return list_pop(R, &t->head, &t->tail);
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
static void get_to_tail(struct agent *a, struct rma_target *t)
{
	struct rma_ctx *R = a->rma;

	uint32_t prev = RMAD_NIL;

	for (uint32_t i = t->head; i != RMAD_NIL && R->sh[i].next != RMAD_NIL;
	     prev = i, i = R->sh[i].next) {
		if (R->sh[i].opcode != RMAD_OPC_GET || !can_ride(a, &R->sh[i]) ||
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

int issue_ops_target(struct agent *a, struct rma_origin *o,
		     struct rma_target *t)
{
	struct rma_ctx *R = a->rma;

	uint64_t thr = (uint64_t)a->p.single_op_threshold;
	int moved = 0, closing;

	if (t->state == RMA_LOCK_CALLED) {
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
			R->retry_pending = 1;
			return 0;
		}
		t->retry_at = 0;
		/* not a typed op: its chunks are applied as they arrive,
		 * never queued with a lock request (rma_type.c) */
		if (i != RMAD_NIL && can_ride(a, &R->sh[i]) && !R->sh[i].ty) {
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
			tlist_pop(o, t);
			t->state = RMA_LOCK_ISSUED;
			issue_op(a, o, t, i, fl | RMAD_AMF_ACK_REQ);
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
		send_lock_msg(a, o, t->rank, t->node, RMAD_AM_RMA_LOCK,
			      t->excl);
		t->state = RMA_LOCK_ISSUED;
		return 1;
	}
	if (t->state != RMA_LOCK_GRANTED)
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

		if (!R->sh[i].counted &&
		    ((o->acc_order && is_acc(R->sh[i].opcode) &&
		      (t->npull || (!R->ordered && t->nacc))) ||
		     order_hazard(a, o, t, &R->sh[i]))) {
			/* an unordered channel, or a pulled op (applied
			 * after what follows it; a pulled put holds it back
			 * too, more than MPI asks): the previous
			 * accumulate must be answered before the next may
			 * go (one partly sent goes on); and any op waits
			 * for an earlier write to its bytes that it could
			 * overtake (order_hazard) */
			if (!t->order_blocked)
				o->st.order_waits++;
			t->order_blocked = 1;
			return moved;
		}
		t->order_blocked = 0;
		if (closing && R->sh[i].next == RMAD_NIL &&
		    can_ride(a, &R->sh[i])) {
			/* a closing message that follows it (close_rides)
			 * needs no answer */
			fl = t->close_rides ? 0 : RMAD_AMF_ACK_REQ;
			if (t->want_unlock && !t->nocheck && !o->nocheck_all &&
			    !t->unlocking && !t->nrdma &&
			    (R->ordered || !t->nissued))
				fl |= RMAD_AMF_UNLOCK;
			/* the PSCW complete rides the same way, once every
			 * op before it is known to be applied first.  On an
			 * ordered channel it asks for no answer (close_rides
			 * is set): a complete is local (the target's wait
			 * sees the ops applied), so the origin need not wait
			 * for a busy target's agent */
			if (t->pscw_close && !t->nrdma &&
			    (R->ordered || !t->nissued))
				fl |= RMAD_AMF_PSCW_DONE;
		}
		if (!issue_op(a, o, t, i, fl))
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
		tlist_pop(o, t);
		moved = 1;
	}
	if (t->nissued || t->unlocking)
		return moved;
	if (t->want_unlock) {
		if (t->close_rides) {
			/* the closing message (the fence's barrier
			 * message, the complete notice, or the complete
			 * riding on the last op) goes behind them all on
			 * the ordered channel: done here */
			target_free(o, t);
			return 1;
		}
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
		if (o->state == RMA_PER_TARGET && !t->nocheck) {
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

/*
 * Put op i where it belongs: a target's list, the sync queue, or done at
 * once.  0 when placed; -1 when it needs a target element that is not
 * there (the caller stalls it).
 */
int route(struct agent *a, struct rma_origin *o, uint32_t i)
{
	struct rma_ctx *R = a->rma;

	struct rma_op *op = &R->sh[i];
	struct rma_target *t;
	int ride;

	switch (op->opcode) {
	case RMAD_OPC_LOCK:
		if (o->state == RMA_FENCE_ISSUED)
			return -1;	/* after the fence's release */
		if (o->state == RMA_FENCE_GRANTED && !o->ntargets) {
			/* a fence sequence that moved nothing ends here */
			o->state = RMA_NONE;
			o->nocheck_all = 0;
		}
		if (o->state != RMA_NONE && o->state != RMA_PER_TARGET) {
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
			       (op->dtype & RMAD_MODE_NOCHECK) ? RMA_LOCK_GRANTED :
								 RMA_LOCK_CALLED);
		if (!t)
			return -1;
		o->state = RMA_PER_TARGET;
		o->no_hold = 0;
		t->lseq = ++o->lcalls;
		t->excl = op->op == RMAD_LOCK_EXCLUSIVE;
		t->nocheck = !!(op->dtype & RMAD_MODE_NOCHECK);
		op_finish(a, o, i);
		return 0;
	case RMAD_OPC_LOCK_ALL:
		if (o->state == RMA_FENCE_ISSUED)
			return -1;
		if (o->state == RMA_FENCE_GRANTED && !o->ntargets) {
			o->state = RMA_NONE;
			o->nocheck_all = 0;
		}
		if (o->state != RMA_NONE || o->ntargets) {
			op->status = RMAD_ERR_SYNC;
			op_finish(a, o, i);
			return 0;
		}
		o->nocheck_all = !!(op->dtype & RMAD_MODE_NOCHECK);
		o->no_hold = 0;
		o->state = o->nocheck_all ? RMA_LOCK_ALL_GRANTED :
					    RMA_LOCK_ALL_CALLED;
		op_finish(a, o, i);
		return 0;
	case RMAD_OPC_UNLOCK:
		t = target_find(o, op->target);
		if (!t && evicted_take(o, op->target)) {
			t = target_new(a, o, op->target, RMA_LOCK_GRANTED);
			if (!t) {
				/* put it back until an element frees */
				o->evicted[o->nevicted++] = op->target;
				return -1;
			}
		}
		if (t)
			t->want_unlock = 1;
		list_add(R, &o->yhead, &o->ytail, i);
		return 0;
	case RMAD_OPC_UNLOCK_ALL:
		for (uint32_t s = 0; s < o->nslots; s++)
			for (t = o->slots[s]; t; t = t->next)
				t->want_unlock = 1;
		if (o->state == RMA_LOCK_ALL_GRANTED && !o->nocheck_all) {
			o->la_unlock = 1;
			o->la_next = 0;
		}
		list_add(R, &o->yhead, &o->ytail, i);
		return 0;
	case RMAD_OPC_FENCE:
		if (o->state != RMA_NONE && o->state != RMA_FENCE_GRANTED &&
		    o->state != RMA_FENCE_ISSUED) {
			op->status = RMAD_ERR_SYNC;	/* inside a lock epoch */
			op_finish(a, o, i);
			return 0;
		}
		/* the epoch's ops complete at their targets (no lock to
		 * release: nocheck_all), then the barrier; in a two-node
		 * window on an ordered channel they need only have left
		 * (fence_rides) */
		ride = fence_rides(a, o);
		for (uint32_t s = 0; s < o->nslots; s++)
			for (t = o->slots[s]; t; t = t->next) {
				t->want_unlock = 1;
				t->close_rides = (uint8_t)ride;
			}
		list_add(R, &o->yhead, &o->ytail, i);
		return 0;
	case RMAD_OPC_START:
	case RMAD_OPC_COMPLETE:
		return R->route_sync(a, o, i);
	case RMAD_OPC_LOCK_WAIT:
		/* a same-node lock is next: every lock called before it
		 * must be held first, ops or not */
		for (uint32_t s = 0; s < o->nslots; s++)
			for (t = o->slots[s]; t; t = t->next)
				if (t->state == RMA_LOCK_CALLED)
					t->lock_now = 1;
		list_add(R, &o->yhead, &o->ytail, i);
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
		list_add(R, &o->yhead, &o->ytail, i);
		return 0;
	}
	/* a data op */
	if (am_node_dead(a, agent_rank_node(o->w->job, op->target))) {
		/* submitted before the node died, placed after: no target
		 * element is made there any more */
		op->status = RMAD_ERR_PROC_FAILED;
		op_finish(a, o, i);
		return 0;
	}
	t = target_find(o, op->target);
	if (!t) {
		int state;

		switch (o->state) {
		case RMA_PER_TARGET:
			/* granted before, and its element was reclaimed */
			if (!evicted_take(o, op->target)) {
				op->status = RMAD_ERR_SYNC;
				op_finish(a, o, i);
				return 0;
			}
			t = target_new(a, o, op->target, RMA_LOCK_GRANTED);
			if (!t) {
				o->evicted[o->nevicted++] = op->target;
				return -1;
			}
			break;
		case RMA_LOCK_ALL_CALLED:
			state = RMA_LOCK_CALLED;
			goto make;
		case RMA_LOCK_ALL_GRANTED:
		case RMA_FENCE_GRANTED:
			state = RMA_LOCK_GRANTED;
make:
			t = target_new(a, o, op->target, state);
			if (!t)
				return -1;
			break;
		case RMA_LOCK_ALL_ISSUED:
			o->need_target = 1;
			return -1;
		case RMA_FENCE_ISSUED:
			return -1;	/* the target may not be in the fence */
		case RMA_PSCW:
			switch (R->target_ready(a, o, op->target)) {
			case 0:
				return -1;	/* until it posts */
			case -1:
				op->status = RMAD_ERR_PROC_FAILED;
				op_finish(a, o, i);
				return 0;
			}
			state = RMA_LOCK_GRANTED;
			goto make;
		default:
			op->status = RMAD_ERR_SYNC;
			op_finish(a, o, i);
			return 0;
		}
	}
	tlist_add(o, t, i);
	/* its client waits for it alone (a staged op, or a request's):
	 * hold nothing back */
	if (op->staged || op->waited)
		t->release = 1;
	return 0;
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
int route_issue_fast(struct agent *a, struct rma_origin *o, uint32_t i)
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
	t = target_find(o, op->target);
	if (!t || t->state != RMA_LOCK_GRANTED || t->want_unlock ||
	    t->sync_want || t->release || t->evict || t->pscw_close ||
	    am_node_dead(a, t->node))
		return 0;
	tlist_add(o, t, i);
	issue_ops_target(a, o, t);
	return 1;
}

struct rma_origin *origin_new(struct agent *a, struct agent_win *w,
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

void origin_free(struct agent *a, struct rma_origin *o)
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
