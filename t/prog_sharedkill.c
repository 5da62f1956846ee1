/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_sharedkill.c - a same-node process killed in the middle of taking
 * or giving back a shared lock, simulated by writing its shared_by byte
 * (rmad_shm.h, RMAD_SB_*) and the lock word by hand and killing itself:
 *
 *   intent        INTENT written, count not taken
 *   intent-cas    INTENT written, count taken
 *   releasing     holds the lock, RELEASING written, count not given back
 *   released      holds the lock, RELEASING written, count given back
 *   small         in a small accumulate (its acc_small count up)
 *   bulk          in a bulk accumulate (acc_lock held, acc_big set)
 *
 * Rank 1 (on rank 0's node) plays the dying process on rank 0's window
 * while rank 0 holds a shared lock of its own.  After the death rank 0's
 * agent must leave exactly rank 0's count in the word (no phantom
 * holder, no stolen count; no accumulate word left set), and every other
 * rank must then get an exclusive lock within 30 s.  Prints "rank R: ok ..." or FAIL lines.
 *
 * Usage: prog_sharedkill MODE
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"
#include "accword.h"
#include "rmad_shm.h"

static int rank, fails;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "intent";
	struct rmad_win_ctl *ctl = NULL;
	int size, du, slot = -1;
	int64_t *base, add = 10, v = -1;
	size_t wsize;
	void *p0 = NULL;
	rmad_win_t w = NULL;
	double t0;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	alarm(60);
	OK(rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		return 1;
	base[0] = 0;
	if (rank <= 1) {
		OK(rmad_win_shared_query(w, 0, &wsize, &du, &p0));
		ctl = p0 ? (struct rmad_win_ctl *)((char *)p0 -
						   RMAD_WIN_CTL_SIZE) : NULL;
		CHECK(ctl, "rank 0's window is not shared with rank %d", rank);
	}
	rmad_barrier();
	if (rank == 1 && ctl) {
		OK(rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w));
		for (int s = 0; s < (int)sizeof(ctl->shared_by); s++)
			if (ctl->shared_by[s] == RMAD_SB_HELD)
				slot = s;
		CHECK(slot >= 0, "no shared_by byte says HELD");
		if (slot >= 0 && (!strcmp(mode, "bulk") ||
				  !strcmp(mode, "small"))) {
			OK(rmad_win_unlock(0, w));
			if (!strcmp(mode, "bulk")) {
				/* in a bulk accumulate (accword.h) */
				__atomic_store_n(&ctl->acc_lock,
						 (uint32_t)slot + 1,
						 __ATOMIC_SEQ_CST);
				__atomic_store_n(&ctl->acc_big, 1,
						 __ATOMIC_SEQ_CST);
			}
			acc_small_mark(ctl, (uint32_t)slot);
			__atomic_store_n(&ctl->acc_small[slot], 1,
					 __ATOMIC_SEQ_CST);
		} else if (slot >= 0 && !strncmp(mode, "intent", 6)) {
			OK(rmad_win_unlock(0, w));
			ctl->shared_by[slot] = RMAD_SB_INTENT;
			if (!strcmp(mode, "intent-cas"))
				__atomic_add_fetch(&ctl->lock, 1,
						   __ATOMIC_SEQ_CST);
		} else if (slot >= 0) {
			ctl->shared_by[slot] = RMAD_SB_RELEASING;
			if (!strcmp(mode, "released"))
				__atomic_sub_fetch(&ctl->lock, 1,
						   __ATOMIC_SEQ_CST);
		}
	}
	/* rank 0 locks only now, so rank 1 found its own byte above */
	rmad_barrier();
	if (rank == 0)
		OK(rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w));
	rmad_barrier();
	if (rank == 1) {
		fflush(stdout);
		raise(SIGKILL);
	}
	usleep(300 * 1000);	/* the agent sees the death */
	if (rank == 0) {
		uint32_t lw = __atomic_load_n(&ctl->lock, __ATOMIC_ACQUIRE);

		CHECK(!(lw & RMAD_LW_EXCL) && (lw & RMAD_LW_VALUE) == 1,
		      "%s: lock word %#x after the death, want one shared "
		      "holder (ours)", mode, lw);
		if (ctl) {
			int64_t big[8], one = 1, old = -1;

			CHECK(!ctl->acc_big && !ctl->acc_lock,
			      "%s: accumulate words %u, %#x left", mode,
			      ctl->acc_big, ctl->acc_lock);
			for (int i = 0; i < 8; i++)
				big[i] = 0;
			/* a small and (t/rma-kill.sh sets the threshold
			 * low) a bulk accumulate go through */
			t0 = rmad_wtime();
			OK(rmad_fetch_and_op(&one, &old, RMAD_INT64, 0, 1,
					     RMAD_SUM, w));
			OK(rmad_accumulate(big, 7, RMAD_INT64, 0, 1, 7,
					   RMAD_INT64, RMAD_SUM, w));
			CHECK(rmad_wtime() - t0 < 2, "%s: accumulates took "
			      "%.1f s", mode, rmad_wtime() - t0);
		}
		OK(rmad_win_unlock(0, w));
	}
	usleep(100 * 1000);
	if (rank >= 2) {
		t0 = rmad_wtime();
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w));
		OK(rmad_accumulate(&add, 1, RMAD_INT64, 0, 0, 1, RMAD_INT64,
				   RMAD_SUM, w));
		OK(rmad_get(&v, 1, RMAD_INT64, 0, 0, 1, RMAD_INT64, w));
		OK(rmad_win_unlock(0, w));
		CHECK(v >= 10, "read %lld", (long long)v);
		if (!fails)
			printf("rank %d: ok: %s: exclusive lock after the "
			       "death in %.3f s\n", rank, mode,
			       rmad_wtime() - t0);
	}
	if (rank == 0) {
		int64_t want = 10 * (size - 2);

		t0 = rmad_wtime();
		while (rmad_wtime() - t0 < 30 &&
		       *(volatile int64_t *)base < want)
			usleep(1000);
		if (!fails)
			printf("rank 0: ok: %s: one shared count left\n",
			       mode);
		usleep(100 * 1000);
	}
	if (fails)
		printf("rank %d: FAIL %d checks\n", rank, fails);
	fflush(stdout);
	_exit(fails != 0);
}
