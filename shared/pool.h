/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.h - free lists of pool elements in the shared segment.
 *
 * Synchronization table:
 *   get  || get  : safe (tagged CAS on the head)
 *   get  || put  : safe
 *   put  || put  : safe
 *
 * Elements are linked by index through their first 32-bit word.  The
 * head packs (tag << 32) | index and every update bumps the tag, so a
 * stale CAS after an ABA interleaving fails.  `get` reads the next link
 * of an element that another thread may already have taken; the value
 * is only used if the CAS proves the head did not move, and callers that
 * must not trust the list (the agent) check the index they get against
 * the pool bounds.
 */
#ifndef RMAD_POOL_H
#define RMAD_POOL_H

#include <stdint.h>

#include "rmad_shm.h"

/* Link field of element i; elements are `stride` bytes apart. */
struct rmad_pool_view {
	void *base;
	uint64_t stride;
	uint32_t first;		/* lowest valid index */
	uint32_t n;		/* valid indices are [first, first + n) */
};

void rmad_pool_init(struct rmad_shm_freelist *fl,
		    const struct rmad_pool_view *v);
/* Returns an index, or RMAD_NIL when empty (or the list is corrupt). */
uint32_t rmad_pool_get(struct rmad_shm_freelist *fl,
		       const struct rmad_pool_view *v);
/* Returns 0, or -1 if idx is outside the pool (nothing is changed). */
int rmad_pool_put(struct rmad_shm_freelist *fl,
		  const struct rmad_pool_view *v, uint32_t idx);

#endif
