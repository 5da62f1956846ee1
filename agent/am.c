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
#include <string.h>

#include "agent.h"
#include "am.h"
#include "log.h"
#include "rmad_abi.h"

static void on_ping(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload)
{
	struct rmad_am_hdr r = {
		.type = RMAD_AM_PONG, .job = h->job, .seq = h->seq,
	};

	(void)payload;
	am_send(a, (int)h->src_node, &r, NULL, 0);
}

void am_init(struct agent *a)
{
	memset(&a->am, 0, sizeof(a->am));
	am_register(a, RMAD_AM_PING, on_ping);
}

void am_register(struct agent *a, int type, am_handler_fn fn)
{
	if (type > 0 && type < RMAD_AM_TYPE_MAX)
		a->am.handler[type] = fn;
}

int am_send(struct agent *a, int node, struct rmad_am_hdr *h,
	    const void *payload, size_t plen)
{
	int err;

	h->version = RMAD_WIRE_VERSION;
	h->src_node = (uint32_t)a->node;
	h->payload_len = (uint32_t)plen;
	if (h->type < RMAD_AM_TYPE_MAX)
		a->st.pkts_sent[h->type]++;
	if (node == a->node || !a->fab) {
		/* to ourselves: no need to cross the fabric */
		char buf[sizeof(*h) + RMAD_AM_MAX_PAYLOAD];

		if (node != a->node || plen > sizeof(buf) - sizeof(*h))
			return RMAD_ERR_RANK;
		memcpy(buf, h, sizeof(*h));
		if (plen)
			memcpy(buf + sizeof(*h), payload, plen);
		am_recv(a, buf, sizeof(*h) + plen);
		return 0;
	}
	rmad_dbg("send %u to node %d, %zu bytes", h->type, node, plen);
	err = rmad_fabric_send(a->fab, node, h, sizeof(*h), payload, plen);
	if (err)
		rmad_warn("send %u to node %d failed: %d", h->type, node, err);
	return err;
}

void am_recv(void *arg, const void *msg, size_t len)
{
	struct agent *a = arg;
	struct rmad_am_hdr h;
	uint64_t pl[RMAD_AM_MAX_PAYLOAD / 8];

	if (len < sizeof(h)) {
		a->st.pkts_dropped++;
		rmad_warn("dropped a %zu-byte packet: shorter than a header",
			  len);
		return;
	}
	memcpy(&h, msg, sizeof(h));
	if (h.version != RMAD_WIRE_VERSION || h.type == 0 ||
	    h.type >= RMAD_AM_TYPE_MAX || !a->am.handler[h.type] ||
	    h.src_node >= (uint32_t)a->nnodes ||
	    h.payload_len != len - sizeof(h) ||
	    h.payload_len > RMAD_AM_MAX_PAYLOAD) {
		a->st.pkts_dropped++;
		rmad_warn("dropped packet: version %u type %u node %u len %zu",
			  h.version, h.type, h.src_node, len);
		return;
	}
	a->st.pkts_recv[h.type]++;
	rmad_dbg("recv %u from node %u, %u bytes", h.type, h.src_node,
		 h.payload_len);
	agent_note_activity(a);
	memcpy(pl, (const char *)msg + sizeof(h), h.payload_len);
	a->am.handler[h.type](a, &h, pl);
}
