/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_counter.c - completion counters and their futex wakes
 * (shared/counter.c):
 *   - a waiter announces itself for its counter only;
 *   - a wake for another counter leaves the futex word alone, and the
 *     waiter asleep; a wake for its counter moves the word;
 *   - waiters on two counters and an agent thread advancing both, one
 *     step at a time: every wait ends by a wake, not by the 50 ms
 *     timeout a missed wake would cost (a few slow ones are allowed for
 *     a loaded machine).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "atomics.h"
#include "counter.h"
#include "util.h"
#include "tap.h"

#define STEPS	400

static struct rmad_shm_client cl __attribute__((aligned(64)));
static volatile int done1;

static int alive(void *arg)
{
	(void)arg;
	return 0;
}

static void *wait_sync(void *arg)
{
	(void)arg;
	rmad_counter_wait(&cl, RMAD_CNT_SYNC, 1, 0, alive, NULL);
	__atomic_store_n(&done1, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct storm {
	int which;
	int slow;		/* waits of 40 ms or more */
	uint64_t reached;
};

static void *storm_wait(void *arg)
{
	struct storm *s = arg;

	for (uint64_t i = 1; i <= STEPS; i++) {
		uint64_t t0 = rmad_now_ns();

		rmad_counter_wait(&cl, s->which, i, 0, alive, NULL);
		if (rmad_now_ns() - t0 >= 40000000ull)
			s->slow++;
		__atomic_store_n(&s->reached, i, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int wait_for(uint32_t *w, uint32_t v)
{
	for (int i = 0; i < 5000; i++) {
		if (__atomic_load_n(w, __ATOMIC_ACQUIRE) == v)
			return 1;
		usleep(1000);
	}
	return 0;
}

int main(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct storm st[2] = { { RMAD_CNT_REMOTE, 0, 0 },
			       { RMAD_CNT_SYNC, 0, 0 } };
	pthread_t th, ts2[2];
	uint32_t f0;
	uint64_t t0;

	alarm_after(120);
	plan(8);
	pthread_create(&th, NULL, wait_sync, NULL);
	ok(wait_for(&cl.waiters[RMAD_CNT_SYNC], 1) &&
	   !cl.waiters[RMAD_CNT_LOCAL] && !cl.waiters[RMAD_CNT_REMOTE] &&
	   !cl.waiters[RMAD_CNT_FREED],
	   "a waiter on SYNC announces itself for SYNC only");
	f0 = __atomic_load_n(&cl.futex, __ATOMIC_ACQUIRE);
	rmad_counter_advance(&cl, RMAD_CNT_LOCAL, 1);
	rmad_counter_wake(&cl, 1u << RMAD_CNT_LOCAL);
	ok(__atomic_load_n(&cl.futex, __ATOMIC_ACQUIRE) == f0,
	   "a wake for LOCAL leaves the futex word alone");
	nanosleep(&ts, NULL);
	ok(!__atomic_load_n(&done1, __ATOMIC_ACQUIRE),
	   "and the SYNC waiter waits on");
	rmad_counter_advance(&cl, RMAD_CNT_SYNC, 1);
	rmad_counter_wake(&cl, 1u << RMAD_CNT_SYNC);
	ok(__atomic_load_n(&cl.futex, __ATOMIC_ACQUIRE) != f0,
	   "a wake for SYNC moves the word");
	pthread_join(th, NULL);
	ok(done1 && !cl.waiters[RMAD_CNT_SYNC],
	   "the SYNC waiter returned and withdrew");

	/* the storm: counters from 0 again */
	memset(&cl, 0, sizeof(cl));
	for (int k = 0; k < 2; k++)
		pthread_create(&ts2[k], NULL, storm_wait, &st[k]);
	t0 = rmad_now_ns();
	for (uint64_t i = 1; i <= STEPS; i++) {
		for (int k = 0; k < 2; k++) {
			rmad_counter_advance(&cl, st[k].which, 1);
			rmad_counter_wake(&cl, 1u << st[k].which);
			/* let the waiter get there and, often, fall asleep */
			while (__atomic_load_n(&st[k].reached,
					       __ATOMIC_ACQUIRE) < i)
				sched_yield();
		}
	}
	for (int k = 0; k < 2; k++)
		pthread_join(ts2[k], NULL);
	ok(st[0].reached == STEPS && st[1].reached == STEPS,
	   "two waiters on REMOTE and SYNC reached %d steps each", STEPS);
	ok(st[0].slow + st[1].slow <= STEPS / 20,
	   "%d of %d waits took 40 ms or more (a missed wake costs 50)",
	   st[0].slow + st[1].slow, 2 * STEPS);
	ok(!cl.waiters[RMAD_CNT_REMOTE] && !cl.waiters[RMAD_CNT_SYNC],
	   "no waiter left announced (%.1f s)",
	   (double)(rmad_now_ns() - t0) / 1e9);
	return done_testing();
}
