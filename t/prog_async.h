/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_async.h - the "completes while the target computes" check that
 * the window-flavor programs share.  Included after the including file
 * defines `int rank, size, fails` (prog.h's CHECK and OK use them).
 */
#ifndef RMAD_T_PROG_ASYNC_H
#define RMAD_T_PROG_ASYNC_H

static void spin_ms(double ms)
{
	double t0 = rmad_wtime();

	while ((rmad_wtime() - t0) * 1e3 < ms)
		;
}

/*
 * Rank 0 computes ms milliseconds without calling rmad while every other
 * rank runs 20 exclusive lock / put / get / unlock epochs on its word
 * of rank 0's memory mem, at displacement base0 + rank * unit; they must
 * be done within half of it, and rank 0 then finds each rank's value.
 */
static void t_async_epochs(rmad_win_t w, const int64_t *mem, double ms,
			   uint64_t base0, uint64_t unit)
{
	int64_t v = rank, got = -1;
	size_t d = (size_t)(base0 + unit * (uint64_t)rank);
	double t0, dt;

	OK(rmad_barrier());
	if (rank == 0) {
		spin_ms(ms);
	} else {
		t0 = rmad_wtime();
		for (int i = 0; i < 20; i++) {
			OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w));
			OK(rmad_put(&v, 1, RMAD_INT64, 0, d, 1, RMAD_INT64,
				    w));
			OK(rmad_get(&got, 1, RMAD_INT64, 0, d, 1, RMAD_INT64,
				    w));
			OK(rmad_win_unlock(0, w));
		}
		dt = (rmad_wtime() - t0) * 1e3;
		CHECK(got == rank, "got %lld back", (long long)got);
		CHECK(dt < ms / 2, "20 epochs on a computing target took "
		      "%.1f ms of its %.0f", dt, ms);
		if (!fails)
			printf("rank %d: ok: 20 epochs in %.1f ms while the "
			       "target computed %.0f ms\n", rank, dt, ms);
	}
	OK(rmad_barrier());
	if (rank == 0) {
		for (int r = 1; r < size; r++)
			CHECK(mem[r] == r, "slot %d: %lld", r,
			      (long long)mem[r]);
		if (!fails)
			printf("rank 0: ok: computed %.0f ms\n", ms);
	}
}

#endif
