/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * accword.h - bulk accumulates: a large accumulate combines with plain,
 * vectorizable loads and stores (rmad_acc_apply_bulk), a small one keeps
 * its per-element CPU atomics (rmad_acc_apply), and the two stay atomic
 * per element against each other, as MPI-3.1 11.7.1 requires, whoever
 * applies them: same-node clients or the agent.
 *
 * The words, in the target member's control page (struct rmad_win_ctl):
 *
 *   acc_lock         exclusive (0, client slot + 1, RMAD_ACC_AGENT).  Taken
 *                    by bulk accumulates, by every accumulate on a created
 *                    or dynamic window or on a type wider than 8 bytes,
 *                    by every accumulate the agent applies, and by clients
 *                    whose slot is RMAD_ACC_SLOTS or above.
 *   acc_big          1 while the holder of acc_lock combines in bulk.
 *   acc_small[slot]  how many threads of the client of that slot apply
 *                    a small accumulate (or compare-and-swap) with
 *                    atomics, without the lock: a count, as threads of
 *                    one process share the slot.
 *   acc_small_hi     1 + the highest slot that ever entered a small
 *                    accumulate on this member: a bulk scans the counts
 *                    below it only (a scan of all max_clients counts
 *                    cost a same-node 4 KiB accumulate up to 0.3 us).
 *
 * Small (lock-free):
 *     if acc_small_hi <= me: raise it to me + 1 (atomic maximum);
 *     acc_small[me] += 1 (atomic);  if acc_big: acc_small[me] -= 1, wait
 *     until acc_big is 0, start again;  apply with atomics;
 *     acc_small[me] -= 1 (atomic, release).
 * Bulk:
 *     take acc_lock;  acc_big = 1 (sequentially consistent);  wait until
 *     every acc_small count below acc_small_hi is 0;  apply with plain
 *     loads and stores;  acc_big = 0 (release);  release acc_lock.
 *
 * Each side stores its word sequentially consistently before it loads
 * the other's (Dekker): a small one that found acc_big 0 is seen by the
 * bulk's scan, or it sees acc_big 1.  The bound keeps that: the small
 * side's raise (or its load that found the bound above it) comes before
 * its count in the single order of sequentially consistent accesses,
 * and the bulk loads the bound after its acc_big, so a small one that
 * found acc_big 0 has a slot below the bound the bulk read.  The bound
 * only grows; a member that lowers it can break only the atomicity of
 * its own window's accumulates, whose memory it can write anyway.  The small side pays two locked
 * instructions (a few nanoseconds) and no wait unless a bulk is
 * running.  An asymmetric form (plain store on the small side,
 * membarrier(2) on the bulk side) was measured and dropped: on cores
 * shared with other processes a GLOBAL_EXPEDITED membarrier took 9 to
 * 26 microseconds, more than the atomics it saved for anything below
 * about 1 MiB, and it interrupts every rmad process of the node.
 *
 * A bulk gives up (acc_big back to 0, the op applied with atomics under
 * acc_lock, which is correct against anything) when a small side keeps
 * its count longer than it wants to wait.  The agent clears a dead
 * client's acc_small count, and acc_big with its acc_lock.
 */
#ifndef RMAD_ACCWORD_H
#define RMAD_ACCWORD_H

#include <sched.h>
#include <stdint.h>
#include <string.h>

#include <urcu/arch.h>

#include "rmad_abi.h"
#include "rmad_shm.h"
#include "util.h"

/* pause-spins of a small accumulate waiting on a bulk before it yields */
#define ACC_SMALL_SPINS	4096

/* Raise acc_small_hi above slot, before slot's first count there. */
static inline void acc_small_mark(struct rmad_win_ctl *ctl, uint32_t slot)
{
	uint32_t hi = __atomic_load_n(&ctl->acc_small_hi, __ATOMIC_SEQ_CST);

	while (hi <= slot &&
	       !__atomic_compare_exchange_n(&ctl->acc_small_hi, &hi, slot + 1,
					    0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST))
		;
}

/*
 * Enter a small accumulate as client `slot` (< RMAD_ACC_SLOTS): 0, or
 * RMAD_ERR_SYNC when a bulk keeps acc_big set for wait_ns.
 */
static inline int acc_small_enter(struct rmad_win_ctl *ctl, uint32_t slot,
				  uint64_t wait_ns)
{
	uint64_t t0 = 0;

	acc_small_mark(ctl, slot);
	for (;;) {
		__atomic_fetch_add(&ctl->acc_small[slot], 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&ctl->acc_big, __ATOMIC_SEQ_CST))
			return 0;
		__atomic_fetch_sub(&ctl->acc_small[slot], 1, __ATOMIC_RELEASE);
		/* spin a little before yielding: back-to-back bulks leave
		 * a small one only a short gap between them */
		for (unsigned s = 0;
		     __atomic_load_n(&ctl->acc_big, __ATOMIC_ACQUIRE); s++) {
			if (s < ACC_SMALL_SPINS) {
				caa_cpu_relax();
				continue;
			}
			if (!t0)
				t0 = rmad_now_ns();
			else if (rmad_now_ns() - t0 > wait_ns)
				return RMAD_ERR_SYNC;
			sched_yield();
		}
	}
}

static inline void acc_small_leave(struct rmad_win_ctl *ctl, uint32_t slot)
{
	__atomic_fetch_sub(&ctl->acc_small[slot], 1, __ATOMIC_RELEASE);
}

/*
 * With acc_lock held: 1 when the bulk mode is on (apply with plain loads
 * and stores, then acc_bulk_end), 0 when a small side kept its count up
 * for wait_ns (the word is down again: apply with atomics).  nslots: the
 * client slots that may hold a count (max_clients).
 */
static inline int acc_bulk_begin(struct rmad_win_ctl *ctl, uint32_t nslots,
				 uint64_t wait_ns)
{
	uint64_t t0 = 0;
	uint32_t hi;
	unsigned spins = 0;

	__atomic_store_n(&ctl->acc_big, 1, __ATOMIC_SEQ_CST);
	hi = __atomic_load_n(&ctl->acc_small_hi, __ATOMIC_SEQ_CST);
	if (nslots > hi)
		nslots = hi;
	if (nslots > RMAD_ACC_SLOTS)
		nslots = RMAD_ACC_SLOTS;
	for (uint32_t i = 0; i < nslots;) {
		if (!__atomic_load_n(&ctl->acc_small[i], __ATOMIC_SEQ_CST)) {
			i++;
			continue;
		}
		if (!t0)
			t0 = rmad_now_ns();
		else if (rmad_now_ns() - t0 > wait_ns) {
			__atomic_store_n(&ctl->acc_big, 0, __ATOMIC_RELEASE);
			return 0;
		}
		if (++spins < ACC_SMALL_SPINS)
			caa_cpu_relax();
		else
			sched_yield();
	}
	return 1;
}

static inline void acc_bulk_end(struct rmad_win_ctl *ctl)
{
	__atomic_store_n(&ctl->acc_big, 0, __ATOMIC_RELEASE);
}

#endif
