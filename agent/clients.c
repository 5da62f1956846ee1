/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clients.c - the agent's side of the client interface: the shared
 * segment, the Unix socket, attach and detach, and the submission rings.
 *
 * Clients are untrusted.  Everything read from the segment is copied once
 * and checked before use: op indices against the pool and their private
 * owner record, opcodes against the table, ranks against the job.  A bad
 * submission fails that op (or is dropped and counted) and never reaches
 * the rest of the agent.  A client that scribbles on its own ring or free
 * list only stalls itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "atomics.h"
#include "counter.h"
#include "log.h"
#include "pool.h"
#include "ring.h"
#include "rmad_abi.h"
#include "util.h"

#define NO_OWNER	0xffffu
#define RING_BATCH	256

/* Agent-private bookkeeping for every op element. */
static uint16_t *op_owner;	/* client slot, NO_OWNER when global */
static uint8_t *op_inflight;	/* submitted and not yet completed */
static uint32_t *borrowed;	/* global elements lent, per client */
/*
 * Global elements reserved to a client for a window's op pool (the
 * op_pool hint): not counted in borrowed[], and always back to the
 * client's list while reserved, since the client sorts them by window.
 */
static uint8_t *op_resv;
static uint32_t *reserved;	/* such elements, per client */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static struct rmad_pool_view ops_view(struct agent *a, uint32_t first,
				      uint32_t n)
{
	struct rmad_pool_view v = {
		.base = (char *)a->seg + a->lay.off_ops,
		.stride = sizeof(struct rmad_op_elem),
		.first = first,
		.n = n,
	};
	return v;
}

/* Every op element the agent may see: the whole array. */
static struct rmad_pool_view all_ops(struct agent *a)
{
	return ops_view(a, 0, rmad_shm_nops(&a->lay));
}

static uint32_t client_first_op(struct agent *a, uint32_t c)
{
	return a->lay.op_pool_size + c * a->lay.client_op_pool;
}

int agent_segment_create(struct agent *a)
{
	const struct rmad_params *p = &a->p;
	struct rmad_shm_hdr h = { 0 };
	uint64_t off, nops;
	struct rmad_pool_view v;

	h.version = RMAD_SHM_VERSION;
	h.abi_version = RMAD_ABI_VERSION;
	h.magic = RMAD_SHM_MAGIC;
	h.max_clients = (uint32_t)p->max_clients;
	h.ring_entries = (uint32_t)p->ring_entries;
	h.op_pool_size = (uint32_t)p->op_pool;
	h.client_op_pool = (uint32_t)p->client_op_pool;
	h.target_pool_size = (uint32_t)p->target_pool;
	h.max_windows = (uint32_t)p->max_windows;
	h.staging_size = align_up(p->staging_size, RMAD_SHM_ALIGN);
	nops = (uint64_t)h.op_pool_size +
	       (uint64_t)h.max_clients * h.client_op_pool;
	if (nops >= RMAD_NIL || h.max_clients >= NO_OWNER) {
		rmad_err("op_pool + max_clients * client_op_pool too large");
		return RMAD_ERR_ARG;
	}
	off = align_up(sizeof(struct rmad_shm_hdr), RMAD_SHM_ALIGN);
	h.off_clients = off;
	h.client_stride = align_up(sizeof(struct rmad_shm_client) +
				   (uint64_t)h.ring_entries *
				   sizeof(struct rmad_ring_slot),
				   RMAD_CACHELINE);
	off = align_up(off + h.client_stride * h.max_clients, RMAD_SHM_ALIGN);
	h.off_ops = off;
	off = align_up(off + nops * sizeof(struct rmad_op_elem),
		       RMAD_SHM_ALIGN);
	h.off_targets = off;
	off = align_up(off + (uint64_t)h.target_pool_size *
		       sizeof(struct rmad_target_elem), RMAD_SHM_ALIGN);
	h.off_windows = off;
	h.window_stride = RMAD_SHM_ALIGN;
	off += h.window_stride * h.max_windows;
	h.off_staging = off;
	off += h.staging_size * h.max_clients;
	h.seg_size = off;
	h.node = (uint32_t)a->node;
	h.nnodes = (uint32_t)a->nnodes;
	h.agent_pid = getpid();
	h.agent_core = a->core;

	a->memfd = memfd_create("rmad-segment", MFD_CLOEXEC);
	if (a->memfd < 0) {
		rmad_err("memfd_create: %s", strerror(errno));
		return RMAD_ERR_NOMEM;
	}
	if (ftruncate(a->memfd, (off_t)h.seg_size) < 0) {
		rmad_err("ftruncate segment to %llu bytes: %s",
			 (unsigned long long)h.seg_size, strerror(errno));
		goto fail_fd;
	}
	a->seg = mmap(NULL, h.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      a->memfd, 0);
	if (a->seg == MAP_FAILED) {
		rmad_err("mmap segment: %s", strerror(errno));
		a->seg = NULL;
		goto fail_fd;
	}
	a->seg_size = h.seg_size;
	a->hdr = a->seg;
	memcpy(a->hdr, &h, sizeof(h));
	a->lay = h;

	op_owner = calloc(nops, sizeof(*op_owner));
	op_inflight = calloc(nops, 1);
	borrowed = calloc(h.max_clients, sizeof(*borrowed));
	op_resv = calloc(nops, 1);
	reserved = calloc(h.max_clients, sizeof(*reserved));
	if (!op_owner || !op_inflight || !borrowed || !op_resv || !reserved)
		goto fail_map;
	for (uint64_t i = 0; i < nops; i++)
		op_owner[i] = i < h.op_pool_size ?
			NO_OWNER : (uint16_t)((i - h.op_pool_size) /
					      (h.client_op_pool ?
					       h.client_op_pool : 1));
	/*
	 * The global pool is a private stack: only the agent lends from it,
	 * and a client must not be able to reach it through the segment.
	 */
	a->gfree = malloc(sizeof(*a->gfree) *
			  (h.op_pool_size ? h.op_pool_size : 1));
	if (!a->gfree)
		goto fail_map;
	for (uint32_t i = 0; i < h.op_pool_size; i++)
		a->gfree[i] = h.op_pool_size - 1 - i;
	a->ngfree = h.op_pool_size;
	a->hdr->op_free.head = RMAD_NIL;
	v = (struct rmad_pool_view){
		.base = (char *)a->seg + h.off_targets,
		.stride = sizeof(struct rmad_target_elem),
		.first = 0,
		.n = h.target_pool_size,
	};
	rmad_pool_init(&a->hdr->target_free, &v);
	a->st.op_pool_hwm = 0;
	rmad_info("segment: %llu bytes, %u clients, %llu op elements",
		  (unsigned long long)h.seg_size, h.max_clients,
		  (unsigned long long)nops);
	return 0;

fail_map:
	rmad_err("out of memory for the op table");
	munmap(a->seg, h.seg_size);
	a->seg = NULL;
fail_fd:
	close(a->memfd);
	a->memfd = -1;
	return RMAD_ERR_NOMEM;
}

void agent_segment_destroy(struct agent *a)
{
	if (a->seg)
		munmap(a->seg, a->seg_size);
	a->seg = NULL;
	a->hdr = NULL;
	if (a->memfd >= 0)
		close(a->memfd);
	a->memfd = -1;
	free(op_owner);
	free(op_inflight);
	free(borrowed);
	free(op_resv);
	free(reserved);
	free(a->gfree);
	a->gfree = NULL;
	op_owner = NULL;
	op_inflight = NULL;
	borrowed = NULL;
	op_resv = NULL;
	reserved = NULL;
}

static struct rmad_shm_client *shm_client(struct agent *a, uint32_t c)
{
	return rmad_shm_client_at(a->seg, &a->lay, c);
}

/* The client's own list: its reserved range plus what it borrowed. */
static struct rmad_pool_view client_list_view(struct agent *a)
{
	return all_ops(a);
}

static void global_put(struct agent *a, uint32_t i)
{
	if (i < a->lay.op_pool_size && a->ngfree < a->lay.op_pool_size)
		a->gfree[a->ngfree++] = i;
}

uint32_t agent_global_free(struct agent *a)
{
	return a->ngfree;
}

uint32_t agent_global_reserved(struct agent *a)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < a->lay.max_clients; c++)
		n += reserved[c];
	return n;
}

/* Element i is no longer reserved to its owner: it counts as lent. */
static void unreserve(struct agent *a, uint32_t i)
{
	if (i >= a->lay.op_pool_size || !op_resv[i])
		return;
	op_resv[i] = 0;
	if (op_owner[i] < a->lay.max_clients && reserved[op_owner[i]])
		reserved[op_owner[i]]--;
}

/*
 * Hand element i back: to its client's list if the client is alive and
 * owns it, to the global list otherwise.  Borrowed elements go home to
 * the global list once the client's list is full again.
 */
static void release_op(struct agent *a, uint32_t c, uint32_t i)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_pool_view v = client_list_view(a);
	int own = i >= h->op_pool_size;

	op_inflight[i] = 0;
	if (c < h->max_clients && a->cl[c].registered &&
	    op_owner[i] == c) {
		struct rmad_shm_client *sc = shm_client(a, c);

		/* with client_op_pool 0 one element still comes back: a
		 * client waiting for one hears of it only through FREED */
		if (own || op_resv[i] ||
		    load_relaxed(&sc->op_free.count) <
		    (h->client_op_pool ? h->client_op_pool : 1)) {
			if (rmad_pool_put(&sc->op_free, &v, i) == 0) {
				rmad_counter_advance(sc, RMAD_CNT_FREED, 1);
				a->cl[c].moved = 1;
				return;
			}
		}
	}
	if (own)
		return;		/* dead client's reserve: reset on reattach */
	if (op_resv[i]) {
		/* a window's reserve whose client is gone: home */
		unreserve(a, i);
		op_owner[i] = NO_OWNER;
		global_put(a, i);
		return;
	}
	if (op_owner[i] != NO_OWNER && op_owner[i] < h->max_clients &&
	    borrowed[op_owner[i]])
		borrowed[op_owner[i]]--;
	op_owner[i] = NO_OWNER;
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
	struct rmad_pool_view v = client_list_view(a);

	for (uint32_t d = 0; d < h->max_clients; d++) {
		struct rmad_shm_client *sd;
		uint32_t tries, keep[64], nkeep = 0;

		if (d == needy || !a->cl[d].registered || borrowed[d] <= share)
			continue;
		sd = shm_client(a, d);
		tries = load_relaxed(&sd->op_free.count);
		if (tries > 64)
			tries = 64;
		while (tries-- && borrowed[d] > share) {
			uint32_t i = rmad_pool_get(&sd->op_free, &v);

			if (i == RMAD_NIL)
				break;
			if (i < h->op_pool_size && op_owner[i] == d &&
			    !op_resv[i] && !op_inflight[i]) {
				borrowed[d]--;
				op_owner[i] = NO_OWNER;
				global_put(a, i);
			} else {
				keep[nkeep++] = i;
			}
		}
		while (nkeep)
			rmad_pool_put(&sd->op_free, &v, keep[--nkeep]);
	}
}

/*
 * An idle element off the global list, now owned by client c, or RMAD_NIL
 * when the list is empty.  The high-water mark follows.
 */
static uint32_t global_take(struct agent *a, uint32_t c)
{
	while (a->ngfree) {
		uint32_t i = a->gfree[--a->ngfree];

		if (op_owner[i] != NO_OWNER || op_inflight[i])
			continue;	/* cannot happen; never lend it twice */
		op_owner[i] = (uint16_t)c;
		if (a->lay.op_pool_size - a->ngfree > a->st.op_pool_hwm)
			a->st.op_pool_hwm = a->lay.op_pool_size - a->ngfree;
		return i;
	}
	return RMAD_NIL;
}

/* Lend global elements to a client whose list ran dry. */
static void refill_client(struct agent *a, uint32_t c)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_shm_client *sc = shm_client(a, c);
	struct rmad_pool_view v = client_list_view(a);
	uint32_t share, batch, n = 0;

	share = h->op_pool_size / (uint32_t)(a->nclients ? a->nclients : 1);
	if (share < 1)
		share = 1;
	if (borrowed[c] >= share) {
		/* at its fair share: its own completions refill its list,
		 * so nothing may sit held back waiting for more */
		store_relaxed(&sc->want_ops, 0);
		agent_rma_unhold(a, c);
		return;
	}
	batch = h->client_op_pool ? h->client_op_pool : 16;
	if (!a->ngfree)
		reclaim_idle(a, c, share);
	while (n < batch && borrowed[c] < share) {
		uint32_t i = global_take(a, c);

		if (i == RMAD_NIL)
			break;
		borrowed[c]++;
		rmad_pool_put(&sc->op_free, &v, i);
		n++;
	}
	if (!n) {
		/* global pool empty: keep the request, look again */
		agent_rma_unhold(a, c);
		return;
	}
	store_relaxed(&sc->want_ops, 0);
	/* FREED tells the waiting client to look at its list again */
	rmad_counter_advance(sc, RMAD_CNT_FREED, 1);
	a->cl[c].moved = 1;
}

/*
 * The operation on element i ended but the client that posted it is gone
 * (dead, or its slot reused): a lent global element goes home.  A reserved
 * one was handed to the slot's next client already, so it is left alone.
 */
void agent_op_abandon(struct agent *a, uint32_t i)
{
	if (i >= a->lay.op_pool_size)
		return;
	op_inflight[i] = 0;
	if (op_resv[i])
		unreserve(a, i);
	else if (op_owner[i] != NO_OWNER &&
		 op_owner[i] < a->lay.max_clients &&
		 borrowed[op_owner[i]] && !a->cl[op_owner[i]].registered)
		borrowed[op_owner[i]]--;
	op_owner[i] = NO_OWNER;
	global_put(a, i);
}

void agent_complete_op(struct agent *a, uint32_t c, uint32_t i, int status)
{
	struct rmad_op_elem *e = rmad_shm_op_at(a->seg, &a->lay, i);
	struct rmad_shm_client *sc;
	uint16_t flags = load_relaxed(&e->flags);
	int alive = c < a->lay.max_clients && a->cl[c].registered &&
		    op_owner[i] == c;

	a->st.ops_done++;
	if (!alive) {
		release_op(a, c, i);
		return;
	}
	sc = shm_client(a, c);
	store_relaxed(&e->status, status);
	if (flags & RMAD_OPF_KEEP)
		op_inflight[i] = 0;	/* the client frees it */
	else
		release_op(a, c, i);
	/* release (in advance): the status above is visible first */
	if (flags & RMAD_OPF_SYNC) {
		rmad_counter_advance(sc, RMAD_CNT_SYNC, 1);
	} else {
		rmad_counter_advance(sc, RMAD_CNT_LOCAL, 1);
		rmad_counter_advance(sc, RMAD_CNT_REMOTE, 1);
	}
	a->cl[c].moved = 1;
}

void agent_flush_wakeups(struct agent *a)
{
	for (int c = 0; c < a->p.max_clients; c++) {
		if (!a->cl[c].moved)
			continue;
		a->cl[c].moved = 0;
		rmad_counter_wake(shm_client(a, (uint32_t)c));
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
static void ops_reserve(struct agent *a, uint32_t c, uint32_t i)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_op_elem *e = rmad_shm_op_at(a->seg, h, i);
	uint32_t *out = (uint32_t *)rmad_shm_staging_at(a->seg, &a->lay, c);
	uint64_t want = load_relaxed(&e->count);
	uint32_t room = (uint32_t)(h->staging_size / sizeof(uint32_t)) - 1;
	uint32_t share, keep, total = agent_global_reserved(a), n = 0;

	keep = (uint32_t)(a->nclients > 0 ? a->nclients : 1);
	share = h->op_pool_size / keep;
	if (want > room)
		want = room;
	while (n < want && reserved[c] < share &&
	       (uint64_t)total + n + keep < h->op_pool_size) {
		uint32_t g = global_take(a, c);

		if (g == RMAD_NIL)
			break;
		op_resv[g] = 1;
		reserved[c]++;
		out[1 + n++] = g;
	}
	out[0] = n;
	rmad_dbg("client %u: %u of %llu op elements reserved", c, n,
		 (unsigned long long)load_relaxed(&e->count));
	agent_complete_op(a, c, i, 0);
}

/*
 * OPS_RETURN: reserved elements come home.  Each index is checked: one
 * that is not a global element reserved to c and idle is counted as bad
 * and ignored, so a client can neither free what is not its own nor
 * what an operation still uses.
 */
static void ops_return(struct agent *a, uint32_t c, uint32_t i)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_op_elem *e = rmad_shm_op_at(a->seg, h, i);
	const uint32_t *in = (const uint32_t *)rmad_shm_staging_at(a->seg, &a->lay, c);
	uint64_t n = load_relaxed(&e->count);
	uint32_t room = (uint32_t)(h->staging_size / sizeof(uint32_t));
	uint32_t bad = 0;

	if (n > room) {
		bad++;
		n = room;
	}
	for (uint64_t k = 0; k < n; k++) {
		uint32_t g = load_relaxed(&in[k]);

		if (g >= h->op_pool_size || op_owner[g] != c ||
		    !op_resv[g] || op_inflight[g]) {
			bad++;
			continue;
		}
		unreserve(a, g);
		op_owner[g] = NO_OWNER;
		global_put(a, g);
	}
	if (bad) {
		a->cl[c].bad_ops += bad;
		a->st.ops_bad += bad;
		rmad_warn("client %u: %u bad op elements returned", c, bad);
	}
	agent_complete_op(a, c, i, 0);
}

/* One submitted op: checks, then dispatch. */
static void handle_op(struct agent *a, uint32_t c, uint32_t i)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_op_elem *e;
	uint16_t opc;

	if (i >= rmad_shm_nops(h) || op_owner[i] != c || op_inflight[i]) {
		a->cl[c].bad_ops++;
		a->st.ops_bad++;
		rmad_warn("client %u (pid %d): bad op index %u dropped", c,
			  (int)a->cl[c].pid, i);
		return;
	}
	op_inflight[i] = 1;
	e = rmad_shm_op_at(a->seg, h, i);
	opc = load_relaxed(&e->opcode);
	switch (opc) {
	case RMAD_OPC_NOOP:
		agent_complete_op(a, c, i, 0);
		break;
	case RMAD_OPC_PING:
		agent_op_ping(a, c, i);
		break;
	case RMAD_OPC_BARRIER:
		agent_op_barrier(a, c, i);
		break;
	case RMAD_OPC_OPS_RESERVE:
		ops_reserve(a, c, i);
		break;
	case RMAD_OPC_OPS_RETURN:
		ops_return(a, c, i);
		break;
	case RMAD_OPC_PUT:
	case RMAD_OPC_GET:
	case RMAD_OPC_ACC:
	case RMAD_OPC_GACC:
	case RMAD_OPC_CAS:
	case RMAD_OPC_LOCK:
	case RMAD_OPC_UNLOCK:
	case RMAD_OPC_LOCK_ALL:
	case RMAD_OPC_UNLOCK_ALL:
	case RMAD_OPC_FLUSH:
	case RMAD_OPC_FLUSH_LOCAL:
	case RMAD_OPC_LOCK_WAIT:
		agent_rma_op(a, c, i);
		break;
	default:
		a->cl[c].bad_ops++;
		a->st.ops_bad++;
		rmad_warn("client %u: bad opcode %u", c, opc);
		agent_complete_op(a, c, i, RMAD_ERR_ARG);
		break;
	}
}

int agent_poll_rings(struct agent *a)
{
	const struct rmad_shm_hdr *h = &a->lay;
	uint32_t mask = h->ring_entries - 1;
	int total = 0;

	for (uint32_t c = 0; c < h->max_clients; c++) {
		struct agent_client *ac = &a->cl[c];
		struct rmad_shm_client *sc;
		uint32_t v, want;
		int n = 0;

		if (!ac->registered)
			continue;
		sc = shm_client(a, c);
		/*
		 * A client asks for elements after submitting the ops that
		 * used its last ones (release, paired here).  Those ops must
		 * be routed before refill_client looks for held ones to
		 * release, or they are held after it looked, and the client
		 * waits for elements that only its epoch's end would free.
		 */
		want = load_acquire(&sc->want_ops);
		while (n < RING_BATCH &&
		       rmad_ring_pop(sc->ring, mask, h->ring_entries,
				     &ac->head, &v)) {
			handle_op(a, c, v);
			n++;
		}
		if (n)
			store_release(&sc->sq_head, ac->head);
		if (want && n < RING_BATCH)
			refill_client(a, c);	/* else after the rest */
		total += n;
	}
	if (total)
		agent_flush_wakeups(a);
	return total;
}

int agent_rings_empty(struct agent *a)
{
	const struct rmad_shm_hdr *h = &a->lay;

	for (uint32_t c = 0; c < h->max_clients; c++) {
		struct rmad_shm_client *sc;
		struct rmad_ring_slot *s;

		if (!a->cl[c].registered)
			continue;
		sc = shm_client(a, c);
		if (load_relaxed(&sc->want_ops))
			return 0;
		s = &sc->ring[a->cl[c].head & (h->ring_entries - 1)];
		/* acquire: pairs with a producer's publish */
		if (load_acquire(&s->seq) == a->cl[c].head + 1)
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ attach */

static int uid_allowed(struct agent *a, uid_t uid)
{
	char list[256], *save = NULL;

	if (uid == geteuid() || uid == 0)
		return 1;
	if (!a->p.allow_users[0])
		return 0;
	snprintf(list, sizeof(list), "%s", a->p.allow_users);
	for (char *t = strtok_r(list, ", ", &save); t;
	     t = strtok_r(NULL, ", ", &save)) {
		char *end;
		unsigned long u;
		struct passwd *pw;

		if (!strcmp(t, "*"))
			return 1;
		u = strtoul(t, &end, 10);
		if (*t && !*end && u == uid)
			return 1;
		pw = getpwnam(t);
		if (pw && pw->pw_uid == uid)
			return 1;
	}
	return 0;
}

static void client_reset_shm(struct agent *a, uint32_t c)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_shm_client *sc = shm_client(a, c);
	struct rmad_pool_view v = ops_view(a, client_first_op(a, c),
					   h->client_op_pool);
	/* the generation is ours: the client could rewind the shared copy */
	uint32_t gen = ++a->cl[c].gen;

	memset(sc, 0, sizeof(*sc));
	sc->gen = gen;
	rmad_ring_init(sc->ring, h->ring_entries, &sc->sq_tail, &sc->sq_head);
	rmad_pool_init(&sc->op_free, &v);
	for (uint32_t k = 0; k < h->client_op_pool; k++)
		op_inflight[client_first_op(a, c) + k] = 0;
}

/* Give back everything a client held: called on hang-up or deregister. */
static void client_release(struct agent *a, uint32_t c, int died)
{
	struct agent_client *ac = &a->cl[c];
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_shm_client *sc = shm_client(a, c);
	struct agent_job *j = ac->job;
	uint32_t nops = rmad_shm_nops(h);
	uint32_t back = 0;

	if (ac->ev)
		event_free(ac->ev);
	ac->ev = NULL;
	if (ac->fd >= 0)
		close(ac->fd);
	ac->fd = -1;
	if (!ac->registered) {
		a->nclients--;
		return;
	}
	ac->registered = 0;
	store_release(&sc->state, died ? RMAD_CLIENT_DEAD : RMAD_CLIENT_FREE);
	agent_mem_release(a, c);
	/* Borrowed and reserved global elements not in flight go home now;
	 * in-flight ones when their operation ends (agent_op_abandon).  No
	 * element stays reserved: a reused slot must not inherit them. */
	for (uint32_t i = 0; i < h->op_pool_size && i < nops; i++) {
		if (op_owner[i] != c)
			continue;
		unreserve(a, i);
		if (op_inflight[i])
			continue;
		op_owner[i] = NO_OWNER;
		global_put(a, i);
		back++;
	}
	borrowed[c] = 0;
	reserved[c] = 0;
	/* its locks here are released, its epochs elsewhere ended */
	agent_rma_client_gone(a, c);
	a->nclients--;
	if (died)
		a->st.clients_died++;
	rmad_info("client %u (pid %d, rank %d) %s; %u lent elements back",
		  c, (int)ac->pid, (int)ac->rank, died ? "died" : "detached",
		  back);
	ac->job = NULL;
	if (j) {
		if (died)
			agent_job_client_died(a, j);
		agent_job_put(a, j);
	}
	if (a->nclients == 0)
		a->idle_since_ns = rmad_now_ns();
}

static void reply_error(int fd, int status, const char *why)
{
	struct rmad_ctl_register_reply r = { 0 };

	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_REGISTER_REPLY;
	r.status = status;
	snprintf(r.message, sizeof(r.message), "%s", why);
	rmad_send_msg(fd, &r, sizeof(r), NULL, 0);
}

static void handle_register(struct agent *a, uint32_t c,
			    const struct rmad_ctl_register *m)
{
	struct agent_client *ac = &a->cl[c];
	struct rmad_ctl_register_reply r = { 0 };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct agent_job *j;
	int err, fds[2];
	char ns[RMAD_NSPACE_MAX];

	if (getsockopt(ac->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		reply_error(ac->fd, RMAD_ERR_INTERNAL, "SO_PEERCRED failed");
		goto drop;
	}
	if (!uid_allowed(a, cred.uid)) {
		rmad_warn("refused client pid %d: uid %u not permitted",
			  (int)cred.pid, (unsigned)cred.uid);
		reply_error(ac->fd, RMAD_ERR_PERM, "user not permitted");
		goto drop;
	}
	memcpy(ns, m->nspace, sizeof(ns));
	if (!memchr(ns, '\0', sizeof(ns)) || m->size < 1 || m->rank < 0 ||
	    m->rank >= m->size || m->local_size < 1 ||
	    m->local_size > m->size || m->local_rank < 0 ||
	    m->local_rank >= m->local_size) {
		reply_error(ac->fd, RMAD_ERR_ARG, "bad register message");
		goto drop;
	}
	for (int k = 0; k < a->p.max_clients; k++) {
		if (a->cl[k].registered && a->cl[k].job &&
		    a->cl[k].rank == m->rank &&
		    !strcmp(a->cl[k].job->nspace, ns)) {
			reply_error(ac->fd, RMAD_ERR_ARG,
				    "rank already attached");
			goto drop;
		}
	}
	j = agent_job_get(a, ns, m->size, m->local_size, &err);
	if (!j) {
		reply_error(ac->fd, err, err == RMAD_ERR_NOMEM ?
			    "agent serves too many jobs (max_jobs)" :
			    "job size or local size disagrees with its peers");
		goto drop;
	}
	client_reset_shm(a, c);
	ac->pid = cred.pid;
	ac->uid = cred.uid;
	ac->rank = m->rank;
	ac->local_rank = m->local_rank;
	ac->job = j;
	ac->head = 0;
	ac->bad_ops = 0;
	ac->moved = 0;
	/* ac->gen was advanced by client_reset_shm */
	{
		struct rmad_shm_client *sc = shm_client(a, c);

		sc->pid = cred.pid;
		sc->rank = m->rank;
		sc->job = (uint32_t)(j - a->jobs);
		/* release: the block is initialized before it reads ACTIVE */
		store_release(&sc->state, RMAD_CLIENT_ACTIVE);
	}
	ac->registered = 1;
	ac->staged = 0;
	ac->rma_err = 0;
	a->st.clients_attached++;

	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_REGISTER_REPLY;
	r.status = 0;
	r.client = c;
	r.gen = ac->gen;
	r.node = (uint32_t)a->node;
	r.nnodes = (uint32_t)a->nnodes;
	r.agent_pid = getpid();
	r.agent_core = a->core;
	r.seg_size = a->seg_size;
	snprintf(r.hostname, sizeof(r.hostname), "%s", a->hostname);
	snprintf(r.provider, sizeof(r.provider), "%s",
		 a->fab ? rmad_fabric_provider(a->fab) : "none");
	snprintf(r.session, sizeof(r.session), "%s", a->session);
	fds[0] = a->memfd;
	fds[1] = a->doorbell;
	if (rmad_send_msg(ac->fd, &r, sizeof(r), fds, 2) < 0) {
		client_release(a, c, 1);
		return;
	}
	rmad_info("client %u attached: pid %d, rank %d/%d of %s", c,
		  (int)cred.pid, (int)m->rank, (int)m->size, ns);
	agent_job_client_joined(a, j);
	return;
drop:
	client_release(a, c, 0);
}

/* Only the agent's own user (or root) may stop or reload it. */
static int ctl_allowed(int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		return 0;
	return cred.uid == geteuid() || cred.uid == 0;
}

/*
 * rmad_win_stats: our counters for client c on the window it names.  An
 * unknown key (or one whose window c is not a member of) is refused;
 * the reply is sent whatever happens, since the client waits for it.
 */
static void win_stats(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_stats *m)
{
	struct rmad_ctl_win_stats_reply r;
	struct agent_win *w = agent_win_of_client(a, c, m->key);

	memset(&r, 0, sizeof(r));
	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_WIN_STATS_REPLY;
	r.key = m->key;
	r.status = w ? 0 : RMAD_ERR_ARG;
	if (w)
		agent_rma_win_stats(w, c, a->cl[c].gen, &r.stats);
	rmad_send_msg(a->cl[c].fd, &r, sizeof(r), NULL, 0);
}

static void on_client(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	uint32_t c;
	/* big enough for a window create naming RMAD_WIN_GROUP_MAX ranks */
	static union {
		struct rmad_ctl_hdr h;
		struct rmad_ctl_register reg;
		struct rmad_ctl_win_create wc;
		struct rmad_ctl_win_free wf;
		struct rmad_ctl_win_stats ws;
		struct rmad_ctl_mem mem;
		char raw[sizeof(struct rmad_ctl_win_create) +
			 RMAD_WIN_GROUP_MAX * sizeof(int32_t)];
	} m;
	int nfds = 1, rfd = -1;
	long n;

	for (c = 0; c < (uint32_t)a->p.max_clients; c++)
		if (a->cl[c].fd == fd)
			break;
	if (c == (uint32_t)a->p.max_clients)
		return;
	n = rmad_recv_msg(fd, &m, sizeof(m), &rfd, &nfds);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return;
	/* only a window create carries a descriptor */
	if (nfds == 1 && (n < (long)sizeof(m.h) ||
			  (m.h.type != RMAD_CTL_WIN_CREATE &&
			   m.h.type != RMAD_CTL_MEM_REG))) {
		close(rfd);
		rfd = -1;
	}
	if (n <= 0) {
		/* hang-up: the client died or left without saying goodbye */
		client_release(a, c, a->cl[c].registered);
		return;
	}
	agent_note_activity(a);
	if ((size_t)n < sizeof(m.h) || m.h.magic != RMAD_CTL_MAGIC) {
		if (rfd >= 0)
			close(rfd);
		rmad_warn("client %u: garbage on the socket, dropping it", c);
		client_release(a, c, a->cl[c].registered);
		return;
	}
	if (m.h.abi_version != RMAD_ABI_VERSION) {
		if (rfd >= 0)
			close(rfd);
		rmad_warn("client %u: ABI version %u, agent speaks %u", c,
			  m.h.abi_version, RMAD_ABI_VERSION);
		reply_error(fd, RMAD_ERR_VERSION, "ABI version mismatch");
		client_release(a, c, 0);
		return;
	}
	switch (m.h.type) {
	case RMAD_CTL_REGISTER:
		if (a->cl[c].registered || (size_t)n != sizeof(m.reg)) {
			reply_error(fd, RMAD_ERR_ARG, "bad register");
			client_release(a, c, a->cl[c].registered);
			return;
		}
		handle_register(a, c, &m.reg);
		break;
	case RMAD_CTL_DEREGISTER:
		client_release(a, c, 0);
		break;
	case RMAD_CTL_WIN_CREATE:
		if ((size_t)n < sizeof(m.wc) || !a->cl[c].registered) {
			if (rfd >= 0)
				close(rfd);
			rmad_warn("client %u: bad window create", c);
			client_release(a, c, a->cl[c].registered);
			return;
		}
		agent_win_create(a, c, &m.wc, (size_t)n, rfd);
		break;
	case RMAD_CTL_MEM_REG:
	case RMAD_CTL_MEM_DEREG:
	case RMAD_CTL_CMA_PROBE:
		if ((size_t)n != sizeof(m.mem) || !a->cl[c].registered) {
			if (rfd >= 0)
				close(rfd);
			client_release(a, c, a->cl[c].registered);
			return;
		}
		if (m.h.type == RMAD_CTL_MEM_REG)
			agent_mem_reg(a, c, &m.mem, rfd);
		else if (m.h.type == RMAD_CTL_CMA_PROBE)
			agent_mem_probe(a, c, &m.mem);
		else
			agent_mem_dereg(a, c, &m.mem);
		break;
	case RMAD_CTL_WIN_FREE:
		if ((size_t)n != sizeof(m.wf) || !a->cl[c].registered) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		agent_win_free(a, c, &m.wf);
		break;
	case RMAD_CTL_WIN_STATS:
		if ((size_t)n != sizeof(m.ws) || !a->cl[c].registered) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		win_stats(a, c, &m.ws);
		break;
	case RMAD_CTL_STOP:
	case RMAD_CTL_RELOAD:
		if (!ctl_allowed(fd)) {
			rmad_warn("client %u: stop/reload refused: not the "
				  "agent's user", c);
			client_release(a, c, a->cl[c].registered);
			return;
		}
		if (m.h.type == RMAD_CTL_RELOAD) {
			a->reload = 1;
			break;
		}
		rmad_info("stop requested over the socket");
		a->stopping = 1;
		event_base_loopbreak(a->base);
		break;
	case RMAD_CTL_STATUS: {
		/* read-only, so any permitted user may ask */
		struct ucred cred;
		socklen_t cl = sizeof(cred);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
		    !uid_allowed(a, cred.uid)) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		agent_ctl_status(a, fd, !!(m.h.flags & RMAD_CTL_FLAG_JSON));
		break;
	}
	default:
		rmad_warn("client %u: unknown request %u", c, m.h.type);
		break;
	}
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct agent *a = arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		uint32_t c;

		if (fd < 0)
			return;
		agent_note_activity(a);
		if (a->stopping) {
			close(fd);
			continue;
		}
		for (c = 0; c < (uint32_t)a->p.max_clients; c++)
			if (a->cl[c].fd < 0)
				break;
		if (c == (uint32_t)a->p.max_clients) {
			rmad_warn("no free client slot (max_clients=%ld)",
				  a->p.max_clients);
			reply_error(fd, RMAD_ERR_NOMEM,
				    "agent is full (max_clients)");
			close(fd);
			continue;
		}
		a->cl[c].fd = fd;
		a->cl[c].registered = 0;
		a->cl[c].ev = event_new(a->base, fd, EV_READ | EV_PERSIST,
					on_client, a);
		if (!a->cl[c].ev || event_add(a->cl[c].ev, NULL) < 0) {
			if (a->cl[c].ev)
				event_free(a->cl[c].ev);
			a->cl[c].ev = NULL;
			close(fd);
			a->cl[c].fd = -1;
			continue;
		}
		a->nclients++;
	}
}

void agent_accept_pending(struct agent *a)
{
	if (a->listen_fd >= 0)
		on_accept(a->listen_fd, EV_READ, a);
}

/*
 * Bind to a temporary name and rename it into place once listening, so
 * a client that sees the socket can always connect to it.
 */
int agent_listen(struct agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char tmp[sizeof(sa.sun_path)];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%d", a->sock_path, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		rmad_err("socket path too long: %s", a->sock_path);
		return RMAD_ERR_ARG;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RMAD_ERR_INTERNAL;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tmp);
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 128) < 0 || rename(tmp, a->sock_path) < 0) {
		rmad_err("listen on %s: %s", a->sock_path, strerror(errno));
		unlink(tmp);
		close(fd);
		return RMAD_ERR_INTERNAL;
	}
	if (a->p.allow_users[0]) {
		/* other users reach the socket; SO_PEERCRED decides */
		chmod(a->sdir, 0755);
		chmod(a->sock_path, 0666);
	}
	a->listen_fd = fd;
	a->listen_ev = event_new(a->base, fd, EV_READ | EV_PERSIST, on_accept,
				 a);
	if (!a->listen_ev || event_add(a->listen_ev, NULL) < 0) {
		agent_unlisten(a);
		return RMAD_ERR_INTERNAL;
	}
	rmad_info("listening on %s", a->sock_path);
	return 0;
}

void agent_unlisten(struct agent *a)
{
	if (a->listen_ev)
		event_free(a->listen_ev);
	a->listen_ev = NULL;
	if (a->listen_fd >= 0) {
		unlink(a->sock_path);
		close(a->listen_fd);
	}
	a->listen_fd = -1;
}

void agent_drop_all_clients(struct agent *a)
{
	if (!a->cl)
		return;
	for (uint32_t c = 0; c < (uint32_t)a->p.max_clients; c++)
		if (a->cl[c].fd >= 0)
			client_release(a, c, 0);
}
