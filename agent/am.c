/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am.c - the active-message layer between the fabric and the protocol
 * modules (jobs and barrier, windows, RMA).
 *
 * Packets from other agents are untrusted.  Here the common header is
 * checked once: wire version, a known type with a registered handler, a
 * source node of the mesh, and a payload no longer than
 * RMAD_AM_MAX_PAYLOAD that matches what arrived.  A packet that fails is
 * dropped and counted, never handed on.  The payload is copied to an
 * aligned buffer on the stack, so handlers may read 64-bit fields and a
 * handler that sends to its own node (which comes back here at once)
 * does not overwrite the packet it is still reading.
 */
#include <stdbool.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "am_batch.h"
#include "am_held.h"
#include "fabric.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

int am_payload(struct agent *a, const struct rmad_am_hdr *h,
	       const void *payload, void *out, size_t size, int exact)
{
	if (h->payload_len < size || (exact && h->payload_len != size)) {
		a->st.pkts_dropped++;
		rmad_warn("dropped packet: type %u from node %u has %u bytes "
			  "of payload, not %s%zu", h->type, h->src_node,
			  h->payload_len, exact ? "" : "at least ", size);
		memset(out, 0, size);
		return -1;
	}
	memcpy(out, payload, size);
	return 0;
}

static void on_ping(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload)
{
	struct rmad_am_hdr r = { .type = RMAD_AM_PONG, .job = h->job };
	struct rmad_am_ping p;

	if (am_payload(a, h, payload, &p, sizeof(p), 1))
		return;
	am_send(a, (int)h->src_node, &r, &p, sizeof(p));
}

void am_init(struct agent *a)
{
	memset(&a->am, 0, sizeof(a->am));
	am_register(a, RMAD_AM_PING, on_ping);
}

int am_start(struct agent *a)
{
	return am_batch_start(a);
}

void am_fini(struct agent *a)
{
	am_held_fini(a);
	am_batch_fini(a);
}

void am_on_node_dead(struct agent *a, am_node_fn fn)
{
	if (a->am.nnode_dead < AM_NODE_HOOKS)
		a->am.node_dead[a->am.nnode_dead++] = fn;
}

void am_register(struct agent *a, int type, am_handler_fn fn)
{
	if (type > 0 && type < RMAD_AM_TYPE_MAX)
		a->am.handler[type] = fn;
}

int am_send(struct agent *a, int node, struct rmad_am_hdr *h,
	    const void *payload, size_t plen)
{
	return am_send_st(a, node, h, payload, plen, NULL);
}

int am_send_st(struct agent *a, int node, struct rmad_am_hdr *h,
	       const void *payload, size_t plen, struct rmad_stats *st)
{
	int err;

	h->version = RMAD_WIRE_VERSION;
	h->src_node = (uint32_t)a->node;
	h->payload_len = (uint32_t)plen;
	if (h->type < RMAD_AM_TYPE_MAX)
		a->st.pkts_sent[h->type]++;
	if (am_node_dead(a, node))
		return RMAD_ERR_PROC_FAILED;
	if (a->am.used && node >= 0 && node < a->nnodes &&
	    h->type != RMAD_AM_HEARTBEAT)
		a->am.used[node] = 1;	/* busy for a while (am_busy) */
	if (node == a->node || !a->fab) {
		/* to ourselves: no need to cross the fabric */
		char buf[sizeof(*h) + RMAD_AM_MAX_PAYLOAD];

		if (node != a->node || plen > sizeof(buf) - sizeof(*h))
			return RMAD_ERR_RANK;
		memcpy(buf, h, sizeof(*h));
		if (plen)
			memcpy(buf + sizeof(*h), payload, plen);
		am_recv(a, buf, sizeof(*h) + plen, a->node,
			RMAD_FABRIC_FRESH);
		return 0;
	}
	rmad_dbg("send %u to node %d, %zu bytes", h->type, node, plen);
	if (h->type == RMAD_AM_HEARTBEAT) {
		/* ahead of the bulk traffic that waits for the node
		 * (am.c, suspects): nothing orders it with the rest */
		err = rmad_fabric_send_urgent(a->fab, node, h, sizeof(*h),
					      payload, plen);
		if (err)
			rmad_warn("heartbeat to node %d failed: %d", node,
				  err);
		return err;
	}
	if (am_batch_add(a, node, h, payload, plen, st))
		return 0;
	/* in order behind what waits for that node */
	am_batch_close(a, node);
	err = rmad_fabric_send(a->fab, node, h, sizeof(*h), payload, plen);
	if (err)
		rmad_warn("send %u to node %d failed: %d", h->type, node, err);
	return err;
}

static void recv_batch(struct agent *a, const struct rmad_am_hdr *bh,
		       const uint8_t *pl, unsigned flags);
void am_recv(void *arg, const void *msg, size_t len, int src,
	     unsigned flags)
{
	struct agent *a = arg;
	struct rmad_am_hdr h;
	uint64_t pl[RMAD_AM_MAX_PAYLOAD / 8];
	bool handshake;		/* a static mesh's heartbeat */

	if (len < sizeof(h)) {
		a->st.pkts_dropped++;
		rmad_warn("dropped a %zu-byte packet: shorter than a header",
			  len);
		return;
	}
	memcpy(&h, msg, sizeof(h));
	if (h.version != RMAD_WIRE_VERSION || h.type == 0 ||
	    h.type >= RMAD_AM_TYPE_MAX ||
	    (!a->am.handler[h.type] && h.type != RMAD_AM_BATCH) ||
	    h.src_node >= (uint32_t)a->nnodes ||
	    h.payload_len != len - sizeof(h) ||
	    h.payload_len > RMAD_AM_MAX_PAYLOAD) {
		a->st.pkts_dropped++;
		rmad_warn("dropped packet: version %u type %u node %u len %zu",
			  h.version, h.type, h.src_node, len);
		return;
	}
	/* a packet is its sender's, as the provider names it (FI_SOURCE),
	 * not as it says: no endpoint speaks for another node */
	if (src != RMAD_FABRIC_SRC_UNKNOWN && src != (int)h.src_node) {
		a->st.pkts_dropped++;
		if (src < 0)
			rmad_warn("dropped packet: type %u claims node %u but "
				  "came from no node of ours", h.type,
				  h.src_node);
		else
			rmad_warn("dropped packet: type %u claims node %u but "
				  "came from node %d", h.type, h.src_node,
				  src);
		return;
	}
	/*
	 * With tags, a packet that did not come bound to our session with
	 * its node (rmad_fabric_set_session) can only be a static mesh's
	 * heartbeat, as the two shake hands or after one restarted; it is
	 * no sign of life (an old one played again may be).
	 */
	handshake = a->mesh && h.type == RMAD_AM_HEARTBEAT;
	if (!(flags & RMAD_FABRIC_FRESH) && !handshake) {
		a->st.pkts_dropped++;
		rmad_warn("dropped packet: type %u from node %u came outside "
			  "our session with it", h.type, h.src_node);
		return;
	}
	if (a->am.dead && a->am.dead[h.src_node] && !handshake) {
		/* declared dead: stays so (a static mesh: until it is up
		 * again, heartbeats only) */
		a->st.pkts_dropped++;
		return;
	}
	a->st.pkts_recv[h.type]++;
	rmad_dbg("recv %u from node %u, %u bytes", h.type, h.src_node,
		 h.payload_len);
	/* a heartbeat brings no work: an idle agent stays asleep */
	if (h.type != RMAD_AM_HEARTBEAT)
		agent_note_activity(a);
	memcpy(pl, (const char *)msg + sizeof(h), h.payload_len);
	if (h.type == RMAD_AM_BATCH) {
		recv_batch(a, &h, (const uint8_t *)pl, flags);
		return;
	}
	/* behind a packet of its node and window that waits: in order */
	if (am_held_behind(a, &h, pl)) {
		if (am_held_push(a, &h, msg, len) == 0)
			return;
		/* no memory to keep it: handled now, out of order, and
		 * said (its handler acts or fails: nothing is lost) */
		rmad_warn("node %u: no memory to keep a packet behind a held "
			  "one; handled out of order", h.src_node);
	}
	if (am_dispatch(a, &h, pl, 0) &&
	    am_held_push(a, &h, msg, len) != 0) {
		rmad_warn("node %u: no memory to keep a deferred packet; "
			  "handled at once", h.src_node);
		am_dispatch(a, &h, pl, 1);
	}
}

/*
 * An aggregate: its packets, one by one, in order, each checked by
 * am_recv like any other; one from another node, a nested aggregate or
 * a length that does not add up drops the rest.
 */
static void recv_batch(struct agent *a, const struct rmad_am_hdr *bh,
		       const uint8_t *pl, unsigned flags)
{
	struct rmad_am_batch b;
	size_t off = sizeof(b), len = bh->payload_len;
	uint32_t n = 0;

	if (am_payload(a, bh, pl, &b, sizeof(b), 0))
		return;
	while (off < len) {
		struct rmad_am_hdr h;

		if (len - off < sizeof(h))
			break;
		memcpy(&h, pl + off, sizeof(h));
		if (h.payload_len > len - off - sizeof(h) ||
		    h.src_node != bh->src_node || h.type == RMAD_AM_BATCH)
			break;
		am_recv(a, pl + off, sizeof(h) + h.payload_len,
			(int)bh->src_node, flags);
		off += sizeof(h) + h.payload_len;
		n++;
	}
	if (off != len || n != b.npkts) {
		a->st.pkts_dropped++;
		rmad_warn("aggregate from node %u: %u of %u packets, %zu of "
			  "%zu bytes made sense; the rest dropped",
			  bh->src_node, n, b.npkts, off - sizeof(b),
			  len - sizeof(b));
	}
}
