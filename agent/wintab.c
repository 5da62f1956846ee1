/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wintab.c - the agent's tables of windows: the list of every window, a
 * hash by (job, key) with a random seed (a key comes from clients and
 * other nodes, so chains must not be steerable), the block table that
 * names a ready window to its members' op elements (it grows by
 * doubling and reuses freed blocks), and the windows each user holds
 * here against max_windows.  No limit but memory; windows.c owns the
 * windows themselves.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "wintab.h"
#include "log.h"
#include "rmad_abi.h"

static uint32_t win_hash(const struct agent *a, const struct agent_job *j,
			 uint64_t key)
{
	uint64_t v = key ^ a->wn.seed ^
		     ((uint64_t)(uintptr_t)j * 0x9e3779b97f4a7c15ull);

	v ^= v >> 31;
	v *= 0xbf58476d1ce4e5b9ull;
	v ^= v >> 29;
	return (uint32_t)v & a->wn.hmask;
}

struct agent_win *wintab_find(struct agent *a, struct agent_job *j,
			       uint64_t key)
{
	if (!a->wn.hash)
		return NULL;
	for (struct agent_win *w = a->wn.hash[win_hash(a, j, key)]; w;
	     w = w->hnext)
		if (w->job == j && w->key == key)
			return w;
	return NULL;
}

/* Room in the hash for one more window (a load of one at most). */
static int hash_room(struct agent *a)
{
	uint32_t n = a->wn.hash ? a->wn.hmask + 1 : 0, nn;
	struct agent_win **h;

	if (a->wn.nwins < n)
		return 0;
	nn = n ? n * 2 : 256;
	if (nn < n)
		return -1;
	h = calloc(nn, sizeof(*h));
	if (!h)
		return -1;
	free(a->wn.hash);
	a->wn.hash = h;
	a->wn.hmask = nn - 1;
	for (struct agent_win *w = a->wn.wins; w; w = w->next) {
		uint32_t b = win_hash(a, w->job, w->key);

		w->hnext = h[b];
		h[b] = w;
	}
	return 0;
}

/* A free window block for w (the table grows); -1 without memory. */
int wintab_block_take(struct agent *a, struct agent_win *w)
{
	struct win_ctx *x = &a->wn;
	uint32_t b;

	if (x->nbfree) {
		b = x->bfree[--x->nbfree];
	} else {
		if (x->bused == x->nblocks) {
			uint32_t n = x->nblocks ? x->nblocks * 2 : 64;
			struct agent_win **p;
			uint32_t *f;

			if (n > INT32_MAX)
				return -1;
			p = realloc(x->blocks, sizeof(*p) * n);
			if (!p)
				return -1;
			x->blocks = p;
			f = realloc(x->bfree, sizeof(*f) * n);
			if (!f)
				return -1;
			x->bfree = f;
			memset(p + x->nblocks, 0,
			       sizeof(*p) * (n - x->nblocks));
			x->nblocks = n;
		}
		b = x->bused++;
	}
	x->blocks[b] = w;
	w->block = (int)b;
	return 0;
}

void wintab_block_put(struct agent *a, struct agent_win *w)
{
	if (w->block < 0)
		return;
	a->wn.blocks[w->block] = NULL;
	/* bfree has room for every block */
	a->wn.bfree[a->wn.nbfree++] = (uint32_t)w->block;
	w->block = -1;
}

static struct win_quota *quota_of(struct agent *a, uid_t uid, int make)
{
	struct win_quota *q;

	for (int i = 0; i < a->wn.nquota; i++)
		if (a->wn.quota[i].uid == uid)
			return &a->wn.quota[i];
	if (!make)
		return NULL;
	if (a->wn.nquota == a->wn.capquota) {
		int n = a->wn.capquota ? a->wn.capquota * 2 : 4;

		q = realloc(a->wn.quota, sizeof(*q) * (size_t)n);
		if (!q)
			return NULL;
		a->wn.quota = q;
		a->wn.capquota = n;
	}
	q = &a->wn.quota[a->wn.nquota++];
	*q = (struct win_quota){ .uid = uid };
	return q;
}

/*
 * The first member here of w came from user uid: w counts in uid's
 * windows.  RMAD_ERR_NOMEM when uid has max_windows already (a quota per
 * user; 0: none), and the window is then refused on every member.
 */
int wintab_quota_charge(struct agent *a, struct agent_win *w, uid_t uid)
{
	struct win_quota *q = quota_of(a, uid, 1);

	if (!q)
		return RMAD_ERR_NOMEM;
	if (a->p.max_windows && q->n >= (uint32_t)a->p.max_windows) {
		rmad_warn("window %llx: user %u has %u windows on this agent "
			  "already (max_windows): refused",
			  (unsigned long long)w->key, (unsigned)uid, q->n);
		return RMAD_ERR_NOMEM;
	}
	q->n++;
	w->uid = uid;
	w->charged = 1;
	return 0;
}

void wintab_quota_release(struct agent *a, struct agent_win *w)
{
	struct win_quota *q = w->charged ? quota_of(a, w->uid, 0) : NULL;

	w->charged = 0;
	if (q && !--q->n)	/* the last one: the entry goes */
		*q = a->wn.quota[--a->wn.nquota];
}

int wintab_insert(struct agent *a, struct agent_win *w)
{
	uint32_t b;

	if (hash_room(a))
		return -1;
	w->next = a->wn.wins;
	w->prev = NULL;
	if (w->next)
		w->next->prev = w;
	a->wn.wins = w;
	b = win_hash(a, w->job, w->key);
	w->hnext = a->wn.hash[b];
	a->wn.hash[b] = w;
	a->wn.nwins++;
	return 0;
}

void wintab_remove(struct agent *a, struct agent_win *w)
{
	struct agent_win **pp = &a->wn.hash[win_hash(a, w->job, w->key)];

	while (*pp && *pp != w)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = w->hnext;
	if (w->prev)
		w->prev->next = w->next;
	else
		a->wn.wins = w->next;
	if (w->next)
		w->next->prev = w->prev;
	a->wn.nwins--;
}
