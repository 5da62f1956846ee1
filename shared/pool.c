/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.c - lock-free element free lists shared between processes.
 *
 * Memory-barrier guarantees: a successful get acquires the element (all
 * writes made by whoever put it are visible); put releases it (all
 * writes made to it before the put are visible to the next getter).
 */
#include "pool.h"
#include "atomics.h"

static inline uint32_t *link_of(const struct rmad_pool_view *v, uint32_t i)
{
	return (uint32_t *)((char *)v->base + (uint64_t)i * v->stride);
}

static inline int in_pool(const struct rmad_pool_view *v, uint32_t i)
{
	return i >= v->first && i - v->first < v->n;
}

void rmad_pool_init(struct rmad_shm_freelist *fl,
		    const struct rmad_pool_view *v)
{
	for (uint32_t k = 0; k < v->n; k++) {
		uint32_t i = v->first + k;

		*link_of(v, i) = k + 1 < v->n ? i + 1 : RMAD_NIL;
	}
	fl->count = v->n;
	store_release(&fl->head, v->n ? (uint64_t)v->first : RMAD_NIL);
}

uint32_t rmad_pool_get(struct rmad_shm_freelist *fl,
		       const struct rmad_pool_view *v)
{
	/* acquire: the element's link and contents as its putter left them */
	uint64_t old = load_acquire(&fl->head);

	for (;;) {
		uint32_t idx = (uint32_t)old;
		uint64_t nxt;

		if (idx == RMAD_NIL || !in_pool(v, idx))
			return RMAD_NIL;
		nxt = (uint64_t)load_relaxed(link_of(v, idx)) |
		      (((old >> 32) + 1) << 32);
		/* acq_rel: claim idx; on failure old is refreshed */
		if (__atomic_compare_exchange_n(&fl->head, &old, nxt, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			uatomic_add(&fl->count, -1);
			return idx;
		}
	}
}

int rmad_pool_put(struct rmad_shm_freelist *fl,
		  const struct rmad_pool_view *v, uint32_t idx)
{
	uint64_t old = load_relaxed(&fl->head);

	if (!in_pool(v, idx))
		return -1;
	for (;;) {
		uint64_t nxt = (uint64_t)idx | (((old >> 32) + 1) << 32);

		store_relaxed(link_of(v, idx), (uint32_t)old);
		/* release: the link and element contents before the new head */
		if (__atomic_compare_exchange_n(&fl->head, &old, nxt, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			break;
	}
	uatomic_add(&fl->count, 1);
	return 0;
}

int rmad_pool_chain_add(struct rmad_pool_chain *ch,
			const struct rmad_pool_view *v, uint32_t idx)
{
	if (!in_pool(v, idx))
		return -1;
	/* relaxed: the chain is private until put_chain's release */
	store_relaxed(link_of(v, idx), ch->head);
	if (ch->head == RMAD_NIL)
		ch->tail = idx;
	ch->head = idx;
	ch->n++;
	return 0;
}

void rmad_pool_put_chain(struct rmad_shm_freelist *fl,
			 const struct rmad_pool_view *v,
			 struct rmad_pool_chain *ch)
{
	uint64_t old;

	if (!ch->n)
		return;
	old = load_relaxed(&fl->head);
	for (;;) {
		uint64_t nxt = (uint64_t)ch->head | (((old >> 32) + 1) << 32);

		store_relaxed(link_of(v, ch->tail), (uint32_t)old);
		/* release: every link and element before the new head */
		if (__atomic_compare_exchange_n(&fl->head, &old, nxt, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			break;
	}
	uatomic_add(&fl->count, ch->n);
	rmad_pool_chain_init(ch);
}
