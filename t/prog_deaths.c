/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_deaths.c - the death matrix: every operation, synchronization and
 * flush that involves a dead rank fails with RMAD_ERR_PROC_FAILED, on the
 * dead rank's node and on another, small and large (64 MiB, fi_write and
 * fi_read), and never touches what the survivors' epochs completed.
 *
 * usage: prog_deaths WHEN
 *
 * 4 ranks on 2 vnodes ('alone': 2; rmad-run puts ranks 0 and 1 on node 0, 2 and 3 on
 * node 1).  Rank 1, the victim, is SIGKILLed: rank 0 sees it die on its
 * own node (same-node operations are its own loads and stores), ranks 2
 * and 3 from the other node (operations go through the agents).  First
 * the survivors leave data in each other's windows (0 -> 2, 2 -> 3,
 * 3 -> 0, each epoch completed).  Then, by WHEN:
 *
 *   before   the victim dies; each survivor's barrier then fails (the
 *            death is known), and every call on the victim after that
 *            must fail at once, as must each epoch's synchronization:
 *            lock + get 8 B + unlock, put + flush, accumulate, fetch and
 *            op, a 64 KiB get, two 64 MiB puts, lock_all + put + flush,
 *            a fence epoch, a PSCW access epoch to it (start) and an
 *            exposure one (post) for it;
 *   during   the survivors loop on the victim while it dies 0.3 s later:
 *            rank 0 small ops on its own node, rank 2 64 MiB puts, rank 3
 *            small ops and 64 KiB gets; each loop must end with
 *            RMAD_ERR_PROC_FAILED (nothing else) within 10 s of the
 *            death, then every call of 'before' fails as well;
 *   fence    the survivors wait in a closing fence the victim never
 *            joins when it dies: it must end with RMAD_ERR_PROC_FAILED;
 *   pscw     the same for PSCW: rank 0 in start (an access epoch to
 *            the victim), ranks 2 and 3 in wait (an exposure epoch for
 *            it);
 *   alone    2 ranks, one per vnode: rank 0 puts 64 MiB after 64 MiB to
 *            rank 1, which dies 0.3 s later, the last rank of the job on
 *            its node, whose agent then frees the window while
 *            transfers into it are in flight (it must not crash: the
 *            mapping stays a while, windows.c), and answers for the
 *            job that is gone (RMAD_ERR_PROC_FAILED); then every call
 *            of 'before'.
 *
 * In every mode the survivors then read back what they left each other
 * (their own window, and a get from a survivor across the nodes), and a
 * new lock epoch between survivors works.  Every call is bounded
 * (alarm): a hang kills the rank, whose lines then miss.  Prints "rank
 * R: ok: ..." per check or "rank R: FAIL ..."; the victim prints
 * nothing after it dies.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog.h"

#define VICTIM	1
#define BIG	(64u << 20)		/* a 64 MiB put */
#define MID	(64u << 10)		/* a 64 KiB get */
#define DATA	(BIG + MID)		/* the survivors' data lies here */
#define WSIZE	(DATA + 4096)
#define BOUND	10.0			/* seconds from a death to its error */

static int rank, fails, alone;
static rmad_win_t w;
static char *base, *big;

/* what survivor s leaves in its successor's window */
static uint64_t pattern(int s, int k)
{
	return 0x5eed000000000000ull | ((uint64_t)s << 32) | (uint64_t)k;
}

static int next_of(int s)
{
	return s == 0 ? 2 : s == 2 ? 3 : 0;
}

/* the first error of a sequence of calls, every one made */
#define FIRST(e, call)				\
	do {					\
		int e2_ = (call);		\
		if (!(e))			\
			(e) = e2_;		\
	} while (0)

/* one check: err is what the sequence gave; it must be PROC_FAILED */
static void dead_ok(const char *what, int err, double t0)
{
	CHECK(err == RMAD_ERR_PROC_FAILED, "%s on the dead rank: %s (%d)",
	      what, err ? rmad_strerror(err) : "success", err);
	if (err == RMAD_ERR_PROC_FAILED) {
		printf("rank %d: ok: %s fails (%.3f s)\n", rank, what,
		       rmad_wtime() - t0);
		fflush(stdout);
	}
}

/* every kind of call on the dead rank, each sequence must fail */
static void after_death(void)
{
	uint64_t v = 0, one = 1, r = 0;
	rmad_group_t g = RMAD_GROUP_NULL;
	int e, v1 = VICTIM;
	double t0;

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock(RMAD_LOCK_EXCLUSIVE, VICTIM, 0, w));
	FIRST(e, rmad_get(&v, 1, RMAD_UINT64, VICTIM, 0, 1, RMAD_UINT64, w));
	FIRST(e, rmad_win_unlock(VICTIM, w));
	dead_ok("lock, get 8 B, unlock", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock(RMAD_LOCK_SHARED, VICTIM, 0, w));
	FIRST(e, rmad_put(&one, 1, RMAD_UINT64, VICTIM, 8, 1, RMAD_UINT64, w));
	FIRST(e, rmad_win_flush(VICTIM, w));
	FIRST(e, rmad_win_unlock(VICTIM, w));
	dead_ok("lock, put 8 B, flush, unlock", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock(RMAD_LOCK_SHARED, VICTIM, 0, w));
	FIRST(e, rmad_accumulate(&one, 1, RMAD_UINT64, VICTIM, 16, 1,
				 RMAD_UINT64, RMAD_SUM, w));
	FIRST(e, rmad_win_unlock(VICTIM, w));
	dead_ok("lock, accumulate, unlock", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock(RMAD_LOCK_SHARED, VICTIM, 0, w));
	FIRST(e, rmad_fetch_and_op(&one, &r, RMAD_UINT64, VICTIM, 24,
				   RMAD_SUM, w));
	FIRST(e, rmad_win_flush(VICTIM, w));
	FIRST(e, rmad_win_unlock(VICTIM, w));
	dead_ok("lock, fetch_and_op, flush, unlock", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock(RMAD_LOCK_SHARED, VICTIM, 0, w));
	FIRST(e, rmad_get(big, MID, RMAD_BYTE, VICTIM, BIG, MID, RMAD_BYTE,
			  w));
	FIRST(e, rmad_win_unlock(VICTIM, w));
	dead_ok("lock, get 64 KiB, unlock", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock(RMAD_LOCK_SHARED, VICTIM, 0, w));
	for (int k = 0; k < 2; k++)
		FIRST(e, rmad_put(big, BIG, RMAD_BYTE, VICTIM, 0, BIG,
				  RMAD_BYTE, w));
	FIRST(e, rmad_win_unlock(VICTIM, w));
	dead_ok("lock, 2 puts of 64 MiB, unlock", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_lock_all(0, w));
	FIRST(e, rmad_put(&one, 1, RMAD_UINT64, VICTIM, 8, 1, RMAD_UINT64, w));
	FIRST(e, rmad_win_flush(VICTIM, w));
	FIRST(e, rmad_win_unlock_all(w));
	dead_ok("lock_all, put, flush, unlock_all", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_fence(0, w));
	FIRST(e, rmad_put(&one, 1, RMAD_UINT64, VICTIM, 8, 1, RMAD_UINT64, w));
	FIRST(e, rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
	dead_ok("fence, put, fence", e, t0);

	if (rmad_group_incl(&v1, 1, &g)) {
		CHECK(0, "group of the victim");
		return;
	}
	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_start(g, 0, w));
	FIRST(e, rmad_put(&one, 1, RMAD_UINT64, VICTIM, 8, 1, RMAD_UINT64, w));
	FIRST(e, rmad_win_complete(w));
	dead_ok("start, put, complete", e, t0);

	t0 = rmad_wtime();
	e = 0;
	FIRST(e, rmad_win_post(g, 0, w));
	FIRST(e, rmad_win_wait(w));
	dead_ok("post, wait", e, t0);
	rmad_group_free(&g);
}

/* loop on the victim until an error: it must be PROC_FAILED */
static void loop_until_error(double dies_after)
{
	uint64_t v = 0, one = 1, r = 0;
	double t0 = rmad_wtime(), tend;
	long n = 0;
	int e = 0;

	while (!e && rmad_wtime() - t0 < dies_after + 30) {
		FIRST(e, rmad_win_lock(RMAD_LOCK_SHARED, VICTIM, 0, w));
		if (rank == 2 || alone) {
			FIRST(e, rmad_put(big, BIG, RMAD_BYTE, VICTIM, 0, BIG,
					  RMAD_BYTE, w));
		} else {
			FIRST(e, rmad_put(&one, 1, RMAD_UINT64, VICTIM, 8, 1,
					  RMAD_UINT64, w));
			FIRST(e, rmad_get(&v, 1, RMAD_UINT64, VICTIM, 0, 1,
					  RMAD_UINT64, w));
			FIRST(e, rmad_fetch_and_op(&one, &r, RMAD_UINT64,
						   VICTIM, 24, RMAD_SUM, w));
			FIRST(e, rmad_win_flush(VICTIM, w));
			if (rank == 3)
				FIRST(e, rmad_get(big, MID, RMAD_BYTE, VICTIM,
						  BIG, MID, RMAD_BYTE, w));
		}
		FIRST(e, rmad_win_unlock(VICTIM, w));
		n++;
	}
	tend = rmad_wtime() - t0;
	CHECK(e == RMAD_ERR_PROC_FAILED,
	      "loop on the victim ended with %s (%d) after %ld rounds",
	      e ? rmad_strerror(e) : "nothing", e, n);
	CHECK(tend < dies_after + BOUND,
	      "the loop's error came %.3f s after the death", tend - dies_after);
	if (e == RMAD_ERR_PROC_FAILED && tend < dies_after + BOUND)
		printf("rank %d: ok: %s on the victim while it dies fail "
		       "(%ld rounds, %.3f s after the death)\n", rank,
		       rank == 2 || alone ? "64 MiB puts" : "small ops", n,
		       tend - dies_after);
	fflush(stdout);
}

/* the survivors wait in a synchronization the victim never joins */
static void sync_during(int fence)
{
	rmad_group_t g = RMAD_GROUP_NULL;
	int v1 = VICTIM, e = 0;
	uint64_t one = 1;
	double t0 = rmad_wtime();

	if (fence) {
		/* a fence epoch among the survivors, closed while the
		 * victim dies */
		FIRST(e, rmad_win_fence(0, w));
		FIRST(e, rmad_put(&one, 1, RMAD_UINT64, next_of(rank), 8, 1,
				  RMAD_UINT64, w));
		FIRST(e, rmad_win_fence(0, w));
		dead_ok("a fence the victim dies in", e, t0);
		return;
	}
	if (rmad_group_incl(&v1, 1, &g)) {
		CHECK(0, "group of the victim");
		return;
	}
	if (rank == 0) {
		FIRST(e, rmad_win_start(g, 0, w));
		FIRST(e, rmad_put(&one, 1, RMAD_UINT64, VICTIM, 8, 1,
				  RMAD_UINT64, w));
		FIRST(e, rmad_win_complete(w));
		dead_ok("start, put, complete to the dying rank", e, t0);
	} else {
		FIRST(e, rmad_win_post(g, 0, w));
		FIRST(e, rmad_win_wait(w));
		dead_ok("post, wait for the dying rank", e, t0);
	}
	rmad_group_free(&g);
}

/* survivors: the data left before the death is there, and a new epoch
 * between survivors works */
static void survivors(void)
{
	int from = rank == 0 ? 3 : rank == 2 ? 0 : 2, to = next_of(rank), e;
	uint64_t v[4] = { 0 }, mine[4], x = 0;
	int before = fails;

	for (int k = 0; k < 4; k++) {
		memcpy(&mine[k], base + DATA + 8 * k, 8);
		CHECK(mine[k] == pattern(from, k),
		      "own window word %d: %llx, rank %d left %llx", k,
		      (unsigned long long)mine[k], from,
		      (unsigned long long)pattern(from, k));
	}
	e = rmad_win_lock(RMAD_LOCK_SHARED, to, 0, w);
	FIRST(e, rmad_get(v, 4, RMAD_UINT64, to, DATA, 4, RMAD_UINT64, w));
	FIRST(e, rmad_win_unlock(to, w));
	CHECK(!e, "get from survivor %d: %s", to, rmad_strerror(e));
	for (int k = 0; !e && k < 4; k++)
		CHECK(v[k] == pattern(rank, k),
		      "rank %d's word %d: %llx, we left %llx", to, k,
		      (unsigned long long)v[k],
		      (unsigned long long)pattern(rank, k));
	/* a new epoch: an accumulate on a survivor, read back */
	e = rmad_win_lock(RMAD_LOCK_EXCLUSIVE, to, 0, w);
	FIRST(e, rmad_fetch_and_op(&(uint64_t){ 0 }, &x, RMAD_UINT64, to,
				   DATA, RMAD_NO_OP, w));
	FIRST(e, rmad_win_unlock(to, w));
	CHECK(!e && x == pattern(rank, 0),
	      "new epoch on survivor %d: %s, %llx", to, rmad_strerror(e),
	      (unsigned long long)x);
	if (fails == before)
		printf("rank %d: ok: survivors keep their data, and a new "
		       "epoch on rank %d works\n", rank, to);
	fflush(stdout);
}

/*
 * The survivors leave only once all three are done (the barrier fails
 * now): a created window is its process's own memory, gone with it,
 * so one that left early would fail the others' checks.  Each adds 1
 * to a word of rank 0's and waits for 3 there; the others then add 1
 * to a second word, which rank 0 waits for before it goes.
 */
static void leave_together(void)
{
	uint64_t one = 1, r = 0, n = 0;
	double t0 = rmad_wtime();
	int e;

	e = rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w);
	FIRST(e, rmad_accumulate(&one, 1, RMAD_UINT64, 0, DATA + 64, 1,
				 RMAD_UINT64, RMAD_SUM, w));
	FIRST(e, rmad_win_unlock(0, w));
	while (!e && n < 3 && rmad_wtime() - t0 < 30) {
		e = rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w);
		FIRST(e, rmad_fetch_and_op(&one, &n, RMAD_UINT64, 0,
					   DATA + 64, RMAD_NO_OP, w));
		FIRST(e, rmad_win_unlock(0, w));
		if (n < 3)
			usleep(1000);
	}
	if (!e && rank) {
		e = rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w);
		FIRST(e, rmad_accumulate(&one, 1, RMAD_UINT64, 0, DATA + 72,
					 1, RMAD_UINT64, RMAD_SUM, w));
		FIRST(e, rmad_win_unlock(0, w));
	}
	while (!e && !rank && r < 2 && rmad_wtime() - t0 < 30) {
		e = rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w);
		FIRST(e, rmad_fetch_and_op(&one, &r, RMAD_UINT64, 0,
					   DATA + 72, RMAD_NO_OP, w));
		FIRST(e, rmad_win_unlock(0, w));
		if (r < 2)
			usleep(1000);
	}
	CHECK(!e && n >= 3 && (rank || r >= 2),
	      "survivors leaving together: %s, %llu, %llu", rmad_strerror(e),
	      (unsigned long long)n, (unsigned long long)r);
}

int main(int argc, char **argv)
{
	const char *when = argc > 1 ? argv[1] : "before";
	int size, e;
	double t0;

	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	alarm(90);
	alone = !strcmp(when, "alone");
	if (size != (alone ? 2 : 4)) {
		printf("rank %d: FAIL needs %d ranks on 2 vnodes\n", rank,
		       alone ? 2 : 4);
		return 1;
	}
	big = malloc(BIG);
	if (!big)
		return 1;
	memset(big, 0x11 * (rank + 1), BIG);
	OK(t_win_allocate(WSIZE, 1, NULL, RMAD_GROUP_ALL, &base, &w));
	if (fails)
		return 1;
	memset(base + DATA, 0, 4096);
	OK(rmad_barrier());
	if (rank != VICTIM && !alone) {
		uint64_t p[4];
		int to = next_of(rank);

		for (int k = 0; k < 4; k++)
			p[k] = pattern(rank, k);
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, to, 0, w));
		OK(rmad_put(p, 4, RMAD_UINT64, to, DATA, 4, RMAD_UINT64, w));
		OK(rmad_win_unlock(to, w));
	}
	OK(rmad_barrier());
	if (rank == VICTIM) {
		fflush(stdout);
		if (strcmp(when, "before"))
			usleep(300 * 1000);	/* the others are at it */
		raise(SIGKILL);
	}
	if (!strcmp(when, "before")) {
		/* the barrier fails once the death is known here */
		t0 = rmad_wtime();
		e = rmad_barrier();
		CHECK(e == RMAD_ERR_PROC_FAILED, "barrier: %s",
		      rmad_strerror(e));
		if (e == RMAD_ERR_PROC_FAILED)
			printf("rank %d: ok: the barrier fails (%.3f s)\n",
			       rank, rmad_wtime() - t0);
		after_death();
	} else if (!strcmp(when, "during") || alone) {
		loop_until_error(0.3);
		after_death();
	} else {
		sync_during(!strcmp(when, "fence"));
	}
	if (!alone) {
		survivors();
		leave_together();
	}
	/* collective calls fail now: just go */
	printf("rank %d: %s\n", rank, fails ? "FAIL" : "ok: done");
	fflush(stdout);
	_exit(fails != 0);
}
