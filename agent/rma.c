/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c - the RMA layer's entry points: client submissions (checked
 * here before they reach the operation table), the packet handlers'
 * registration, what a dead client, a dead node or a freed window leaves
 * behind (the windows' and jobs' hooks, set here), statistics, init and
 * fini.
 *
 * The layer's files, bottom up (t/layering.sh's table): rma_xfer.c
 * (bytes in and out), rma_type_apply.c (a typed chunk applied),
 * rma_type.c (derived target types), rma_target.c
 * (lock granting and apply), rma_pull_origin.c and rma_pull.c (large ops the target
 * reads, origin and target sides),
 * rma_oplist.c (the operation table's data), rma_pscw.c (PSCW notices),
 * rma_origin.c (route and issue), rma_win.c (sync state changes),
 * rma_progress.c (the seeds' basic routines), rma_pkt.c (packets),
 * rma.c.  rma_internal.h holds what they share.
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
#include "rma.h"
#include "atomics.h"
#include "counter.h"
#include "dtype.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "rmad_opdesc.h"
#include "util.h"
#include "rma_internal.h"

static int32_t check_data_op(struct agent *a, struct agent_win *w,
			     struct rma_op *op, uint64_t tdisp_units,
			     uint64_t count, int tbytes)
{
	uint64_t size;
	int32_t du;
	size_t es = rmad_dtype_size(op->dtype);
	int node;

	if (!es)
		return RMAD_ERR_TYPE;
	if (agent_win_target(w, op->target, &size, &du))
		return RMAD_ERR_RANK;
	node = agent_job_rank_node(w->job, op->target);
	if (node < 0 || node == a->node)
		return RMAD_ERR_RANK;	/* same node: the client's job */
	if (agent_job_rank_dead(a, w->job, op->target))
		return RMAD_ERR_PROC_FAILED;	/* its process or its node */
	if (count == 0 || count > (1ull << 40) / es)
		return RMAD_ERR_ARG;
	op->len = count * es;
	if (tbytes || w->dynamic)
		du = 1;		/* a piece of a derived type: in bytes */
	if (tdisp_units > (w->dynamic ? 1ull << 57 : 1ull << 40) /
			  (uint64_t)du)
		return RMAD_ERR_DISP;
	op->tdisp = tdisp_units * (uint64_t)du;
	/* a dynamic window's regions are the target agent's to check */
	if (!w->dynamic &&
	    (op->tdisp > size || op->len > size - op->tdisp))
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
	    rmad_op_data_in(op->opcode, op->op) && op->inline_len != op->len)
		return RMAD_ERR_ARG;
	if (op->opcode == RMAD_OPC_CAS)
		op->len = es;	/* one result */
	if (op->staged) {
		/* its data and results lie in the client's staging area */
		uint64_t sz = a->lay.staging_size;
		int in = !op->is_inline &&
			 (rmad_op_data_in(op->opcode, op->op) ||
			  rmad_op_desc(op->opcode)->result_in_origin);
		int out = rmad_op_result_buf(op->opcode);

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
	/* large accumulates and get-accumulates, and large puts and gets
	 * to a window whose memory the target's agent does not register
	 * (created or dynamic: the process's own memory, which it reaches
	 * with process_vm_writev/readv): the target's agent reads the
	 * operands, or writes a get's bytes (a get-accumulate's results)
	 * into ours (rma_pull.c) */
	if ((op->opcode == RMAD_OPC_ACC || op->opcode == RMAD_OPC_GACC ||
	     ((op->opcode == RMAD_OPC_PUT || op->opcode == RMAD_OPC_GET) &&
	      !op->rdma)) &&
	    !op->is_inline && a->fab &&
	    a->p.rdma_threshold && op->len >= a->p.rdma_threshold &&
	    rmad_fabric_has_rma(a->fab)) {
		op->rdma = 1;
		op->pull = 1;
	}
	return 0;
}

/* What an op element says beyond the op's own fields. */
struct op_in {
	uint64_t key, tdisp, count;
	uint32_t block, flags;
	struct rmad_op_lock lk;
};

/* Element e (the client's, shared) read once into op and *in: 0, or
 * RMAD_ERR_ARG for fields out of range. */
static int32_t op_read(struct agent *a, uint32_t c, struct rma_op *op,
		       const struct rmad_op_elem *e, struct op_in *in)
{
	int32_t st = 0;

	ty_op_free(a, op);	/* one that ended on another path */
	memset(op, 0, sizeof(*op));
	op->next = RMAD_NIL;
	op->client = c;
	op->opcode = e->opcode;
	in->flags = e->flags;
	in->block = e->win;
	in->key = e->ticket;
	op->target = e->target;
	op->dtype = (uint8_t)e->dtype;
	op->op = (uint8_t)e->op;
	in->count = e->count;
	in->tdisp = e->tdisp;
	op->origin = e->origin_off;
	op->result = e->result_addr;
	op->is_inline = !!(in->flags & RMAD_OPF_INLINE);
	op->staged = !!(in->flags & RMAD_OPF_STAGED);
	op->waited = !!(in->flags & RMAD_OPF_KEEP);
	op->inline_len = e->inline_len;
	if (e->dtype > 255 || e->op > 255) {
		op->dtype = 0;
		op->op = 0;
	}
	if (op->opcode == RMAD_OPC_LOCK || op->opcode == RMAD_OPC_LOCK_ALL ||
	    op->opcode == RMAD_OPC_FENCE || op->opcode == RMAD_OPC_START) {
		uint32_t type = e->lock.type;
		uint32_t as = e->lock.assert;

		/* the lock's fields live where inline data would */
		op->is_inline = 0;
		op->op = type <= 255 ? (uint8_t)type : 0;
		op->dtype = as <= 255 ? (uint8_t)as : 0;
		in->lk.target_pool = e->lock.target_pool;
		in->lk.slots = e->lock.slots;
		in->lk.acc_ordering = e->lock.acc_ordering;
		if (type > 255 || as > 255)
			st = RMAD_ERR_ARG;
	} else if (in->flags & RMAD_OPF_TTYPE) {
		/* the type's descriptor lives where inline data would */
		op->is_inline = 0;
		memcpy(op->data, e->data, sizeof(struct rmad_op_ttype));
	} else if (op->is_inline) {
		if (op->inline_len > RMAD_OP_INLINE) {
			st = RMAD_ERR_ARG;
			op->is_inline = 0;
		} else {
			memcpy(op->data, e->data, op->inline_len);
		}
	}
	/* acquire: the element's fields were read above */
	cmm_smp_rmb();
	return st;
}

/* LOCK, LOCK_ALL, FENCE, START: an epoch opens, with the origin state
 * made at the first one (its slots and pool as the client asked). */
static int32_t open_epoch(struct agent *a, uint32_t c, struct agent_win *w,
			  struct rma_op *op, const struct op_in *in,
			  struct rma_origin **o)
{
	uint64_t size;
	int32_t unit;

	if (op->opcode == RMAD_OPC_LOCK &&
	    ((op->op != RMAD_LOCK_SHARED && op->op != RMAD_LOCK_EXCLUSIVE) ||
	     agent_win_target(w, op->target, &size, &unit) ||
	     agent_job_rank_node(w->job, op->target) == a->node))
		return RMAD_ERR_ARG;
	if (op->opcode == RMAD_OPC_LOCK &&
	    agent_job_rank_dead(a, w->job, op->target))
		return RMAD_ERR_PROC_FAILED;
	if (!*o) {
		uint32_t ns = in->lk.slots ? in->lk.slots :
			      (uint32_t)a->p.win_slots;
		uint32_t np = in->lk.target_pool ? in->lk.target_pool :
			      (uint32_t)a->p.win_target_pool;

		if (ns > 65536 || np > 65536)
			return RMAD_ERR_ARG;
		*o = oplist_origin_new(a, w, c, ns ? ns : 1, np);
		if (!*o)
			return RMAD_ERR_NOMEM;
	}
	(*o)->acc_order = (in->lk.acc_ordering & RMAD_LOCKF_ORDER) ?
			  in->lk.acc_ordering & 0xffu : 15u;
	return 0;
}

void agent_rma_op(struct agent *a, uint32_t c, uint32_t i,
		  const struct rmad_op_elem *e)
{
	struct rma_ctx *R = a->rma;
	struct agent_client *ac = &a->cl[c];
	struct rma_op *op = &R->sh[i];
	struct op_in in = { 0 };
	struct agent_win *w;
	struct win_local *l;
	struct rma_origin *o;
	int32_t st;

	st = op_read(a, c, op, e, &in);
	op->serial = ++R->serials ? R->serials : ++R->serials;
	w = agent_win_by_block(a, in.block, in.key);
	l = w ? agent_win_local(w, ac->rank) : NULL;
	if (!st && (!l || l->client != c || l->gen != ac->gen))
		st = RMAD_ERR_ARG;
	if (!st && op->opcode == RMAD_OPC_POST) {
		/* a notice, not an op of an epoch: no origin state */
		st = pscw_post(a, w, l, op);
		op->serial = 0;
		completion_op_done(a, c, i, st);
		return;
	}
	o = w ? oplist_origin_find(w, c, ac->gen) : NULL;
	if (!st) {
		switch (op->opcode) {
		case RMAD_OPC_LOCK:
		case RMAD_OPC_LOCK_ALL:
		case RMAD_OPC_FENCE:
		case RMAD_OPC_START:
			st = open_epoch(a, c, w, op, &in, &o);
			break;
		case RMAD_OPC_UNLOCK:
		case RMAD_OPC_UNLOCK_ALL:
		case RMAD_OPC_FLUSH:
		case RMAD_OPC_FLUSH_LOCAL:
		case RMAD_OPC_LOCK_WAIT:
		case RMAD_OPC_COMPLETE:
			if (!o && op->opcode == RMAD_OPC_COMPLETE) {
				st = RMAD_ERR_SYNC;	/* no start came */
			} else if (!o) {
				/* nothing was ever sent from here; an error
				 * that found no epoch surfaces now */
				st = ac->rma_err;
				ac->rma_err = 0;
				completion_op_done(a, c, i, st);
				return;
			}
			break;
		default:
			if (!o) {
				st = RMAD_ERR_SYNC;
			} else if (in.flags & RMAD_OPF_TTYPE) {
				struct rmad_op_ttype d;

				memcpy(&d, op->data, sizeof(d));
				st = ty_check_op(a, w, op, &d, in.tdisp,
						 in.count);
			} else {
				st = check_data_op(a, w, op, in.tdisp,
						   in.count, !!(in.flags &
						   RMAD_OPF_TBYTES));
			}
			break;
		}
	}
	if (st) {
		if (o)
			oplist_set_err(o, st);
		else if (!ac->rma_err)
			ac->rma_err = st;
		rmad_dbg("client %u: rma op %u refused (%d): window %s, %s",
			 c, op->opcode, st, w ? "found" : "unknown",
			 l ? "member" : "not a member");
		op->serial = 0;
		completion_op_done(a, c, i, st);
		return;
	}
	op->o = o;
	if (rma_progress_fast(a, o, i))
		return;
	if (o->shead != RMAD_NIL || origin_route(a, o, i) < 0)
		oplist_add(R, &o->shead, &o->stail, i);
	make_rma_progress_win(a, o);
}

/* A client is gone: its locks on this node's windows go, and its epochs
 * end (locks it holds elsewhere are released by messages). */
void agent_rma_client_gone(struct agent *a, uint32_t c)
{
	struct rma_ctx *R = a->rma;

	for (struct agent_win *w = agent_win_first(a); w; w = w->next) {
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
				target_lw_release(&ctl->lock, 1);
			}
			if (c < sizeof(ctl->shared_by) &&
			    target_dead_shared(a, l, c))
				target_lw_release(&ctl->lock, 0);
			if (c < sizeof(ctl->shared_by))
				store_relaxed(&ctl->shared_by[c], RMAD_SB_NONE);
			/* a dynamic window's busy byte, if it died in an
			 * access there */
			if (l->pub && c < sizeof(l->pub->busy))
				store_release(&l->pub->busy[c], 0);
			/* its small-accumulate byte, and the accumulate
			 * lock with the bulk word if it died in a bulk or
			 * locked accumulate (accword.h) */
			if (c < RMAD_ACC_SLOTS)
				store_release(&ctl->acc_small[c], 0);
			if (__atomic_load_n(&ctl->acc_lock,
					    __ATOMIC_ACQUIRE) == c + 1) {
				store_release(&ctl->acc_big, 0);
				v = c + 1;
				__atomic_compare_exchange_n(&ctl->acc_lock, &v,
							    0, 0,
							    __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED);
			}
			if (l->lk && l->lk->qhead)
				target_try_grant(a, l->lk);
		}
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			nx = o->next;
			if (o->client != c || o->dying)
				continue;
			o->dying = 1;
			agent_rma_drop_ops(a, o, RMAD_ERR_PROC_FAILED);
			for (uint32_t s = 0; s < o->nslots; s++)
				for (struct rma_target *t = o->slots[s]; t;
				     t = t->next)
					t->want_unlock = 1;
			while (o->nevicted) {
				struct rma_target *t =
					oplist_target_new(a, o,
						   o->evicted[o->nevicted - 1],
						   RMA_LOCK_GRANTED);
				if (!t)
					break;	/* later, as elements free */
				o->nevicted--;
				t->want_unlock = 1;
			}
			if (o->state == RMA_LOCK_ALL_GRANTED &&
			    !o->nocheck_all) {
				o->la_unlock = 1;
				o->la_next = 0;
			}
			o->state = RMA_NONE;
			R->retry_pending = 1;
			make_rma_progress_win(a, o);
		}
	}
}

/*
 * The op table's entries that may hold ops of o: those of its client's
 * elements.  Element i is client i / per_client's, and a client's ring
 * brings only elements it owns (completion_op_take), so a scan for o's
 * ops looks at per_client entries, not at every client's: a window freed
 * with the default pools scanned 49 MB per origin, tens of milliseconds
 * under SCHED_FIFO in which no rank of the core ran.
 */
static void sh_range(struct agent *a, const struct rma_origin *o,
		     uint32_t *lo, uint32_t *hi)
{
	uint64_t per = a->lay.per_client, b = (uint64_t)o->client * per;
	uint32_t n = a->rma->nsh;

	*lo = b < n ? (uint32_t)b : n;
	*hi = b + per < n ? (uint32_t)(b + per) : n;
}

void agent_rma_win_gone(struct agent *a, struct agent_win *w)
{
	struct rma_ctx *R = a->rma;

	while (w->origins) {
		struct rma_origin *o = w->origins;
		uint32_t lo, hi;

		agent_rma_drop_ops(a, o, RMAD_ERR_ARG);
		/* ops still waiting for answers end now; the answers find
		 * no serial and are dropped */
		sh_range(a, o, &lo, &hi);
		for (uint32_t i = lo; i < hi; i++)
			if (R->sh[i].serial && R->sh[i].o == o) {
				R->sh[i].status = RMAD_ERR_ARG;
				oplist_op_finish(a, o, i);
			}
		oplist_origin_free(a, o);
	}
	for (int32_t k = 0; k < w->nhere; k++)
		target_lock_free(&w->local[k]);
}

/*
 * Client c waits for op elements that none can lend: the ops our
 * optimizations hold back (single short op, piggyback_threshold) go out
 * now, so that their elements come home (the seeds' "temporarily
 * disable optimizations to reclaim resources").
 */
void agent_rma_unhold(struct agent *a, uint32_t c)
{
	for (struct agent_win *w = a->rma->owins; w; w = w->onext)
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			nx = o->next;
			if (o->client != c || o->no_hold || !o->nheld)
				continue;
			o->no_hold = 1;
			make_rma_progress_win(a, o);
		}
}

void agent_rma_win_stats(struct agent_win *w, uint32_t c, uint32_t gen,
			 struct rmad_stats *out)
{
	struct rma_origin *o = oplist_origin_find(w, c, gen);

	if (o)
		/* the process-counted fields are never set in o->st */
		*out = o->st;
	out->fence_pkts_sent = w->fence_sent;
	out->fence_pkts_recv = w->fence_recv;
	out->pscw_pkts_sent = w->pscw_sent;
	out->pscw_pkts_recv = w->pscw_recv;
}

/* The RMA packet types: the job and the ranks checked (a node speaks
 * only for its own ranks: no node of the mesh locks, writes or answers
 * in the name of another's), then handled. */
/* Drop every op an origin still holds: its client or window is gone. */
void agent_rma_drop_ops(struct agent *a, struct rma_origin *o, int st)
{
	struct rma_ctx *R = a->rma;

	while (o->shead != RMAD_NIL) {
		uint32_t i = oplist_pop(R, &o->shead, &o->stail);

		R->sh[i].status = st;
		oplist_op_finish(a, o, i);
	}
	while (o->yhead != RMAD_NIL) {
		uint32_t i = oplist_pop(R, &o->yhead, &o->ytail);

		R->sh[i].status = st;
		oplist_op_finish(a, o, i);
	}
	for (uint32_t s = 0; s < o->nslots; s++)
		for (struct rma_target *t = o->slots[s]; t; t = t->next)
			while (t->head != RMAD_NIL) {
				uint32_t i = oplist_tpop(o, t);

				if (R->sh[i].sent) {
					/* partly sent: its answers still
					 * come; stop sending the rest */
					R->sh[i].len = R->sh[i].sent;
					continue;
				}
				R->sh[i].status = st;
				oplist_op_finish(a, o, i);
			}
}

/*
 * Node is dead (am's heartbeats), or with rank >= 0 only that rank of
 * it (its process died, jobs.c): everything o waits for there ends now
 * with RMAD_ERR_PROC_FAILED — ops not sent, ops sent and unanswered
 * (fi_write/fi_read chunks still out end by themselves: rma_progress_xfer_done finds
 * their op gone), lock requests, the element of each of its ranks,
 * granted locks without an element, and lock_all requests — and the
 * epoch's next synchronization reports it (sync_dead: each sync that
 * covers the rank).  Answers that come later find no serial and are
 * dropped (am drops the dead node's packets anyway; a live node's
 * refusals for its dead rank, rma_pkt.c).
 */
static void origin_dead(struct agent *a, struct rma_origin *o, int node,
			int32_t rank)
{
	struct rma_ctx *R = o->R;
	int hit = 0;

	if (rank >= 0 && agent_win_target(o->w, rank, &(uint64_t){ 0 },
					  &(int32_t){ 0 }))
		return;		/* not a member of o's window */
	for (uint32_t s = 0; s < o->nslots; s++) {
		struct rma_target *t = o->slots[s], *n;

		for (; t; t = n) {
			n = t->next;
			if (t->node != node || (rank >= 0 && t->rank != rank))
				continue;
			while (t->head != RMAD_NIL) {
				uint32_t i = oplist_tpop(o, t);

				R->sh[i].status = RMAD_ERR_PROC_FAILED;
				oplist_op_finish(a, o, i);
			}
			uint32_t lo, hi;

			sh_range(a, o, &lo, &hi);
			for (uint32_t i = lo; i < hi; i++) {
				struct rma_op *op = &R->sh[i];

				/* issued ones only: the stalled and sync
				 * lists hold ops of o too, linked there */
				if (!op->serial || op->o != o ||
				    op->target != t->rank ||
				    !rmad_op_desc(op->opcode)->rma ||
				    !(op->counted || op->sent || op->nx))
					continue;
				origin_uncount_issued(t, op);
				op->status = RMAD_ERR_PROC_FAILED;
				oplist_op_finish(a, o, i);
			}
			oplist_target_free(o, t);
			hit = 1;
		}
	}
	for (int k = 0; k < o->nevicted;) {
		if (agent_job_rank_node(o->w->job, o->evicted[k]) != node ||
		    (rank >= 0 && o->evicted[k] != rank)) {
			k++;
			continue;
		}
		o->evicted[k] = o->evicted[--o->nevicted];
		hit = 1;
	}
	/* a live node answers its lock_all requests, even for a dead rank */
	if (rank < 0 && o->la_node[node]) {
		o->la_inflight -= (int)o->la_node[node];
		if (o->la_inflight < 0)
			o->la_inflight = 0;
		o->la_node[node] = 0;
		hit = 1;
	}
	if (o->state == RMA_LOCK_ALL_GRANTED || o->state == RMA_LOCK_ALL_ISSUED)
		hit = 1;	/* members there were locked, or asked */
	if (hit)
		oplist_set_err(o, RMAD_ERR_PROC_FAILED);
	make_rma_progress_win(a, o);
}

/*
 * Node is dead: the locks and lock requests its origins had on this
 * node's windows go, and every op and lock of our origins that waits on
 * it ends with RMAD_ERR_PROC_FAILED.
 */
static void rma_node_dead(struct agent *a, int node)
{
	for (struct agent_win *w = agent_win_first(a); w; w = w->next) {
		for (int32_t k = 0; k < w->nhere; k++)
			target_lock_drop_node(a, &w->local[k], (uint32_t)node);
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			nx = o->next;
			origin_dead(a, o, node, -1);
		}
	}
	ty_node_dead(a, node);
	pull_node_dead(a, node);
	a->rma->retry_pending = 1;
	completion_flush_wakeups(a);
}

/*
 * Rank of job j died (jobs.c): if it was here, its windows' peers and
 * transfers are refused (agent_win_member_dead); every origin's ops and
 * locks on it end with RMAD_ERR_PROC_FAILED.
 */
static void rma_rank_dead(struct agent *a, struct agent_job *j, int32_t rank)
{
	int node = agent_job_rank_node(j, rank);

	if (node < 0)
		return;
	for (struct agent_win *w = agent_win_first(a); w; w = w->next) {
		struct win_local *l;

		if (w->job != j)
			continue;
		l = node == a->node ? agent_win_local(w, rank) : NULL;
		if (l)
			agent_win_member_dead(a, w, l);
		for (struct rma_origin *o = w->origins, *nx; o; o = nx) {
			nx = o->next;
			if (o->rank != rank)
				origin_dead(a, o, node, rank);
		}
	}
	a->rma->retry_pending = 1;
	completion_flush_wakeups(a);
}

/* A post notice came in (or w's job failed): the origins waiting for
 * one look again, in the loop's next pass. */
static void rma_post_came(struct agent *a, struct agent_win *w)
{
	(void)w;
	a->rma->retry_pending = 1;
}

int agent_rma_init(struct agent *a)
{
	uint32_t nt = (uint32_t)a->p.target_pool;
	uint32_t nl = (uint32_t)a->p.lock_queue;
	struct rma_ctx *R;

	rma_pkt_init(a);
	ty_init(a);
	am_on_node_dead(a, rma_node_dead);
	a->job_hooks.rank_dead = rma_rank_dead;
	a->win_hooks.gone = agent_rma_win_gone;
	a->win_hooks.fence = rma_win_fence_done;
	a->win_hooks.post = rma_post_came;
	R = a->rma = calloc(1, sizeof(*R));
	if (!R)
		return RMAD_ERR_NOMEM;

	R->nsh = rmad_shm_nops(&a->lay);
	rma_progress_init(a);
	/* without send-after-send order every op must be answered */
	R->ordered = rmad_fabric_ordered(a->fab) && a->p.am_ordering;
	R->sh = calloc(R->nsh, sizeof(*R->sh));
	R->tmem = calloc(nt, sizeof(*R->tmem));
	R->lmem = calloc(nl, sizeof(*R->lmem));
	if (!R->sh || !R->tmem || !R->lmem)
		return RMAD_ERR_NOMEM;
	for (uint32_t k = 0; k < nt; k++) {
		R->tmem[k].next = R->tfree;
		R->tfree = &R->tmem[k];
	}
	for (uint32_t k = 0; k < nl; k++) {
		R->lmem[k].next = R->lfree;
		R->lfree = &R->lmem[k];
	}
	return 0;
}

void agent_rma_fini(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	if (!R)
		return;
	rmad_fabric_mr_close(R->bounce_mr);
	if (R->bounce)
		munmap(R->bounce, R->bounce_len);
	R->bounce = NULL;
	R->bounce_mr = NULL;
	R->bounce_desc = NULL;
	R->xfree = NULL;
	pull_fini(a);
	ty_fini(a);
	free(R->sh);
	free(R->tmem);
	free(R->lmem);
	R->sh = NULL;
	R->tmem = NULL;
	R->lmem = NULL;
	free(R);
	a->rma = NULL;
}

int agent_rma_waiting(struct agent *a)
{
	return pull_waiting(a) || (a->rma && a->rma->ngpend);
}

void agent_rma_retry(struct agent *a)
{
	pull_retry(a);
}

int agent_rma_transfers(struct agent *a)
{
	struct rma_ctx *R = a->rma;
	int nfree = 0;

	if (pull_busy(a))
		return 1;	/* our reads of other nodes' chunks */
	if (!R || !R->bounce)
		return 0;
	for (struct rma_xfer *x = R->xfree; x; x = x->next)
		nfree++;
	/* pulled chunks need no polling here: the target's read wakes us */
	return nfree + (int)R->npull_slots < XFER_MAX;
}
