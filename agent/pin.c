/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pin.c - pin the agent to a spare core with hwloc.
 *
 * "auto" takes the node's last core; with several agents on one host
 * (virtual nodes) agent v takes the v-th core from the end, so they do
 * not pile onto one core.  Ranks are bound away from those cores by
 * rmad-run.  Pinning failures are logged and never fatal: an unpinned
 * agent still works.
 */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "agent.h"
#include "log.h"

int agent_pin(struct agent *a)
{
	hwloc_topology_t topo;
	hwloc_obj_t core;
	const char *want = a->p.core;
	int ncores, idx;
	char *end;

	a->core = -1;
	if (!strcmp(want, "none")) {
		rmad_info("not pinned (core = none)");
		return 0;
	}
	if (hwloc_topology_init(&topo) < 0)
		return 0;
	if (hwloc_topology_load(topo) < 0)
		goto out;
	ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	if (ncores <= 0)
		goto out;
	if (!strcmp(want, "auto")) {
		int v = a->vnode > 0 ? a->vnode : 0;

		idx = ncores - 1 - (v % ncores);
	} else {
		long n = strtol(want, &end, 10);

		if (!*want || *end || n < 0 || n >= ncores) {
			rmad_warn("core = %s: no such core (0..%d); not pinned",
				  want, ncores - 1);
			goto out;
		}
		idx = (int)n;
	}
	core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)idx);
	if (!core || !core->cpuset)
		goto out;
	if (hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) < 0) {
		rmad_warn("could not pin to core %d; running unpinned", idx);
		goto out;
	}
	a->core = idx;
	rmad_info("pinned to core %d of %d", idx, ncores);
out:
	hwloc_topology_destroy(topo);
	return 0;
}
