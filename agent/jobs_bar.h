/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs_bar.h - the job-wide barrier (jobs_bar.c), below the jobs table
 * (jobs.h).
 */
#ifndef RMAD_AGENT_JOBS_BAR_H
#define RMAD_AGENT_JOBS_BAR_H

#include <stdint.h>

#include "agent.h"

/* agent_job.node_bits: the node holds ranks of the job; it arrived at
 * the barrier of an epoch (<< the epoch's parity: 2 and 4) */
#define JN_IN		1u
#define JN_ARRIVED	2u

/* A client's barrier op: completes when every rank of its job arrived. */
void jobs_bar_op(struct agent *a, uint32_t client, uint32_t op);
/* Our arrival goes to the barrier's root once every local rank arrived
 * and the map is ready; a failed job's barriers fail. */
void jobs_bar_retry(struct agent *a, struct agent_job *j);

/* For jobs.c: the tables of waiting barrier ops (made before the first
 * job: 0 or RMAD_ERR_NOMEM); a job's ops given back as it goes; its
 * barriers failed with status; the node that is j's barrier root; at the
 * root, one node's arrival for epoch ep (checked); the release of epoch
 * ep from the root (checked). */
int jobs_bar_tables(struct agent *a);
void jobs_bar_free(struct agent *a, struct agent_job *j);
void jobs_bar_fail(struct agent *a, struct agent_job *j, int status);
int jobs_bar_root(const struct agent_job *j);
void jobs_bar_arrive(struct agent *a, struct agent_job *j, uint64_t ep);
void jobs_bar_release(struct agent *a, struct agent_job *j, uint64_t ep);

#endif
