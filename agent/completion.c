/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * completion.c - the completion layer: the shared segment's op elements
 * and who holds each, lending from the global pool (fair share, reclaim,
 * the op_pool hint's reservations), completion counters and wakeups.
 *
 * Protocol modules above end an operation with completion_op_done(); the
 * client layer above asks here whether a submitted index is the
 * client's to submit (completion_op_take) before it dispatches it.  The
 * owner of every element is recorded here, privately: nothing a client
 * writes in the segment decides who an element belongs to.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "atomics.h"
#include "completion.h"
#include "counter.h"
#include "log.h"
#include "pool.h"
#include "rmad_abi.h"
#include "trace.h"
#include "util.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010	/* Linux 5.1; older headers lack it */
#endif

#define NO_OWNER	0xffffu

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Client slot of element index i, and i within its segment. */
static uint32_t slot_of(struct agent *a, uint32_t i)
{
	return i / a->lay.per_client;
}

static uint32_t local_of(struct agent *a, uint32_t i)
{
	return i % a->lay.per_client;
}

/* A lend slot (a global element when lent), not a reserved one. */
static int is_lend(struct agent *a, uint32_t i)
{
	return local_of(a, i) < a->lay.op_pool_size;
}

/* Client c's list of op elements, by the client's (local) indices. */
static struct rmad_pool_view client_view(struct agent *a, uint32_t c)
{
	struct rmad_pool_view v = {
		.base = (char *)a->seg + (uint64_t)c * a->lay.client_stride +
			a->lay.off_ops,
		.stride = sizeof(struct rmad_op_elem),
		.first = 0,
		.n = a->lay.per_client,
	};
	return v;
}

static struct rmad_shm_client *shm_client(struct agent *a, uint32_t c)
{
	return rmad_shm_client_at(a->seg, &a->lay, c);
}

/* Element i onto the list of the client whose segment holds it. */
static int list_put(struct agent *a, uint32_t i)
{
	uint32_t c = slot_of(a, i);
	struct rmad_pool_view v = client_view(a, c);

	return rmad_pool_put(&shm_client(a, c)->op_free, &v, local_of(a, i));
}

/* An element off client c's list (an agent index), or RMAD_NIL. */
static uint32_t list_get(struct agent *a, uint32_t c)
{
	struct rmad_pool_view v = client_view(a, c);
	uint32_t l = rmad_pool_get(&shm_client(a, c)->op_free, &v);

	return l == RMAD_NIL ? RMAD_NIL : c * a->lay.per_client + l;
}

int completion_segment_create(struct agent *a)
{
	const struct rmad_params *p = &a->p;
	struct rmad_shm_hdr h = { 0 };
	uint64_t off, nops, per;
	uint32_t c;

	h.version = RMAD_SHM_VERSION;
	h.abi_version = RMAD_ABI_VERSION;
	h.magic = RMAD_SHM_MAGIC;
	h.max_clients = (uint32_t)p->max_clients;
	h.ring_entries = (uint32_t)p->ring_entries;
	h.op_pool_size = (uint32_t)p->op_pool;
	h.client_op_pool = (uint32_t)p->client_op_pool;
	h.staging_size = align_up(p->staging_size, RMAD_SHM_ALIGN);
	per = (uint64_t)h.op_pool_size + h.client_op_pool;
	nops = per * h.max_clients;
	if (!per || nops >= RMAD_NIL || h.max_clients >= NO_OWNER) {
		rmad_err("max_clients * (op_pool + client_op_pool) too large");
		return RMAD_ERR_ARG;
	}
	h.per_client = (uint32_t)per;
	/* a client segment: block and ring, elements, staging */
	off = align_up(sizeof(struct rmad_shm_client) +
		       (uint64_t)h.ring_entries *
		       sizeof(struct rmad_ring_slot), RMAD_SHM_ALIGN);
	h.off_ops = off;
	off = align_up(off + per * sizeof(struct rmad_op_elem),
		       RMAD_SHM_ALIGN);
	h.off_staging = off;
	off += h.staging_size;
	h.client_seg_size = off;
	h.client_stride = off;
	h.seg_size = RMAD_SHM_ALIGN;	/* the header's memfd */
	h.node = (uint32_t)a->node;
	h.nnodes = (uint32_t)a->nnodes;
	h.agent_pid = getpid();
	h.agent_core = a->core;

	/*
	 * The header: mapped here read-write, then sealed, so that no
	 * client can map it writable.
	 */
	a->memfd = memfd_create("rmad-header", MFD_CLOEXEC |
				MFD_ALLOW_SEALING);
	if (a->memfd < 0) {
		rmad_err("memfd_create: %s", strerror(errno));
		return RMAD_ERR_NOMEM;
	}
	if (ftruncate(a->memfd, (off_t)h.seg_size) < 0) {
		rmad_err("ftruncate header: %s", strerror(errno));
		goto fail_fd;
	}
	a->hdr = mmap(NULL, h.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      a->memfd, 0);
	if (a->hdr == MAP_FAILED) {
		rmad_err("mmap header: %s", strerror(errno));
		a->hdr = NULL;
		goto fail_fd;
	}
	memcpy(a->hdr, &h, sizeof(h));
	if (fcntl(a->memfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK |
		  F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rmad_err("sealing the header: %s", strerror(errno));
		goto fail_hdr;
	}
	a->lay = h;

	/*
	 * The client segments: one reservation, anonymous and private
	 * until a client attaches to a slot and its own memfd is mapped
	 * over it.
	 */
	a->seg_size = h.client_stride * h.max_clients;
	a->seg = mmap(NULL, a->seg_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->seg == MAP_FAILED) {
		rmad_err("mmap client segments (%llu bytes): %s",
			 (unsigned long long)a->seg_size, strerror(errno));
		a->seg = NULL;
		goto fail_hdr;
	}
	a->cp.op_owner = calloc(nops, sizeof(*a->cp.op_owner));
	a->cp.op_inflight = calloc(nops, 1);
	a->cp.op_flags = calloc(nops, sizeof(*a->cp.op_flags));
	a->cp.borrowed = calloc(h.max_clients, sizeof(*a->cp.borrowed));
	a->cp.op_resv = calloc(nops, 1);
	a->cp.reserved = calloc(h.max_clients, sizeof(*a->cp.reserved));
	a->cp.lend = calloc(h.max_clients, sizeof(*a->cp.lend));
	a->cp.nlend = calloc(h.max_clients, sizeof(*a->cp.nlend));
	if (!a->cp.op_owner || !a->cp.op_inflight || !a->cp.op_flags ||
	    !a->cp.borrowed || !a->cp.op_resv || !a->cp.reserved ||
	    !a->cp.lend || !a->cp.nlend)
		goto fail_map;
	for (c = 0; c < h.max_clients; c++) {
		a->cp.lend[c] = malloc(sizeof(uint32_t) *
				       (h.op_pool_size ? h.op_pool_size : 1));
		if (!a->cp.lend[c])
			goto fail_map;
		for (uint32_t l = 0; l < h.op_pool_size; l++)
			a->cp.lend[c][l] = h.op_pool_size - 1 - l;
		a->cp.nlend[c] = h.op_pool_size;
	}
	for (uint64_t i = 0; i < nops; i++)
		a->cp.op_owner[i] = is_lend(a, (uint32_t)i) ? NO_OWNER :
				    (uint16_t)slot_of(a, (uint32_t)i);
	a->ngfree = h.op_pool_size;
	a->st.op_pool_hwm = 0;
	rmad_info("segments: %llu bytes per client, %u clients, %llu op "
		  "elements each", (unsigned long long)h.client_seg_size,
		  h.max_clients, (unsigned long long)per);
	return 0;

fail_map:
	rmad_err("out of memory for the op table");
fail_hdr:
	munmap(a->hdr, RMAD_SHM_ALIGN);
	a->hdr = NULL;
fail_fd:
	close(a->memfd);
	a->memfd = -1;
	return RMAD_ERR_NOMEM;
}

int completion_client_segment(struct agent *a, uint32_t c)
{
	char name[32];
	void *at = (char *)a->seg + (uint64_t)c * a->lay.client_stride;
	void *m;
	int fd;

	snprintf(name, sizeof(name), "rmad-client-%u", c);
	/* sealed at its size before anyone maps it: the client cannot
	 * shrink it under our mapping (a read past its end would be our
	 * SIGBUS), nor grow it */
	fd = rmad_memfd_sealed(name, a->lay.client_seg_size, 0);
	if (fd < 0)
		return fd;
	/* over the slot's previous mapping: its last client keeps its own */
	m = mmap(at, a->lay.client_seg_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

uint32_t completion_slot_inflight(struct agent *a, uint32_t c)
{
	uint32_t n = 0, per = a->lay.per_client;

	if (!a->cp.op_inflight)
		return 0;
	for (uint32_t i = c * per; i < (c + 1) * per; i++)
		n += a->cp.op_inflight[i];
	return n;
}

void completion_segment_destroy(struct agent *a)
{
	if (a->seg)
		munmap(a->seg, a->seg_size);
	a->seg = NULL;
	if (a->hdr)
		munmap(a->hdr, RMAD_SHM_ALIGN);
	a->hdr = NULL;
	if (a->memfd >= 0)
		close(a->memfd);
	a->memfd = -1;
	for (uint32_t c = 0; a->cp.lend && c < a->lay.max_clients; c++)
		free(a->cp.lend[c]);
	free(a->cp.lend);
	free(a->cp.nlend);
	free(a->cp.op_owner);
	free(a->cp.op_inflight);
	free(a->cp.op_flags);
	free(a->cp.borrowed);
	free(a->cp.op_resv);
	free(a->cp.reserved);
	a->cp.lend = NULL;
	a->cp.nlend = NULL;
	a->cp.op_owner = NULL;
	a->cp.op_inflight = NULL;
	a->cp.op_flags = NULL;
	a->cp.borrowed = NULL;
	a->cp.op_resv = NULL;
	a->cp.reserved = NULL;
}

/* Lend slot i is free again: back to its client slot's stack, and to
 * the budget. */
static void global_put(struct agent *a, uint32_t i)
{
	uint32_t c = slot_of(a, i);

	if (!is_lend(a, i) || a->cp.nlend[c] >= a->lay.op_pool_size)
		return;
	a->cp.lend[c][a->cp.nlend[c]++] = local_of(a, i);
	if (a->ngfree < a->lay.op_pool_size)
		a->ngfree++;
}

uint32_t completion_global_free(struct agent *a)
{
	return a->ngfree;
}

uint32_t completion_global_reserved(struct agent *a)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < a->lay.max_clients; c++)
		n += a->cp.reserved[c];
	return n;
}

/* Element i is no longer reserved to its owner: it counts as lent. */
static void unreserve(struct agent *a, uint32_t i)
{
	if (!is_lend(a, i) || !a->cp.op_resv[i])
		return;
	a->cp.op_resv[i] = 0;
	if (a->cp.op_owner[i] < a->lay.max_clients && a->cp.reserved[a->cp.op_owner[i]])
		a->cp.reserved[a->cp.op_owner[i]]--;
}

/* Counter `which` of client c goes up by n at the end of the pass, with
 * the wakes that are due. */
static void cnt_add(struct agent *a, uint32_t c, int which, uint32_t n)
{
	a->cl[c].gb_cnt[which] += n;
	a->cl[c].moved = 1;
	if (!a->any_moved)
		RMAD_TR(RMAD_TR_COUNT, which);	/* the pass's first */
	a->any_moved = 1;
}

/*
 * Element i back to client c's list at the end of the pass, with the
 * others of the pass in one push (completion_flush_wakeups).  An element of
 * another client's segment (none is lent across) goes at once.
 */
static int give_back(struct agent *a, uint32_t c, uint32_t i)
{
	struct rmad_pool_view v;

	if (slot_of(a, i) != c)
		return list_put(a, i);
	v = client_view(a, c);
	return rmad_pool_chain_add(&a->cl[c].gb, &v, local_of(a, i));
}

/* Forget what client c's pass would have published (it is gone, or its
 * segment starts afresh). */
static void forget_pass(struct agent *a, uint32_t c)
{
	rmad_pool_chain_init(&a->cl[c].gb);
	memset(a->cl[c].gb_cnt, 0, sizeof(a->cl[c].gb_cnt));
}

/*
 * Hand element i back: to its client's list (at the pass's end) if the
 * client is alive and owns it, to the global list otherwise.  Borrowed
 * elements go home to the global list once the client's list is full
 * again.
 */
static void release_op(struct agent *a, uint32_t c, uint32_t i)
{
	const struct rmad_shm_hdr *h = &a->lay;
	int own = !is_lend(a, i);

	a->cp.op_inflight[i] = 0;
	if (c < h->max_clients && a->cl[c].registered &&
	    a->cp.op_owner[i] == c) {
		struct rmad_shm_client *sc = shm_client(a, c);

		/* with client_op_pool 0 one element still comes back: a
		 * client waiting for one hears of it only through FREED */
		if (own || a->cp.op_resv[i] ||
		    load_relaxed(&sc->op_free.count) + a->cl[c].gb.n <
		    (h->client_op_pool ? h->client_op_pool : 1)) {
			if (give_back(a, c, i) == 0) {
				cnt_add(a, c, RMAD_CNT_FREED, 1);
				return;
			}
		}
	}
	if (own)
		return;		/* dead client's reserve: reset on reattach */
	if (a->cp.op_resv[i]) {
		/* a window's reserve whose client is gone: home */
		unreserve(a, i);
		a->cp.op_owner[i] = NO_OWNER;
		global_put(a, i);
		return;
	}
	if (a->cp.op_owner[i] != NO_OWNER && a->cp.op_owner[i] < h->max_clients &&
	    a->cp.borrowed[a->cp.op_owner[i]])
		a->cp.borrowed[a->cp.op_owner[i]]--;
	a->cp.op_owner[i] = NO_OWNER;
	global_put(a, i);
}

/*
 * Take back lent elements that sit idle on the lists of clients above
 * their fair share (share changes as clients come: the first one may
 * have borrowed the whole pool).  Elements a client frees itself (sync
 * ops) stay on its list, so without this a newcomer could wait forever
 * for a pool that an early client keeps.  Only lent, unreserved, idle
 * elements go home; anything else popped goes back where it was.
 */
static void reclaim_idle(struct agent *a, uint32_t needy, uint32_t share)
{
	const struct rmad_shm_hdr *h = &a->lay;

	for (uint32_t d = 0; d < h->max_clients; d++) {
		struct rmad_shm_client *sd;
		uint32_t tries, keep[64], nkeep = 0;

		if (d == needy || !a->cl[d].registered || a->cp.borrowed[d] <= share)
			continue;
		sd = shm_client(a, d);
		tries = load_relaxed(&sd->op_free.count);
		if (tries > 64)
			tries = 64;
		while (tries-- && a->cp.borrowed[d] > share) {
			uint32_t i = list_get(a, d);

			if (i == RMAD_NIL)
				break;
			if (is_lend(a, i) && a->cp.op_owner[i] == d &&
			    !a->cp.op_resv[i] && !a->cp.op_inflight[i]) {
				a->cp.borrowed[d]--;
				a->cp.op_owner[i] = NO_OWNER;
				global_put(a, i);
			} else {
				keep[nkeep++] = i;
			}
		}
		while (nkeep)
			list_put(a, keep[--nkeep]);
	}
}

/*
 * An idle element off the global list, now owned by client c, or RMAD_NIL
 * when the list is empty.  The high-water mark follows.
 */
static uint32_t global_take(struct agent *a, uint32_t c)
{
	while (a->ngfree && a->cp.nlend[c]) {
		uint32_t i = c * a->lay.per_client +
			     a->cp.lend[c][--a->cp.nlend[c]];

		if (a->cp.op_owner[i] != NO_OWNER || a->cp.op_inflight[i])
			continue;	/* cannot happen; never lend it twice */
		a->ngfree--;
		a->cp.op_owner[i] = (uint16_t)c;
		if (a->lay.op_pool_size - a->ngfree > a->st.op_pool_hwm)
			a->st.op_pool_hwm = a->lay.op_pool_size - a->ngfree;
		return i;
	}
	return RMAD_NIL;
}

/*
 * Lend global elements to a client whose list ran dry.  Returns 1 when
 * nothing could be lent (at its fair share, or the pool is empty): the
 * caller must then release what the protocol layer holds back for this
 * client, since only completions will refill its list.
 */
int completion_refill(struct agent *a, uint32_t c)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_shm_client *sc = shm_client(a, c);
	uint32_t share, batch, n = 0;

	share = h->op_pool_size / (uint32_t)(a->nclients ? a->nclients : 1);
	if (share < 1)
		share = 1;
	if (a->cp.borrowed[c] >= share) {
		/* at its fair share: its own completions refill its list,
		 * so nothing may sit held back waiting for more */
		store_relaxed(&sc->want_ops, 0);
		return 1;
	}
	batch = h->client_op_pool ? h->client_op_pool : 16;
	if (!a->ngfree)
		reclaim_idle(a, c, share);
	while (n < batch && a->cp.borrowed[c] < share) {
		uint32_t i = global_take(a, c);

		if (i == RMAD_NIL)
			break;
		a->cp.borrowed[c]++;
		list_put(a, i);
		n++;
	}
	if (!n) {
		/* global pool empty: keep the request, look again */
		return 1;
	}
	store_relaxed(&sc->want_ops, 0);
	/* FREED tells the waiting client to look at its list again (at the
	 * end of the pass, which wakes the waiters of the counters moved) */
	cnt_add(a, c, RMAD_CNT_FREED, 1);
	return 0;
}

/*
 * The operation on element i ended but the client that posted it is gone
 * (dead, or its slot reused): a lent global element goes home.  A reserved
 * one was handed to the slot's next client already, so it is left alone.
 */
void completion_op_abandon(struct agent *a, uint32_t i)
{
	if (i >= rmad_shm_nops(&a->lay) || !is_lend(a, i))
		return;
	a->cp.op_inflight[i] = 0;
	if (a->cp.op_resv[i])
		unreserve(a, i);
	else if (a->cp.op_owner[i] != NO_OWNER &&
		 a->cp.op_owner[i] < a->lay.max_clients &&
		 a->cp.borrowed[a->cp.op_owner[i]] && !a->cl[a->cp.op_owner[i]].registered)
		a->cp.borrowed[a->cp.op_owner[i]]--;
	a->cp.op_owner[i] = NO_OWNER;
	global_put(a, i);
}

void completion_op_done(struct agent *a, uint32_t c, uint32_t i, int status)
{
	struct rmad_op_elem *e = rmad_shm_op_at(a->seg, &a->lay, i);
	uint16_t flags = a->cp.op_flags[i];
	int alive = c < a->lay.max_clients && a->cl[c].registered &&
		    a->cp.op_owner[i] == c;

	a->st.ops_done++;
	if (!alive) {
		release_op(a, c, i);
		return;
	}
	/*
	 * release: a client that sees the status (a request's test) sees
	 * what the op wrote before it.  Only a kept element's status is
	 * read: one given back is not written, which spares the element's
	 * second cache line a trip to this core and back.
	 */
	if (flags & (RMAD_OPF_KEEP | RMAD_OPF_SYNC))
		__atomic_store_n(&e->status, status, __ATOMIC_RELEASE);
	if (flags & RMAD_OPF_KEEP)
		a->cp.op_inflight[i] = 0;	/* the client frees it */
	else
		release_op(a, c, i);
	/* advanced (with release) at the pass's end, after the status */
	if (flags & RMAD_OPF_SYNC) {
		cnt_add(a, c, RMAD_CNT_SYNC, 1);
	} else {
		cnt_add(a, c, RMAD_CNT_LOCAL, 1);
		cnt_add(a, c, RMAD_CNT_REMOTE, 1);
	}
}

/*
 * The end of a pass: each client with news gets its elements back in one
 * push, its counters advanced once each (after the push: a client
 * waiting for FREED finds the elements), and one wake.
 *
 * Sends before wakes: what waits in the node aggregates (an answer, a
 * barrier message, the ops a flush covers) leaves first.  A client woken
 * on our core may take it from us (we poll in SCHED_IDLE), and those
 * packets would then wait until it sleeps again.
 */
void completion_flush_wakeups(struct agent *a)
{
	if (!a->any_moved)
		return;
	am_flush(a);
	a->any_moved = 0;
	/* a client gone meanwhile left the list, and what its pass held
	 * was forgotten then (completion_client_gone) */
	for (uint32_t li = 0; li < a->nlive; li++) {
		uint32_t c = a->live[li];
		struct agent_client *ac = &a->cl[c];
		struct rmad_shm_client *sc;
		unsigned moved = 0;

		if (!ac->moved)
			continue;
		ac->moved = 0;
		sc = shm_client(a, c);
		if (ac->gb.n) {
			struct rmad_pool_view v = client_view(a, c);

			rmad_pool_put_chain(&sc->op_free, &v, &ac->gb);
		}
		for (int k = 0; k < RMAD_NCNT; k++) {
			if (!ac->gb_cnt[k])
				continue;
			rmad_counter_advance(sc, k, ac->gb_cnt[k]);
			ac->gb_cnt[k] = 0;
			moved |= 1u << k;
		}
		if (rmad_counter_wake(sc, moved)) {
			RMAD_TR(RMAD_TR_WAKE, moved);
			a->woke = 1;
		}
	}
}

/*
 * OPS_RESERVE: reserve up to `count` global elements to client c for a
 * window's op pool.  What it gets is capped by what fits the staging
 * area, by what is free, and by its fair share of the global pool (as
 * lending is), so one client's windows cannot take the whole pool.  And
 * one element per client stays unreserved: a reserved element serves
 * its window only, and with client_op_pool=0 lent elements are all a
 * client has for its other windows and for barriers, so a pool reserved
 * to the last element would starve those for good.  The answer is the
 * number granted, then the indices; fewer than asked, even none, is not
 * an error: the window then uses the client's list alone.
 */
void completion_ops_reserve(struct agent *a, uint32_t c, uint32_t i,
			    const struct rmad_op_elem *e)
{
	const struct rmad_shm_hdr *h = &a->lay;
	uint32_t *out = (uint32_t *)rmad_shm_staging_at(a->seg, &a->lay, c);
	uint64_t want = e->count;
	uint32_t room = (uint32_t)(h->staging_size / sizeof(uint32_t)) - 1;
	uint32_t share, keep, total = completion_global_reserved(a), n = 0;

	keep = (uint32_t)(a->nclients > 0 ? a->nclients : 1);
	share = h->op_pool_size / keep;
	if (want > room)
		want = room;
	while (n < want && a->cp.reserved[c] < share &&
	       (uint64_t)total + n + keep < h->op_pool_size) {
		uint32_t g = global_take(a, c);

		if (g == RMAD_NIL)
			break;
		a->cp.op_resv[g] = 1;
		a->cp.reserved[c]++;
		out[1 + n++] = local_of(a, g);
	}
	out[0] = n;
	rmad_dbg("client %u: %u of %llu op elements reserved", c, n,
		 (unsigned long long)e->count);
	completion_op_done(a, c, i, 0);
}

/*
 * OPS_RETURN: reserved elements come home.  Each index is checked: one
 * that is not a global element reserved to c and idle is counted as bad
 * and ignored, so a client can neither free what is not its own nor
 * what an operation still uses.
 */
void completion_ops_return(struct agent *a, uint32_t c, uint32_t i,
			   const struct rmad_op_elem *e)
{
	const struct rmad_shm_hdr *h = &a->lay;
	const uint32_t *in = (const uint32_t *)rmad_shm_staging_at(a->seg, &a->lay, c);
	uint64_t n = e->count;
	uint32_t room = (uint32_t)(h->staging_size / sizeof(uint32_t));
	uint32_t bad = 0;

	if (n > room) {
		bad++;
		n = room;
	}
	for (uint64_t k = 0; k < n; k++) {
		uint32_t l = load_relaxed(&in[k]);
		uint32_t g = c * h->per_client + l;

		if (l >= h->op_pool_size || a->cp.op_owner[g] != c ||
		    !a->cp.op_resv[g] || a->cp.op_inflight[g]) {
			bad++;
			continue;
		}
		unreserve(a, g);
		a->cp.op_owner[g] = NO_OWNER;
		global_put(a, g);
	}
	if (bad) {
		a->cl[c].bad_ops += bad;
		a->st.ops_bad += bad;
		rmad_warn("client %u: %u bad op elements returned", c, bad);
	}
	completion_op_done(a, c, i, 0);
}

/*
 * Submitted index i from client c: 0 when it is an element c holds and
 * that is not already in flight (it is then marked in flight), else an
 * error and nothing changes.
 */
int completion_op_take(struct agent *a, uint32_t c, uint32_t i)
{
	if (i >= rmad_shm_nops(&a->lay) || a->cp.op_owner[i] != c ||
	    a->cp.op_inflight[i])
		return RMAD_ERR_ARG;
	a->cp.op_inflight[i] = 1;
	a->cp.op_flags[i] = 0;
	return 0;
}

void completion_op_flags(struct agent *a, uint32_t i, uint16_t flags)
{
	a->cp.op_flags[i] = flags;
}

/* Client slot c starts afresh: its own elements are idle, on its list. */
void completion_client_reset(struct agent *a, uint32_t c)
{
	struct rmad_pool_view v = client_view(a, c);
	uint32_t first = c * a->lay.per_client + a->lay.op_pool_size;

	v.first = a->lay.op_pool_size;
	v.n = a->lay.client_op_pool;
	forget_pass(a, c);
	rmad_pool_init(&shm_client(a, c)->op_free, &v);
	for (uint32_t k = 0; k < a->lay.client_op_pool; k++)
		a->cp.op_inflight[first + k] = 0;
}

/*
 * Client c is gone: borrowed and reserved global elements not in flight
 * go home now, in-flight ones when their operation ends
 * (completion_op_abandon).  No element stays reserved: a reused slot must not
 * inherit them.  Returns how many went home.
 */
uint32_t completion_client_gone(struct agent *a, uint32_t c)
{
	const struct rmad_shm_hdr *h = &a->lay;
	uint32_t back = 0;

	/* what its pass gave back is not on its list: those go home too */
	forget_pass(a, c);
	for (uint32_t i = c * h->per_client;
	     i < c * h->per_client + h->op_pool_size; i++) {
		if (a->cp.op_owner[i] != c)
			continue;
		unreserve(a, i);
		if (a->cp.op_inflight[i])
			continue;
		a->cp.op_owner[i] = NO_OWNER;
		global_put(a, i);
		back++;
	}
	a->cp.borrowed[c] = 0;
	a->cp.reserved[c] = 0;
	return back;
}
