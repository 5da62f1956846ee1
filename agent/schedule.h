/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * schedule.h - the agent's scheduling class and how it waits (schedule.c).
 */
#ifndef RMAD_AGENT_SCHEDULE_H
#define RMAD_AGENT_SCHEDULE_H

#include <stdint.h>

#include "agent.h"

/* The class that goes with the mode: ev 1 event-driven, 0 spinning. */
void sched_set(struct agent *a, int ev);
/* Over shm, no SCHED_FIFO where another agent may share our core. */
void sched_check_peer(struct agent *a);
/* After RT_BUSY_NS awake under SCHED_FIFO, lend the core back. */
void sched_busy(struct agent *a, uint64_t now);
/* Before a sleep: the mode's class again if it was lent. */
void sched_restore(struct agent *a);
/* One turn of the spin phase (progress = spin). */
void sched_spin_once(struct agent *a, uint64_t now);

/* wait_spin_us: polling in SCHED_IDLE may replace sleeps now. */
int sched_idle_ok(const struct agent *a, uint64_t now);
/* In place of a sleep: 1 if something came or the loop polls on
 * (a->ws_idle), 0 to block. */
int sched_idle_poll(struct agent *a);
/* An idle pass while a->ws_idle: 1 to poll on, 0 to block. */
int sched_idle_keep(struct agent *a, uint64_t now);
/* While a->ws_idle, a pass that began at t0 found messages from other
 * nodes: if it began late, they waited for our core (polling off). */
void sched_idle_fab(struct agent *a, uint64_t t0, uint64_t now);
/* While a->ws_idle, after a pass: the guard raised us? then stop. */
void sched_idle_check(struct agent *a, uint64_t now);

#endif
