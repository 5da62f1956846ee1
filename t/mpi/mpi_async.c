/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_async.c - does an MPI RMA epoch finish while its target computes?
 *
 * Rank 0 computes for T seconds in a plain loop that calls no MPI
 * function.  Meanwhile every other rank runs a passive-target epoch
 * (lock, put, accumulate, unlock) and then a PSCW access epoch (start,
 * put, complete) to rank 0, which posted before it began computing and
 * waits after.  Each origin prints how long its two epochs took.
 *
 * An MPI library that progresses only inside MPI calls makes the
 * origins wait for the end of the computation (about T); under rmad
 * the agents apply the ops while rank 0 computes.  With --expect-async
 * the program fails when an epoch took more than half of T; without it
 * it only reports (plain MPI shows the stall: that is the comparison).
 *
 * usage: mpi_async [--seconds T] [--expect-async]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

static void compute(double secs)
{
	double t0 = MPI_Wtime(), x = 1.0;

	/* MPI_Wtime is a clock read, not a progress call, in both */
	while (MPI_Wtime() - t0 < secs)
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 1e-9;
	sink = x;
}

int main(int argc, char **argv)
{
	double secs = 2.0, tlock = 0, tpscw = 0, worst[2];
	int expect = 0, me, np, fail = 0, zero = 0;
	long *base, one = 1;
	MPI_Group world, g0, others;
	MPI_Win w;

	MPI_Init(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--expect-async"))
			expect = 1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	base[0] = base[1] = 0;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &zero, &g0);
	MPI_Group_excl(world, 1, &zero, &others);
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == 0) {
		MPI_Win_post(others, 0, w);
		compute(secs);
		MPI_Win_wait(w);
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
		MPI_Win_sync(w);
		fail = base[0] != np - 1 || base[1] != 2 * (np - 1);
		MPI_Win_unlock(0, w);
	} else {
		double t0;

		compute(0.05);	/* rank 0 is computing by now */
		t0 = MPI_Wtime();
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
		MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM,
			       w);
		MPI_Win_unlock(0, w);
		tlock = MPI_Wtime() - t0;
		t0 = MPI_Wtime();
		MPI_Win_start(g0, 0, w);
		long two = 2;
		MPI_Accumulate(&two, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM,
			       w);
		MPI_Win_complete(w);
		tpscw = MPI_Wtime() - t0;
	}
	double mine[2] = { tlock, tpscw };
	MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (me == 0) {
		printf("target computed %.2f s; slowest origin: lock/acc/unlock "
		       "%.4f s, start/acc/complete %.4f s\n", secs, worst[0],
		       worst[1]);
		if (fail)
			printf("FAIL: rank 0's window holds wrong sums\n");
		if (expect && (worst[0] > secs / 2 || worst[1] > secs / 2)) {
			printf("FAIL: an epoch waited for the computation\n");
			fail = 1;
		}
	}
	MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Group_free(&g0);
	MPI_Group_free(&others);
	MPI_Group_free(&world);
	MPI_Win_free(&w);
	MPI_Finalize();
	return fail;
}
