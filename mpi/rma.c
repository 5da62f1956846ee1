/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c - MPI's communication calls on rmad: put, get, accumulate,
 * get_accumulate, fetch_and_op, compare_and_swap and the request forms.
 * Each translates its window, ranks, datatypes and op (map.c) and calls
 * the rmad function of the same meaning; an error is raised on the
 * window's error handler with its MPI class.
 */
#include "rmpi.h"

/* The op's types (and op) in rmad's terms, or the error. */
static inline __attribute__((always_inline)) int
types2(MPI_Datatype a, rmad_datatype_t *ra, MPI_Datatype b,
		  rmad_datatype_t *rb)
{
	int err = rmpi_type(a, ra);

	if (b == a) {			/* the common case: one lookup */
		*rb = *ra;
		return err;
	}
	return err ? err : rmpi_type(b, rb);
}

/* the report's op count (RMAD_MPI_REPORT=1 only): no locked instruction
 * on the op path (threads racing on one window may lose a count) */
#define COUNT_OP(m)							\
	do {								\
		if (__builtin_expect(rmpi.report, 0))			\
			__atomic_store_n(&(m)->ops,			\
					 __atomic_load_n(&(m)->ops,	\
							 __ATOMIC_RELAXED) + 1, \
					 __ATOMIC_RELAXED);		\
	} while (0)

/*
 * Each op and its request form share one body: rq is NULL for the op,
 * the request's rmad handle for the request form.  They return an rmad
 * code (RMPI_ERR_* for MPI's own checks).  The checks come in Open
 * MPI's order, so that a call with two bad arguments gets its class:
 * counts, the target rank, the op (accumulates), the displacement, then
 * the datatypes, whose decoding also says whether they were committed
 * (map.c); t/mpi-args.sh compares the two.
 */

static inline __attribute__((always_inline)) int
put_get(struct mwin *m, int get, void *origin, int ocount,
		   MPI_Datatype otype, int trank, MPI_Aint tdisp, int tcount,
		   MPI_Datatype ttype, rmad_request_t *rq)
{
	rmad_datatype_t ot, tt;
	int t = rmpi_target(m, trank), err;

	COUNT_OP(m);
	if (ocount < 0 || tcount < 0)
		return RMPI_ERR_COUNT;
	err = rmpi_check_target(m, t, tdisp);
	if (!err)
		err = types2(otype, &ot, ttype, &tt);
	if (err)
		return err;
	if (get)
		return rq ? rmad_rget(origin, ocount, ot, t, (size_t)tdisp,
				      tcount, tt, m->rw, rq) :
			    rmad_get_req(origin, ocount, ot, t, (size_t)tdisp,
					 tcount, tt, m->wp, NULL);
	return rq ? rmad_rput(origin, ocount, ot, t, (size_t)tdisp, tcount,
			      tt, m->rw, rq) :
		    rmad_put_req(origin, ocount, ot, t, (size_t)tdisp, tcount,
				 tt, m->wp, NULL);
}

static inline __attribute__((always_inline)) int
acc(struct mwin *m, const void *origin, int ocount,
	       MPI_Datatype otype, int trank, MPI_Aint tdisp, int tcount,
	       MPI_Datatype ttype, MPI_Op op, rmad_request_t *rq)
{
	rmad_datatype_t ot, tt;
	rmad_op_t rop;
	int t = rmpi_target(m, trank), err;

	COUNT_OP(m);
	if (ocount < 0 || tcount < 0)
		return RMPI_ERR_COUNT;
	err = t == -1 ? RMAD_ERR_RANK : rmpi_op_on(op, ttype, &rop);
	/* MPI_NO_OP is for the fetching accumulates only */
	if (!err && rop == RMAD_NO_OP)
		err = RMAD_ERR_OP;
	if (!err)
		err = rmpi_check_target(m, t, tdisp);
	if (!err)
		err = types2(otype, &ot, ttype, &tt);
	if (err)
		return err;
	return rq ? rmad_raccumulate(origin, ocount, ot, t, (size_t)tdisp,
				     tcount, tt, rop, m->rw, rq) :
		    rmad_accumulate_req(origin, ocount, ot, t, (size_t)tdisp,
					tcount, tt, rop, m->wp, NULL);
}

static int gacc(struct mwin *m, const void *origin, int ocount,
		MPI_Datatype otype, void *result, int rcount,
		MPI_Datatype rtype, int trank, MPI_Aint tdisp, int tcount,
		MPI_Datatype ttype, MPI_Op op, rmad_request_t *rq)
{
	rmad_datatype_t ot = RMAD_BYTE, rt, tt;
	rmad_op_t rop;
	int t = rmpi_target(m, trank), err;

	COUNT_OP(m);
	/* the origin's count too, whatever the op (Open MPI's check) */
	if (ocount < 0 || rcount < 0 || tcount < 0)
		return RMPI_ERR_COUNT;
	err = t == -1 ? RMAD_ERR_RANK : rmpi_op_on(op, ttype, &rop);
	if (!err)
		err = rmpi_check_target(m, t, tdisp);
	/* with NO_OP the origin arguments are ignored (MPI-3.1 11.3.4) */
	if (!err && rop != RMAD_NO_OP)
		err = rmpi_type(otype, &ot);
	if (!err)
		err = types2(rtype, &rt, ttype, &tt);
	if (err)
		return err;
	if (rop == RMAD_NO_OP) {
		origin = NULL;
		ocount = 0;
	}
	return rq ? rmad_rget_accumulate(origin, ocount, ot, result, rcount,
					 rt, t, (size_t)tdisp, tcount, tt,
					 rop, m->rw, rq) :
		    rmad_get_accumulate_req(origin, ocount, ot, result, rcount,
					    rt, t, (size_t)tdisp, tcount, tt,
					    rop, m->wp, NULL);
}

/* A request op's outcome: its MPI_Request, or the error. */
static int req_out(struct mwin *m, int err, rmad_request_t rr,
		   MPI_Request *req)
{
	if (!err)
		err = rmpi_req_new(m, rr, req);
	if (err) {
		*req = MPI_REQUEST_NULL;
		return rmpi_win_err(m, err);
	}
	return MPI_SUCCESS;
}

int MPI_Put(const void *origin, int ocount, MPI_Datatype otype, int trank,
	    MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Put(origin, ocount, otype, trank, tdisp, tcount,
				ttype, win);
	return rmpi_win_err(m, put_get(m, 0, (void *)(uintptr_t)origin, ocount, otype,
			       trank, tdisp, tcount, ttype, NULL));
}

int MPI_Get(void *origin, int ocount, MPI_Datatype otype, int trank,
	    MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Get(origin, ocount, otype, trank, tdisp, tcount,
				ttype, win);
	return rmpi_win_err(m, put_get(m, 1, origin, ocount, otype, trank, tdisp,
			       tcount, ttype, NULL));
}

int MPI_Accumulate(const void *origin, int ocount, MPI_Datatype otype,
		   int trank, MPI_Aint tdisp, int tcount, MPI_Datatype ttype,
		   MPI_Op op, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Accumulate(origin, ocount, otype, trank, tdisp,
				       tcount, ttype, op, win);
	return rmpi_win_err(m, acc(m, origin, ocount, otype, trank, tdisp, tcount,
			   ttype, op, NULL));
}

int MPI_Get_accumulate(const void *origin, int ocount, MPI_Datatype otype,
		       void *result, int rcount, MPI_Datatype rtype,
		       int trank, MPI_Aint tdisp, int tcount,
		       MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Get_accumulate(origin, ocount, otype, result,
					   rcount, rtype, trank, tdisp, tcount,
					   ttype, op, win);
	return rmpi_win_err(m, gacc(m, origin, ocount, otype, result, rcount, rtype,
			    trank, tdisp, tcount, ttype, op, NULL));
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type,
		     int trank, MPI_Aint tdisp, MPI_Op op, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	rmad_datatype_t t;
	rmad_op_t rop;
	int tr, err;

	if (!m || !m->rw)
		return PMPI_Fetch_and_op(origin, result, type, trank, tdisp,
					 op, win);
	tr = rmpi_target(m, trank);
	COUNT_OP(m);
	err = rmpi_check_target(m, tr, tdisp);
	if (!err)
		err = rmpi_type(type, &t);
	if (!err)
		err = rmpi_op_on(op, type, &rop);
	/* rmad_fetch_and_op's body, on the window resolved once (m->wp) */
	if (!err)
		err = rmad_get_accumulate_req(origin, 1, t, result, 1, t, tr,
					      (size_t)tdisp, 1, t, rop, m->wp,
					      NULL);
	return rmpi_win_err(m, err);
}

int MPI_Compare_and_swap(const void *origin, const void *compare,
			 void *result, MPI_Datatype type, int trank,
			 MPI_Aint tdisp, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	rmad_datatype_t t;
	int err;

	if (!m || !m->rw)
		return PMPI_Compare_and_swap(origin, compare, result, type,
					     trank, tdisp, win);
	COUNT_OP(m);
	err = rmpi_check_target(m, rmpi_target(m, trank), tdisp);
	if (!err)
		err = rmpi_type(type, &t);
	if (!err)
		err = rmad_compare_and_swap(origin, compare, result, t,
					    rmpi_target(m, trank),
					    (size_t)tdisp, m->rw);
	return rmpi_win_err(m, err);
}

/* ------------------------------------------------------- requests */

int MPI_Rput(const void *origin, int ocount, MPI_Datatype otype, int trank,
	     MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win,
	     MPI_Request *req)
{
	struct mwin *m = rmpi_win(win);
	rmad_request_t rr = RMAD_REQUEST_NULL;
	int err;

	if (!m || !m->rw)
		return PMPI_Rput(origin, ocount, otype, trank, tdisp, tcount,
				 ttype, win, req);
	/* (rr is set by the call: not in the same argument list) */
	err = put_get(m, 0, (void *)(uintptr_t)origin, ocount, otype, trank,
		      tdisp, tcount, ttype, &rr);
	return req_out(m, err, rr, req);
}

int MPI_Rget(void *origin, int ocount, MPI_Datatype otype, int trank,
	     MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win,
	     MPI_Request *req)
{
	struct mwin *m = rmpi_win(win);
	rmad_request_t rr = RMAD_REQUEST_NULL;
	int err;

	if (!m || !m->rw)
		return PMPI_Rget(origin, ocount, otype, trank, tdisp, tcount,
				 ttype, win, req);
	err = put_get(m, 1, origin, ocount, otype, trank, tdisp, tcount,
		      ttype, &rr);
	return req_out(m, err, rr, req);
}

int MPI_Raccumulate(const void *origin, int ocount, MPI_Datatype otype,
		    int trank, MPI_Aint tdisp, int tcount, MPI_Datatype ttype,
		    MPI_Op op, MPI_Win win, MPI_Request *req)
{
	struct mwin *m = rmpi_win(win);
	rmad_request_t rr = RMAD_REQUEST_NULL;
	int err;

	if (!m || !m->rw)
		return PMPI_Raccumulate(origin, ocount, otype, trank, tdisp,
					tcount, ttype, op, win, req);
	err = acc(m, origin, ocount, otype, trank, tdisp, tcount, ttype, op,
		  &rr);
	return req_out(m, err, rr, req);
}

int MPI_Rget_accumulate(const void *origin, int ocount, MPI_Datatype otype,
			void *result, int rcount, MPI_Datatype rtype,
			int trank, MPI_Aint tdisp, int tcount,
			MPI_Datatype ttype, MPI_Op op, MPI_Win win,
			MPI_Request *req)
{
	struct mwin *m = rmpi_win(win);
	rmad_request_t rr = RMAD_REQUEST_NULL;
	int err;

	if (!m || !m->rw)
		return PMPI_Rget_accumulate(origin, ocount, otype, result,
					    rcount, rtype, trank, tdisp,
					    tcount, ttype, op, win, req);
	err = gacc(m, origin, ocount, otype, result, rcount, rtype, trank,
		   tdisp, tcount, ttype, op, &rr);
	return req_out(m, err, rr, req);
}
