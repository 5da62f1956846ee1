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
/*
 * Node-level aggregation (the aggregate key): am_send_st() is am_send()
 * for an RMA packet of a window, whose statistics st (or NULL) count it
 * when it shares a fabric message.  Operations and their answers to
 * another node wait in that node's open aggregate; a flush, an unlock,
 * a full aggregate, a packet of another kind to the node, or am_flush()
 * at the end of the agent's pass (before it can go idle) sends it.
 * am_forget_stats() drops st from the open aggregates (its origin goes).
 */
int am_send_st(struct agent *a, int node, struct rmad_am_hdr *h,
	       const void *payload, size_t plen, struct rmad_stats *st);
void am_flush(struct agent *a);
void am_forget_stats(struct agent *a, const struct rmad_stats *st);
/* The fabric's receive callback; arg is the agent. */
void am_recv(void *arg, const void *msg, size_t len, int src,
	     unsigned flags);

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
 * loses its kept packets; at most am_hold_max of them are kept per node
 * and window, beyond which am_deferred_since() says 1 (long ago): the
 * handler must then act or fail.
 */
int am_defer(struct agent *a);
uint64_t am_deferred_since(const struct agent *a);
int am_held(const struct agent *a);
void am_retry(struct agent *a);

/*
 * Failure detection.  am_start() begins watching the mesh once it is up;
 * am_tick() (the agent's timer) sends a HEARTBEAT to each node every
 * heartbeat_ms, which it answers at once with an echo of our stamp, and
 * declares dead a node that echoed no stamp of ours younger than
 * heartbeat_timeout_ms (am.c, hb_proof: what arrives late proves
 * nothing new).  A dead node stays dead: its packets are
 * dropped, sends to it fail with RMAD_ERR_PROC_FAILED, and the hooks
 * that upper modules registered with am_on_node_dead() run once.  A
 * heartbeat brings no work: it does not keep an idle agent spinning.
 */
int am_start(struct agent *a);
void am_fini(struct agent *a);
void am_tick(struct agent *a, uint64_t now);
/*
 * A job of ours needs node (on: one more; 0: one less): in a static
 * mesh its heartbeats go every heartbeat_ms, not heartbeat_idle_ms,
 * while any job needs it (am.c, idle nodes).
 */
void am_watch(struct agent *a, int node, int on);
/* 1 if node is up and echoed a stamp of ours within
 * heartbeat_timeout_ms (or heartbeats are off; or it is this node). */
int am_node_fresh(const struct agent *a, int node);
/* The other nodes that are up, and how many of them are busy (am.c,
 * idle nodes: as of the last tick). */
void am_node_counts(const struct agent *a, int *up, int *busy);
void am_on_node_dead(struct agent *a, am_node_fn fn);
int am_node_dead(const struct agent *a, int node);
/*
 * A static mesh (a->mesh, mesh.c) instead: every node starts down and
 * is up once it answers our heartbeats with what we sent it; one that
 * is declared dead (hooks as above) or restarts is up again after a new
 * handshake (am.c, "static mesh").  am_root(): the node that collects a
 * job's map: 0, or in a static mesh the lowest node up.
 */
int am_root(const struct agent *a);

#endif
