/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs_events.h - what drives the jobs from outside (jobs_events.c):
 * packets from other agents, nodes' deaths, the tick.
 */
#ifndef RMAD_AGENT_JOBS_EVENTS_H
#define RMAD_AGENT_JOBS_EVENTS_H

#include "agent.h"

/* From the agent's tick: fail jobs whose ranks did not all attach
 * within attach_timeout_ms; send JOINs that waited for their root. */
void jobs_events_tick(struct agent *a);
/* Registers the job and barrier packet handlers with am, and the hook
 * for a node declared dead (before the ping's and the RMA layer's). */
void jobs_events_init(struct agent *a);

#endif
