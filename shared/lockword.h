/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lockword.h - the window lock word (RMAD_LW_* in rmad_shm.h), taken by
 * same-node clients and by the agent for remote origins with the same
 * two operations, so both follow one rule.
 */
#ifndef RMAD_LOCKWORD_H
#define RMAD_LOCKWORD_H

#include <stdint.h>

#include "rmad_shm.h"

/* One attempt (retried only while the CAS races): 1 if taken. */
static inline int rmad_lw_try(uint32_t *lw, int excl, uint32_t owner)
{
	uint32_t v = __atomic_load_n(lw, __ATOMIC_ACQUIRE), nv;

	for (;;) {
		if (v & RMAD_LW_EXCL)
			return 0;
		if (excl) {
			if (v & RMAD_LW_VALUE)
				return 0;
			nv = (v & ~RMAD_LW_VALUE) | RMAD_LW_EXCL | owner;
		} else {
			if ((v & RMAD_LW_VALUE) >= RMAD_LW_AGENT - 1)
				return 0;
			nv = v + 1;
		}
		if (__atomic_compare_exchange_n(lw, &v, nv, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
	}
}

/*
 * Release; returns the word as it was, so the caller can wake sleepers
 * (RMAD_LW_SLEEPERS, cleared here) and kick the agent (RMAD_LW_QUEUED,
 * kept).
 */
static inline uint32_t rmad_lw_release(uint32_t *lw, int excl)
{
	uint32_t v = __atomic_load_n(lw, __ATOMIC_RELAXED), nv;

	do {
		if (excl)
			nv = v & RMAD_LW_QUEUED;
		else
			nv = ((v & RMAD_LW_VALUE) ? v - 1 : v) &
			     ~RMAD_LW_SLEEPERS;
	} while (!__atomic_compare_exchange_n(lw, &v, nv, 0, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	return v;
}

#endif
