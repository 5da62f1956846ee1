/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi-overhead.c - what librmad-mpi adds to an operation: the same
 * process times the same loops through MPI (MPI_Put, MPI_Accumulate,
 * MPI_Win_flush on an MPI_Win_allocate window, served by rmad) and
 * through rmad_* directly (an rmad_win_allocate window), alternating,
 * so that both see the same ranks, agent and cores.  Rank 0 is the
 * origin, rank 1 the target (same node or not, as launched).
 *
 * Run: rmad-run --mpi -np 2 bench/mpi/mpi-overhead-ompi [iters] [reps]
 * (it needs librmad-mpi: its rmad_init finds rmad already started).
 * Prints per row the best mean ns per operation of each path over the
 * repetitions and their ratio (MPI / native).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rmad.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { R_PUT, R_ACC, R_GET, R_MR, R_N };
static const char *names[R_N] = {
	"put+flush 8 B", "acc+flush 8 B", "get+flush 8 B",
	"put 8 B x64, flush (per put)"
};

static int run_mpi(int row, long n, MPI_Win w, int64_t *v)
{
	int rc = 0;

	for (long i = 0; i < n && !rc; i++) {
		switch (row) {
		case R_PUT:
			rc = MPI_Put(v, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T,
				     w);
			break;
		case R_ACC:
			rc = MPI_Accumulate(v, 1, MPI_INT64_T, 1, 1, 1,
					    MPI_INT64_T, MPI_SUM, w);
			break;
		case R_GET:
			rc = MPI_Get(v + 1, 1, MPI_INT64_T, 1, 0, 1,
				     MPI_INT64_T, w);
			break;
		case R_MR:
			for (int j = 0; j < 64 && !rc; j++)
				rc = MPI_Put(v, 1, MPI_INT64_T, 1, 2 + j, 1,
					     MPI_INT64_T, w);
			break;
		}
		if (!rc)
			rc = MPI_Win_flush(1, w);
	}
	return rc;
}

static int run_rmad(int row, long n, rmad_win_t w, int64_t *v)
{
	int rc = 0;

	for (long i = 0; i < n && !rc; i++) {
		switch (row) {
		case R_PUT:
			rc = rmad_put(v, 1, RMAD_INT64, 1, 0, 1, RMAD_INT64,
				      w);
			break;
		case R_ACC:
			rc = rmad_accumulate(v, 1, RMAD_INT64, 1, 1, 1,
					     RMAD_INT64, RMAD_SUM, w);
			break;
		case R_GET:
			rc = rmad_get(v + 1, 1, RMAD_INT64, 1, 0, 1,
				      RMAD_INT64, w);
			break;
		case R_MR:
			for (int j = 0; j < 64 && !rc; j++)
				rc = rmad_put(v, 1, RMAD_INT64, 1, 2 + j, 1,
					      RMAD_INT64, w);
			break;
		}
		if (!rc)
			rc = rmad_win_flush(1, w);
	}
	return rc;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 200000;
	int reps = argc > 2 ? atoi(argv[2]) : 5, rank, size, rc;
	double best[R_N][2];
	int64_t v[2] = { 1, 0 };
	void *mbase, *rbase;
	MPI_Win mw;
	rmad_win_t rw;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rc = rmad_init(NULL, NULL);
	if (rc != RMAD_ERR_SYNC || size < 2 || iters < 1 || reps < 1) {
		if (!rank)
			fprintf(stderr, "mpi-overhead: run it with 2 or more "
				"ranks under librmad-mpi (rmad-run --mpi)%s\n",
				rc ? "" : ": rmad was not started by MPI_Init");
		if (!rc)
			rmad_finalize();
		MPI_Finalize();
		return 2;
	}
	MPI_Win_allocate(4096, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mbase, &mw);
	rc = rmad_win_allocate(4096, 8, NULL, RMAD_GROUP_ALL, &rbase, &rw);
	if (rc) {
		fprintf(stderr, "mpi-overhead: rmad_win_allocate: %d\n", rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Win_lock_all(0, mw);
	rmad_win_lock_all(0, rw);
	for (int r = 0; r < R_N; r++)
		best[r][0] = best[r][1] = 1e9;
	if (!rank) {
		for (int k = 0; k < reps && !rc; k++)
			for (int r = 0; r < R_N && !rc; r++) {
				long n = r == R_MR ? iters / 32 : iters;
				double t0 = now(), t1, t2;

				rc = run_mpi(r, n / 10, mw, v) ||
				     run_rmad(r, n / 10, rw, v);
				t0 = now();
				rc = rc || run_mpi(r, n, mw, v);
				t1 = now();
				rc = rc || run_rmad(r, n, rw, v);
				t2 = now();
				n *= r == R_MR ? 64 : 1;
				if ((t1 - t0) / n < best[r][0])
					best[r][0] = (t1 - t0) / n;
				if ((t2 - t1) / n < best[r][1])
					best[r][1] = (t2 - t1) / n;
			}
		if (rc)
			fprintf(stderr, "mpi-overhead: an operation failed\n");
		printf("%-30s %10s %10s %7s\n", "row (best of reps)", "MPI_ns",
		       "rmad_ns", "ratio");
		for (int r = 0; r < R_N && !rc; r++)
			printf("%-30s %10.1f %10.1f %7.3f\n", names[r],
			       best[r][0] * 1e9, best[r][1] * 1e9,
			       best[r][0] / best[r][1]);
	}
	MPI_Win_unlock_all(mw);
	rmad_win_unlock_all(rw);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&mw);
	rmad_win_free(&rw);
	MPI_Finalize();
	return rc ? 1 : 0;
}
