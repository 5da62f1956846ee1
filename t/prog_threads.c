/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_threads.c - several threads of one client use one window at once,
 * in the interleavings the seeds allow ("RMA + Threads"): operation +
 * operation, operation + flush, flush + flush.
 *
 * usage: prog_threads [THREADS [ROUNDS]]
 *
 * Every rank opens a lock_all epoch, then THREADS threads each add 1 to
 * their own slot (rank * THREADS + thread) of every rank's window,
 * ROUNDS times, with fetch_and_op and get mixed in, and flush now one
 * target, now all, now locally, while the other threads go on posting.
 * After the epoch every slot of every window must hold exactly ROUNDS,
 * and each thread's fetch_and_op results must have grown strictly
 * (its own adds completed in order at each target after each flush).
 * Prints "rank R: ok ..." or "rank R: FAIL ...".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

static int rank, size, nthreads = 4, rounds = 500, fails;
static rmad_win_t win;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what, int t, int e)
{
	pthread_mutex_lock(&mu);
	printf("rank %d: FAIL thread %d: %s: %s\n", rank, t, what,
	       rmad_strerror(e));
	fflush(stdout);
	fails++;
	pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	int64_t one = 1, slot = (int64_t)rank * nthreads + t;
	int64_t *last = calloc((size_t)size, sizeof(*last));
	int e;

	for (int r = 0; r < rounds && last; r++) {
		for (int tg = 0; tg < size; tg++) {
			int target = (tg + rank + t) % size;

			if (r % 7 == 3) {
				/* fetch_and_op, flushed: our adds so far
				 * are all there, so it grew strictly */
				int64_t old = -1;

				e = rmad_fetch_and_op(&one, &old, RMAD_INT64,
						      target, slot, RMAD_SUM,
						      win);
				e = e ? e : rmad_win_flush(target, win);
				if (e)
					fail("fetch_and_op + flush", t, e);
				else if (old < last[target] ||
					 (r && old == 0))
					fail("fetch_and_op went back", t, 0);
				else
					last[target] = old + 1;
				continue;
			}
			e = rmad_accumulate(&one, 1, RMAD_INT64, target, slot,
					    1, RMAD_INT64, RMAD_SUM, win);
			if (e)
				fail("accumulate", t, e);
		}
		if (r % 5 == 1) {
			int64_t v;

			e = rmad_get(&v, 1, RMAD_INT64, (rank + 1) % size,
				     slot, 1, RMAD_INT64, win);
			e = e ? e : rmad_win_flush_local((rank + 1) % size,
							 win);
			if (e)
				fail("get + flush_local", t, e);
		}
		if (r % 16 == 15 && (e = rmad_win_flush_all(win)))
			fail("flush_all", t, e);
		if (r % 16 == 7 && (e = rmad_win_flush_local_all(win)))
			fail("flush_local_all", t, e);
	}
	if ((e = rmad_win_flush_all(win)))
		fail("last flush_all", t, e);
	free(last);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int64_t *base;
	int e, bad = 0;

	if (rmad_init(&argc, &argv))
		return 1;
	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (nthreads < 1 || nthreads > 64 || rounds < 1)
		return 2;
	rmad_rank(&rank);
	rmad_size(&size);
	alarm(120);
	e = rmad_win_allocate((uint64_t)size * nthreads * 8, 8, NULL,
			      RMAD_GROUP_ALL, &base, &win);
	if (e) {
		printf("rank %d: FAIL win_allocate: %s\n", rank,
		       rmad_strerror(e));
		return 1;
	}
	memset(base, 0, (size_t)size * nthreads * 8);
	rmad_barrier();
	e = rmad_win_lock_all(0, win);
	if (e)
		fail("lock_all", -1, e);
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	if ((e = rmad_win_unlock_all(win)))
		fail("unlock_all", -1, e);
	rmad_barrier();
	rmad_win_sync(win);
	for (int s = 0; s < size * nthreads; s++)
		if (((volatile int64_t *)base)[s] != rounds) {
			if (!bad++)
				printf("rank %d: FAIL slot %d holds %lld, not "
				       "%d\n", rank, s,
				       (long long)((volatile int64_t *)base)[s],
				       rounds);
		}
	fails += bad;
	if (!fails)
		printf("rank %d: ok: %d threads x %d rounds to %d ranks, every "
		       "slot exact\n", rank, nthreads, rounds, size);
	fflush(stdout);
	rmad_barrier();
	rmad_win_free(&win);
	rmad_finalize();
	return fails != 0;
}
