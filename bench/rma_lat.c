/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_lat.c - latency of an 8-byte put+flush (inside lock_all) and of a
 * lock/accumulate/unlock epoch, rank 1 -> rank 0, with rank 0 idle in
 * sleeping (idle) or busy computing (it never calls rmad while the
 * origin measures).  Prints median and 90th percentile in microseconds.
 *
 * usage: rma_lat [idle|busy] [iterations]
 * Run with 2 ranks: rmad-run -np 2 (same node) or --vnodes 2 -np 2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%-22s median %8.2f us  p90 %8.2f us\n", what,
	       t[n / 2] * 1e6, t[n * 9 / 10] * 1e6);
}

int main(int argc, char **argv)
{
	int busy = argc > 1 && !strcmp(argv[1], "busy");
	int n = argc > 2 ? atoi(argv[2]) : 2000, rank, size;
	volatile int64_t *base;
	rmad_win_t w;
	double *t;
	struct rmad_info in;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	rmad_get_info(&in);
	t = calloc((size_t)n, sizeof(*t));
	if (size < 2 || !t ||
	    rmad_win_allocate(4096, 8, NULL, RMAD_GROUP_ALL, &base, &w))
		return 1;
	base[0] = base[1] = base[2] = 0;
	rmad_barrier();
	if (rank == 0) {
		volatile double x = 1;

		/* wait (computing, or just polling memory) for the done
		 * flag the origin puts at the end: no rmad call */
		while (!base[2]) {
			if (busy)
				for (int i = 0; i < 1000; i++)
					x = x * 1.0000001 + 1e-9;
			else
				usleep(1000);
		}
	} else if (rank == 1) {
		int64_t v = 1;

		printf("# origin node %d, target node 0, %d iterations, "
		       "target %s\n", in.node, n, busy ? "busy" : "idle");
		rmad_win_lock_all(0, w);
		for (int k = -100; k < n; k++) {
			double t0 = rmad_wtime();

			rmad_put(&v, 1, RMAD_INT64, 0, 0, 1, RMAD_INT64, w);
			rmad_win_flush(0, w);
			if (k >= 0)
				t[k] = rmad_wtime() - t0;
		}
		rmad_win_unlock_all(w);
		report("put 8 B + flush", t, n);
		for (int k = -100; k < n; k++) {
			double t0 = rmad_wtime();

			rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w);
			rmad_accumulate(&v, 1, RMAD_INT64, 0, 1, 1, RMAD_INT64,
					RMAD_SUM, w);
			rmad_win_unlock(0, w);
			if (k >= 0)
				t[k] = rmad_wtime() - t0;
		}
		report("lock/acc/unlock", t, n);
		rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w);
		rmad_put(&v, 1, RMAD_INT64, 0, 2, 1, RMAD_INT64, w);
		rmad_win_unlock(0, w);
	}
	rmad_barrier();
	rmad_win_free(&w);
	rmad_finalize();
	free(t);
	return 0;
}
