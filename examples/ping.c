/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ping.c - round trips through the agents.
 *
 * Rank 0 times rmad_ping() to itself (client -> own agent -> client) and
 * to the last rank (client -> own agent -> that rank's agent -> back),
 * and prints the median and the 99th percentile in microseconds.
 *
 *   rmad-run --vnodes 2 -np 2 ./ping [iterations]
 */
#include <stdio.h>
#include <stdlib.h>

#include <rmad.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int measure(int target, int iters, const char *what)
{
	double *t = malloc(sizeof(double) * (size_t)iters);
	int err = 0;

	if (!t)
		return 1;
	for (int i = 0; i < 100 && !err; i++)	/* warm-up */
		err = rmad_ping(target);
	for (int i = 0; i < iters && !err; i++) {
		double t0 = rmad_wtime();

		err = rmad_ping(target);
		t[i] = (rmad_wtime() - t0) * 1e6;
	}
	if (err) {
		fprintf(stderr, "rmad_ping(%d): %s\n", target,
			rmad_strerror(err));
		free(t);
		return 1;
	}
	qsort(t, (size_t)iters, sizeof(double), cmp);
	printf("%-28s median %8.2f us   p99 %8.2f us   (%d round trips)\n",
	       what, t[iters / 2], t[iters * 99 / 100], iters);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 10000, bad = 0;
	struct rmad_info in;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	rmad_get_info(&in);
	if (iters < 1)
		iters = 1;
	if (rank == 0) {
		printf("provider %s, %d nodes\n", in.provider, in.nnodes);
		bad |= measure(0, iters, "client->own agent->client");
		if (size > 1)
			bad |= measure(size - 1, iters,
				       "client->remote agent->client");
	}
	if (rmad_barrier())
		bad = 1;
	if (rmad_finalize())
		bad = 1;
	return bad;
}
