/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_wait.c - test program for failure cases.
 *
 * usage: prog_wait barrier FILE   init, write "ready" to FILE.RANK, wait
 *                                 until FILE.go exists, then barrier
 *        prog_wait ping FILE      init, write FILE.RANK, ping own agent
 *                                 in a loop (up to 60 s)
 *        prog_wait pingwin FILE   the same with a window named
 *                                 'ctl "probe"' open meanwhile
 *        prog_wait early FILE     the job's last rank (by the launcher's
 *                                 PMIX_RANK/PMIX_SIZE, or
 *                                 OMPI_COMM_WORLD_*) exits with status 0
 *                                 before rmad_init; the others init
 *        prog_wait late FILE [R]  rank R (by the launcher; 0) waits
 *                                 until FILE.go exists (up to 60 s)
 *                                 before rmad_init; each rank prints how
 *                                 long its rmad_init took
 * Prints "rank R: result CODE NAME" with the first error (or 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

int main(int argc, char **argv)
{
	int rank = -1, err;
	char path[4096];
	FILE *f;
	struct rmad_info in;
	rmad_win_t win = RMAD_WIN_NULL;
	double t0;

	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "early")) {
		const char *r = getenv("OMPI_COMM_WORLD_RANK");
		const char *n = getenv("OMPI_COMM_WORLD_SIZE");

		if (!r || !n) {
			r = getenv("PMIX_RANK");
			n = getenv("PMIX_SIZE");
		}
		if (!r || !n)
			return 2;
		if (atoi(r) == atoi(n) - 1)
			return 0;
	}
	if (!strcmp(argv[1], "late")) {
		const char *r = getenv("OMPI_COMM_WORLD_RANK");

		if (!r)
			r = getenv("PMIX_RANK");
		if (!r)
			return 2;
		snprintf(path, sizeof(path), "%s.go", argv[2]);
		for (int k = 0; atoi(r) == (argc > 3 ? atoi(argv[3]) : 0) &&
		     access(path, F_OK) && k < 6000; k++)
			usleep(10000);
		t0 = rmad_wtime();
		err = rmad_init(&argc, &argv);
		printf("rank %s: init result %d %s after %.1f s\n", r, err,
		       rmad_strerror(err), rmad_wtime() - t0);
		fflush(stdout);
		if (!err)
			rmad_finalize();
		return err ? 1 : 0;
	}
	err = rmad_init(&argc, &argv);
	if (err) {
		printf("rank ?: result %d %s\n", err, rmad_strerror(err));
		return 1;
	}
	rmad_rank(&rank);
	rmad_get_info(&in);
	if (!strcmp(argv[1], "pingwin")) {
		void *base;

		err = rmad_win_allocate(64, 1, NULL, RMAD_GROUP_ALL, &base,
					&win);
		if (!err)
			err = rmad_win_set_name(win, "ctl \"probe\"");
		if (err) {
			printf("rank %d: result %d %s\n", rank, err,
			       rmad_strerror(err));
			return 1;
		}
	}
	snprintf(path, sizeof(path), "%s.%d", argv[2], rank);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d %d\n", (int)getpid(), in.agent_pid);
		fclose(f);
	}
	t0 = rmad_wtime();
	if (!strcmp(argv[1], "early")) {
		err = 0;	/* init worked: the test expects otherwise */
	} else if (!strcmp(argv[1], "barrier")) {
		snprintf(path, sizeof(path), "%s.go", argv[2]);
		while (access(path, F_OK) && rmad_wtime() - t0 < 60)
			usleep(10000);
		err = rmad_barrier();
	} else {
		do {
			err = rmad_ping(rank);
		} while (!err && rmad_wtime() - t0 < 60);
	}
	printf("rank %d: result %d %s\n", rank, err, rmad_strerror(err));
	fflush(stdout);
	if (win != RMAD_WIN_NULL)
		rmad_win_free(&win);
	rmad_finalize();
	return 0;
}
