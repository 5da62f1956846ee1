/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am_held.h - held packets and the hand-off to handlers (am_held.c),
 * below the active-message layer (am.h, which includes this header for
 * the handlers that defer).
 */
#ifndef RMAD_AGENT_AM_HELD_H
#define RMAD_AGENT_AM_HELD_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/*
 * Held packets.  A handler that cannot act on its packet yet (the
 * window member's accumulate lock is held by a client that is not
 * running), and has changed nothing, calls am_defer(): that packet and
 * every later one from the same node for the same window are kept, in
 * order, and handed to their handlers again by am_retry(), so that the
 * order of a node's packets on a window (ops, then the flush, unlock,
 * fence or complete that follows them) holds while other nodes, jobs
 * and windows go on.  am_defer()
 * returns 0 outside a handler, where nothing can be kept.
 * am_deferred_since(): when the packet being handled was first kept (0:
 * it was not).  am_held(): packets are kept.  A node declared dead
 * loses its kept packets (am_held_drop_node); at most am_hold_max of
 * them are kept per node and window, beyond which am_deferred_since()
 * says 1 (long ago): the handler must then act or fail.
 */
int am_defer(struct agent *a);
uint64_t am_deferred_since(const struct agent *a);
int am_held(const struct agent *a);
void am_retry(struct agent *a);

/*
 * For am.c: hand a checked packet (payload in pl; since: its first
 * deferral, 0 if none) to its handler, 1 if the handler deferred it;
 * whether a packet must wait behind a kept one of its node and window;
 * keep a copy of packet msg (header and payload as it came) at the tail
 * of its queue, 0 or -1 without memory.
 */
int am_dispatch(struct agent *a, const struct rmad_am_hdr *h,
		const void *pl, uint64_t since);
int am_held_behind(struct agent *a, const struct rmad_am_hdr *h,
		   const void *pl);
int am_held_push(struct agent *a, const struct rmad_am_hdr *h,
		 const void *msg, size_t len);
/* For liveness.c: node went (declared dead), and what it sent us and
 * we kept goes too. */
void am_held_drop_node(struct agent *a, int node);
void am_held_fini(struct agent *a);

#endif
