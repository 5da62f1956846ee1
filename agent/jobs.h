/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs.h - jobs (PMIx namespaces) this agent serves, their rank->node
 * map and deaths (jobs.c), and what drives them (jobs_events.c); the
 * barrier is in jobs_bar.h, rmad_ping in jobs_ping.h.
 */
#ifndef RMAD_AGENT_JOBS_H
#define RMAD_AGENT_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

struct agent_job *agent_job_get(struct agent *a, const char *nspace,
				int32_t size, int32_t local_size, int *err);
void agent_job_put(struct agent *a, struct agent_job *j);
/* The job of key (a hash of its namespace), or NULL. */
struct agent_job *agent_job_find(struct agent *a, uint64_t key);
/* A client of rank died here: the job fails, and every node hears
 * which rank (JOB_FAIL). */
void agent_job_client_died(struct agent *a, struct agent_job *j,
			   int32_t rank);
/* Is rank of j dead: its process (agent_job_client_died, a JOB_FAIL
 * naming it, an answer of its node's saying so), or its node? */
int agent_job_rank_dead(struct agent *a, struct agent_job *j, int32_t rank);
/* The same for its process only (no node is asked): a rank here. */
int agent_job_proc_dead(const struct agent_job *j, int32_t rank);
/* rank's node said it is dead (an answer with RMAD_ERR_PROC_FAILED):
 * the same as its JOB_FAIL.  The caller checked that node sent it. */
void agent_job_rank_failed(struct agent *a, struct agent_job *j,
			   int32_t rank);
void agent_job_client_joined(struct agent *a, struct agent_job *j);
/* The node that serves rank of job j, or -1. */
int agent_job_rank_node(struct agent_job *j, int32_t rank);
/* How many ranks of job j node serves (by the map: 0 before it). */
int32_t agent_job_node_ranks(const struct agent_job *j, int node);
/* Does job j have ranks on node?  Once its map is ready, exactly; before
 * it, the collector, and on the collector the nodes that joined. */
int agent_job_on_node(const struct agent *a, const struct agent_job *j,
		      int node);

/*
 * For jobs_events.c, which the packets, deaths and timeouts drive: a
 * job's entry goes; the job fails everywhere (every node told; rank >=
 * 0: which of ours died); the collector stops watching the nodes that
 * joined; at the root, a node's JOB_JOIN (checked runs); a JOB_MAP
 * (checked runs).
 */
void jobs_free(struct agent *a, struct agent_job *j);
void jobs_fail_all(struct agent *a, struct agent_job *j, int32_t rank);
void jobs_unwatch_joins(struct agent *a, struct agent_job *j);
void jobs_root_join(struct agent *a, const struct rmad_am_hdr *h,
		    const struct rmad_am_job *jp,
		    const struct rmad_am_rank_run *runs, int32_t n);
void jobs_got_map(struct agent *a, const struct rmad_am_hdr *h,
		  const struct rmad_am_job *jp,
		  const struct rmad_am_rank_run *runs, int32_t n);

#endif
