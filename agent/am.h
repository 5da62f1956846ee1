/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am.h - the active-message layer (am.c): send a packet to a node's
 * agent, and hand each packet received to the handler that its protocol
 * module registered for its type.
 */
#ifndef RMAD_AGENT_AM_H
#define RMAD_AGENT_AM_H

#include <stddef.h>

#include "agent.h"

/*
 * A handler (am_handler_fn, in agent.h) gets a header that am has checked
 * (version, type, source node, payload length no more than
 * RMAD_AM_MAX_PAYLOAD and equal to what arrived) and a private, 8-byte
 * aligned copy of the payload.  The fields that only its protocol knows
 * (job, window, ranks, counts) are for it to check.
 */

/* Answers PING itself; the protocol modules register the rest. */
void am_init(struct agent *a);
void am_register(struct agent *a, int type, am_handler_fn fn);
/* Fills in version, source and length, and sends (to ourselves too). */
int am_send(struct agent *a, int node, struct rmad_am_hdr *h,
	    const void *payload, size_t plen);
/* The fabric's receive callback; arg is the agent. */
void am_recv(void *arg, const void *msg, size_t len);

#endif
