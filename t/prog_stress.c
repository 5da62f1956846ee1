/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_stress.c - resource exhaustion as the seeds describe it: run with
 * pools of one or two elements (op_pool, client_op_pool, target_pool,
 * win_target_pool, win_slots), three windows at once and every
 * passive-target epoch kind, so that the agents keep running out of
 * target and op elements and must clean up aggressively and release
 * what the optimizations hold back.  Nothing may deadlock, every counter
 * must come out exact, and the agents' memory must not grow: each node's
 * first rank reads its agent's RSS after a warm-up round and at the end.
 *
 * Usage: prog_stress [rounds] (default 30), or prog_stress -t SECONDS
 * (make soak: as many rounds as fit, the same on every rank).  Prints
 * "rank R: ok (...)" or FAIL lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;


#define NWIN	3

/* Resident set of a process in KiB, from /proc, or -1. */
static long rss_kib(int pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* One round on window w: every epoch kind, slot s counts our adds. */
static void round_on(rmad_win_t w, int s)
{
	int64_t one = 1, old, got, zero = 0, junk;

	/*
	 * Per-target locks, several held at once: shared, since exclusive
	 * ones taken this way can deadlock when target elements are fewer
	 * than the targets (rmad(7), BUGS).
	 */
	for (int t = 0; t < size; t++)
		OK(rmad_win_lock(RMAD_LOCK_SHARED, t, 0, w));
	for (int t = 0; t < size; t++) {
		OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, (size_t)s), 1,
				   RMAD_INT64, RMAD_SUM, w));
		OK(rmad_put(&one, 1, RMAD_INT64, t, T_D(w, t, 8 + (size_t)rank), 1,
			    RMAD_INT64, w));
		OK(rmad_get(&junk, 1, RMAD_INT64, t, T_D(w, t, 8 + (size_t)rank), 1,
			    RMAD_INT64, w));
	}
	for (int t = size - 1; t >= 0; t--)
		OK(rmad_win_unlock(t, w));
	/* one target at a time: the single short op */
	for (int t = 0; t < size; t++) {
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
		OK(rmad_fetch_and_op(&one, &old, RMAD_INT64, t, T_D(w, t, (size_t)s),
				     RMAD_SUM, w));
		OK(rmad_win_unlock(t, w));
	}
	/* lock_all with flushes in between */
	OK(rmad_win_lock_all(0, w));
	for (int k = 0; k < 4; k++) {
		for (int t = 0; t < size; t++)
			OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, (size_t)s),
					   1, RMAD_INT64, RMAD_SUM, w));
		if (k % 2)
			OK(rmad_win_flush_all(w));
		else
			OK(rmad_win_flush_local_all(w));
	}
	OK(rmad_compare_and_swap(&one, &zero, &got, RMAD_INT64, 0, T_D(w, 0, 63), w));
	OK(rmad_win_unlock_all(w));
	/* NOCHECK epochs */
	OK(rmad_win_lock_all(RMAD_MODE_NOCHECK, w));
	for (int t = 0; t < size; t++)
		OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, (size_t)s), 1,
				   RMAD_INT64, RMAD_SUM, w));
	OK(rmad_win_unlock_all(w));
}

/* Adds per round to each target's slot, from each origin. */
#define ADDS	(1 + 1 + 4 + 1)

/*
 * Timed mode (-t SECONDS, make soak): every 10 rounds rank 0 tells every
 * rank, through a window of its own, whether to go on (0), to take the
 * half-way RSS (1) or to stop (2), so that all ranks run the same rounds.
 */
static int64_t decide(rmad_win_t ctl, int64_t *cbase, double t0, double secs,
		      int r)
{
	int64_t d = 0;

	if (rank == 0) {
		double el = rmad_wtime() - t0;

		/* half-way, and past the providers' pool filling (about
		 * 500 rounds over tcp;ofi_rxm): a shorter run skips the
		 * RSS check */
		d = el >= secs ? 2 : el >= secs / 2 && r >= 1000 ? 1 : 0;
		for (int r = 0; r < size; r++) {
			OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, r, 0, ctl));
			OK(rmad_put(&d, 1, RMAD_INT64, r, T_D(ctl, r, 0), 1, RMAD_INT64,
				    ctl));
			OK(rmad_win_unlock(r, ctl));
		}
	}
	rmad_barrier();
	rmad_win_sync(ctl);
	return *(volatile int64_t *)cbase;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 30, timed = 0, done = 0;
	rmad_win_t w[NWIN] = { 0 }, ctl = NULL;
	int64_t *base[NWIN], *cbase = NULL;
	struct rmad_info in;
	long rss0 = -1, rss1 = -1;
	double secs = 0, t0;
	int warm;

	if (argc > 2 && !strcmp(argv[1], "-t")) {
		timed = 1;
		secs = atof(argv[2]);
		rounds = 1 << 30;
	}

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	for (int k = 0; k < NWIN; k++) {
		OK(t_win_allocate(64 * 8, 8, k == 1 ? "target_pool=1,slots=1"
							: NULL,
				     RMAD_GROUP_ALL, &base[k], &w[k]));
		if (w[k])
			memset(base[k], 0, 64 * 8);
	}
	if (timed) {
		OK(t_win_allocate(8, 8, NULL, RMAD_GROUP_ALL, &cbase, &ctl));
		if (cbase)
			*cbase = 0;
	}
	rmad_barrier();
	/*
	 * Measure from the end of round 2; in a long run (make soak), from
	 * half-way: tcp;ofi_rxm's buffer pools keep touching new pages of
	 * their fixed size for a few hundred rounds (about 12 MiB here,
	 * then flat), which is not growth.
	 */
	warm = timed ? -1 : rounds >= 100 ? rounds / 2 : 1;
	t0 = rmad_wtime();
	for (int r = 0; r < rounds && !fails; r++) {
		for (int k = 0; k < NWIN; k++)
			if (w[k])
				round_on(w[k], 1 + k);
		done = r + 1;
		if (r == warm) {
			rmad_barrier();
			if (in.local_rank == 0)
				rss0 = rss_kib(in.agent_pid);
		}
		if (timed && ctl && r % 10 == 9) {
			int64_t d = decide(ctl, cbase, t0, secs, r);

			if (d == 1 && warm < 0) {
				warm = r;
				if (in.local_rank == 0)
					rss0 = rss_kib(in.agent_pid);
			}
			if (d == 2)
				break;
		}
	}
	rounds = done;
	rmad_barrier();
	if (in.local_rank == 0)
		rss1 = rss_kib(in.agent_pid);
	for (int k = 0; k < NWIN; k++) {
		int64_t want = (int64_t)size * ADDS * rounds;

		if (!w[k] || fails)
			continue;
		CHECK(base[k][1 + k] == want, "window %d: counter %lld, want "
		      "%lld", k, (long long)base[k][1 + k], (long long)want);
	}
	if (in.local_rank == 0 && timed && rss0 < 0)
		printf("rank %d: agent RSS not checked: %d rounds are too few\n",
		       rank, rounds);
	if (in.local_rank == 0 && rss0 > 0 && rss1 > 0) {
		printf("rank %d: agent %d RSS %ld KiB after round %d, %ld KiB "
		       "after %d\n", rank, in.agent_pid, rss0, warm + 1, rss1,
		       rounds);
		CHECK(rss1 - rss0 < 2048, "agent RSS grew by %ld KiB",
		      rss1 - rss0);
	}
	rmad_barrier();
	for (int k = 0; k < NWIN; k++)
		if (w[k])
			OK(rmad_win_free(&w[k]));
	if (ctl)
		OK(rmad_win_free(&ctl));
	return t_finish(rank, fails, " (node %d of %d, %d rounds)", in.node,
			in.nnodes, rounds);
}
