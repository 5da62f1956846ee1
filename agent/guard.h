/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard.h - the thread that keeps a polling agent's wakeups (guard.c).
 */
#ifndef RMAD_AGENT_GUARD_H
#define RMAD_AGENT_GUARD_H

#include "agent.h"

/* The agent polls in SCHED_IDLE from now on: watch it.  Starts the
 * thread the first time (a->guard stays NULL if none could start). */
void guard_arm(struct agent *a);
/* The agent left SCHED_IDLE (it may poll again soon: stay awake). */
void guard_idle_end(struct agent *a);
/* The agent blocks (agent_sleep): park. */
void guard_disarm(struct agent *a);
/* 1 once after the guard raised a starved agent to SCHED_FIFO. */
int guard_boosted(struct agent *a);
/* At exit: the thread ends. */
void guard_stop(struct agent *a);

#endif
