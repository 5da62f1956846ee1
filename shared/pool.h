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

/*
 * A private chain of elements that goes onto a list in one CAS: the
 * agent gives a pass's completed elements back this way, so the list's
 * head (a cache line the client's gets also write) moves once per pass
 * instead of once per element.  Links are written as elements are added;
 * the chain is nobody else's until rmad_pool_put_chain publishes it.
 */
struct rmad_pool_chain {
	uint32_t head;		/* RMAD_NIL when empty */
	uint32_t tail;
	uint32_t n;
};

static inline void rmad_pool_chain_init(struct rmad_pool_chain *ch)
{
	ch->head = ch->tail = RMAD_NIL;
	ch->n = 0;
}

/* Returns 0, or -1 if idx is outside the pool (nothing is changed). */
int rmad_pool_chain_add(struct rmad_pool_chain *ch,
			const struct rmad_pool_view *v, uint32_t idx);
/* Pushes the whole chain (if any) and empties it. */
void rmad_pool_put_chain(struct rmad_shm_freelist *fl,
			 const struct rmad_pool_view *v,
			 struct rmad_pool_chain *ch);

#endif
