/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_pscw.c - active target by post/start/complete/wait: a ring
 * exchange with exact results for put, get, accumulate, fetch_and_op and
 * compare_and_swap; overlapping subsets (each rank the target of the two
 * before it and the origin of the two after), twenty epochs in a row;
 * rmad_win_test polled until done; the assert combinations MPI allows
 * (NOCHECK on both sides, NOSTORE, NOPUT); a target that computes
 * between post and wait while its origins finish; and misuse.  Each
 * rank prints "rank R: ok" or "rank R: FAIL ..." lines and exits
 * non-zero on failure.
 *
 * usage: prog_pscw [compute_ms]
 *        prog_pscw die RANK
 *
 * With "die", rank 0 posts to every other rank and waits; rank RANK
 * SIGKILLs itself inside its access epoch, and rank 0's wait must return
 * RMAD_ERR_PROC_FAILED within 30 s ("rank 0: ok: wait after ...").
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define SLOTS 64

static void spin_ms(double ms)
{
	double t0 = rmad_wtime();

	while ((rmad_wtime() - t0) * 1e3 < ms)
		;
}

/* A group of the n ranks rank + d[0], rank + d[1]... (mod size), or of
 * fewer when they repeat. */
static rmad_group_t ring_group(const int *d, int n)
{
	int r[8], k = 0;
	rmad_group_t g = RMAD_GROUP_NULL;

	for (int i = 0; i < n; i++) {
		int x = ((rank + d[i]) % size + size) % size, dup = 0;

		for (int j = 0; j < k; j++)
			dup |= r[j] == x;
		if (!dup)
			r[k++] = x;
	}
	if (rmad_group_incl(r, k, &g))
		printf("rank %d: FAIL group_incl\n", rank);
	return g;
}

static int die(int victim)
{
	int64_t *base = NULL, v = 1;
	rmad_win_t w = RMAD_WIN_NULL;
	rmad_group_t g;
	int zero = 0, e;
	double t0;

	if (rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w)) {
		printf("rank %d: FAIL setup\n", rank);
		return 1;
	}
	if (rank == 0) {
		int *r = malloc(sizeof(int) * size);

		for (int i = 1; i < size; i++)
			r[i - 1] = i;
		rmad_group_incl(r, size - 1, &g);
		free(r);
		rmad_win_post(g, 0, w);
		rmad_barrier();
		t0 = rmad_wtime();
		e = rmad_win_wait(w);
		if (e == RMAD_ERR_PROC_FAILED && rmad_wtime() - t0 < 30)
			printf("rank 0: ok: wait after a member died: %s in "
			       "%.3f s\n", rmad_strerror(e), rmad_wtime() - t0);
		else
			printf("rank 0: FAIL wait after a member died: %s in "
			       "%.3f s\n", rmad_strerror(e), rmad_wtime() - t0);
		fflush(stdout);
		_exit(0);
	}
	rmad_group_incl(&zero, 1, &g);
	rmad_barrier();
	rmad_win_start(g, 0, w);
	rmad_put(&v, 1, RMAD_INT64, 0, (size_t)rank, 1, RMAD_INT64, w);
	if (rank == victim) {
		fflush(stdout);
		raise(SIGKILL);
	}
	/* whether it fails now (the job lost a rank) does not matter */
	rmad_win_complete(w);
	fflush(stdout);
	_exit(0);
}

/* 1. the ring: post to the previous rank, start to the next */
static void ring(rmad_win_t w, int64_t *base)
{
	int nxt = (rank + 1) % size, prv = (rank + size - 1) % size;
	int dn = 1, dp = -1;
	rmad_group_t gt = ring_group(&dn, 1), go = ring_group(&dp, 1);
	int64_t v = 1000 + rank, got = -1, add = rank + 1, old = -1,
		cmp = 0, swp = rank + 7, res = -1;

	OK(rmad_win_post(go, 0, w));
	OK(rmad_win_start(gt, 0, w));
	OK(rmad_put(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w));
	OK(rmad_get(&got, 1, RMAD_INT64, nxt, 1, 1, RMAD_INT64, w));
	OK(rmad_accumulate(&add, 1, RMAD_INT64, nxt, 2, 1, RMAD_INT64,
			   RMAD_SUM, w));
	OK(rmad_fetch_and_op(&add, &old, RMAD_INT64, nxt, 3, RMAD_SUM, w));
	OK(rmad_compare_and_swap(&swp, &cmp, &res, RMAD_INT64, nxt, 4, w));
	OK(rmad_win_complete(w));
	OK(rmad_win_wait(w));
	CHECK(base[0] == 1000 + prv, "ring put: %lld", (long long)base[0]);
	CHECK(got == 500 + nxt, "ring get: %lld", (long long)got);
	CHECK(base[2] == 1 + prv + 1 && base[3] == prv + 1 && old == 0,
	      "ring accumulate/fetch_and_op: %lld %lld %lld",
	      (long long)base[2], (long long)base[3], (long long)old);
	CHECK(base[4] == prv + 7 && res == 0, "ring cas: %lld %lld",
	      (long long)base[4], (long long)res);
	rmad_group_free(&gt);
	rmad_group_free(&go);
}

/* 2. each rank the target of rank-1 and rank-2, the origin of rank+1
 * and rank+2; twenty epochs, slots by epoch parity */
static void overlap(rmad_win_t w, int64_t *base)
{
	int dt[2] = { 1, 2 }, dor[2] = { -1, -2 };
	rmad_group_t gt = ring_group(dt, 2), go = ring_group(dor, 2);
	int nt, no;

	rmad_group_size(gt, &nt);
	rmad_group_size(go, &no);
	for (int k = 0, bad = 0; k < 20; k++) {
		int s = 8 + (k & 1);
		int64_t one = 1;

		base[s] = 0;
		rmad_barrier();	/* the slot is clear before anyone adds */
		OK(rmad_win_post(go, 0, w));
		OK(rmad_win_start(gt, 0, w));
		for (int i = 0; i < nt; i++) {
			int r[2];

			rmad_group_ranks(gt, r);
			OK(rmad_accumulate(&one, 1, RMAD_INT64, r[i],
					   (size_t)s, 1, RMAD_INT64, RMAD_SUM,
					   w));
		}
		OK(rmad_win_complete(w));
		OK(rmad_win_wait(w));
		if (!bad && base[s] != no) {
			CHECK(0, "overlapping subsets, epoch %d: %lld of %d",
			      k, (long long)base[s], no);
			bad = 1;
		}
	}
	rmad_group_free(&gt);
	rmad_group_free(&go);
}

/* 3. rmad_win_test until done; 4. the asserts */
static void test_and_asserts(rmad_win_t w, int64_t *base)
{
	int nxt = (rank + 1) % size, prv = (rank + size - 1) % size;
	int dn = 1, dp = -1, flag = 0, polls = 0;
	rmad_group_t gt = ring_group(&dn, 1), go = ring_group(&dp, 1);
	static const int post_as[] = {
		0, RMAD_MODE_NOSTORE, RMAD_MODE_NOPUT,
		RMAD_MODE_NOSTORE | RMAD_MODE_NOPUT, RMAD_MODE_NOCHECK,
		RMAD_MODE_NOCHECK | RMAD_MODE_NOSTORE | RMAD_MODE_NOPUT,
	};
	int64_t v;

	OK(rmad_win_post(go, 0, w));
	OK(rmad_win_start(gt, 0, w));
	v = 3000 + rank;
	OK(rmad_put(&v, 1, RMAD_INT64, nxt, 10, 1, RMAD_INT64, w));
	OK(rmad_win_complete(w));
	while (!flag) {
		OK(rmad_win_test(w, &flag));
		polls++;
		if (polls > 50000000)
			break;
	}
	CHECK(flag && base[10] == 3000 + prv, "test: flag %d after %d "
	      "polls, %lld", flag, polls, (long long)base[10]);
	CHECK(rmad_win_test(w, &flag) == RMAD_ERR_SYNC,
	      "test after the exposure ended: RMAD_ERR_SYNC");

	for (size_t a = 0; a < sizeof(post_as) / sizeof(post_as[0]); a++) {
		int nocheck = post_as[a] & RMAD_MODE_NOCHECK;
		int put = !(post_as[a] & RMAD_MODE_NOPUT);

		base[11] = -1;
		base[12] = 5;
		/* NOCHECK: the post is in before any start (the barrier) */
		OK(rmad_win_post(go, post_as[a], w));
		if (nocheck)
			rmad_barrier();
		OK(rmad_win_start(gt, nocheck, w));
		v = (int64_t)a * 10 + rank;
		if (put)	/* NOPUT: the target is not updated by puts */
			OK(rmad_put(&v, 1, RMAD_INT64, nxt, 11, 1, RMAD_INT64,
				    w));
		else
			OK(rmad_get(&v, 1, RMAD_INT64, nxt, 12, 1, RMAD_INT64,
				    w));
		OK(rmad_win_complete(w));
		OK(rmad_win_wait(w));
		if (nocheck)
			rmad_barrier();	/* our reads before the next post */
		CHECK(put ? base[11] == (int64_t)a * 10 + prv : v == 5,
		      "post assert %#x: %lld %lld", post_as[a],
		      (long long)base[11], (long long)v);
	}
	rmad_group_free(&gt);
	rmad_group_free(&go);
}

/* 5. a computing target: the origins' epochs end while it computes */
static void computing(rmad_win_t w, int64_t *base, double compute_ms)
{
	int zero = 0;
	rmad_group_t g0 = RMAD_GROUP_NULL, gall = RMAD_GROUP_NULL;
	double t0, dt;
	int64_t v = rank + 1;

	base[20] = 0;
	rmad_barrier();
	if (rank == 0) {
		int *r = malloc(sizeof(int) * size);

		for (int i = 1; i < size; i++)
			r[i - 1] = i;
		OK(rmad_group_incl(r, size - 1, &gall));
		free(r);
		OK(rmad_win_post(gall, 0, w));
		rmad_barrier();
		spin_ms(compute_ms);
		t0 = rmad_wtime();
		OK(rmad_win_wait(w));
		dt = (rmad_wtime() - t0) * 1e3;
		CHECK(base[20] == (int64_t)size * (size + 1) / 2 - 1,
		      "accumulates under a computing target: %lld",
		      (long long)base[20]);
		CHECK(dt < compute_ms / 4, "the wait after computing took "
		      "%.1f ms (the origins were done)", dt);
		printf("rank 0: computed %.0f ms, then waited %.2f ms\n",
		       compute_ms, dt);
		rmad_group_free(&gall);
	} else {
		OK(rmad_group_incl(&zero, 1, &g0));
		rmad_barrier();
		t0 = rmad_wtime();
		OK(rmad_win_start(g0, 0, w));
		OK(rmad_accumulate(&v, 1, RMAD_INT64, 0, 20, 1, RMAD_INT64,
				   RMAD_SUM, w));
		OK(rmad_win_complete(w));
		dt = (rmad_wtime() - t0) * 1e3;
		CHECK(dt < compute_ms / 2, "start/acc/complete to a computing "
		      "target took %.1f ms", dt);
		printf("rank %d: epoch to a computing target: %.2f ms\n",
		       rank, dt);
		rmad_group_free(&g0);
	}
	rmad_barrier();
}

/* 6. misuse: each returns its error and changes nothing */
static void misuse(rmad_win_t w)
{
	int nxt = (rank + 1) % size, dn = 1, dp = -1, self = rank;
	rmad_group_t gt = ring_group(&dn, 1), go = ring_group(&dp, 1);
	rmad_group_t gs = RMAD_GROUP_NULL;
	int64_t v = 1;

	OK(rmad_group_incl(&self, 1, &gs));
	CHECK(rmad_put(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w) ==
	      RMAD_ERR_SYNC, "a put outside any epoch");
	CHECK(rmad_win_complete(w) == RMAD_ERR_SYNC, "complete without start");
	CHECK(rmad_win_wait(w) == RMAD_ERR_SYNC, "wait without post");
	CHECK(rmad_win_start(gs, 0, w) == RMAD_ERR_SYNC,
	      "a start on ourselves without our post");
	CHECK(rmad_win_post(go, 0x40000, w) == RMAD_ERR_ARG &&
	      rmad_win_start(gt, RMAD_MODE_NOPUT, w) == RMAD_ERR_ARG,
	      "bad assert bits: RMAD_ERR_ARG");
	OK(rmad_win_post(go, 0, w));
	CHECK(rmad_win_post(go, 0, w) == RMAD_ERR_SYNC, "a second post");
	CHECK(rmad_win_lock(RMAD_LOCK_SHARED, nxt, 0, w) == RMAD_ERR_SYNC &&
	      rmad_win_lock_all(0, w) == RMAD_ERR_SYNC &&
	      rmad_win_fence(0, w) == RMAD_ERR_SYNC,
	      "lock, lock_all or fence in an exposure epoch");
	OK(rmad_win_start(gt, 0, w));
	CHECK(rmad_win_start(gt, 0, w) == RMAD_ERR_SYNC, "a second start");
	if (size > 2)
		CHECK(rmad_put(&v, 1, RMAD_INT64, (rank + 2) % size, 0, 1,
			       RMAD_INT64, w) == RMAD_ERR_SYNC,
		      "a put to a rank outside the start's group");
	CHECK(rmad_win_flush(nxt, w) == RMAD_ERR_SYNC,
	      "a flush in an access epoch");
	{
		rmad_win_t x = w;

		CHECK(rmad_win_free(&x) == RMAD_ERR_SYNC && x == w,
		      "freeing a window in a PSCW epoch");
	}
	OK(rmad_put(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w));
	OK(rmad_win_complete(w));
	OK(rmad_win_wait(w));
	rmad_group_free(&gt);
	rmad_group_free(&go);
	rmad_group_free(&gs);
}

/* 7. a group with a rank outside the window: RMAD_ERR_RANK */
static void subgroup(void)
{
	int n = (size + 1) / 2, *ranks = malloc(sizeof(int) * n), one = 1;
	rmad_group_t g = RMAD_GROUP_NULL, godd = RMAD_GROUP_NULL;
	rmad_win_t we = RMAD_WIN_NULL;
	int64_t *b2 = NULL;

	for (int i = 0; i < n; i++)
		ranks[i] = 2 * i;
	OK(rmad_group_incl(ranks, n, &g));
	OK(rmad_group_incl(&one, 1, &godd));
	if (rank % 2 == 0) {
		OK(rmad_win_allocate(64, 8, NULL, g, &b2, &we));
		CHECK(rmad_win_post(godd, 0, we) == RMAD_ERR_RANK &&
		      rmad_win_start(godd, 0, we) == RMAD_ERR_RANK,
		      "post/start naming a rank outside the window");
		/* the even ranks: post to and start on all of them */
		OK(rmad_win_post(g, 0, we));
		OK(rmad_win_start(g, 0, we));
		{
			int64_t v = rank + 1;

			for (int i = 0; i < n; i++)
				OK(rmad_accumulate(&v, 1, RMAD_INT64,
						   ranks[i], 0, 1, RMAD_INT64,
						   RMAD_SUM, we));
		}
		OK(rmad_win_complete(we));
		OK(rmad_win_wait(we));
		CHECK(b2[0] == (int64_t)n * n, "subgroup PSCW: %lld",
		      (long long)b2[0]);
		OK(rmad_win_free(&we));
	}
	rmad_group_free(&g);
	rmad_group_free(&godd);
	free(ranks);
}

int main(int argc, char **argv)
{
	double compute_ms = argc > 1 ? atof(argv[1]) : 2000;
	int victim = argc > 2 && !strcmp(argv[1], "die") ? atoi(argv[2]) : -1;
	int64_t *base = NULL;
	rmad_win_t w = RMAD_WIN_NULL;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	if (size < 3) {
		printf("rank %d: FAIL needs 3 ranks or more\n", rank);
		return 1;
	}
	if (victim >= 0)
		return die(victim);
	OK(rmad_win_allocate(SLOTS * 8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		goto out;
	memset(base, 0, SLOTS * 8);
	base[1] = 500 + rank;
	base[2] = 1;
	rmad_barrier();
	ring(w, base);
	overlap(w, base);
	test_and_asserts(w, base);
	computing(w, base, compute_ms);
	misuse(w);
	/* PSCW, then fence, then lock: each after the other ended */
	OK(rmad_win_fence(0, w));
	OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
	OK(rmad_win_lock_all(0, w));
	OK(rmad_win_unlock_all(w));
	rmad_barrier();
	subgroup();
	OK(rmad_win_free(&w));
out:
	OK(rmad_finalize());
	if (!fails)
		printf("rank %d: ok\n", rank);
	return fails != 0;
}
