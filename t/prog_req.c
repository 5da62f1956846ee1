/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_req.c - request-based operations: rput, rget, raccumulate and
 * rget_accumulate inside lock_all and lock epochs, completed by wait,
 * test, waitall, testall, waitany and testany, with the results checked
 * as each request completes (a rget's data is here when its wait
 * returns, without a flush); 5000 raccumulates in flight at once with an
 * exact total; a request freed in flight; and misuse (outside an epoch,
 * in a fence epoch, null, stale and garbage handles).  Each rank prints
 * "rank R: ok" or "rank R: FAIL ..." lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define SLOTS 64
#define MANY 5000

int main(int argc, char **argv)
{
	int64_t *base = NULL, v, got = -1, res = -1, one = 1;
	rmad_win_t w = RMAD_WIN_NULL;
	rmad_request_t rq = RMAD_REQUEST_NULL, rs[4];
	rmad_request_t *many;
	int nxt, prv, done = 0, idx = -2;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	nxt = (rank + 1) % size;
	prv = (rank + size - 1) % size;
	OK(t_win_allocate(SLOTS * 8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		goto out;
	memset(base, 0, SLOTS * 8);
	base[1] = 100 + rank;
	rmad_barrier();

	/* 1. each op with wait; the rget's value is here at once */
	OK(rmad_win_lock_all(0, w));
	v = 1000 + rank;
	OK(rmad_rput(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w, &rq));
	OK(rmad_wait(&rq));
	CHECK(rq == RMAD_REQUEST_NULL, "wait nulls the handle");
	OK(rmad_rget(&got, 1, RMAD_INT64, nxt, 1, 1, RMAD_INT64, w, &rq));
	OK(rmad_wait(&rq));
	CHECK(got == 100 + nxt, "rget after its wait: %lld", (long long)got);
	OK(rmad_raccumulate(&one, 1, RMAD_INT64, nxt, 2, 1, RMAD_INT64,
			    RMAD_SUM, w, &rq));
	/* test until done */
	for (long k = 0; !done && k < 100000000L; k++)
		OK(rmad_test(&rq, &done));
	CHECK(done && rq == RMAD_REQUEST_NULL, "test: done %d", done);
	OK(rmad_rget_accumulate(&one, 1, RMAD_INT64, &res, 1, RMAD_INT64, nxt,
				3, 1, RMAD_INT64, RMAD_SUM, w, &rq));
	OK(rmad_wait(&rq));
	CHECK(res == 0, "rget_accumulate fetched %lld", (long long)res);

	/* 2. waitall, testall, waitany, testany */
	{
		int64_t g[4] = { -1, -1, -1, -1 };

		for (int i = 0; i < 4; i++)
			OK(rmad_rget(&g[i], 1, RMAD_INT64, nxt, 1, 1,
				     RMAD_INT64, w, &rs[i]));
		OK(rmad_waitall(4, rs));
		CHECK(g[0] == 100 + nxt && g[3] == 100 + nxt &&
		      rs[0] == RMAD_REQUEST_NULL && rs[3] == RMAD_REQUEST_NULL,
		      "waitall: %lld %lld", (long long)g[0], (long long)g[3]);
		for (int i = 0; i < 4; i++)
			OK(rmad_raccumulate(&one, 1, RMAD_INT64, nxt, 4, 1,
					    RMAD_INT64, RMAD_SUM, w, &rs[i]));
		done = 0;
		for (long k = 0; !done && k < 100000000L; k++)
			OK(rmad_testall(4, rs, &done));
		CHECK(done && rs[2] == RMAD_REQUEST_NULL, "testall");
		for (int i = 0; i < 4; i++)
			OK(rmad_rget(&g[i], 1, RMAD_INT64, prv, 1, 1,
				     RMAD_INT64, w, &rs[i]));
		for (int n = 0; n < 4; n++) {
			OK(rmad_waitany(4, rs, &idx));
			CHECK(idx >= 0 && idx < 4 && g[idx] == 100 + prv &&
			      rs[idx] == RMAD_REQUEST_NULL, "waitany %d", idx);
		}
		OK(rmad_waitany(4, rs, &idx));
		CHECK(idx == -1, "waitany with every request null: %d", idx);
		OK(rmad_rput(&v, 1, RMAD_INT64, nxt, 5, 1, RMAD_INT64, w,
			     &rs[1]));
		done = 0;
		for (long k = 0; !done && k < 100000000L; k++)
			OK(rmad_testany(4, rs, &idx, &done));
		CHECK(done && idx == 1, "testany: %d", idx);
	}

	/* 3. many in flight at once */
	many = calloc(MANY, sizeof(*many));
	for (int i = 0; i < MANY; i++)
		OK(rmad_raccumulate(&one, 1, RMAD_INT64, nxt, 6, 1, RMAD_INT64,
				    RMAD_SUM, w, &many[i]));
	OK(rmad_waitall(MANY, many));
	free(many);

	/* 4. a request freed in flight: the epoch's end completes it */
	OK(rmad_raccumulate(&one, 1, RMAD_INT64, nxt, 7, 1, RMAD_INT64,
			    RMAD_SUM, w, &rq));
	OK(rmad_request_free(&rq));
	CHECK(rq == RMAD_REQUEST_NULL, "request_free nulls the handle");
	OK(rmad_win_unlock_all(w));

	/* 5. under a per-target lock */
	OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, nxt, 0, w));
	OK(rmad_raccumulate(&one, 1, RMAD_INT64, nxt, 8, 1, RMAD_INT64,
			    RMAD_SUM, w, &rq));
	OK(rmad_wait(&rq));
	OK(rmad_win_unlock(nxt, w));
	rmad_barrier();
	CHECK(base[0] == 1000 + prv && base[2] == 1 && base[3] == 1 &&
	      base[4] == 4 && base[5] == 1000 + prv && base[6] == MANY &&
	      base[7] == 1 && base[8] == 1,
	      "the targets: %lld %lld %lld %lld %lld %lld %lld %lld",
	      (long long)base[0], (long long)base[2], (long long)base[3],
	      (long long)base[4], (long long)base[5], (long long)base[6],
	      (long long)base[7], (long long)base[8]);

	/* 6. misuse */
	{
		rmad_request_t stale;

		CHECK(rmad_rput(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w,
				&rq) == RMAD_ERR_SYNC && rq == RMAD_REQUEST_NULL,
		      "rput outside an epoch: RMAD_ERR_SYNC");
		OK(rmad_win_fence(0, w));
		CHECK(rmad_rget(&got, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w,
				&rq) == RMAD_ERR_SYNC,
		      "rget in a fence epoch: RMAD_ERR_SYNC");
		OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
		CHECK(rmad_wait(&rq) == RMAD_ERR_ARG &&
		      rmad_wait(NULL) == RMAD_ERR_ARG,
		      "wait on a null handle: RMAD_ERR_ARG");
		OK(rmad_win_lock_all(0, w));
		OK(rmad_rput(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w, &rq));
		stale = rq;
		OK(rmad_wait(&rq));
		CHECK(rmad_wait(&stale) == RMAD_ERR_ARG &&
		      rmad_test(&stale, &done) == RMAD_ERR_ARG &&
		      rmad_request_free(&stale) == RMAD_ERR_ARG,
		      "a completed request's stale handle: RMAD_ERR_ARG");
		stale = (rmad_request_t)(uintptr_t)0x1234567;
		CHECK(rmad_wait(&stale) == RMAD_ERR_ARG,
		      "a garbage handle: RMAD_ERR_ARG");
		CHECK(rmad_rput(&v, 1, RMAD_INT64, nxt, SLOTS, 1, RMAD_INT64,
				w, &rq) == RMAD_ERR_DISP,
		      "rput outside the window: RMAD_ERR_DISP");
		CHECK(rmad_rput(&v, 1, RMAD_INT64, nxt, 0, 1, RMAD_INT64, w,
				NULL) == RMAD_ERR_ARG, "no request pointer");
		OK(rmad_win_unlock_all(w));
	}
	rmad_barrier();
	OK(rmad_win_free(&w));
out:
	OK(rmad_finalize());
	if (!fails)
		printf("rank %d: ok\n", rank);
	return fails != 0;
}
