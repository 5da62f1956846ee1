/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_fence.c - active target by fence on every rank of the job and on
 * a subgroup: exact results for put, get, accumulate, fetch_and_op and
 * compare_and_swap across fences, 50 epochs in a row, NOPRECEDE and
 * NOSUCCEED, a lock epoch after the fence sequence, a target that
 * computes between fences, an opening fence that does not wait for a
 * member still computing, and misuse
 * (operations outside an epoch, a fence inside a lock epoch, a lock or
 * a flush inside a fence epoch, bad assert bits).  Each rank prints
 * "rank R: ok" or "rank R: FAIL ..." lines and exits non-zero on
 * failure.
 *
 * usage: prog_fence [compute_ms]
 *        prog_fence die RANK
 *
 * With "die", rank RANK SIGKILLs itself after one fence epoch and every
 * other rank's next fence must return RMAD_ERR_PROC_FAILED within 30 s
 * ("rank R: ok: fence after a member died ...").
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

/* a member dies between fences: the others' fence fails, never hangs */
static int die(int victim)
{
	int64_t *base = NULL, v = 1;
	rmad_win_t w = RMAD_WIN_NULL;
	double t0;
	int e;

	if (rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w) ||
	    rmad_win_fence(0, w)) {
		printf("rank %d: FAIL setup\n", rank);
		return 1;
	}
	rmad_put(&v, 1, RMAD_INT64, (rank + 1) % size, 0, 1, RMAD_INT64, w);
	rmad_win_fence(0, w);
	if (rank == victim) {
		fflush(stdout);
		raise(SIGKILL);
	}
	t0 = rmad_wtime();
	e = rmad_win_fence(0, w);
	if (e == RMAD_ERR_PROC_FAILED && rmad_wtime() - t0 < 30)
		printf("rank %d: ok: fence after a member died: %s in %.3f s\n",
		       rank, rmad_strerror(e), rmad_wtime() - t0);
	else
		printf("rank %d: FAIL fence after a member died: %s in %.3f s\n",
		       rank, rmad_strerror(e), rmad_wtime() - t0);
	fflush(stdout);
	/* collective calls fail now, which is fine: just go */
	_exit(0);
}

int main(int argc, char **argv)
{
	double compute_ms = argc > 1 ? atof(argv[1]) : 200;
	int victim = argc > 2 && !strcmp(argv[1], "die") ? atoi(argv[2]) : -1;
	int64_t *base = NULL, v, got[SLOTS];
	rmad_win_t w = RMAD_WIN_NULL;
	int nxt, prv;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	if (victim >= 0)
		return die(victim);
	nxt = (rank + 1) % size;
	prv = (rank + size - 1) % size;
	if (size > SLOTS - 6) {
		printf("rank %d: FAIL at most %d ranks\n", rank, SLOTS - 6);
		return 1;
	}
	OK(rmad_win_allocate(SLOTS * 8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		goto out;
	memset(base, 0, SLOTS * 8);

	/* 1. put to every rank, then read what everyone put here */
	OK(rmad_win_fence(RMAD_MODE_NOPRECEDE, w));
	for (int r = 0; r < size; r++) {
		v = 1000 + rank;
		OK(rmad_put(&v, 1, RMAD_INT64, r, (size_t)rank, 1, RMAD_INT64,
			    w));
	}
	OK(rmad_win_fence(0, w));
	for (int r = 0; r < size; r++)
		CHECK(base[r] == 1000 + r, "put: slot %d holds %lld", r,
		      (long long)base[r]);

	/* 2. get the next rank's slots, accumulate into everyone's 63 */
	memset(got, 0, sizeof(got));
	OK(rmad_get(got, size, RMAD_INT64, nxt, 0, size, RMAD_INT64, w));
	for (int r = 0; r < size; r++) {
		v = rank + 1;
		OK(rmad_accumulate(&v, 1, RMAD_INT64, r, SLOTS - 1, 1,
				   RMAD_INT64, RMAD_SUM, w));
	}
	{
		/* the atomics: one origin per target slot */
		int64_t add = rank + 1, old = -1, cmp = 0, swp = rank + 7,
			res = -1;

		OK(rmad_fetch_and_op(&add, &old, RMAD_INT64, nxt, SLOTS - 4,
				     RMAD_SUM, w));
		OK(rmad_compare_and_swap(&swp, &cmp, &res, RMAD_INT64, nxt,
					 SLOTS - 5, w));
		OK(rmad_win_fence(0, w));
		CHECK(old == 0 && res == 0, "fetch_and_op/cas results %lld "
		      "%lld", (long long)old, (long long)res);
		CHECK(base[SLOTS - 4] == prv + 1 && base[SLOTS - 5] == prv + 7,
		      "fetch_and_op/cas at the target: %lld %lld",
		      (long long)base[SLOTS - 4], (long long)base[SLOTS - 5]);
	}
	for (int r = 0; r < size; r++)
		CHECK(got[r] == 1000 + r, "get: rank %d's slot %d is %lld",
		      nxt, r, (long long)got[r]);
	CHECK(base[SLOTS - 1] == (int64_t)size * (size + 1) / 2,
	      "accumulate: %lld", (long long)base[SLOTS - 1]);

	/* 3. fifty epochs: each passes a counter around the ring, in
	 * slots 0 and 1 by turns (epoch k+1's put may land while this rank
	 * still reads epoch k's slot) */
	for (int k = 0, bad = 0; k < 50; k++) {
		v = (int64_t)k * 100 + rank;
		OK(rmad_put(&v, 1, RMAD_INT64, nxt, (size_t)(k & 1), 1,
			    RMAD_INT64, w));
		OK(rmad_win_fence(0, w));
		if (!bad && base[k & 1] != (int64_t)k * 100 + prv) {
			CHECK(0, "epoch %d: %lld", k, (long long)base[k & 1]);
			bad = 1;
		}
	}

	/* 4. the next rank computes between the fences: our put and get
	 * complete while it does, and the fence closes the epoch */
	v = 77;
	if (rank == 0 && size > 1)
		spin_ms(compute_ms);
	else {
		OK(rmad_put(&v, 1, RMAD_INT64, nxt, 5, 1, RMAD_INT64, w));
		OK(rmad_get(&got[0], 1, RMAD_INT64, nxt, 6, 1, RMAD_INT64, w));
	}
	OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
	CHECK(rank == 1 % size || base[5] == 77, "put across a computing "
	      "target: %lld", (long long)base[5]);

	/* 5. misuse, after the sequence ended (NOSUCCEED) */
	CHECK(rmad_put(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w) ==
	      RMAD_ERR_SYNC, "a put outside any epoch: RMAD_ERR_SYNC");
	CHECK(rmad_win_fence(0x40000, w) == RMAD_ERR_ARG,
	      "a fence with unknown assert bits: RMAD_ERR_ARG");
	OK(rmad_win_lock(RMAD_LOCK_SHARED, nxt, 0, w));
	CHECK(rmad_win_fence(0, w) == RMAD_ERR_SYNC,
	      "a fence inside a lock epoch: RMAD_ERR_SYNC");
	OK(rmad_win_unlock(nxt, w));
	rmad_barrier();
	OK(rmad_win_fence(0, w));
	OK(rmad_put(&v, 1, RMAD_INT64, nxt, 3, 1, RMAD_INT64, w));
	CHECK(rmad_win_lock(RMAD_LOCK_SHARED, nxt, 0, w) == RMAD_ERR_SYNC,
	      "a lock inside a fence epoch that moved data: RMAD_ERR_SYNC");
	CHECK(rmad_win_lock_all(0, w) == RMAD_ERR_SYNC,
	      "a lock_all there: RMAD_ERR_SYNC");
	CHECK(rmad_win_flush(nxt, w) == RMAD_ERR_SYNC &&
	      rmad_win_flush_all(w) == RMAD_ERR_SYNC,
	      "a flush inside a fence epoch: RMAD_ERR_SYNC");
	{
		rmad_win_t x = w;

		CHECK(rmad_win_free(&x) == RMAD_ERR_SYNC && x == w,
		      "freeing a window in a fence epoch that moved data");
	}
	OK(rmad_win_fence(0, w));
	CHECK(base[3] == 77, "the put before the errors landed: %lld",
	      (long long)base[3]);

	/* 6. a lock epoch after a fence with nothing since */
	OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, nxt, 0, w));
	v = 5;
	OK(rmad_accumulate(&v, 1, RMAD_INT64, nxt, SLOTS - 2, 1, RMAD_INT64,
			   RMAD_SUM, w));
	OK(rmad_win_unlock(nxt, w));
	rmad_barrier();
	CHECK(base[SLOTS - 2] == 5, "lock epoch after the fences: %lld",
	      (long long)base[SLOTS - 2]);

	/* 7. fences on a subgroup: the even ranks */
	{
		int n = (size + 1) / 2, *ranks = malloc(sizeof(int) * n);
		rmad_group_t g = RMAD_GROUP_NULL;
		rmad_win_t we = RMAD_WIN_NULL;
		int64_t *b2 = NULL;

		for (int i = 0; i < n; i++)
			ranks[i] = 2 * i;
		OK(rmad_group_incl(ranks, n, &g));
		if (rank % 2 == 0) {
			int me = rank / 2, to = ranks[(me + 1) % n];

			OK(rmad_win_allocate(64, 8, NULL, g, &b2, &we));
			memset(b2, 0, 64);
			OK(rmad_win_fence(0, we));
			v = 500 + rank;
			OK(rmad_put(&v, 1, RMAD_INT64, to, 0, 1, RMAD_INT64,
				    we));
			OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, we));
			CHECK(b2[0] == 500 + ranks[(me + n - 1) % n],
			      "subgroup fence: %lld", (long long)b2[0]);
			OK(rmad_win_free(&we));
		}
		rmad_group_free(&g);
		free(ranks);
	}
	/* 8. an opening fence does not wait for a member on another node
	 * that has not called it yet (rank 0 computes first); the
	 * operations wait for it in the agent instead */
	{
		size_t sz;
		int du, remote0;
		void *pb;
		double t0, dt;

		remote0 = rmad_win_shared_query(w, 0, &sz, &du, &pb) ==
			  RMAD_ERR_NOT_LOCAL;
		if (rank == 0)
			spin_ms(compute_ms);
		t0 = rmad_wtime();
		OK(rmad_win_fence(RMAD_MODE_NOPRECEDE, w));
		dt = (rmad_wtime() - t0) * 1e3;
		CHECK(!remote0 || dt < compute_ms / 2, "the opening fence "
		      "waited %.1f ms for a computing member", dt);
		v = rank + 1;
		OK(rmad_accumulate(&v, 1, RMAD_INT64, 0, SLOTS - 3, 1,
				   RMAD_INT64, RMAD_SUM, w));
		OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
		CHECK(rank != 0 || base[SLOTS - 3] ==
		      (int64_t)size * (size + 1) / 2,
		      "accumulates after an opening fence: %lld",
		      (long long)base[SLOTS - 3]);
	}
	/* the window is in no epoch */
	OK(rmad_win_free(&w));
out:
	OK(rmad_finalize());
	if (!fails)
		printf("rank %d: ok\n", rank);
	return fails != 0;
}
