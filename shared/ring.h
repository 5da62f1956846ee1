/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring.h - a client's submission ring: many producers, one consumer.
 *
 * Synchronization table:
 *   push  || push   : safe, producers claim positions with a CAS on tail
 *   push  || pop    : safe, each slot's seq hands it over
 *   pop   || pop    : NOT safe; only the agent pops (takes and
 *                     releases), from one thread
 *
 * Each slot carries a sequence number (Vyukov's bounded queue).  Slot
 * i starts with seq == i.  A producer that claimed position pos writes
 * the value, then publishes seq = pos + 1; the consumer takes it when it
 * sees exactly that, then frees the slot for the next lap with
 * seq = pos + entries.  Counters run freely and wrap; "full" is a slot
 * whose seq is still a lap behind.
 *
 * The consumer keeps its position privately (the agent must not trust
 * the shared copy) and only publishes it; a producer that scribbles on
 * the slots can only make its own ring look empty or stuck.
 */
#ifndef RMAD_RING_H
#define RMAD_RING_H

#include <stdint.h>

#include "atomics.h"
#include "rmad_shm.h"

static inline void rmad_ring_init(struct rmad_ring_slot *ring, uint32_t n,
				  uint32_t *tail, uint32_t *head)
{
	for (uint32_t i = 0; i < n; i++) {
		ring[i].seq = i;
		ring[i].op = RMAD_NIL;
	}
	*tail = 0;
	*head = 0;
}

/*
 * Push v.  Returns 0, or -1 when the ring is full.  Release ordering on
 * seq makes the value (and everything the caller wrote before the push,
 * such as the op element) visible to the consumer that acquires seq.
 */
static inline int rmad_ring_push(struct rmad_ring_slot *ring, uint32_t mask,
				 uint32_t *tail, uint32_t v)
{
	uint32_t pos = load_relaxed(tail);

	for (;;) {
		struct rmad_ring_slot *s = &ring[pos & mask];
		/* acquire: pairs with the consumer's release of the slot */
		uint32_t seq = load_acquire(&s->seq);
		int32_t dif = (int32_t)(seq - pos);

		if (dif == 0) {
			if (__atomic_compare_exchange_n(tail, &pos, pos + 1,
							1, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED)) {
				store_relaxed(&s->op, v);
				/* release: publishes op (and the element) */
				store_release(&s->seq, pos + 1);
				return 0;
			}
			/* lost the race: pos now holds the fresh tail */
		} else if (dif < 0) {
			return -1;
		} else {
			pos = load_relaxed(tail);
		}
	}
}

/*
 * Take one value at the consumer's private position *head, leaving its
 * slot held: returns 1 and stores the value, or 0 when the next slot is
 * not published yet.  Held slots go back to the producers with
 * rmad_ring_release, several at once: the consumer then writes each
 * cache line of slots once per batch, not once per value.
 */
static inline int rmad_ring_take(struct rmad_ring_slot *ring, uint32_t mask,
				 uint32_t *head, uint32_t *v)
{
	uint32_t pos = *head;
	struct rmad_ring_slot *s = &ring[pos & mask];

	/* acquire: pairs with the producer's release, so op is complete */
	if (load_acquire(&s->seq) != pos + 1)
		return 0;
	*v = load_relaxed(&s->op);
	*head = pos + 1;
	return 1;
}

/* Free the slots of positions [from, to) for the producers' next lap. */
static inline void rmad_ring_release(struct rmad_ring_slot *ring,
				     uint32_t mask, uint32_t entries,
				     uint32_t from, uint32_t to)
{
	for (uint32_t pos = from; pos != to; pos++)
		/* release: our read of op happens before a producer
		 * reuses the slot */
		store_release(&ring[pos & mask].seq, pos + entries);
}

/* Take one value and free its slot at once. */
static inline int rmad_ring_pop(struct rmad_ring_slot *ring, uint32_t mask,
				uint32_t entries, uint32_t *head, uint32_t *v)
{
	uint32_t pos = *head;

	if (!rmad_ring_take(ring, mask, head, v))
		return 0;
	rmad_ring_release(ring, mask, entries, pos, pos + 1);
	return 1;
}

#endif
