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
void agent_ctl_status(struct agent *a, int fd, int json);

#endif
