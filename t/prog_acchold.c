/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_acchold.c - a window member's accumulate lock held by a live
 * client for HOLD_MS, as a client that is descheduled or stopped in the
 * middle of an accumulate would hold it.  Three ranks on three nodes:
 *
 *   rank 0 takes the accumulate lock of its own window W (the word in
 *      the window's control page, with its own client slot, which it
 *      learns from the shared-lock bytes), holds it HOLD_MS, checks
 *      that nothing of rank 1's epoch was applied meanwhile and that
 *      rank 2's operations on another window V all were, and lets go;
 *   rank 1 sends an epoch to W at rank 0: accumulates, a put, a large
 *      accumulate (whose operands the target's agent reads; first, with
 *      "granted"), a fetch_and_op and a flush, which wait for the lock,
 *      in order, and
 *      then succeed (or, with "timeout", fail with RMAD_ERR_SYNC once
 *      the agent's acc_lock_timeout_ms has passed); the first one
 *      carries the epoch's lock request, or, with "granted", the lock
 *      was granted before (an accumulate and a flush).
 *      Before its flush, rank 1 runs NV1 accumulate+flush rounds on V
 *      at rank 0: they pass its kept packets on W and complete while
 *      the lock is held;
 *   rank 2 meanwhile runs NV accumulate+flush rounds on V at rank 0,
 *      through the same agent: they complete while the lock is held.
 *
 * With "queued" instead: rank 2 holds W's exclusive lock at rank 0
 * first, so that rank 1's first accumulate, which carries its shared
 * lock request, waits in the lock queue; rank 0 takes the accumulate
 * lock, rank 2 unlocks, and the grant finds the accumulate lock held:
 * the granted op waits for it in the agent (not in a wait that failed
 * it after 100 ms) and is applied, answered and followed by the rest
 * once rank 0 lets go.
 *
 * The lock word's layout is rmad's own (proto/rmad_shm.h): this is a
 * white-box test of the agent.  Prints "rank R: ok (...)" lines.
 *
 * With "small" (granted as well, and no large accumulate, whose pull
 * would keep the origin's later accumulates at the origin): the whole
 * epoch reaches the target's agent, which keeps it, and rank 1's
 * rounds on V must pass it there.
 *
 * Usage: prog_acchold [HOLD_MS [timeout] [granted | queued | small]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rmad.h>

#include "prog.h"
#include "rmad_shm.h"

static int rank, size, fails;

#define NW	64		/* int64s of W that the epoch adds to */
#define NB	8192		/* int64s of its large accumulate, at
				 * NW + 8: 64 KiB, over rdma_threshold */
#define NV	100		/* rank 2's rounds on V */
#define NV1	20		/* rank 1's, during its epoch on W */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* n accumulate+flush rounds adding 1 to int64 d of V at rank 0 */
static void v_rounds(rmad_win_t v, size_t d, int n)
{
	int64_t one = 1;

	OK(rmad_win_lock_all(0, v));
	for (int k = 0; k < n; k++) {
		OK(rmad_accumulate(&one, 1, RMAD_INT64, 0, d, 1, RMAD_INT64,
				   RMAD_SUM, v));
		OK(rmad_win_flush(0, v));
	}
	OK(rmad_win_unlock_all(v));
}

/* Our client slot: the one shared-lock byte a shared lock of ours on
 * our own window sets in its control page (-1 if not exactly one). */
static int my_slot(struct rmad_win_ctl *ctl, rmad_win_t w)
{
	int slot = -1, n = 0;

	OK(rmad_win_lock(RMAD_LOCK_SHARED, rank, 0, w));
	for (int s = 0; s < RMAD_WIN_MAX_LOCAL; s++)
		if (__atomic_load_n(&ctl->shared_by[s], __ATOMIC_ACQUIRE) ==
		    RMAD_SB_HELD) {
			slot = s;
			n++;
		}
	OK(rmad_win_unlock(rank, w));
	return n == 1 ? slot : -1;
}

/* "queued": the same epoch, its first op granted behind rank 2's
 * exclusive lock while rank 0 holds the accumulate lock. */
static void queued(rmad_win_t w, int64_t *wb, int hold, double *waited,
		   int *rc)
{
	struct rmad_win_ctl *ctl = (struct rmad_win_ctl *)
		((char *)wb - RMAD_WIN_CTL_SIZE);
	int64_t one = 1, got = -1;
	/* before rank 2's exclusive lock, which would keep ours out */
	int slot = rank == 0 ? my_slot(ctl, w) : -1;
	double t0;

	rmad_barrier();
	if (rank == 2) {
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w));
		OK(rmad_put(&one, 1, RMAD_INT64, 0, NW + 2, 1, RMAD_INT64,
			    w));
		OK(rmad_win_flush(0, w));	/* held at rank 0 now */
	}
	rmad_barrier();			/* A: exclusive held */
	t0 = now_ms();
	if (rank == 1) {
		OK(rmad_win_lock_all(0, w));
		/* carries the shared request: queued behind rank 2's */
		*rc = rmad_accumulate(&one, 1, RMAD_INT64, 0, 0, 1,
				      RMAD_INT64, RMAD_SUM, w);
	}
	rmad_barrier();			/* B */
	if (rank == 0) {
		uint32_t free_word = 0;

		sleep_ms(200);		/* rank 1's request is queued */
		CHECK(slot >= 0 && __atomic_compare_exchange_n(
			      &ctl->acc_lock, &free_word, (uint32_t)slot + 1,
			      0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED),
		      "could not take the accumulate lock (slot %d, %#x)",
		      slot, free_word);
		rmad_barrier();		/* C: held */
		sleep_ms(hold);
		rmad_win_sync(w);
		CHECK(wb[0] == 0, "the granted op was applied while the "
		      "accumulate lock was held ([0] %lld)",
		      (long long)wb[0]);
		__atomic_store_n(&ctl->acc_lock, 0, __ATOMIC_RELEASE);
	} else {
		rmad_barrier();		/* C */
		if (rank == 2)
			OK(rmad_win_unlock(0, w));	/* the grant */
		if (rank == 1) {
			if (!*rc)
				*rc = rmad_fetch_and_op(&one, &got,
							RMAD_INT64, 0, 0,
							RMAD_SUM, w);
			if (!*rc)
				*rc = rmad_win_flush(0, w);
			*waited = now_ms() - t0;
			OK(rmad_win_unlock_all(w));
			CHECK(!*rc && got == 1, "the queued epoch: %d, "
			      "fetched %lld (want 1)", *rc, (long long)got);
			CHECK(*waited > hold / 2, "it came back after %.0f "
			      "ms, while the lock was held %d ms", *waited,
			      hold);
		}
	}
	rmad_barrier();			/* D */
	if (rank == 0) {
		rmad_win_sync(w);
		CHECK(wb[0] == 2, "after the lock: [0] %lld, want 2",
		      (long long)wb[0]);
	}
}

int main(int argc, char **argv)
{
	int hold = argc > 1 ? atoi(argv[1]) : 1000;
	int expect_timeout = 0, granted = 0, inqueue = 0, small = 0;
	int64_t *wb = NULL, *vb = NULL, one = 1, got = -1, seven = 7;
	int64_t *ones = calloc(NB, sizeof(int64_t));
	rmad_win_t w = RMAD_WIN_NULL, v = RMAD_WIN_NULL;
	struct rmad_info in;
	double waited = 0;
	int rc_ops = 0, rc_flush = 0;

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	for (int k = 2; k < argc; k++) {
		expect_timeout |= !strcmp(argv[k], "timeout");
		granted |= !strcmp(argv[k], "granted");
		inqueue |= !strcmp(argv[k], "queued");
		small |= !strcmp(argv[k], "small");
	}
	granted |= small;
	OK(rmad_win_allocate((NW + 8 + NB) * 8, 8, NULL, RMAD_GROUP_ALL, &wb,
			     &w));
	OK(rmad_win_allocate(8 * 8, 8, NULL, RMAD_GROUP_ALL, &vb, &v));
	for (int k = 0; ones && k < NB; k++)
		ones[k] = 1;
	if (!w || !v || !ones || size != 3 || in.nnodes < 3) {
		CHECK(0, "needs 3 ranks on 3 nodes (%d ranks, %d nodes)",
		      size, in.nnodes);
		goto out;
	}
	memset(wb, 0, (NW + 8 + NB) * 8);
	memset(vb, 0, 8 * 8);
	rmad_barrier();
	if (inqueue) {
		queued(w, wb, hold, &waited, &rc_flush);
		goto out;
	}
	if (rank == 1 && granted) {
		/* the lock granted first, before the accumulate lock is
		 * taken: the epoch's ops need no lock request */
		OK(rmad_win_lock_all(0, w));
		OK(rmad_accumulate(&one, 1, RMAD_INT64, 0, NW + 1, 1,
				   RMAD_INT64, RMAD_SUM, w));
		OK(rmad_win_flush(0, w));
	}
	rmad_barrier();
	if (rank == 0) {
		/* allocated: the control page lies right before the base */
		struct rmad_win_ctl *ctl = (struct rmad_win_ctl *)
			((char *)wb - RMAD_WIN_CTL_SIZE);
		int slot = my_slot(ctl, w);
		uint32_t free_word = 0;

		CHECK(slot >= 0, "no slot of ours in the shared-lock bytes");
		CHECK(slot < 0 || __atomic_compare_exchange_n(
			      &ctl->acc_lock, &free_word, (uint32_t)slot + 1,
			      0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED),
		      "the accumulate lock was not free (%#x)", free_word);
		rmad_barrier();		/* held: go */
		sleep_ms(hold);
		/* before we let go: rank 1's epoch waits, whole; rank 2's
		 * rounds on the other window are all in */
		OK(rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, v));
		rmad_win_sync(v);
		CHECK(vb[0] == NV, "the other window has %lld of %d of rank "
		      "2's accumulates after %d ms", (long long)vb[0], NV,
		      hold);
		CHECK(vb[1] == NV1, "the other window has %lld of %d of rank "
		      "1's accumulates after %d ms", (long long)vb[1], NV1,
		      hold);
		OK(rmad_win_unlock(0, v));
		rmad_win_sync(w);
		/* (timing out, the put after the refused sums may land) */
		CHECK(wb[0] == 0 && (expect_timeout || wb[NW] == 0),
		      "rank 1's epoch was applied while the lock was held "
		      "([0] %lld, [%d] %lld)", (long long)wb[0], NW,
		      (long long)wb[NW]);
		__atomic_store_n(&ctl->acc_lock, 0, __ATOMIC_RELEASE);
		rmad_barrier();		/* rank 1's epoch is over */
		rmad_win_sync(w);
		if (!expect_timeout) {
			int bad = 0;

			for (int k = 0; k < NW; k++)
				bad += wb[k] != 2 + (k == 0);
			for (int k = 0; k < NB; k++)
				bad += wb[NW + 8 + k] != !small;
			CHECK(!bad && wb[NW] == 7 && wb[NW + 1] == granted,
			      "after the lock: %d of %d sums wrong, put %lld "
			      "(want 7), [%d] %lld", bad, NW + NB,
			      (long long)wb[NW], NW + 1,
			      (long long)wb[NW + 1]);
		}
	} else if (rank == 1) {
		double t0;

		rmad_barrier();
		t0 = now_ms();
		if (!granted)
			OK(rmad_win_lock_all(0, w));
		else if (!small)
			/* the large one first: its read waits for the lock
			 * in the target's agent, not behind a kept packet */
			rc_ops = rmad_accumulate(ones, NB, RMAD_INT64, 0,
						 NW + 8, NB, RMAD_INT64,
						 RMAD_SUM, w);
		for (int r = 0; r < 2 && !rc_ops; r++)
			for (int k = 0; k < NW && !rc_ops; k++)
				rc_ops = rmad_accumulate(&one, 1, RMAD_INT64,
							 0, (size_t)k, 1,
							 RMAD_INT64,
							 RMAD_SUM, w);
		if (!rc_ops)
			rc_ops = rmad_put(&seven, 1, RMAD_INT64, 0, NW, 1,
					  RMAD_INT64, w);
		if (!rc_ops && !granted)
			rc_ops = rmad_accumulate(ones, NB, RMAD_INT64, 0,
						 NW + 8, NB, RMAD_INT64,
						 RMAD_SUM, w);
		/* in order after the sums: it fetches 2 */
		if (!rc_ops)
			rc_ops = rmad_fetch_and_op(&one, &got, RMAD_INT64, 0,
						   0, RMAD_SUM, w);
		/* our other window's ops to the same target pass the kept
		 * ones (granted: those are kept in the target's agent) */
		v_rounds(v, 1, NV1);
		rc_flush = rmad_win_flush(0, w);
		waited = now_ms() - t0;
		rmad_win_unlock_all(w);
		if (expect_timeout) {
			CHECK(rc_ops || rc_flush, "the epoch succeeded "
			      "though the lock stayed held %d ms", hold);
		} else {
			CHECK(!rc_ops && !rc_flush, "the epoch failed: ops "
			      "%d, flush %d", rc_ops, rc_flush);
			CHECK(got == 2, "fetch_and_op fetched %lld, not 2 "
			      "(order)", (long long)got);
			CHECK(waited > hold / 2, "the flush came back after "
			      "%.0f ms, while the lock was held %d ms",
			      waited, hold);
		}
		rmad_barrier();
	} else {
		rmad_barrier();
		v_rounds(v, 0, NV);
		rmad_barrier();
	}
out:
	rmad_barrier();
	if (w)
		OK(rmad_win_free(&w));
	if (v)
		OK(rmad_win_free(&v));
	free(ones);
	return t_finish(rank, fails, " (node %d, hold %d ms, ops %d, flush "
			"%d, waited %.0f ms)", in.node, hold, rc_ops,
			rc_flush, waited);
}
