/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handle.c - handle tables with generations (see handle.h).
 *
 * Slots live in chunks that never move once allocated, so a lookup
 * needs no lock: it loads the chunk pointer and the slot's generation
 * with acquire ordering.  Creation and freeing take the table's mutex.
 */
#include <stdlib.h>

#include "handle.h"
#include "rmad_abi.h"

static uintptr_t encode(struct handle_table *t, uint32_t i, uint32_t gen)
{
	return (uintptr_t)(((uint64_t)gen << 32) | ((uint64_t)i << 4) |
			   t->tag);
}

int handle_new(struct handle_table *t, void *obj, uintptr_t *h)
{
	struct handle_slot *s;
	uint32_t i;

	pthread_mutex_lock(&t->lock);
	if (t->free_head) {
		i = t->free_head - 1;
		s = handle_slot_at(t, i);
		t->free_head = s->next_free;
	} else {
		i = t->nslots;
		if (i >= HANDLE_CHUNK * HANDLE_CHUNKS) {
			pthread_mutex_unlock(&t->lock);
			return RMAD_ERR_NOMEM;
		}
		if (!t->chunk[i >> HANDLE_CHUNK_BITS]) {
			struct handle_slot *c = calloc(HANDLE_CHUNK,
						       sizeof(*c));

			if (!c) {
				pthread_mutex_unlock(&t->lock);
				return RMAD_ERR_NOMEM;
			}
			for (uint32_t k = 0; k < HANDLE_CHUNK; k++)
				c[k].gen = 2;	/* free; the first live is 3 */
			__atomic_store_n(&t->chunk[i >> HANDLE_CHUNK_BITS], c,
					 __ATOMIC_RELEASE);
		}
		t->nslots++;
		s = handle_slot_at(t, i);
	}
	s->next_free = 0;
	s->obj = obj;
	/* odd: live; the object is published before the generation */
	__atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
	*h = encode(t, i, s->gen);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void *handle_free(struct handle_table *t, uintptr_t h)
{
	uint32_t i = (uint32_t)((uint64_t)h >> 4) & 0x0fffffffu;
	struct handle_slot *s;
	void *obj;

	pthread_mutex_lock(&t->lock);
	obj = handle_get(t, h);
	if (obj) {
		s = handle_slot_at(t, i);
		/* even: free; a stale copy of h no longer matches */
		__atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
		s->obj = NULL;
		s->next_free = t->free_head;
		t->free_head = i + 1;
	}
	pthread_mutex_unlock(&t->lock);
	return obj;
}
