/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loop.h - the agent's progress loop (loop.c).
 */
#ifndef RMAD_AGENT_LOOP_H
#define RMAD_AGENT_LOOP_H

#include "agent.h"

/* The doorbell, signals, the tick: 0, or RMAD_ERR_INTERNAL. */
int loop_setup_events(struct agent *a);
/* Until the agent stops (a->stopping). */
void loop_run(struct agent *a);
/* One line of statistics to the log (stats_interval_ms, and at exit). */
void loop_log_stats(struct agent *a);

#endif
