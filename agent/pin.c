/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pin.c - pin the agent to a spare core with hwloc.
 *
 * "auto" takes the node's last core; with several agents on one host
 * (virtual nodes) agent v takes the v-th core from the end, so they do
 * not pile onto one core.  Ranks are bound away from those cores by
 * rmad-run where the host has cores to spare, and otherwise each virtual
 * node's ranks to its agent's core (pin_vnode_cores).  Pinning
 * failures are logged and never fatal: an unpinned agent still works.
 */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <sched.h>

#include "agent.h"
#include "pin.h"
#include "log.h"
#include "rmad_abi.h"

/* The core index agent v takes under core=auto: the v-th from the end. */
static int auto_core(int v, int ncores)
{
	return ncores - 1 - ((v > 0 ? v : 0) % ncores);
}

/* This host's topology, loaded: its number of cores, or -1 (nothing to
 * destroy then). */
static int topo_load(hwloc_topology_t *topo)
{
	int ncores;

	if (hwloc_topology_init(topo) < 0)
		return -1;
	if (hwloc_topology_load(*topo) < 0 ||
	    (ncores = hwloc_get_nbobjs_by_type(*topo, HWLOC_OBJ_CORE)) <= 0) {
		hwloc_topology_destroy(*topo);
		return -1;
	}
	return ncores;
}

/*
 * The logical CPUs left for ranks once `nagents` agents of this host are
 * pinned as pin_agent() pins them, as a list such as "0-5" for the
 * launcher's --cpu-set.  Writes "" when no CPU is left (an oversubscribed
 * host: ranks then float) or when agents are not pinned at all.
 */
int pin_rank_cpus(const struct rmad_params *p, int nagents, char *out,
		    size_t len)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t left;
	int ncores, ret = 0;

	out[0] = '\0';
	if (!strcmp(p->core, "none") || (ncores = topo_load(&topo)) < 0)
		return 0;
	left = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
	if (!left)
		goto out_topo;
	for (int v = 0; v < nagents; v++) {
		char *end;
		long n = strtol(p->core, &end, 10);
		int idx = !strcmp(p->core, "auto") ? auto_core(v, ncores) :
			  (*end || n < 0 || n >= ncores) ? -1 : (int)n;
		hwloc_obj_t core = idx < 0 ? NULL :
			hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE,
					      (unsigned)idx);

		if (core && core->cpuset)
			hwloc_bitmap_andnot(left, left, core->cpuset);
	}
	if (!hwloc_bitmap_iszero(left) &&
	    hwloc_bitmap_list_snprintf(out, len, left) >= (int)len)
		ret = RMAD_ERR_ARG;
	hwloc_bitmap_free(left);
out_topo:
	hwloc_topology_destroy(topo);
	return ret;
}

/*
 * The cores of each of `nagents` virtual nodes on a host without a core
 * to spare, as a launcher's rankfile names them: for node v, the core
 * its agent takes (auto_core), then the cores no agent takes, dealt out
 * in turn.  "c[,c...]" per node, separated by spaces, logical core
 * indices.  Writes "" unless core = auto: under a fixed core the agents
 * share one, and unpinned agents have none.
 */
int pin_vnode_cores(const struct rmad_params *p, int nagents, char *out,
		      size_t len)
{
	hwloc_topology_t topo;
	int ncores, ret = 0;
	size_t n = 0;

	out[0] = '\0';
	if (strcmp(p->core, "auto") || nagents < 1 ||
	    (ncores = topo_load(&topo)) < 0)
		return 0;
	for (int v = 0; v < nagents && !ret; v++) {
		int w = snprintf(out + n, len - n, "%s%d", v ? " " : "",
				 auto_core(v, ncores));

		ret = w < 0 || (size_t)w >= len - n ? RMAD_ERR_ARG : 0;
		n += ret ? 0 : (size_t)w;
		/* the spare cores: those below every agent's, dealt out */
		for (int c = v; c < ncores - nagents && !ret; c += nagents) {
			w = snprintf(out + n, len - n, ",%d", c);
			ret = w < 0 || (size_t)w >= len - n ? RMAD_ERR_ARG : 0;
			n += ret ? 0 : (size_t)w;
		}
	}
	if (ret)
		out[0] = '\0';
	hwloc_topology_destroy(topo);
	return ret;
}

int pin_agent(struct agent *a)
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
	ncores = topo_load(&topo);
	if (ncores < 0)
		return 0;
	if (!strcmp(want, "auto")) {
		idx = auto_core(a->vnode, ncores);
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
	a->ncores = ncores;
	CPU_ZERO(&a->core_set);
	if (hwloc_cpuset_to_glibc_sched_affinity(topo, core->cpuset,
						 &a->core_set,
						 sizeof(a->core_set)) < 0)
		a->core = -1;	/* unknown CPUs: count the core as shared */
	rmad_info("pinned to core %d of %d", idx, ncores);
out:
	hwloc_topology_destroy(topo);
	return 0;
}

/*
 * May process pid run on the agent's core?  Its CPU affinity against
 * the core's CPUs; an unpinned agent may run anywhere, so yes.  A pid
 * whose affinity cannot be read counts as sharing.
 */
int pin_core_shared(const struct agent *a, pid_t pid)
{
	cpu_set_t s, both;

	if (a->core < 0)
		return 1;
	CPU_ZERO(&s);
	if (sched_getaffinity(pid, sizeof(s), &s) < 0)
		return 1;
	CPU_AND(&both, &s, &a->core_set);
	return CPU_COUNT(&both) > 0;
}

/*
 * The node of another agent of the mesh that may run on our core, or -1,
 * taking every agent of the mesh to be on this host (the caller asks
 * only for a mesh that cannot leave it: shm).  They are placed as
 * pin_agent() placed us: by vnode under core = auto, all on one core
 * under a fixed core, anywhere when not pinned.
 */
int pin_core_peer(const struct agent *a)
{
	for (int v = 0; v < a->nnodes; v++) {
		if (v == a->node)
			continue;
		if (a->core < 0 || strcmp(a->p.core, "auto") ||
		    a->vnode < 0 || auto_core(v, a->ncores) == a->core)
			return v;
	}
	return -1;
}
