/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c - the one-sided data operations (put, get, accumulate,
 * get_accumulate, fetch_and_op, compare_and_swap, and the request forms
 * librmad-mpi and request.c call), each checked here against its target
 * and epoch first.
 *
 * Two paths, chosen per target:
 *
 *  - Same node: the target's window is mapped here, so the operation is
 *    a memcpy (put, get) or CPU atomics (the accumulate family, through
 *    rmad_acc_apply, the same code the agent applies remote accumulates
 *    with); a created window's is reached across processes (peer.c).
 *
 *  - Other node: an op element goes to the agent's ring and the call
 *    returns (rma_post.c).  The agent's operation table takes the lock
 *    lazily, sends the data, and counts the answers; flush and unlock
 *    are sync elements the agent completes when their conditions hold
 *    (flush.c, lock.c).
 *
 * An op with a derived type anywhere goes to rma_derived.c.
 *
 * For rmad_win_stats (win.c) each window counts the operations that
 * returned 0, where they went (in place or to the agent), the calls to
 * the synchronization functions, and the time they spent waiting: for a
 * held same-node lock, or for the agent's answer (lock.c, flush.c).  A
 * call that waits for nothing (a same-node flush) reads no clock: on
 * that path a clock read would cost more than the call.
 */
#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "dtype.h"
#include "internal.h"
#include "util.h"

static uint32_t dtype_id(rmad_datatype_t t)
{
	return t >= 1 && t <= RMAD_DTYPE_MAX ? (uint32_t)t : 0;
}

/* ------------------------------------------------------- checking */

static int covered(struct rmad_win_s *w, int rank, struct win_peer *p)
{
	if (w->epoch == EPOCH_LOCK_ALL || w->epoch == EPOCH_FENCE)
		return 1;
	if (w->epoch == EPOCH_PSCW)	/* a target of the start's group */
		return rmad_pscw_covers(w, rank);
	if (w->epoch != EPOCH_LOCK)
		return 0;
	return p ? p->locked != 0 : rmad_rlock_find(w, rank) >= 0;
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

int rmad_covered(rmad_win_t w, int rank, struct win_peer *p)
{
	return covered(w, rank, p);
}

int rmad_counted(rmad_win_t w, int local)
{
	return rmad_count_op(w, local < 0 ? NULL :
				local ? &w->st_ops_local : &w->st_ops_remote);
}

/* ------------------------------------------------- communication */

int rmad_put_req(const void *origin, int ocount, rmad_datatype_t otype,
		 int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
		 rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return rmad_proc_null_w(win);
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
		return rmad_count_op(win, NULL);
	if (!origin)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_put(r.p, r.off, origin, r.len);
		return err ? err : rmad_count_op(win, &win->st_ops_local);
	}
	return rmad_post(win, RMAD_OPC_PUT, target, tdisp, tcount, &r, 0,
			 origin, NULL, NULL, rq);
}

int rmad_get_req(void *origin, int ocount, rmad_datatype_t otype, int target,
		 size_t tdisp, int tcount, rmad_datatype_t ttype,
		 rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return rmad_proc_null_w(win);
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
		return rmad_count_op(win, NULL);
	if (!origin)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_get(r.p, r.off, origin, r.len);
		return err ? err : rmad_count_op(win, &win->st_ops_local);
	}
	return rmad_post(win, RMAD_OPC_GET, target, tdisp, tcount, &r, 0,
			 origin, NULL, NULL, rq);
}

int rmad_accumulate_req(const void *origin, int ocount,
			rmad_datatype_t otype, int target, size_t tdisp,
			int tcount, rmad_datatype_t ttype, rmad_op_t op,
			rmad_win_t win, struct rmad_request_s *rq)
{
	struct tref r;
	int err;

	if (target == RMAD_PROC_NULL)
		return rmad_proc_null_w(win);
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
		return rmad_count_op(win, NULL);
	if (!origin)
		return RMAD_ERR_ARG;
	if (r.p) {
		err = rmad_peer_acc(r.p, r.off, origin, NULL, r.dt,
				    (uint32_t)op, (uint64_t)tcount);
		return err ? err : rmad_count_op(win, &win->st_ops_local);
	}
	return rmad_post(win, RMAD_OPC_ACC, target, tdisp, tcount, &r,
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
		return rmad_proc_null_w(win);
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
		return rmad_count_op(win, NULL);
	if (!result || (op != RMAD_NO_OP && !origin))
		return RMAD_ERR_ARG;
	if (op == RMAD_NO_OP)
		origin = NULL;
	if (r.p) {
		err = rmad_peer_acc(r.p, r.off, origin, result, r.dt,
				    (uint32_t)op, (uint64_t)tcount);
		return err ? err : rmad_count_op(win, &win->st_ops_local);
	}
	return rmad_post(win, RMAD_OPC_GACC, target, tdisp, tcount, &r,
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
		return rmad_proc_null(handle);
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
		return err ? err : rmad_count_op(win, &win->st_ops_local);
	}
	return rmad_post(win, RMAD_OPC_CAS, target, tdisp, 1, &r, 0, origin,
			 compare, result, NULL);
}
