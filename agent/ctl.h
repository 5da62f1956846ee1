/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl.h - answers rmadctl's status request (ctl.c).
 */
#ifndef RMAD_AGENT_CTL_H
#define RMAD_AGENT_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* Status, statistics and windows on fd, as text or JSON. */
/* The status report on fd; viewer is -1 for everything, or the uid whose
 * own clients and jobs alone are listed (another user's request). */
void ctl_status(struct agent *a, int fd, int json, long viewer);

#endif
