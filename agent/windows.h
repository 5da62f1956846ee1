/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * windows.h - windows: collective create and free across the agents
 * (windows.c: the clients' requests; win_join.c: the packets between
 * agents), each node's table of its members, and the lookups the RMA
 * layer uses (win_state.h).  Their fence barrier and PSCW notices:
 * winsync.h.
 */
#ifndef RMAD_AGENT_WINDOWS_H
#define RMAD_AGENT_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "win_state.h"

struct rmad_ctl_win_create;
struct rmad_ctl_win_free;

int agent_win_init(struct agent *a);
void agent_win_fini(struct agent *a);
void agent_win_create(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_create *m, size_t len, int fd);
void agent_win_free(struct agent *a, uint32_t c,
		    const struct rmad_ctl_win_free *m);

#endif
