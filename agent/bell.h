/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bell.h - doorbells between the agents of one host, for a fabric with
 * no wait object (shm between virtual nodes): a sleeping agent is woken
 * by the peer that sent it something.
 */
#ifndef RMAD_AGENT_BELL_H
#define RMAD_AGENT_BELL_H

#include "agent.h"

/* Set up this agent's bell when its fabric needs one (shm, more than one
 * node); 0 also when none is needed.  After the mesh is up. */
int bell_open(struct agent *a);
void bell_close(struct agent *a);

/* Going to sleep: mark it, then look at the fabric once more (the caller
 * polls it after this returns).  1 when the bell is in use. */
int bell_sleep_begin(struct agent *a);
void bell_sleep_end(struct agent *a);
/* between the two: 1 once a peer rang (it posted to us) */
int bell_rung(struct agent *a);

/* The fabric posted something to node (rmad_fabric_on_post). */
void bell_ring(void *agent, int node);

#endif
