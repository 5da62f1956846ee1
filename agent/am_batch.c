/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am_batch.c - node-level aggregation for the active-message layer
 * (am.c): the open aggregates, one per node at most, that gather
 * operations and their answers into one fabric message, and their sends
 * (am_flush at the end of the agent's pass, or when a packet of another
 * kind, a full aggregate or an urgent packet closes one).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am_batch.h"
#include "fabric.h"
#include "log.h"
#include "rmad_abi.h"

int am_batch_start(struct agent *a)
{
	struct am_ctx *m = &a->am;

	m->batch = calloc(AM_BATCHES, sizeof(*m->batch));
	if (!m->batch)
		return RMAD_ERR_NOMEM;
	m->nbatch = AM_BATCHES;
	for (int i = 0; i < AM_BATCHES; i++) {
		m->batch[i].node = -1;
		m->batch[i].buf = malloc((size_t)a->p.am_buf_size);
		if (!m->batch[i].buf)
			return RMAD_ERR_NOMEM;
	}
	return 0;
}

void am_batch_fini(struct agent *a)
{
	for (int i = 0; a->am.batch && i < a->am.nbatch; i++)
		free(a->am.batch[i].buf);
	free(a->am.batch);
	a->am.batch = NULL;
	a->am.nbatch = 0;
}

/* A BATCH's header and the head of its payload, sent as one piece. */
struct batch_head {
	struct rmad_am_hdr h;
	struct rmad_am_batch b;
};
static_assert(sizeof(struct batch_head) == sizeof(struct rmad_am_hdr) +
	      sizeof(struct rmad_am_batch), "batch head");

/* Send aggregate b: one packet as itself, two or more as a BATCH. */
static void batch_send(struct agent *a, struct am_batch *b)
{
	struct batch_head bh = { .h.type = RMAD_AM_BATCH };
	int node = b->node, err;

	b->node = -1;
	if (!b->npkts || am_node_dead(a, node))
		goto out;
	if (b->npkts == 1) {
		err = rmad_fabric_send(a->fab, node, b->buf,
				       sizeof(struct rmad_am_hdr),
				       b->buf + sizeof(struct rmad_am_hdr),
				       b->len - sizeof(struct rmad_am_hdr));
	} else {
		struct rmad_stats *seen[AM_BATCH_PKTS];
		uint32_t nseen = 0;

		bh.h.version = RMAD_WIRE_VERSION;
		bh.h.src_node = (uint32_t)a->node;
		bh.h.payload_len = (uint32_t)(sizeof(bh.b) + b->len);
		bh.b.npkts = b->npkts;
		a->st.pkts_sent[RMAD_AM_BATCH]++;
		a->st.aggr_msgs++;
		a->st.aggr_pkts += b->npkts;
		err = rmad_fabric_send(a->fab, node, &bh, sizeof(bh), b->buf,
				       b->len);
		/* per window: its packets in it, and the message once */
		for (uint32_t i = 0; !err && i < b->npkts; i++) {
			struct rmad_stats *st = b->st[i];
			uint32_t k = 0;

			if (!st)
				continue;
			st->pkts_aggregated++;
			while (k < nseen && seen[k] != st)
				k++;
			if (k == nseen) {
				seen[nseen++] = st;
				st->aggr_msgs++;
			}
		}
	}
	if (err)
		rmad_warn("send of %u packets to node %d failed: %d",
			  b->npkts, node, err);
out:
	b->npkts = 0;
	b->len = 0;
}

void am_flush(struct agent *a)
{
	for (int i = 0; i < a->am.nbatch; i++)
		if (a->am.batch[i].node >= 0)
			batch_send(a, &a->am.batch[i]);
}

void am_forget_stats(struct agent *a, const struct rmad_stats *st)
{
	for (int i = 0; i < a->am.nbatch; i++)
		for (uint32_t k = 0; k < a->am.batch[i].npkts; k++)
			if (a->am.batch[i].st[k] == st)
				a->am.batch[i].st[k] = NULL;
}

static struct am_batch *batch_of(struct agent *a, int node)
{
	for (int i = 0; i < a->am.nbatch; i++)
		if (a->am.batch[i].node == node)
			return &a->am.batch[i];
	return NULL;
}

/* Send what waits for node now (another kind of packet follows). */
void am_batch_close(struct agent *a, int node)
{
	struct am_batch *b = batch_of(a, node);

	if (b)
		batch_send(a, b);
}

/* Packets that may wait in an aggregate: operations and answers. */
static int aggregatable(const struct rmad_am_hdr *h)
{
	return h->type >= RMAD_AM_RMA_LOCK && h->type <= RMAD_AM_RMA_FLUSH_ACK;
}

/* Packets after which the aggregate goes at once: the ends of epochs and
 * requests for an answer that someone waits for. */
static int urgent(const struct rmad_am_hdr *h)
{
	return h->type == RMAD_AM_RMA_FLUSH || h->type == RMAD_AM_RMA_UNLOCK ||
	       h->type == RMAD_AM_RMA_LOCK ||
	       (h->flags & (RMAD_AMF_UNLOCK | RMAD_AMF_PSCW_DONE));
}

/* 1: queued in node's aggregate; 0: not for aggregation.  An aggregate
 * holds what fits a BATCH (struct batch_head, then its packets) in
 * am_buf_size and RMAD_AM_MAX_PAYLOAD. */
int am_batch_add(struct agent *a, int node, const struct rmad_am_hdr *h,
		 const void *payload, size_t plen, struct rmad_stats *st)
{
	size_t cap = (size_t)a->p.am_buf_size, rec = sizeof(*h) + plen;
	size_t room = RMAD_AM_MAX_PAYLOAD - sizeof(struct rmad_am_batch);
	struct am_batch *b;

	if (cap < sizeof(struct batch_head))
		return 0;
	cap -= sizeof(struct batch_head);
	if (room > cap)
		room = cap;
	if (!a->p.aggregate || !a->am.nbatch || !aggregatable(h) ||
	    rec > room)
		return 0;
	b = batch_of(a, node);
	if (b && (b->len + rec > room || b->npkts == AM_BATCH_PKTS)) {
		batch_send(a, b);
		b = NULL;
	}
	if (!b) {
		b = batch_of(a, -1);
		if (!b) {		/* all open: send the first */
			b = &a->am.batch[0];
			batch_send(a, b);
		}
		b->node = node;
	}
	memcpy(b->buf + b->len, h, sizeof(*h));
	if (plen)
		memcpy(b->buf + b->len + sizeof(*h), payload, plen);
	b->len += rec;
	b->st[b->npkts++] = st;
	if (urgent(h))
		batch_send(a, b);
	return 1;
}
