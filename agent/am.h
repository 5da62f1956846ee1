/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am.h - the active-message layer (am.c): send a packet to a node's
 * agent, and hand each packet received to the handler that its protocol
 * module registered for its type.  Aggregation (am_batch.h) and held
 * packets (am_held.h) are below it; failure detection (liveness.h)
 * above it.
 */
#ifndef RMAD_AGENT_AM_H
#define RMAD_AGENT_AM_H

#include <stddef.h>

#include "agent.h"
#include "am_batch.h"		/* am_flush, am_forget_stats */
#include "am_held.h"		/* am_defer, am_retry */

/*
 * A handler (am_handler_fn, in agent.h) gets a header that am has checked
 * (version, type, source node, payload length no more than
 * RMAD_AM_MAX_PAYLOAD and equal to what arrived) and a private, 8-byte
 * aligned copy of the payload.  The fields that only its protocol knows
 * (job, window, ranks, counts) are for it to check.
 */

/* Answers PING itself; liveness.c and the protocol modules register
 * the rest. */
void am_init(struct agent *a);
void am_register(struct agent *a, int type, am_handler_fn fn);
/* Fills in version, source and length, and sends (to ourselves too). */
int am_send(struct agent *a, int node, struct rmad_am_hdr *h,
	    const void *payload, size_t plen);
/* am_send() for an RMA packet of a window, whose statistics st (or
 * NULL) count it when it shares a fabric message (am_batch.h: it may
 * wait in its node's open aggregate until am_flush). */
int am_send_st(struct agent *a, int node, struct rmad_am_hdr *h,
	       const void *payload, size_t plen, struct rmad_stats *st);
/*
 * A handler's first step: the struct of size bytes that starts packet
 * h's payload (proto/rmad_wire.h), copied into out (a payload may be
 * unaligned).  0, or -1 when the payload is shorter (with exact: not
 * exactly size bytes long); then the packet is dropped, counted and
 * said, and out is zeroed.
 */
int am_payload(struct agent *a, const struct rmad_am_hdr *h,
	       const void *payload, void *out, size_t size, int exact);
/* The fabric's receive callback; arg is the agent. */
void am_recv(void *arg, const void *msg, size_t len, int src,
	     unsigned flags);

/* The aggregates (am_start: made; am_fini: freed with what is held). */
int am_start(struct agent *a);
void am_fini(struct agent *a);
/*
 * Hooks that upper modules register to run once when a node is declared
 * dead (liveness.c; bottom up: jobs first, then the protocols that use
 * them).  am_node_dead() (agent.h): it was, and stays so (a static mesh:
 * it is not up); its packets are dropped and sends to it fail with
 * RMAD_ERR_PROC_FAILED.
 */
void am_on_node_dead(struct agent *a, am_node_fn fn);

#endif
