/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am_held.c - held packets for the active-message layer (am.c): the
 * hand-off of a checked packet to its handler (am_dispatch), which notes
 * whether the handler deferred it (am_defer), and the per-node,
 * per-window queues that keep a deferred packet and those behind it, in
 * order, until am_retry hands them on again.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am_held.h"
#include "rmad_abi.h"
#include "util.h"

/* One packet kept (header and payload as they came), and one node's
 * queue of them for one window of one job. */
struct am_kept {
	struct am_kept *next;
	size_t len;
	uint8_t msg[];
};

struct am_held {
	struct am_held *next;
	uint32_t node;
	uint64_t job;
	uint64_t win;			/* the window's key (pkt_win) */
	struct am_kept *head, *tail;
	uint32_t n;
	uint64_t since;			/* its head's first deferral */
};

#define AM_HOLD_MAX	4096		/* packets per node and window */

/*
 * The window a packet belongs to, for its place among held packets: a
 * window's RMA (hdr.wkey) and its fence, PSCW and life-cycle notices
 * (their payload's wkey; 0 when it is too short, which its handler
 * drops) keep their order; a packet of the job alone (0: barriers,
 * joins, a rank's failure, pings) waits behind no window.
 */
static uint64_t pkt_win(const struct rmad_am_hdr *h, const void *pl)
{
	uint64_t key = 0;

	switch (h->type) {
	case RMAD_AM_WIN_JOIN:
	case RMAD_AM_WIN_READY:
		if (h->payload_len >= sizeof(struct rmad_am_win))
			memcpy(&key, (const char *)pl +
			       offsetof(struct rmad_am_win, wkey), sizeof(key));
		return key;
	case RMAD_AM_WIN_FREE_ARRIVE:
	case RMAD_AM_WIN_FREE_DONE:
	case RMAD_AM_WIN_FENCE_ARRIVE:
	case RMAD_AM_WIN_FENCE_RELEASE:
	case RMAD_AM_WIN_POST:
	case RMAD_AM_WIN_COMPLETE:
		if (h->payload_len >= sizeof(struct rmad_am_win_sync))
			memcpy(&key, (const char *)pl +
			       offsetof(struct rmad_am_win_sync, wkey),
			       sizeof(key));
		return key;
	default:
		return h->type >= RMAD_AM_RMA_LOCK &&
		       h->type <= RMAD_AM_RMA_FLUSH_ACK ? h->wkey : 0;
	}
}

static struct am_held *held_find(struct agent *a, uint32_t node,
				 uint64_t job, uint64_t win)
{
	for (struct am_held *q = a->am.held; q; q = q->next)
		if (q->node == node && q->job == job && q->win == win)
			return q;
	return NULL;
}

/* Keep a copy of packet msg at the tail of its queue (made if need
 * be); 0, or -1 without memory. */
int am_held_push(struct agent *a, const struct rmad_am_hdr *h,
		 const void *msg, size_t len)
{
	uint64_t win = pkt_win(h, (const uint8_t *)msg + sizeof(*h));
	struct am_held *q = held_find(a, h->src_node, h->job, win);
	struct am_kept *k = malloc(sizeof(*k) + len);

	if (!k)
		return -1;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q) {
			free(k);
			return -1;
		}
		q->node = h->src_node;
		q->job = h->job;
		q->win = win;
		q->since = rmad_now_ns();
		q->next = a->am.held;
		a->am.held = q;
	}
	k->next = NULL;
	k->len = len;
	memcpy(k->msg, msg, len);
	if (q->tail)
		q->tail->next = k;
	else
		q->head = k;
	q->tail = k;
	q->n++;
	a->st.pkts_held++;
	return 0;
}

static void held_free(struct am_held *q)
{
	while (q->head) {
		struct am_kept *k = q->head;

		q->head = k->next;
		free(k);
	}
	free(q);
}

/* Node went (declared dead): what it sent us and we kept goes too. */
void am_held_drop_node(struct agent *a, int node)
{
	for (struct am_held **pp = &a->am.held; *pp;) {
		struct am_held *q = *pp;

		if (q->node != (uint32_t)node) {
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		held_free(q);
	}
}

int am_defer(struct agent *a)
{
	if (!a->am.in_handler)
		return 0;
	a->am.defer_now = 1;
	return 1;
}

uint64_t am_deferred_since(const struct agent *a)
{
	return a->am.in_handler ? a->am.handling_since : 0;
}

int am_held(const struct agent *a)
{
	return a->am.held != NULL;
}

/* Hand a checked packet (payload in pl) to its handler; 1 if the
 * handler deferred it. */
int am_dispatch(struct agent *a, const struct rmad_am_hdr *h,
		const void *pl, uint64_t since)
{
	int outer = a->am.in_handler, deferred;
	uint64_t osince = a->am.handling_since;

	a->am.in_handler = 1;
	a->am.handling_since = since;
	a->am.defer_now = 0;
	a->am.handler[h->type](a, h, pl);
	deferred = a->am.defer_now;
	a->am.defer_now = 0;
	a->am.in_handler = outer;
	a->am.handling_since = osince;
	return deferred;
}

/* Unlink queue q (empty) and free it. */
static void held_remove(struct agent *a, struct am_held *q)
{
	for (struct am_held **pp = &a->am.held; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			free(q);
			return;
		}
}

/* One queue's packets, in order, until one is deferred again.  The
 * queue is looked up anew after every handler: one may have dropped it
 * (its node declared dead) or queued more behind. */
static void retry_one(struct agent *a, uint32_t node, uint64_t job,
		      uint64_t win)
{
	uint64_t pl[RMAD_AM_MAX_PAYLOAD / 8];
	struct am_held *q;

	while ((q = held_find(a, node, job, win)) && q->head) {
		struct am_kept *k = q->head;
		struct rmad_am_hdr h;
		/* past the bound: its handler must act now */
		uint64_t since = q->n > AM_HOLD_MAX ? 1 : q->since;
		int again;

		q->head = k->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
		memcpy(&h, k->msg, sizeof(h));
		memcpy(pl, k->msg + sizeof(h), h.payload_len);
		again = am_dispatch(a, &h, pl, since);
		q = held_find(a, node, job, win);
		if (again && q) {
			k->next = q->head;	/* first again */
			q->head = k;
			if (!q->tail)
				q->tail = k;
			q->n++;
			return;
		}
		free(k);
		if (again || !q)
			return;
		q->since = rmad_now_ns();
	}
	if (q)
		held_remove(a, q);
}

void am_retry(struct agent *a)
{
	struct key {
		uint32_t node;
		uint64_t job, win;
	} few[16], *keys = few;
	size_t n = 0, cap = 16;

	/* the queues there are now (one per node and window whose member's
	 * lock a client holds), by key: a handler may add or drop some */
	for (struct am_held *q = a->am.held; q; q = q->next)
		n++;
	if (n > cap) {
		keys = malloc(n * sizeof(*keys));
		if (keys)
			cap = n;
		else
			keys = few;	/* the first ones now, more later */
	}
	n = 0;
	for (struct am_held *q = a->am.held; q && n < cap; q = q->next) {
		keys[n].node = q->node;
		keys[n].win = q->win;
		keys[n++].job = q->job;
	}
	for (size_t i = 0; i < n; i++)
		retry_one(a, keys[i].node, keys[i].job, keys[i].win);
	if (keys != few)
		free(keys);
}

int am_held_behind(struct agent *a, const struct rmad_am_hdr *h,
		   const void *pl)
{
	return a->am.held && h->type != RMAD_AM_HEARTBEAT &&
	       held_find(a, h->src_node, h->job, pkt_win(h, pl));
}

void am_held_fini(struct agent *a)
{
	while (a->am.held) {
		struct am_held *q = a->am.held;

		a->am.held = q->next;
		held_free(q);
	}
}
