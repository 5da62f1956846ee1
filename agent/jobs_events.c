/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs_events.c - what happens to the jobs (jobs.c) from outside: the
 * job and barrier packets from other agents, checked here (version,
 * type, lengths, node and rank ranges) before they are used, bad ones
 * dropped and logged; a node declared dead; and the agent's tick
 * (attach timeouts, JOINs that wait for their root).
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "jobs_bar.h"
#include "jobs_events.h"
#include "liveness.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

/*
 * A job whose map is still not made attach_timeout_ms after this agent
 * heard of it waits for a rank that never attached, most likely one that
 * exited or died before rmad_init: nobody else can notice that one, so
 * the job fails everywhere instead of waiting forever.
 */
static int attach_timeouts(struct agent *a, uint64_t now)
{
	uint64_t limit = (uint64_t)a->p.attach_timeout_ms * 1000000ull;
	int done = 0;

	for (int k = 0; k < a->p.max_jobs; k++) {
		struct agent_job *j = &a->jobs[k];

		if (!j->in_use || j->map_ready)
			continue;
		if (j->failed) {
			/* a collector's entry for other nodes, kept to answer
			 * their late JOINs until the limit */
			if (j->nlocal == 0 && (!limit ||
					       now - j->born_ns >= limit))
				jobs_free(a, j);
			continue;
		}
		if (!limit || now - j->born_ns < limit)
			continue;
		if (j->nlocal_ever < j->local_size)
			rmad_err("job %s: %d of its %d ranks on this node "
				 "attached within attach_timeout_ms (%ld ms); "
				 "the others exited or died before rmad_init: "
				 "the job fails", j->nspace, j->nlocal_ever,
				 j->local_size, a->p.attach_timeout_ms);
		else
			rmad_err("job %s: %d of %d ranks joined within "
				 "attach_timeout_ms (%ld ms); a rank on another "
				 "node never attached: the job fails", j->nspace,
				 j->jranks > 0 ? j->jranks : j->nlocal_ever,
				 j->size, a->p.attach_timeout_ms);
		jobs_fail_all(a, j, -1);
		done = 1;
		if (j->nlocal == 0)
			jobs_free(a, j);	/* agent 0's entry for other nodes */
	}
	return done;
}

/* Root of j, which our JOIN has not reached: the lowest node up now
 * (every agent of the job picks the same one once it saw the old one
 * dead), watched in its place. */
static void job_new_root(struct agent *a, struct agent_job *j)
{
	int root = liveness_root(a);

	if (root == j->root)
		return;
	rmad_info("job %s: node %d, which would collect its map, is dead: "
		  "node %d does", j->nspace, j->root, root);
	if (j->watched_root >= 0)
		liveness_watch(a, j->watched_root, 0);
	j->prev_root = j->root;	/* its map, if it comes after all, counts */
	j->root = root;
	j->watched_root = root;
	liveness_watch(a, root, 1);
}

/* JOINs that wait for their root: sent once it echoed our probe, or to
 * the next root once it was declared dead. */
static void join_retry(struct agent *a)
{
	for (int k = 0; k < a->p.max_jobs; k++) {
		struct agent_job *j = &a->jobs[k];

		if (!j->in_use || !j->join_wait || j->failed)
			continue;
		if (am_node_dead(a, j->root))
			job_new_root(a, j);
		agent_job_client_joined(a, j);
	}
}

/* Called from the agent's tick: fail jobs whose ranks did not all
 * attach; send JOINs that waited (pings: jobs_ping_tick). */
void jobs_events_tick(struct agent *a)
{
	uint64_t now = rmad_now_ns();
	int done = attach_timeouts(a, now);

	join_retry(a);
	if (done)
		completion_flush_wakeups(a);
}

/* --------------------------------------------------------- dispatch */

static int check_runs(struct agent *a, const struct rmad_am_job *jp,
		      const struct rmad_am_rank_run *runs, int32_t n)
{
	if (jp->size < 1 || !memchr(jp->nspace, '\0', sizeof(jp->nspace)))
		return -1;
	for (int32_t k = 0; k < n; k++)
		if (runs[k].first < 0 || runs[k].count < 1 ||
		    runs[k].first > jp->size - runs[k].count ||
		    runs[k].node < 0 || runs[k].node >= a->nnodes)
			return -1;
	return 0;
}

/* JOB_JOIN (to the root) and JOB_MAP: runs of ranks and their nodes. */
static void on_job(struct agent *a, const struct rmad_am_hdr *h,
		   const void *payload)
{
	struct rmad_am_job jcopy;
	const struct rmad_am_rank_run *runs;
	int32_t n;

	if (am_payload(a, h, payload, &jcopy, sizeof(jcopy), 0))
		return;
	n = jcopy.nruns;
	if (n < 0 || n > 1 << 20 || h->payload_len != sizeof(jcopy) +
				    (uint64_t)n * sizeof(*runs)) {
		a->st.pkts_dropped++;
		rmad_warn("dropped job packet with bad length");
		return;
	}
	runs = (const void *)((const char *)payload + sizeof(jcopy));
	if (check_runs(a, &jcopy, runs, n)) {
		a->st.pkts_dropped++;
		rmad_warn("dropped job packet with bad ranks");
		return;
	}
	if (h->type == RMAD_AM_JOB_JOIN) {
		/* agent 0 collects maps; in a static mesh whichever node
		 * the sender saw as the lowest one up */
		if (a->node != 0 && !a->mesh) {
			a->st.pkts_dropped++;
			return;
		}
		jobs_root_join(a, h, &jcopy, runs, n);
	} else {
		jobs_got_map(a, h, &jcopy, runs, n);
	}
}

/* BARRIER_ARRIVE at the root: from a node of the job, for the epoch at
 * hand or the next (a fast node may arrive again before our own
 * release ran), and once per epoch; one that a node of the mesh sends
 * for another, or twice, would release the barrier early. */
static void on_barrier_arrive(struct agent *a, const struct rmad_am_hdr *h,
			      const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);
	int node = (int)h->src_node;
	struct rmad_am_barrier b;
	uint8_t bit;

	if (am_payload(a, h, payload, &b, sizeof(b), 1))
		return;
	bit = (uint8_t)(JN_ARRIVED << (b.epoch & 1));
	if (!j || !j->map_ready || jobs_bar_root(j) != a->node ||
	    !agent_job_on_node(a, j, node) || b.epoch - j->bar_epoch > 1 ||
	    (j->node_bits[node] & bit)) {
		a->st.pkts_dropped++;
		rmad_warn("job %s: dropped a barrier arrival from node %d "
			  "for epoch %llu", j ? j->nspace : "?", node,
			  (unsigned long long)b.epoch);
		return;
	}
	j->node_bits[node] |= bit;
	jobs_bar_arrive(a, j, b.epoch);
}

/* BARRIER_RELEASE: from the barrier's root, once our arrival went. */
static void on_barrier_release(struct agent *a, const struct rmad_am_hdr *h,
			       const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);
	struct rmad_am_barrier b;

	if (am_payload(a, h, payload, &b, sizeof(b), 1))
		return;
	if (!j || !j->map_ready || (int)h->src_node != jobs_bar_root(j) ||
	    j->bar_local != -1) {
		a->st.pkts_dropped++;
		rmad_warn("job %s: dropped a barrier release from node %u",
			  j ? j->nspace : "?", h->src_node);
		return;
	}
	jobs_bar_release(a, j, b.epoch);
}

static void on_job_held(struct agent *a, const struct rmad_am_hdr *h,
			const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);
	struct rmad_am_job_held jh;

	if (am_payload(a, h, payload, &jh, sizeof(jh), 1))
		return;
	if (!j || j->map_ready || (int)h->src_node != j->root) {
		a->st.pkts_dropped++;
		return;
	}
	if (!j->root_held)
		rmad_dbg("job %s: node %u, which collects its map, holds %d "
			 "of its ranks", j->nspace, h->src_node, jh.nranks);
	j->root_held = 1;
}

static void on_job_fail(struct agent *a, const struct rmad_am_hdr *h,
			const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);
	struct rmad_am_job_fail f;

	if (am_payload(a, h, payload, &f, sizeof(f), 1))
		return;
	/* once the map is out, only a node of the job fails it; before,
	 * any node may hold ranks of it that we do not know of */
	if (j && j->map_ready && !agent_job_on_node(a, j, (int)h->src_node)) {
		a->st.pkts_dropped++;
		rmad_warn("job %s: a failure from node %u, which holds no "
			  "rank of it: dropped", j->nspace, h->src_node);
		return;
	}
	if (j && j->map_ready && f.rank >= 0 && f.rank < j->size) {
		int32_t r = f.rank;

		/* a node speaks for its own ranks only */
		if (agent_job_rank_node(j, r) == (int)h->src_node)
			agent_job_rank_failed(a, j, r);
		else
			rmad_warn("job %s: node %u says rank %d died, which "
				  "is not its own: ignored", j->nspace,
				  h->src_node, r);
	}
	if (j && !j->failed) {
		rmad_warn("job %s: failed, says node %u (a rank or node of "
			  "it died, or its map cannot be made)", j->nspace,
			  h->src_node);
		j->failed = 1;
		jobs_unwatch_joins(a, j);
		jobs_bar_fail(a, j, RMAD_ERR_PROC_FAILED);
		if (a->job_hooks.failed)
			a->job_hooks.failed(a, j);
	}
}

/* Node is dead: the jobs with ranks there fail (their barriers, window
 * creations and frees; pings to it: jobs_ping.c). */
static void jobs_node_dead(struct agent *a, int node)
{
	for (int k = 0; k < a->p.max_jobs; k++) {
		struct agent_job *j = &a->jobs[k];

		if (!j->in_use || j->failed || !agent_job_on_node(a, j, node))
			continue;
		if (a->mesh && !j->map_ready && node == j->root &&
		    node != a->node && !j->root_held) {
			/* the map never came: the next root collects it,
			 * our JOIN (again) first (join_retry) */
			job_new_root(a, j);
			j->joined = 0;
			j->join_wait = 1;
			continue;
		}
		rmad_warn("job %s: node %d is dead; its ranks there failed",
			  j->nspace, node);
		if (!j->map_ready && a->node == j->root) {
			/* the nodes that joined wait for a map that will
			 * not come: they fail now, not at attach_timeout_ms */
			jobs_fail_all(a, j, -1);
			continue;
		}
		j->failed = 1;
		jobs_bar_fail(a, j, RMAD_ERR_PROC_FAILED);
		if (a->job_hooks.failed)
			a->job_hooks.failed(a, j);
	}
}

void jobs_events_init(struct agent *a)
{
	am_on_node_dead(a, jobs_node_dead);
	am_register(a, RMAD_AM_JOB_JOIN, on_job);
	am_register(a, RMAD_AM_JOB_MAP, on_job);
	am_register(a, RMAD_AM_BARRIER_ARRIVE, on_barrier_arrive);
	am_register(a, RMAD_AM_BARRIER_RELEASE, on_barrier_release);
	am_register(a, RMAD_AM_JOB_FAIL, on_job_fail);
	am_register(a, RMAD_AM_JOB_HELD, on_job_held);
}

