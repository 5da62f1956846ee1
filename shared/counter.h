/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counter.h - completion counters in the shared segment, with futex
 * wait and wake.
 *
 * Synchronization table:
 *   advance || advance : NOT safe; only the agent thread advances
 *   advance || wait    : safe
 *   wait    || wait    : safe (any number of client threads)
 *
 * Counters only grow.  The agent advances them with release ordering,
 * then calls rmad_counter_wake() once per batch with the set of counters
 * it moved; it bumps the futex word and issues FUTEX_WAKE only when a
 * waiter announced itself for one of them (waiters[which]), so a local
 * completion does not wake a thread that waits for a flush.
 */
#ifndef RMAD_COUNTER_H
#define RMAD_COUNTER_H

#include <stdint.h>

#include "rmad_shm.h"

/* Agent side. */
void rmad_counter_advance(struct rmad_shm_client *c, int which, uint64_t n);
/* moved: bit k set when counter k advanced since the last wake; 1 if
 * a waiter was announced for one of them, and woken */
int rmad_counter_wake(struct rmad_shm_client *c, unsigned moved);

/* Client side. */
static inline uint64_t rmad_counter_read(struct rmad_shm_client *c, int which)
{
	/* acquire: what the agent wrote before advancing is visible */
	return __atomic_load_n(&c->cnt[which], __ATOMIC_ACQUIRE);
}

/*
 * Wait until counter `which` reaches `target`.  Spins for spin_us, then
 * sleeps on the futex, waking every poll_ms to ask alive(arg) whether the
 * agent still lives (it returns 0 if so, or an RMAD_ERR_* to give up
 * with).  Returns 0 or that error.
 */
int rmad_counter_wait(struct rmad_shm_client *c, int which, uint64_t target,
		      long spin_us, int (*alive)(void *), void *arg);

int rmad_futex_wait(uint32_t *addr, uint32_t val, long timeout_ns);
int rmad_futex_wake(uint32_t *addr, int n);

#endif
