/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_deaths.c - an MPI program's RMA on a rank that died: MPI_Put and
 * MPI_Win_unlock to it must return an error class, never MPI_SUCCESS.
 *
 * 4 ranks (under rmad-run --mpi --vnodes 2: 0 and 1 on one node, 2 and
 * 3 on the other).  After a barrier rank 1 SIGKILLs itself; every other
 * rank, with MPI_ERRORS_RETURN on the window, locks rank 1 exclusively,
 * puts to it and unlocks, over and over, until a call fails: that must
 * happen within 10 s, and once it did every such epoch must fail (the
 * death is known: no success after it).  Each survivor prints "rank R:
 * ok: ..." or "rank R: FAIL ..." and leaves without MPI_Finalize (the
 * job lost a rank).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int epoch(MPI_Win w, long *one)
{
	int e = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w), e2;

	if (e)
		return e;
	e = MPI_Put(one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, w);
	e2 = MPI_Win_unlock(1, w);
	return e ? e : e2;
}

int main(int argc, char **argv)
{
	int me, np, err = 0, cls = 0, again, len;
	long *base, one = 1, n = 0;
	char msg[MPI_MAX_ERROR_STRING] = "";
	double t0, t;
	MPI_Win w;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	alarm(60);
	if (np != 4) {
		printf("rank %d: FAIL needs 4 ranks\n", me);
		return 1;
	}
	MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == 1) {
		fflush(stdout);
		raise(SIGKILL);
	}
	t0 = MPI_Wtime();
	while (!err && MPI_Wtime() - t0 < 20) {
		err = epoch(w, &one);
		n++;
	}
	t = MPI_Wtime() - t0;
	again = epoch(w, &one);
	if (err) {
		MPI_Error_class(err, &cls);
		MPI_Error_string(err, msg, &len);
	}
	if (!err || t > 10 || !again)
		printf("rank %d: FAIL put+unlock to the dead rank: %d (class "
		       "%d, %s) after %.3f s, %ld epochs; then %d\n", me, err,
		       cls, msg, t, n, again);
	else
		printf("rank %d: ok: MPI_Put+unlock to the dead rank fails: "
		       "class %d (%s) after %.3f s, %ld epochs; again: %d\n",
		       me, cls, msg, t, n, again);
	fflush(stdout);
	_exit(0);
}
