/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * liveness.h - failure detection (liveness.c), above the active-message
 * layer: heartbeats, a static mesh's handshake, declaring nodes dead.
 */
#ifndef RMAD_AGENT_LIVENESS_H
#define RMAD_AGENT_LIVENESS_H

#include "agent.h"

/*
 * Failure detection.  liveness_init() (after am_init) takes the
 * HEARTBEAT packets; liveness_start() begins watching the mesh once it
 * is up; liveness_tick() (the agent's timer) sends a HEARTBEAT to each node
 * every heartbeat_ms, which it answers at once with an echo of our
 * stamp, and declares dead a node that echoed no stamp of ours younger
 * than heartbeat_timeout_ms (liveness.c, hb_proof: what arrives late
 * proves nothing new) on evidence, or after heartbeat_confirm_ms
 * (liveness.c, suspects).  A dead node stays dead: its packets are
 * dropped, sends to it fail with RMAD_ERR_PROC_FAILED (am_node_dead,
 * agent.h), and the hooks that upper modules registered with
 * am_on_node_dead() (am.h) run once.  A heartbeat brings no work: it
 * does not keep an idle agent spinning.
 */
void liveness_init(struct agent *a);
int liveness_start(struct agent *a);
void liveness_fini(struct agent *a);
void liveness_tick(struct agent *a, uint64_t now);
/*
 * A job of ours needs node (on: one more; 0: one less): in a static
 * mesh its heartbeats go every heartbeat_ms, not heartbeat_idle_ms,
 * while any job needs it (liveness.c, idle nodes).
 */
void liveness_watch(struct agent *a, int node, int on);
/* 1 if node is up and echoed a stamp of ours within
 * heartbeat_timeout_ms (or heartbeats are off; or it is this node). */
int liveness_node_fresh(const struct agent *a, int node);
/* The other nodes that are up, and how many of them are busy
 * (liveness.c, idle nodes: as of the last tick). */
void liveness_node_counts(const struct agent *a, int *up, int *busy);
/*
 * A static mesh (a->mesh, mesh.c) instead: every node starts down and
 * is up once it answers our heartbeats with what we sent it; one that
 * is declared dead (hooks as above) or restarts is up again after a new
 * handshake (liveness.c, "static mesh").  liveness_root(): the node that
 * collects a job's map: 0, or in a static mesh the lowest node up.
 */
int liveness_root(const struct agent *a);

#endif
