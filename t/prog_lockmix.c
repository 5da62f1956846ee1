/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_lockmix.c - lock patterns that deadlock when the runtime gets
 * lock granting or lock order wrong.  At the end every target's counter
 * must be exact.
 *
 * mix: shared lock_all epochs and exclusive one-target epochs at once:
 *   even ranks add 1 to every target under lock_all, odd ranks add 2 to
 *   one target under an exclusive lock.  A lock_all holds its same-node
 *   lock while it waits for remote ones, so a target that kept shared
 *   requests behind a queued exclusive one would deadlock (rmad(7),
 *   "Lock fairness").
 * order: every rank locks every target, in rank order, odd ones (and
 *   every third round all) exclusive, then adds 1 to each, last target
 *   first, and unlocks them starting from its own rank.  Only locks
 *   acquired in call order keep this from deadlocking (rmad(7), "Lock
 *   order").
 *
 * Usage: prog_lockmix mix|order [iterations] (default 300).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, fails;

int main(int argc, char **argv)
{
	int size, order = argc > 1 && !strcmp(argv[1], "order");
	int n = argc > 2 ? atoi(argv[2]) : 300;
	int64_t *base, one = 1, want = 0, got = -1;
	rmad_win_t w = NULL;
	struct rmad_info in;

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	OK(t_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		return 1;
	base[0] = 0;
	rmad_barrier();
	for (int i = 0; i < n && !fails; i++) {
		if (order) {
			int64_t junk;

			for (int t = 0; t < size; t++)
				OK(rmad_win_lock(t % 2 || i % 3 == 0 ?
						 RMAD_LOCK_EXCLUSIVE :
						 RMAD_LOCK_SHARED, t, 0, w));
			for (int t = size - 1; t >= 0; t--) {
				OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, 0),
						   1, RMAD_INT64, RMAD_SUM,
						   w));
				OK(rmad_get(&junk, 1, RMAD_INT64, t, T_D(w, t, 1), 1,
					    RMAD_INT64, w));
			}
			for (int k = 0; k < size; k++)
				OK(rmad_win_unlock((rank + k) % size, w));
		} else if (rank % 2 == 0) {
			OK(rmad_win_lock_all(0, w));
			for (int t = 0; t < size; t++)
				OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, 0),
						   1, RMAD_INT64, RMAD_SUM,
						   w));
			OK(rmad_win_unlock_all(w));
		} else {
			int t = (i + rank) % size;

			OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
			OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, 0), 1,
					   RMAD_INT64, RMAD_SUM, w));
			OK(rmad_accumulate(&one, 1, RMAD_INT64, t, T_D(w, t, 0), 1,
					   RMAD_INT64, RMAD_SUM, w));
			OK(rmad_win_unlock(t, w));
		}
	}
	rmad_barrier();
	/* what every rank added to this one */
	for (int r = 0; r < size; r++) {
		if (order || r % 2 == 0) {
			want += n;
			continue;
		}
		for (int i = 0; i < n; i++)
			if ((i + r) % size == rank)
				want += 2;
	}
	OK(rmad_win_lock(RMAD_LOCK_SHARED, rank, 0, w));
	got = base[0];
	OK(rmad_win_unlock(rank, w));
	CHECK(got == want, "counter %lld, want %lld", (long long)got,
	      (long long)want);
	rmad_barrier();
	OK(rmad_win_free(&w));
	return t_finish(rank, fails, " (node %d, %d iterations)", in.node,
			n);
}
