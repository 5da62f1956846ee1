/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c - one-sided operations and passive-target synchronization.
 *
 * Two paths, chosen per target:
 *
 *  - Same node: the target's window is mapped here, so the operation is
 *    a memcpy (put, get) or CPU atomics (the accumulate family, through
 *    rmad_acc_apply, the same code the agent applies remote accumulates
 *    with); a created window's is reached across processes (peer.c).  Locks are atomics on the lock word in the target's control
 *    page: shared holders count in its low bits, an exclusive holder
 *    writes its client slot there.  A waiter spins for client_spin_us,
 *    then sleeps on the word (futex).  The agent takes the same word for
 *    remote origins; a releaser that sees RMAD_LW_QUEUED kicks it.
 *
 *  - Other node: an op element goes to the agent's ring and the call
 *    returns.  The agent's operation table takes the lock lazily, sends
 *    the data, and counts the answers; flush and unlock are sync
 *    elements the agent completes when their conditions hold.
 *
 * State kept per window is O(locks held), never O(ranks): the same-node
 * peers (O(local ranks)) and the list of locked remote targets.  As in
 * MPI, one thread at a time may change a window's epoch (lock, unlock,
 * lock_all, unlock_all); operations may come from any thread.
 *
 * For rmad_win_stats (win.c) each window counts the operations that
 * returned 0, where they went (in place or to the agent), the calls to
 * the synchronization functions, and the time they spent waiting: for a
 * held same-node lock, or for the agent's answer.  A call that waits
 * for nothing (a same-node flush) reads no clock: on that path a clock
 * read would cost more than the call.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "counter.h"
#include "dtype.h"
#include "lockword.h"
#include "internal.h"
#include "log.h"
#include "rmad_opdesc.h"
#include "util.h"

#define MODE_ALL (RMAD_MODE_NOCHECK | RMAD_MODE_NOSTORE | RMAD_MODE_NOPUT | \
		  RMAD_MODE_NOPRECEDE | RMAD_MODE_NOSUCCEED)
#define LOCKED_NOCHECK	3		/* win_peer.locked: no word taken */

/* target RMAD_PROC_NULL: nothing to do, on a live window */
static int proc_null_w(rmad_win_t win)
{
	return rmad_win_ok(win) ? 0 : RMAD_ERR_ARG;
}

static int proc_null(rmad_win_t handle)
{
	return proc_null_w(rmad_win_get(handle));
}

static uint32_t dtype_id(rmad_datatype_t t)
{
	return t >= 1 && t <= RMAD_DTYPE_MAX ? (uint32_t)t : 0;
}

/* remote_flushed = max(remote_flushed, posted), against other threads */
static void flushed_upto(rmad_win_t win, uint64_t posted)
{
	uint64_t f = __atomic_load_n(&win->remote_flushed, __ATOMIC_RELAXED);

	while (f < posted &&
	       !__atomic_compare_exchange_n(&win->remote_flushed, &f, posted,
					    0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

/* Everything posted so far is complete (an epoch's end, a fence). */
void flushed_upto_all(rmad_win_t win)
{
	flushed_upto(win, __atomic_load_n(&win->remote_posted,
					  __ATOMIC_ACQUIRE));
}

/* --------------------------------------------------- remote lock list */

static int rlock_find(struct rmad_win_s *w, int rank)
{
	for (int i = 0; i < w->nrlocks; i++)
		if (w->rlocks[i] == rank)
			return i;
	return -1;
}

static int rlock_add(struct rmad_win_s *w, int rank)
{
	if (w->nrlocks == w->caprlocks) {
		int cap = w->caprlocks ? 2 * w->caprlocks : 8;
		int32_t *p = realloc(w->rlocks, sizeof(*p) * (size_t)cap);

		if (!p)
			return RMAD_ERR_NOMEM;
		w->rlocks = p;
		w->caprlocks = cap;
	}
	w->rlocks[w->nrlocks++] = rank;
	return 0;
}

/* ------------------------------------------------- same-node lock word */

static int lw_acquire(struct rmad_client *c, rmad_win_t w,
		      struct win_peer *p, int excl)
{
	uint32_t *lw = &p->ctl->lock;
	uint32_t me = c->slot + 1;
	uint64_t t0 = 0;

	for (;;) {
		uint32_t v = load_acquire(lw);
		int got;

		if (!excl)	/* so the agent can undo it if we die */
			__atomic_store_n(&p->ctl->shared_by[c->slot],
					 RMAD_SB_INTENT, __ATOMIC_SEQ_CST);
		got = rmad_lw_try(lw, excl, me);
		if (!excl)
			store_relaxed(&p->ctl->shared_by[c->slot],
				      got ? RMAD_SB_HELD : RMAD_SB_NONE);
		if (got) {
			if (t0)
				rmad_win_count(&w->st_sync_wait_ns,
					       rmad_now_ns() - t0);
			return 0;
		}
		/* held: spin a while, then sleep on the word; a target that
		 * died meanwhile fails the wait (the agent may hold its word
		 * for origins elsewhere that will never unlock it) */
		if (rmad_peer_dead(p))
			return RMAD_ERR_PROC_FAILED;
		if (!t0)
			t0 = rmad_now_ns();
		if (rmad_now_ns() - t0 < (uint64_t)rmad_spin_us(c) * 1000) {
			caa_cpu_relax();
			continue;
		}
		if (!(v & RMAD_LW_SLEEPERS) &&
		    !__atomic_compare_exchange_n(lw, &v, v | RMAD_LW_SLEEPERS,
						 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		rmad_futex_wait(lw, v | RMAD_LW_SLEEPERS, 50 * 1000000L);
		if (rmad_agent_gone(c))
			return RMAD_ERR_AGENT;
	}
}

static void lw_release(struct rmad_client *c, struct win_peer *p, int excl)
{
	uint32_t *lw = &p->ctl->lock;
	uint32_t v;

	if (!excl)
		__atomic_store_n(&p->ctl->shared_by[c->slot],
				 RMAD_SB_RELEASING, __ATOMIC_SEQ_CST);
	v = rmad_lw_release(lw, excl);
	if (!excl)
		store_release(&p->ctl->shared_by[c->slot], RMAD_SB_NONE);
	if (v & RMAD_LW_SLEEPERS)
		rmad_futex_wake(lw, INT_MAX);
	if (v & RMAD_LW_QUEUED)
		rmad_win_kick(c);	/* remote requests wait on the agent */
}

/* ------------------------------------------------------- checking */

struct tref {
	struct win_peer *p;		/* same node, or NULL */
	uint64_t off;			/* bytes into the target's window */
	size_t len, es;
	uint32_t dt;
	int du;				/* the target's disp_unit (1 when
					 * tbytes) */
	int tbytes;			/* tdisp is in bytes: a piece of a
					 * derived type (RMAD_OPF_TBYTES) */
};

static int covered(struct rmad_win_s *w, int rank, struct win_peer *p)
{
	if (w->epoch == EPOCH_LOCK_ALL || w->epoch == EPOCH_FENCE)
		return 1;
	if (w->epoch == EPOCH_PSCW)	/* a target of the start's group */
		return rmad_pscw_covers(w, rank);
	if (w->epoch != EPOCH_LOCK)
		return 0;
	return p ? p->locked != 0 : rlock_find(w, rank) >= 0;
}

/* Two predefined types' signatures differ: n elements of a against m of
 * b.  Empty ones match whatever their types (MPI-3.1 11.3: zero-count
 * operations with any types are no-ops). */
static inline int sig_differs(int n, rmad_datatype_t a, int m,
			      rmad_datatype_t b)
{
	return (n || m) && (n != m || a != b);
}

/* Everything the target side will check, checked here first. */
static int check(rmad_win_t w, int target, size_t tdisp, int count,
		 rmad_datatype_t type, struct tref *r)
{
	struct rmad_client *c = &rmad_cl;
	uint64_t size;
	int du, err;

	if (!rmad_win_ok(w) || count < 0)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	r->tbytes = 0;
	r->dt = dtype_id(type);
	if (!r->dt)
		return RMAD_ERR_TYPE;
	if (target < 0 || target >= c->b.size)
		return RMAD_ERR_RANK;
	err = rmad_win_target(w, target, &r->p, &size, &du);
	if (err)
		return err;
	if (r->p && rmad_peer_dead(r->p))
		return RMAD_ERR_PROC_FAILED;
	if (!covered(w, target, r->p))
		return RMAD_ERR_SYNC;
	r->es = rmad_dtype_size(r->dt);
	r->len = (size_t)count * r->es;
	/* tdisp * du within the span, without a division (a 64-bit divide
	 * was a third of this function's time) */
	if (__builtin_mul_overflow((uint64_t)tdisp, (uint64_t)du, &r->off) ||
	    r->off > (w->flavor == RMAD_WIN_FLAVOR_DYNAMIC ? RMAD_DYN_SPAN :
		      1ull << 40))
		return RMAD_ERR_DISP;
	r->du = du;
	if (r->off > size || r->len > size - r->off)
		return RMAD_ERR_DISP;
	if (!r->p && c->dead)
		return RMAD_ERR_AGENT;
	return 0;
}

/* check, and a request op only in a passive-target epoch (MPI-3.1
 * 11.3.5: rput and its kin outside one are erroneous) */
static int check_req(rmad_win_t w, int target, size_t tdisp, int count,
		     rmad_datatype_t type, const struct rmad_request_s *rq,
		     struct tref *r)
{
	int err = check(w, target, tdisp, count, type, r);

	if (err)
		return err;
	if (rq && w->epoch != EPOCH_LOCK && w->epoch != EPOCH_LOCK_ALL)
		return RMAD_ERR_SYNC;
	return 0;
}

/*
 * Count a data operation that returned 0 for rmad_win_stats: in kind
 * (ops_local, ops_remote) too unless it moved nothing (count 0).
 */
static int counted(rmad_win_t w, uint64_t *kind)
{
	if (w->epoch == EPOCH_FENCE &&
	    !__atomic_load_n(&w->fence_moved, __ATOMIC_RELAXED))
		__atomic_store_n(&w->fence_moved, 1, __ATOMIC_RELAXED);
	rmad_win_count(&w->st_ops_posted, 1);
	if (kind)
		rmad_win_count(kind, 1);
	return 0;
}

/*
 * The agent cannot reach our memory (rmad_stage_probe): the op goes
 * through the staging area in pieces that fit it, each waited for.  A
 * piece is a whole number of elements and of the target's disp_unit, so
 * that each starts at a displacement of its own.
 */
static int post_staged(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
		       const struct tref *r, uint32_t op, const void *origin,
		       const void *cmp, void *result)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem t = { 0 };
	uint64_t area = c->hdr->staging_size, unit, piece, done = 0;
	int in = origin && rmad_op_data_in(opc, op);
	int out = rmad_op_desc(opc)->result;	/* (cas returns below) */
	int err = 0;

	t.opcode = opc;
	t.win = w->block;
	t.ticket = w->key;
	t.target = target;
	t.dtype = r->dt;
	t.op = op;
	if (r->tbytes)
		t.flags = RMAD_OPF_TBYTES;
	if (opc == RMAD_OPC_CAS) {
		t.count = 1;
		t.tdisp = tdisp;
		memcpy(t.data, origin, r->es);
		memcpy(t.data + r->es, cmp, r->es);
		t.inline_len = (uint32_t)(2 * r->es);
		t.flags |= RMAD_OPF_INLINE;
		t.result_addr = 0;
		return rmad_staged_op(c, w, &t, NULL, 0, result, r->es, 0);
	}
	unit = r->es * (uint64_t)r->du;
	/* data in at 0; a get_accumulate's result behind it */
	piece = (in && out ? area / 2 : area) / unit * unit;
	if (!piece)
		return RMAD_ERR_NOMEM;	/* staging_size below one unit */
	while (!err && done < r->len) {
		uint64_t n = r->len - done < piece ? r->len - done : piece;

		t.count = n / r->es;
		t.tdisp = tdisp + done / (uint64_t)r->du;
		t.origin_off = 0;
		t.result_addr = in && out ? piece : 0;
		err = rmad_staged_op(c, w, &t,
				     in ? (const uint8_t *)origin + done : NULL,
				     in ? n : 0,
				     out ? (uint8_t *)(opc == RMAD_OPC_GET ?
						       (void *)origin :
						       result) + done : NULL,
				     out ? n : 0, in && out ? piece : 0);
		done += n;
	}
	return err;
}

/* Does this op make the agent touch our memory where it cannot? */
static int needs_staging(uint16_t opc, const struct tref *r, uint32_t op,
			 const void *origin, const void *result)
{
	/* a cas's two values always travel inline */
	int in = origin && opc != RMAD_OPC_CAS && r->len > RMAD_OP_INLINE &&
		 rmad_op_data_in(opc, op);

	if (rmad_op_desc(opc)->result_in_origin)
		return !rmad_mem_shared(origin, r->len);
	if (in && !rmad_mem_shared(origin, r->len))
		return 1;
	if (rmad_op_result_buf(opc))
		return !rmad_mem_shared(result,
					opc == RMAD_OPC_CAS ? r->es : r->len);
	return 0;
}

/* Hand an operation on a target of another node to the agent. */
static int post(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
		int count, const struct tref *r, uint32_t op,
		const void *origin, const void *cmp, void *result,
		struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	uint32_t idx;
	int err;

	if (c->staged && r && needs_staging(opc, r, op, origin, result)) {
		err = post_staged(w, opc, target, tdisp, r, op, origin, cmp,
				  result);
		if (err)
			return err;
		__atomic_add_fetch(&w->remote_posted, 1, __ATOMIC_RELAXED);
		return counted(w, &w->st_ops_remote);
	}
	if (rq) {
		/* room for one more request element first */
		err = rmad_req_room(c);
		if (err)
			return err;
	}
	err = rmad_op_alloc(c, w, &idx);

	if (err)
		return err;
	/* the header from zero (flags, status, inline_len 0); the inline
	 * area only where the data goes in it */
	e = rmad_op_fill(c, idx, NULL, RMAD_OPFILL_HEAD);
	e->opcode = opc;
	e->win = w->block;
	e->target = target;
	e->dtype = r ? r->dt : 0;
	e->op = op;
	e->count = (uint64_t)count;
	e->tdisp = tdisp;
	e->origin_off = (uint64_t)(uintptr_t)origin;
	e->ticket = w->key;
	if (r && r->tbytes)
		e->flags |= RMAD_OPF_TBYTES;
	e->result_addr = (uint64_t)(uintptr_t)result;
	if (opc == RMAD_OPC_CAS) {
		memcpy(e->data, origin, r->es);
		memcpy(e->data + r->es, cmp, r->es);
		e->inline_len = (uint32_t)(2 * r->es);
		e->flags |= RMAD_OPF_INLINE;
	} else if (origin && r && r->len <= RMAD_OP_INLINE &&
		   opc != RMAD_OPC_GET) {
		/* small: copied now, so the buffer is free at once */
		memcpy(e->data, origin, r->len);
		e->inline_len = (uint32_t)r->len;
		e->flags |= RMAD_OPF_INLINE;
	}
	if (rq) {
		/* kept for the request: the agent writes its status there */
		e->flags |= RMAD_OPF_KEEP;
		e->status = RMAD_REQ_PENDING;
	}
	err = rmad_op_submit(c, idx);
	if (err) {
		rmad_op_free(c, idx);
		return err;
	}
	if (rq)
		rmad_req_track(c, rq, idx);
	if (r)
		__atomic_add_fetch(&w->remote_posted, 1, __ATOMIC_RELAXED);
	return counted(w, &w->st_ops_remote);
}

/* For rma_derived.c: a contiguous piece of a derived-type op for the
 * agent, its target offset in bytes. */
int rmad_post_piece(rmad_win_t w, uint16_t opc, int target, uint64_t toff,
		    uint32_t dt, uint64_t len, uint32_t op, const void *origin,
		    void *result)
{
	struct tref r = { 0 };

	r.dt = dt;
	r.es = rmad_dtype_size(dt);
	r.len = len;
	r.off = toff;
	r.du = 1;
	r.tbytes = 1;
	return post(w, opc, target, toff, (int)(len / r.es), &r, op, origin,
		    NULL, result, NULL);
}

static int elem_new(rmad_win_t w, uint16_t opc, int target, uint32_t *idx,
		    struct rmad_op_elem **out);

int rmad_post_typed(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
		    int tcount, uint32_t op, const void *origin, void *result,
		    const uint8_t *blob, size_t blob_len,
		    struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_request_s *own = NULL;
	struct rmad_op_ttype d = { (uint64_t)(uintptr_t)blob,
				   (uint32_t)blob_len, 0 };
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = c->dead ? RMAD_ERR_AGENT : rmad_req_room(c);

	if (err)
		return err;
	if (!rq) {
		rq = own = rmad_req_internal();
		if (!rq)
			return RMAD_ERR_NOMEM;
	}
	err = elem_new(w, opc, target, &idx, &e);
	if (err) {
		free(own);
		return err;
	}
	e->flags = RMAD_OPF_KEEP | RMAD_OPF_TTYPE;
	e->op = op;
	e->count = (uint64_t)tcount;
	e->tdisp = tdisp;
	/* a get's data lands where its origin would be */
	e->origin_off = (uint64_t)(uintptr_t)(opc == RMAD_OPC_GET ? result :
					       origin);
	e->result_addr = (uint64_t)(uintptr_t)result;
	memcpy(e->data, &d, sizeof(d));
	e->status = RMAD_REQ_PENDING;
	err = rmad_op_submit(c, idx);
	if (err) {
		rmad_op_free(c, idx);
		free(own);
		return err;
	}
	rmad_req_track(c, rq, idx);
	__atomic_add_fetch(&w->remote_posted, 1, __ATOMIC_RELAXED);
	return own ? rmad_req_wait_internal(own) : 0;
}

/*
 * A cleared element of ours for a synchronization op opc of window w to
 * target (the caller sets the rest, then submits it).
 */
static int elem_new(rmad_win_t w, uint16_t opc, int target, uint32_t *idx,
		    struct rmad_op_elem **out)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	int err = rmad_op_alloc(c, w, idx);

	if (err)
		return err;
	e = rmad_op_fill(c, *idx, NULL, RMAD_OPFILL_WHOLE);
	e->opcode = opc;
	e->win = w->block;
	e->ticket = w->key;
	e->target = target;
	*out = e;
	return 0;
}

/*
 * For rma_derived.c: the completion of a request whose op went to the
 * agent as many pieces.  A flush_local of the target, posted without
 * waiting, completes once every piece before it is complete at the
 * origin; the request keeps its element, as it keeps a data op's, and
 * rmad_wait and rmad_test reap it like any other.
 */
int rmad_post_marker(rmad_win_t w, int target, struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = c->dead ? RMAD_ERR_AGENT : rmad_req_room(c);

	if (!err)
		err = elem_new(w, RMAD_OPC_FLUSH_LOCAL, target, &idx, &e);
	if (err)
		return err;
	e->flags = RMAD_OPF_KEEP;
	e->status = RMAD_REQ_PENDING;
	err = rmad_op_submit(c, idx);
	if (err) {
		rmad_op_free(c, idx);
		return err;
	}
	rmad_req_track(c, rq, idx);
	return 0;
}

int rmad_covered(rmad_win_t w, int rank, struct win_peer *p)
{
	return covered(w, rank, p);
}

int rmad_counted(rmad_win_t w, int local)
{
	return counted(w, local < 0 ? NULL : local ? &w->st_ops_local :
						     &w->st_ops_remote);
}

/* ------------------------------------------------- communication */

int rmad_put_req(const void *origin, int ocount, rmad_datatype_t otype,
		 int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
		 rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return proc_null_w(win);
	if (!dtype_id(otype) || !dtype_id(ttype))
		return rmad_derived_op(win, RMAD_OPC_PUT, origin, ocount, otype,
				       NULL, 0, 0, target, tdisp, tcount,
				       ttype, 0, rq);
	err = check_req(win, target, tdisp, tcount, ttype, rq, &r);
	if (err)
		return err;
	if (sig_differs(ocount, otype, tcount, ttype))
		return RMAD_ERR_TYPE;
	if (!tcount)
		return counted(win, NULL);
	if (!origin)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_put(r.p, r.off, origin, r.len);
		return err ? err : counted(win, &win->st_ops_local);
	}
	return post(win, RMAD_OPC_PUT, target, tdisp, tcount, &r, 0, origin,
		    NULL, NULL, rq);
}

int rmad_get_req(void *origin, int ocount, rmad_datatype_t otype, int target,
		 size_t tdisp, int tcount, rmad_datatype_t ttype,
		 rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return proc_null_w(win);
	if (!dtype_id(otype) || !dtype_id(ttype))
		return rmad_derived_op(win, RMAD_OPC_GET, NULL, 0, 0, origin,
				       ocount, otype, target, tdisp, tcount,
				       ttype, 0, rq);
	err = check_req(win, target, tdisp, tcount, ttype, rq, &r);
	if (err)
		return err;
	if (sig_differs(ocount, otype, tcount, ttype))
		return RMAD_ERR_TYPE;
	if (!tcount)
		return counted(win, NULL);
	if (!origin)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_get(r.p, r.off, origin, r.len);
		return err ? err : counted(win, &win->st_ops_local);
	}
	return post(win, RMAD_OPC_GET, target, tdisp, tcount, &r, 0, origin,
		    NULL, NULL, rq);
}

int rmad_accumulate_req(const void *origin, int ocount,
			rmad_datatype_t otype, int target, size_t tdisp,
			int tcount, rmad_datatype_t ttype, rmad_op_t op,
			rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return proc_null_w(win);
	if ((!dtype_id(otype) || !dtype_id(ttype)) && op != RMAD_NO_OP &&
	    op > 0)
		return rmad_derived_op(win, RMAD_OPC_ACC, origin, ocount, otype,
				       NULL, 0, 0, target, tdisp, tcount,
				       ttype, (uint32_t)op, rq);
	err = check_req(win, target, tdisp, tcount, ttype, rq, &r);
	if (err)
		return err;
	if (sig_differs(ocount, otype, tcount, ttype))
		return RMAD_ERR_TYPE;
	if (op == RMAD_NO_OP || op < 0)
		return RMAD_ERR_OP;
	err = rmad_op_check(r.dt, (uint32_t)op);
	if (err)
		return err;
	if (!tcount)
		return counted(win, NULL);
	if (!origin)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_acc(r.p, r.off, origin, NULL, r.dt,
				    (uint32_t)op, (uint64_t)tcount);
		return err ? err : counted(win, &win->st_ops_local);
	}
	return post(win, RMAD_OPC_ACC, target, tdisp, tcount, &r,
		    (uint32_t)op, origin, NULL, NULL, rq);
}

int rmad_get_accumulate_req(const void *origin, int ocount,
			    rmad_datatype_t otype, void *result, int rcount,
			    rmad_datatype_t rtype, int target, size_t tdisp,
			    int tcount, rmad_datatype_t ttype, rmad_op_t op,
			    rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return proc_null_w(win);
	if ((!dtype_id(rtype) || !dtype_id(ttype) ||
	     (op != RMAD_NO_OP && !dtype_id(otype))) && op >= 0)
		return rmad_derived_op(win, RMAD_OPC_GACC,
				       op == RMAD_NO_OP ? NULL : origin,
				       ocount, otype, result, rcount, rtype,
				       target, tdisp, tcount, ttype,
				       (uint32_t)op, rq);
	err = check_req(win, target, tdisp, tcount, ttype, rq, &r);
	if (err)
		return err;
	if (sig_differs(rcount, rtype, tcount, ttype) ||
	    (op != RMAD_NO_OP && sig_differs(ocount, otype, tcount, ttype)))
		return RMAD_ERR_TYPE;
	if (op < 0)
		return RMAD_ERR_OP;
	err = rmad_op_check(r.dt, (uint32_t)op);
	if (err)
		return err;
	if (!tcount)
		return counted(win, NULL);
	if (!result || (op != RMAD_NO_OP && !origin))
		return RMAD_ERR_ARG;
	if (op == RMAD_NO_OP)
		origin = NULL;
	if (r.p) {
		err = rmad_peer_acc(r.p, r.off, origin, result, r.dt,
				    (uint32_t)op, (uint64_t)tcount);
		return err ? err : counted(win, &win->st_ops_local);
	}
	return post(win, RMAD_OPC_GACC, target, tdisp, tcount, &r,
		    (uint32_t)op, origin, NULL, result, rq);
}

int rmad_put(const void *origin, int ocount, rmad_datatype_t otype,
	     int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
	     rmad_win_t win)
{
	return rmad_put_req(origin, ocount, otype, target, tdisp, tcount,
			    ttype, rmad_win_get(win), NULL);
}

int rmad_get(void *origin, int ocount, rmad_datatype_t otype, int target,
	     size_t tdisp, int tcount, rmad_datatype_t ttype, rmad_win_t win)
{
	return rmad_get_req(origin, ocount, otype, target, tdisp, tcount,
			    ttype, rmad_win_get(win), NULL);
}

int rmad_accumulate(const void *origin, int ocount, rmad_datatype_t otype,
		    int target, size_t tdisp, int tcount,
		    rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win)
{
	return rmad_accumulate_req(origin, ocount, otype, target, tdisp,
				   tcount, ttype, op, rmad_win_get(win), NULL);
}

int rmad_get_accumulate(const void *origin, int ocount, rmad_datatype_t otype,
			void *result, int rcount, rmad_datatype_t rtype,
			int target, size_t tdisp, int tcount,
			rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win)
{
	return rmad_get_accumulate_req(origin, ocount, otype, result, rcount,
				       rtype, target, tdisp, tcount, ttype,
				       op, rmad_win_get(win), NULL);
}

int rmad_fetch_and_op(const void *origin, void *result, rmad_datatype_t type,
		      int target, size_t tdisp, rmad_op_t op, rmad_win_t win)
{
	return rmad_get_accumulate(origin, 1, type, result, 1, type, target,
				   tdisp, 1, type, op, win);
}

int rmad_compare_and_swap(const void *origin, const void *compare,
			  void *result, rmad_datatype_t type, int target,
			  size_t tdisp, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return proc_null(handle);
	err = check(win, target, tdisp, 1, type, &r);
	if (err)
		return err;
	if (rmad_cas_check(r.dt))
		return RMAD_ERR_TYPE;
	if (!origin || !compare || !result)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_cas(r.p, r.off, origin, compare, result,
				    r.dt);
		return err ? err : counted(win, &win->st_ops_local);
	}
	return post(win, RMAD_OPC_CAS, target, tdisp, 1, &r, 0, origin,
		    compare, result, NULL);
}

/* ------------------------------------------------- synchronization */

/* A sync element for the agent: wait for its answer. */
static int agent_sync(rmad_win_t w, uint16_t opc, int target)
{
	struct rmad_op_elem t = { 0 };
	uint64_t t0 = rmad_now_ns();
	int err;

	t.opcode = opc;
	t.win = w->block;
	t.ticket = w->key;
	t.target = target;
	err = rmad_sync_elem(&rmad_cl, w, &t);
	rmad_win_count(&w->st_sync_wait_ns, rmad_now_ns() - t0);
	return err;
}

static int epoch_args(rmad_win_t win)
{
	if (!rmad_win_ok(win))
		return RMAD_ERR_ARG;
	if (!rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	return 0;
}

/*
 * A lock epoch after fences: allowed when no operation was issued since
 * the last fence, which then ends the fence sequence (as MPICH does);
 * otherwise that epoch is still open.
 */
int rmad_leave_fence(rmad_win_t w)
{
	if (w->epoch != EPOCH_FENCE)
		return 0;
	if (__atomic_load_n(&w->fence_moved, __ATOMIC_RELAXED))
		return RMAD_ERR_SYNC;
	w->epoch = EPOCH_NONE;
	return 0;
}

void rmad_lock_fields(rmad_win_t w, int type, int assert,
		      struct rmad_op_lock *l)
{
	l->type = (uint32_t)type;
	l->assert = (uint32_t)assert;
	l->target_pool = w->hints.target_pool > 0 ?
			 (uint32_t)w->hints.target_pool : 0;
	l->slots = w->hints.slots > 0 ? (uint32_t)w->hints.slots : 0;
	l->acc_ordering = RMAD_LOCKF_ORDER | (w->hints.acc_ordering & 0xffu);
}

/* The agent's share of a new epoch: pool sizes from the hints. */
static int post_lock(rmad_win_t w, uint16_t opc, int target, int type,
		     int assert)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = c->dead ? RMAD_ERR_AGENT :
			    elem_new(w, opc, target, &idx, &e);

	if (err)
		return err;
	rmad_lock_fields(w, type, assert, &e->lock);
	err = rmad_op_submit(c, idx);
	if (err)
		rmad_op_free(c, idx);
	return err;
}

static int win_lock(int lock_type, int target, int assert, rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	struct win_peer *p;
	uint64_t size;
	int du, err = epoch_args(win);

	if (err)
		return err;
	if ((lock_type != RMAD_LOCK_SHARED &&
	     lock_type != RMAD_LOCK_EXCLUSIVE) || (assert & ~MODE_ALL))
		return RMAD_ERR_ARG;
	if (target < 0 || target >= c->b.size)
		return RMAD_ERR_RANK;
	err = rmad_win_target(win, target, &p, &size, &du);
	if (err)
		return err;
	err = rmad_leave_fence(win);
	if (err)
		return err;
	if (win->epoch == EPOCH_LOCK_ALL || win->epoch == EPOCH_PSCW ||
	    win->exposed || (p && p->locked) ||
	    (!p && rlock_find(win, target) >= 0))
		return RMAD_ERR_SYNC;
	if (p && rmad_peer_dead(p))
		return RMAD_ERR_PROC_FAILED;
	if (p) {
		if (assert & RMAD_MODE_NOCHECK) {
			p->locked = LOCKED_NOCHECK;
		} else {
			/* locks are taken in call order: the remote ones
			 * called before this one first (rmad(7), "Lock
			 * order") */
			if (win->nrlocks) {
				err = agent_sync(win, RMAD_OPC_LOCK_WAIT, -1);
				if (err)
					return err;
			}
			err = lw_acquire(c, win, p,
					 lock_type == RMAD_LOCK_EXCLUSIVE);
			if (err)
				return err;
			p->locked = (uint8_t)lock_type;
		}
		win->nlocal_locks++;
	} else {
		err = rlock_add(win, target);
		if (!err) {
			err = post_lock(win, RMAD_OPC_LOCK, target, lock_type,
					assert);
			if (err)
				win->nrlocks--;
		}
		if (err)
			return err;
	}
	win->epoch = EPOCH_LOCK;
	return 0;
}

static int win_unlock(int target, rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	struct win_peer *p;
	uint64_t size;
	int du, k, err = epoch_args(win);

	if (err)
		return err;
	if (target < 0 || target >= c->b.size)
		return RMAD_ERR_RANK;
	err = rmad_win_target(win, target, &p, &size, &du);
	if (err)
		return err;
	if (win->epoch != EPOCH_LOCK)
		return RMAD_ERR_SYNC;
	if (p) {
		if (!p->locked)
			return RMAD_ERR_SYNC;
		if (p->locked != LOCKED_NOCHECK)
			lw_release(c, p, p->locked == RMAD_LOCK_EXCLUSIVE);
		else
			rmad_smp_mb();
		p->locked = 0;
		win->nlocal_locks--;
		/* it died in the epoch: what we did there may be lost */
		if (rmad_peer_dead(p))
			err = RMAD_ERR_PROC_FAILED;
	} else {
		k = rlock_find(win, target);
		if (k < 0)
			return RMAD_ERR_SYNC;
		err = agent_sync(win, RMAD_OPC_UNLOCK, target);
		/* the epoch ends even when an op in it failed */
		win->rlocks[k] = win->rlocks[--win->nrlocks];
	}
	if (!win->nlocal_locks && !win->nrlocks) {
		win->epoch = EPOCH_NONE;
		flushed_upto(win, __atomic_load_n(&win->remote_posted,
						  __ATOMIC_ACQUIRE));
	}
	return err;
}

static int win_lock_all(int assert, rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	int err = epoch_args(win);

	if (err)
		return err;
	if (assert & ~MODE_ALL)
		return RMAD_ERR_ARG;
	err = rmad_leave_fence(win);
	if (err)
		return err;
	if (win->epoch != EPOCH_NONE || win->exposed)
		return RMAD_ERR_SYNC;
	for (int i = 0; i < win->npeers; i++) {
		struct win_peer *p = &win->peers[i];

		if (assert & RMAD_MODE_NOCHECK) {
			p->locked = LOCKED_NOCHECK;
			continue;
		}
		err = lw_acquire(c, win, p, 0);
		if (err) {
			while (--i >= 0) {
				if (win->peers[i].locked == RMAD_LOCK_SHARED)
					lw_release(c, &win->peers[i], 0);
				win->peers[i].locked = 0;
			}
			return err;
		}
		p->locked = RMAD_LOCK_SHARED;
	}
	if (win->remote_members) {
		err = post_lock(win, RMAD_OPC_LOCK_ALL, -1, RMAD_LOCK_SHARED,
				assert);
		if (err) {
			for (int i = 0; i < win->npeers; i++) {
				if (win->peers[i].locked == RMAD_LOCK_SHARED)
					lw_release(c, &win->peers[i], 0);
				win->peers[i].locked = 0;
			}
			return err;
		}
	}
	win->epoch = EPOCH_LOCK_ALL;
	return 0;
}

static int win_unlock_all(rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	int err = epoch_args(win);

	if (err)
		return err;
	if (win->epoch != EPOCH_LOCK_ALL)
		return RMAD_ERR_SYNC;
	if (win->remote_members)
		err = agent_sync(win, RMAD_OPC_UNLOCK_ALL, -1);
	for (int i = 0; i < win->npeers; i++) {
		struct win_peer *p = &win->peers[i];

		if (p->locked == RMAD_LOCK_SHARED)
			lw_release(c, p, 0);
		p->locked = 0;
		if (!err && rmad_peer_dead(p))
			err = RMAD_ERR_PROC_FAILED;
	}
	rmad_smp_mb();
	win->epoch = EPOCH_NONE;
	flushed_upto(win, __atomic_load_n(&win->remote_posted,
					  __ATOMIC_ACQUIRE));
	return err;
}

static int flush(int target, rmad_win_t win, uint16_t opc)
{
	struct rmad_client *c = &rmad_cl;
	int err = epoch_args(win);
	uint64_t posted;

	if (err)
		return err;
	if (win->epoch == EPOCH_NONE || win->epoch == EPOCH_FENCE ||
	    win->epoch == EPOCH_PSCW)
		return RMAD_ERR_SYNC;	/* passive target only */
	if (target >= 0) {
		struct win_peer *p;
		uint64_t size;
		int du;

		if (target >= c->b.size)
			return RMAD_ERR_RANK;
		err = rmad_win_target(win, target, &p, &size, &du);
		if (err)
			return err;
		if (p && rmad_peer_dead(p))
			return RMAD_ERR_PROC_FAILED;
		if (!covered(win, target, p))
			return RMAD_ERR_SYNC;
		if (p) {
			/* done when issued: only the barrier is left */
			rmad_smp_mb();
			return 0;
		}
	}
	rmad_smp_mb();
	/* flush_all covers the same-node members too */
	for (int i = 0; target < 0 && i < win->npeers; i++)
		if (rmad_peer_dead(&win->peers[i]))
			err = RMAD_ERR_PROC_FAILED;
	posted = __atomic_load_n(&win->remote_posted, __ATOMIC_ACQUIRE);
	if (posted == __atomic_load_n(&win->remote_flushed, __ATOMIC_ACQUIRE))
		return err;	/* nothing went to the agent since */
	if (err) {
		int e2 = agent_sync(win, opc, target);

		(void)e2;	/* the death first */
		if (opc == RMAD_OPC_FLUSH)
			flushed_upto(win, posted);
		return err;
	}
	err = agent_sync(win, opc, target);
	/* the ops posted before we looked are flushed; another thread's
	 * later ones are not, so only move the mark forward to posted */
	if (target < 0 && opc == RMAD_OPC_FLUSH)
		flushed_upto(win, posted);
	return err;
}

/*
 * The public synchronization calls: each is counted for rmad_win_stats
 * whether it succeeded or not, as long as the handle is a live window
 * (the waits inside are timed where they happen).
 */
static int timed(rmad_win_t w, int err)
{
	if (rmad_win_ok(w))
		rmad_win_count(&w->st_sync_calls, 1);
	return err;
}

int rmad_win_lock(int lock_type, int target, int assert, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (target == RMAD_PROC_NULL)
		return proc_null(handle);
	return timed(win, win_lock(lock_type, target, assert, win));
}

int rmad_win_unlock(int target, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (target == RMAD_PROC_NULL)
		return proc_null(handle);
	return timed(win, win_unlock(target, win));
}

int rmad_win_lock_all(int assert, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return timed(win, win_lock_all(assert, win));
}

int rmad_win_unlock_all(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return timed(win, win_unlock_all(win));
}

int rmad_win_flush_w(int target, rmad_win_t win)
{
	if (target == RMAD_PROC_NULL)
		return proc_null_w(win);
	return timed(win, target < 0 ? RMAD_ERR_RANK :
			      flush(target, win, RMAD_OPC_FLUSH));
}

int rmad_win_flush(int target, rmad_win_t handle)
{
	return rmad_win_flush_w(target, rmad_win_get(handle));
}

int rmad_win_flush_all(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return timed(win, flush(-1, win, RMAD_OPC_FLUSH));
}

int rmad_win_flush_local(int target, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (target == RMAD_PROC_NULL)
		return proc_null(handle);
	return timed(win, target < 0 ? RMAD_ERR_RANK :
			      flush(target, win, RMAD_OPC_FLUSH_LOCAL));
}

int rmad_win_flush_local_all(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return timed(win, flush(-1, win, RMAD_OPC_FLUSH_LOCAL));
}

int rmad_win_sync(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (!rmad_win_ok(win))
		return RMAD_ERR_ARG;
	/* unified model: public and private copies are one; order them */
	rmad_smp_mb();
	return timed(win, 0);
}
