/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counter.c - completion counters and the futex calls behind them.
 *
 * The futexes are shared (no FUTEX_PRIVATE_FLAG): the word lives in a
 * memfd that the agent and every client map.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "counter.h"
#include "trace.h"
#include "util.h"

int rmad_futex_wait(uint32_t *addr, uint32_t val, long timeout_ns)
{
	struct timespec ts = {
		.tv_sec = timeout_ns / 1000000000L,
		.tv_nsec = timeout_ns % 1000000000L,
	};

	if (syscall(SYS_futex, addr, FUTEX_WAIT, val,
		    timeout_ns >= 0 ? &ts : NULL, NULL, 0) < 0)
		return -errno;
	return 0;
}

int rmad_futex_wake(uint32_t *addr, int n)
{
	long r = syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);

	return r < 0 ? -errno : (int)r;
}

void rmad_counter_advance(struct rmad_shm_client *c, int which, uint64_t n)
{
	/* release: status words and data written before are visible first */
	store_release(&c->cnt[which], load_relaxed(&c->cnt[which]) + n);
}

int rmad_counter_wake(struct rmad_shm_client *c, unsigned moved)
{
	/*
	 * Full fence: orders the counter stores before the reads of the
	 * waiter counts, pairing with the fence in rmad_counter_wait, so
	 * either the waiter sees the new counter or we see its
	 * announcement.  The futex word moves only when we wake: a waiter
	 * that read it before is then refused its sleep (EAGAIN), and one
	 * asleep is woken; waiters for other counters are left alone.
	 */
	rmad_smp_mb();
	for (int k = 0; k < RMAD_NCNT; k++) {
		if (!(moved & (1u << k)) || !load_relaxed(&c->waiters[k]))
			continue;
		uatomic_inc(&c->futex);
		rmad_futex_wake(&c->futex, 0x7fffffff);
		return 1;
	}
	return 0;
}

int rmad_counter_wait(struct rmad_shm_client *c, int which, uint64_t target,
		      long spin_us, int (*alive)(void *), void *arg)
{
	uint64_t t0;
	int err;

	if (rmad_counter_read(c, which) >= target)
		return 0;
	t0 = rmad_now_ns();
	while ((long)((rmad_now_ns() - t0) / 1000) < spin_us) {
		for (int i = 0; i < 64; i++) {
			if (rmad_counter_read(c, which) >= target)
				return 0;
			caa_cpu_relax();
		}
	}
	for (;;) {
		uint32_t seen;

		uatomic_inc(&c->waiters[which]);
		/* acquire: a new futex value implies the new counters */
		seen = load_acquire(&c->futex);
		/* Full fence: pairs with the one in rmad_counter_wake. */
		rmad_smp_mb();
		if (rmad_counter_read(c, which) >= target) {
			uatomic_dec(&c->waiters[which]);
			return 0;
		}
		RMAD_TR(RMAD_TR_FUTEX, which);
		rmad_futex_wait(&c->futex, seen, 50 * 1000000L);
		RMAD_TR(RMAD_TR_FUTEX_WOKEN, which);
		uatomic_dec(&c->waiters[which]);
		if (rmad_counter_read(c, which) >= target)
			return 0;
		if (alive && (err = alive(arg)) != 0)
			return err;
	}
}
