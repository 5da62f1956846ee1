/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handle.h - handle tables with generations, for the opaque handles of
 * the API (rmad_win_t, rmad_group_t).
 *
 * A handle is not the object's address.  It encodes a slot of a table,
 * the slot's generation and a kind tag:
 *
 *	bits 63..32  generation (never 0)
 *	bits 31..4   slot index
 *	bits  3..0   kind tag (odd, so a handle is never an aligned pointer)
 *
 * A lookup checks the tag, the index against the table and the
 * generation against the slot before it touches the object, so a
 * garbage, freed or foreign handle is refused (NULL), never dereferenced.
 * Freeing a slot bumps its generation: a stale copy of a freed handle
 * stays refused after the slot is reused.
 */
#ifndef RMAD_CLIENT_HANDLE_H
#define RMAD_CLIENT_HANDLE_H

#include <pthread.h>
#include <stdint.h>

#define HANDLE_CHUNK_BITS	12
#define HANDLE_CHUNK		(1u << HANDLE_CHUNK_BITS)
#define HANDLE_CHUNKS		256	/* at most 1M live handles a kind */

#define HANDLE_TAG_WIN		0x3u
#define HANDLE_TAG_GROUP	0x5u
#define HANDLE_TAG_REQ		0x7u
#define HANDLE_TAG_TYPE		0x9u

struct handle_slot {
	uint32_t gen;			/* odd: live; even: free */
	uint32_t next_free;		/* free list link, index + 1 */
	void *obj;
};

struct handle_table {
	pthread_mutex_t lock;
	uint32_t tag;
	uint32_t nslots;		/* slots ever handed out */
	uint32_t free_head;		/* index + 1, 0: none */
	struct handle_slot *chunk[HANDLE_CHUNKS];
};

#define HANDLE_TABLE_INIT(t) { PTHREAD_MUTEX_INITIALIZER, (t), 0, 0, { 0 } }

/* A new handle for obj in *h; RMAD_ERR_NOMEM when the table is full. */
int handle_new(struct handle_table *t, void *obj, uintptr_t *h);
_Static_assert(sizeof(uintptr_t) == 8, "handles need 64-bit pointers");

static inline struct handle_slot *handle_slot_at(struct handle_table *t,
						 uint32_t i)
{
	struct handle_slot *c;

	if (i >= HANDLE_CHUNK * HANDLE_CHUNKS)
		return NULL;
	c = __atomic_load_n(&t->chunk[i >> HANDLE_CHUNK_BITS],
			    __ATOMIC_ACQUIRE);
	return c ? &c[i & (HANDLE_CHUNK - 1)] : NULL;
}

/* The object of a live handle, or NULL.  Lock-free. */
static inline void *handle_get(struct handle_table *t, uintptr_t h)
{
	uint64_t v = (uint64_t)h;
	uint32_t gen = (uint32_t)(v >> 32);
	struct handle_slot *s;

	if ((v & 0xfu) != t->tag || !(gen & 1u))
		return NULL;
	s = handle_slot_at(t, (uint32_t)(v >> 4) & 0x0fffffffu);
	if (!s || __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != gen)
		return NULL;
	return s->obj;
}
/* Ends a live handle and returns its object; NULL if it was not live. */
void *handle_free(struct handle_table *t, uintptr_t h);

#endif
