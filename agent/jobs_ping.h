/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs_ping.h - rmad_ping (jobs_ping.c), above the jobs table (jobs.h).
 */
#ifndef RMAD_AGENT_JOBS_PING_H
#define RMAD_AGENT_JOBS_PING_H

#include <stdint.h>

#include "agent.h"

/* A client's ping op to the target rank's node. */
void jobs_ping_op(struct agent *a, uint32_t client, uint32_t op,
		   const struct rmad_op_elem *e);
/* From the agent's tick: pings unanswered for 10 s fail. */
void jobs_ping_tick(struct agent *a);
/* Registers the PONG handler with am, and the hook that ends the pings
 * to a node declared dead (after jobs.c's). */
void jobs_ping_init(struct agent *a);

#endif
