/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pin.h - pinning the agent to its core with hwloc, and the cores left to ranks (pin.c).
 */
#ifndef RMAD_AGENT_PIN_H
#define RMAD_AGENT_PIN_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

int pin_agent(struct agent *a);
/* may pid run on the agent's core (1 when the agent is not pinned) */
int pin_core_shared(const struct agent *a, pid_t pid);
/* another agent of this host's mesh that may run on our core, or -1 */
int pin_core_peer(const struct agent *a);
int pin_rank_cpus(const struct rmad_params *p, int nagents, char *out,
		    size_t len);
/* each virtual node's cores when no core is spare ("" if unpinned) */
int pin_vnode_cores(const struct rmad_params *p, int nagents, char *out,
		      size_t len);

#endif
