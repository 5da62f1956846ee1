/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rings.h - the clients' submission rings (rings.c), below clients.h.
 */
#ifndef RMAD_AGENT_RINGS_H
#define RMAD_AGENT_RINGS_H

#include "agent.h"

/* Take submitted ops off every client's ring; how many. */
int rings_poll(struct agent *a);
/* 1 if no client's ring holds an op. */
int rings_empty(struct agent *a);
/* 1 if every registered client has a thread asleep on a counter. */
int rings_clients_waiting(struct agent *a);

#endif
