/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_barrier.c - test program: barriers and pings across the job.
 *
 * usage: prog_barrier [-b BARRIERS] [-p PINGS] [-r ROUNDS]
 *
 * 1. A barrier really waits: the last rank sleeps 300 ms before it; every
 *    other rank must spend at least 200 ms inside it.  ROUNDS times (1),
 *    the sleeper the next rank each round.
 * 2. BARRIERS barriers in a row, without a mismatch or an error.
 * 3. PINGS pings to the own rank, then to every other rank (this crosses
 *    to other agents under virtual nodes).
 * Each rank prints "rank R: ok" or "rank R: FAIL why" and exits non-zero
 * on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rmad.h>

int main(int argc, char **argv)
{
	int rank, size, nb = 200, np = 200, nr = 1, err, c;
	double t0, waited;
	struct rmad_info in;

	while ((c = getopt(argc, argv, "b:p:r:")) != -1) {
		if (c == 'b')
			nb = atoi(optarg);
		else if (c == 'p')
			np = atoi(optarg);
		else if (c == 'r')
			nr = atoi(optarg);
	}
	err = rmad_init(&argc, &argv);
	if (err) {
		printf("rank ?: FAIL rmad_init: %s\n", rmad_strerror(err));
		return 1;
	}
	rmad_rank(&rank);
	rmad_size(&size);
	rmad_get_info(&in);
	for (int r = 0; r < nr; r++) {
		int sleeper = (size - 1 + r) % size;

		if (rank == sleeper)
			usleep(300000);
		t0 = rmad_wtime();
		err = rmad_barrier();
		waited = rmad_wtime() - t0;
		if (err || (size > 1 && rank != sleeper && waited < 0.2)) {
			printf("rank %d: FAIL barrier err %d waited %.3f s "
			       "(round %d)\n", rank, err, waited, r);
			goto fail;
		}
	}
	for (int i = 0; i < nb; i++) {
		err = rmad_barrier();
		if (err) {
			printf("rank %d: FAIL barrier %d: %s\n", rank, i,
			       rmad_strerror(err));
			goto fail;
		}
	}
	for (int t = 0; t < size; t++) {
		int target = (rank + t) % size;

		for (int i = 0; i < (t == 0 ? np : np / 10 + 1); i++) {
			err = rmad_ping(target);
			if (err) {
				printf("rank %d: FAIL ping %d: %s\n", rank,
				       target, rmad_strerror(err));
				goto fail;
			}
		}
	}
	err = rmad_ping(size);
	if (err != RMAD_ERR_RANK) {
		printf("rank %d: FAIL ping(size) gave %d\n", rank, err);
		goto fail;
	}
	err = rmad_finalize();
	if (err) {
		printf("rank %d: FAIL finalize: %s\n", rank,
		       rmad_strerror(err));
		return 1;
	}
	printf("rank %d: ok (node %d/%d, %d barriers, provider %s)\n", rank,
	       in.node, in.nnodes, nb + nr, in.provider);
	return 0;
fail:
	rmad_finalize();
	return 1;
}
