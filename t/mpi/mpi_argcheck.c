/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_argcheck.c - the argument checks of MPI's one-sided calls, as an
 * MPI program that knows nothing of rmad sees them: each case below is
 * a call with one bad argument (or two, to see which check comes
 * first), on a window of MPI_Win_allocate with MPI_ERRORS_RETURN, inside
 * a lock_all epoch; the program prints one line per case,
 *
 *   CASE: CLASS-NAME
 *
 * the error class the call returned.  t/mpi.sh runs it under plain
 * Open MPI and under librmad-mpi and requires the same lines: the
 * library makes the checks Open MPI makes, in its order (uncommitted
 * datatypes first among them: issue 71).  Run on 2 ranks.
 */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

static int me, np;

static const char *cls(int rc)
{
	static char other[32];
	int c = rc;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &c);
	switch (c) {
	case MPI_SUCCESS: return "SUCCESS";
	case MPI_ERR_TYPE: return "ERR_TYPE";
	case MPI_ERR_COUNT: return "ERR_COUNT";
	case MPI_ERR_RANK: return "ERR_RANK";
	case MPI_ERR_WIN: return "ERR_WIN";
	case MPI_ERR_OP: return "ERR_OP";
	case MPI_ERR_DISP: return "ERR_DISP";
	case MPI_ERR_ARG: return "ERR_ARG";
	case MPI_ERR_LOCKTYPE: return "ERR_LOCKTYPE";
	case MPI_ERR_ASSERT: return "ERR_ASSERT";
	case MPI_ERR_RMA_SYNC: return "ERR_RMA_SYNC";
	case MPI_ERR_RMA_RANGE: return "ERR_RMA_RANGE";
	case MPI_ERR_REQUEST: return "ERR_REQUEST";
	case MPI_ERR_BUFFER: return "ERR_BUFFER";
	default:
		snprintf(other, sizeof(other), "class %d", c);
		return other;
	}
}

#define CASE(name, call)						\
	do {								\
		int rc_ = (call);					\
		if (me == 0)						\
			printf("%s: %s\n", name, cls(rc_));		\
	} while (0)

int main(int argc, char **argv)
{
	int *base, v[8] = { 0 }, r[8];
	MPI_Datatype vec, vec2, dup, ok;
	MPI_Request rq;
	MPI_Win w;
	/* --beyond: also the cases Open MPI gets wrong */
	int beyond = argc > 1 && !strcmp(argv[1], "--beyond");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	/* MPI_WIN_NULL's error is raised on MPI_COMM_WORLD */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Type_vector(2, 1, 2, MPI_INT, &vec);	/* never committed */
	MPI_Type_vector(2, 1, 2, MPI_INT, &ok);
	MPI_Type_commit(&ok);
	MPI_Type_dup(ok, &dup);			/* committed, as ok */
	MPI_Type_contiguous(2, MPI_INT, &vec2);	/* never committed */

	MPI_Win_lock_all(0, w);
	/* uncommitted datatypes */
	CASE("put, uncommitted origin type",
	     MPI_Put(v, 1, vec, 1, 0, 2, MPI_INT, w));
	CASE("put, uncommitted target type",
	     MPI_Put(v, 2, MPI_INT, 1, 0, 1, vec, w));
	CASE("put, uncommitted type, count 0",
	     MPI_Put(v, 0, vec, 1, 0, 0, vec, w));
	CASE("get, uncommitted origin type",
	     MPI_Get(r, 1, vec, 1, 0, 2, MPI_INT, w));
	CASE("get, uncommitted target type",
	     MPI_Get(r, 2, MPI_INT, 1, 0, 1, vec2, w));
	CASE("accumulate, uncommitted origin type",
	     MPI_Accumulate(v, 1, vec, 1, 0, 2, MPI_INT, MPI_SUM, w));
	CASE("accumulate, uncommitted target type",
	     MPI_Accumulate(v, 2, MPI_INT, 1, 0, 1, vec, MPI_SUM, w));
	CASE("get_accumulate, uncommitted origin type",
	     MPI_Get_accumulate(v, 1, vec, r, 2, MPI_INT, 1, 0, 2, MPI_INT,
				MPI_SUM, w));
	if (beyond)	/* Open MPI 4.1 does not check it, and crashes */
		CASE("get_accumulate, uncommitted result type",
		     MPI_Get_accumulate(v, 2, MPI_INT, r, 1, vec, 1, 0, 2,
					MPI_INT, MPI_SUM, w));
	CASE("get_accumulate, negative origin count",
	     MPI_Get_accumulate(v, -1, MPI_INT, r, 1, MPI_INT, 1, 0, 1,
				MPI_INT, MPI_SUM, w));
	CASE("get_accumulate, negative origin count and bad rank",
	     MPI_Get_accumulate(v, -1, MPI_INT, r, 1, MPI_INT, np, 0, 1,
				MPI_INT, MPI_SUM, w));
	CASE("rput, uncommitted origin type",
	     MPI_Rput(v, 1, vec, 1, 0, 2, MPI_INT, w, &rq));
	CASE("raccumulate, uncommitted target type",
	     MPI_Raccumulate(v, 2, MPI_INT, 1, 0, 1, vec2, MPI_SUM, w, &rq));
	CASE("put, committed vector type", MPI_Put(v, 1, ok, 1, 0, 1, ok, w));
	CASE("put, duplicate of a committed type",
	     MPI_Put(v, 1, dup, 1, 0, 1, dup, w));
	CASE("put, MPI_DATATYPE_NULL",
	     MPI_Put(v, 1, MPI_DATATYPE_NULL, 1, 0, 1, MPI_INT, w));
	/* counts, ranks, displacements, ops */
	CASE("put, negative origin count",
	     MPI_Put(v, -1, MPI_INT, 1, 0, 1, MPI_INT, w));
	CASE("get, negative target count",
	     MPI_Get(r, 1, MPI_INT, 1, 0, -1, MPI_INT, w));
	CASE("put, target rank np",
	     MPI_Put(v, 1, MPI_INT, np, 0, 1, MPI_INT, w));
	CASE("get, target rank -7",
	     MPI_Get(r, 1, MPI_INT, -7, 0, 1, MPI_INT, w));
	CASE("put, MPI_PROC_NULL",
	     MPI_Put(v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w));
	CASE("put, negative displacement",
	     MPI_Put(v, 1, MPI_INT, 1, -1, 1, MPI_INT, w));
	CASE("accumulate, MPI_OP_NULL",
	     MPI_Accumulate(v, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_OP_NULL, w));
	CASE("fetch_and_op, target rank np",
	     MPI_Fetch_and_op(v, r, MPI_INT, np, 0, MPI_SUM, w));
	CASE("fetch_and_op, uncommitted type",
	     MPI_Fetch_and_op(v, r, vec, 1, 0, MPI_SUM, w));
	CASE("compare_and_swap, target rank np",
	     MPI_Compare_and_swap(v, v + 1, r, MPI_INT, np, 0, w));
	CASE("compare_and_swap, MPI_DATATYPE_NULL",
	     MPI_Compare_and_swap(v, v + 1, r, MPI_DATATYPE_NULL, 1, 0, w));
	/* which check comes first */
	CASE("put, negative count and bad rank",
	     MPI_Put(v, -1, MPI_INT, np, 0, 1, MPI_INT, w));
	CASE("put, bad rank and uncommitted type",
	     MPI_Put(v, 1, vec, np, 0, 1, vec, w));
	CASE("put, negative count and uncommitted type",
	     MPI_Put(v, -1, vec, 1, 0, 1, MPI_INT, w));
	CASE("put, negative displacement and uncommitted type",
	     MPI_Put(v, 1, vec, 1, -1, 1, vec, w));
	CASE("put, bad rank and negative displacement",
	     MPI_Put(v, 1, MPI_INT, np, -1, 1, MPI_INT, w));
	CASE("accumulate, MPI_NO_OP",
	     MPI_Accumulate(v, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_NO_OP, w));
	CASE("accumulate, MPI_OP_NULL and bad rank",
	     MPI_Accumulate(v, 1, MPI_INT, np, 0, 1, MPI_INT, MPI_OP_NULL, w));
	CASE("accumulate, MPI_OP_NULL and negative displacement",
	     MPI_Accumulate(v, 1, MPI_INT, 1, -1, 1, MPI_INT, MPI_OP_NULL,
			    w));
	CASE("accumulate, MPI_OP_NULL and uncommitted type",
	     MPI_Accumulate(v, 1, vec, 1, 0, 2, MPI_INT, MPI_OP_NULL, w));
	CASE("accumulate, MPI_OP_NULL and negative count",
	     MPI_Accumulate(v, -1, MPI_INT, 1, 0, 1, MPI_INT, MPI_OP_NULL, w));
	CASE("get_accumulate, MPI_OP_NULL and uncommitted type",
	     MPI_Get_accumulate(v, 1, vec, r, 2, MPI_INT, 1, 0, 2, MPI_INT,
				MPI_OP_NULL, w));
	CASE("fetch_and_op, MPI_OP_NULL and uncommitted type",
	     MPI_Fetch_and_op(v, r, vec, 1, 0, MPI_OP_NULL, w));
	if (beyond)	/* Open MPI 4.1 does not check it, and crashes */
		CASE("fetch_and_op, MPI_OP_NULL",
		     MPI_Fetch_and_op(v, r, MPI_INT, 1, 0, MPI_OP_NULL, w));
	CASE("fetch_and_op, negative displacement and uncommitted type",
	     MPI_Fetch_and_op(v, r, vec, 1, -1, MPI_SUM, w));
	CASE("get_accumulate, MPI_NO_OP and uncommitted origin type",
	     MPI_Get_accumulate(v, 1, vec, r, 2, MPI_INT, 1, 0, 2, MPI_INT,
				MPI_NO_OP, w));
	CASE("compare_and_swap, negative displacement and uncommitted type",
	     MPI_Compare_and_swap(v, v + 1, r, vec, 1, -1, w));
	CASE("fetch_and_op, negative displacement",
	     MPI_Fetch_and_op(v, r, MPI_INT, 1, -1, MPI_SUM, w));
	CASE("fetch_and_op, bad rank and uncommitted type",
	     MPI_Fetch_and_op(v, r, vec, np, 0, MPI_SUM, w));
	CASE("compare_and_swap, negative displacement",
	     MPI_Compare_and_swap(v, v + 1, r, MPI_INT, 1, -1, w));
	CASE("compare_and_swap, uncommitted type",
	     MPI_Compare_and_swap(v, v + 1, r, vec, 1, 0, w));
	/* the window */
	CASE("put, MPI_WIN_NULL",
	     MPI_Put(v, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_WIN_NULL));
	CASE("get, MPI_WIN_NULL",
	     MPI_Get(r, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_WIN_NULL));
	if (beyond)	/* Open MPI 4.1 does not check it */
		CASE("flush, target rank np", MPI_Win_flush(np, w));
	MPI_Win_unlock_all(w);
	CASE("lock, bad lock type", MPI_Win_lock(12345, 1, 0, w));
	CASE("lock, target rank np", MPI_Win_lock(MPI_LOCK_SHARED, np, 0, w));
	CASE("lock, bad lock type and bad rank",
	     MPI_Win_lock(12345, np, 0, w));
	CASE("lock, bad rank and bad assert",
	     MPI_Win_lock(MPI_LOCK_SHARED, np, 0x7fff0000, w));
	CASE("lock, bad lock type and bad assert",
	     MPI_Win_lock(12345, 1, 0x7fff0000, w));
	CASE("lock, bad assert",
	     MPI_Win_lock(MPI_LOCK_SHARED, 1, 0x7fff0000, w));
	CASE("fence, bad assert", MPI_Win_fence(0x7fff0000, w));

	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Type_free(&vec);
	MPI_Type_free(&vec2);
	MPI_Type_free(&ok);
	MPI_Type_free(&dup);
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}
