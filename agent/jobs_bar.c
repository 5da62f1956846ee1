/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs_bar.c - the job-wide barrier, below the jobs table (jobs.c):
 * node-local first (the agent counts its clients' arrivals in the
 * shared segment's rings), then between agents: each agent sends
 * BARRIER_ARRIVE to the job's lowest node, which sends BARRIER_RELEASE
 * to all once every agent of the job arrived.  The packets' checks are
 * jobs.c's (on_barrier_arrive, on_barrier_release): they find the job.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs_bar.h"
#include "log.h"
#include "rmad_abi.h"

struct pending_bar {
	uint32_t client, gen, op;
};

int jobs_bar_tables(struct agent *a)
{
	if (a->jb.bar_wait)
		return 0;
	a->jb.bar_wait = calloc((size_t)a->p.max_jobs,
				sizeof(*a->jb.bar_wait));
	a->jb.bar_nwait = calloc((size_t)a->p.max_jobs,
				 sizeof(*a->jb.bar_nwait));
	if (!a->jb.bar_wait || !a->jb.bar_nwait) {
		free(a->jb.bar_wait);
		free(a->jb.bar_nwait);
		a->jb.bar_wait = NULL;
		a->jb.bar_nwait = NULL;
		return RMAD_ERR_NOMEM;
	}
	return 0;
}

void jobs_bar_free(struct agent *a, struct agent_job *j)
{
	int k = (int)(j - a->jobs);

	for (int x = 0; x < a->jb.bar_nwait[k]; x++)
		completion_op_abandon(a, a->jb.bar_wait[k][x].op);
	free(a->jb.bar_wait[k]);
	a->jb.bar_wait[k] = NULL;
	a->jb.bar_nwait[k] = 0;
}

int jobs_bar_root(const struct agent_job *j)
{
	return j->map_ready ? j->bar_root : 0;
}

static void complete_pending(struct agent *a, struct agent_job *j,
			     int status)
{
	int k = (int)(j - a->jobs);
	int n = a->jb.bar_nwait[k];

	a->jb.bar_nwait[k] = 0;
	for (int x = 0; x < n; x++) {
		struct pending_bar *pb = &a->jb.bar_wait[k][x];

		if (a->cl[pb->client].registered &&
		    a->cl[pb->client].gen == pb->gen)
			completion_op_done(a, pb->client, pb->op, status);
		else
			completion_op_abandon(a, pb->op);
	}
	completion_flush_wakeups(a);
}

void jobs_bar_fail(struct agent *a, struct agent_job *j, int status)
{
	j->bar_local = 0;
	complete_pending(a, j, status);
}

void jobs_bar_arrive(struct agent *a, struct agent_job *j, uint64_t ep)
{
	int par = (int)(ep & 1);

	if (++j->bar_arrived[par] < j->job_nodes)
		return;
	j->bar_arrived[par] = 0;
	for (int node = 0; node < a->nnodes; node++) {
		struct rmad_am_hdr h = {
			.type = RMAD_AM_BARRIER_RELEASE,
			.job = j->key,
		};
		struct rmad_am_barrier b = { .epoch = ep };

		j->node_bits[node] &= (uint8_t)~(JN_ARRIVED << par);
		if (j->node_bits[node] & JN_IN)
			am_send(a, node, &h, &b, sizeof(b));
	}
}

void jobs_bar_release(struct agent *a, struct agent_job *j, uint64_t ep)
{
	if (ep != j->bar_epoch) {
		rmad_warn("job %s: release of epoch %llu, at %llu", j->nspace,
			  (unsigned long long)ep,
			  (unsigned long long)j->bar_epoch);
		return;
	}
	j->bar_epoch++;
	j->bar_local = 0;
	complete_pending(a, j, 0);
}

void jobs_bar_retry(struct agent *a, struct agent_job *j)
{
	struct rmad_am_hdr h = {
		.type = RMAD_AM_BARRIER_ARRIVE,
		.job = j->key,
	};
	struct rmad_am_barrier b = { 0 };

	if (j->failed) {
		jobs_bar_fail(a, j, RMAD_ERR_PROC_FAILED);
		return;
	}
	if (!j->map_ready || j->bar_local < j->local_size)
		return;
	b.epoch = j->bar_epoch;
	j->bar_local = -1;	/* sent: wait for the release */
	am_send(a, jobs_bar_root(j), &h, &b, sizeof(b));
}

void jobs_bar_op(struct agent *a, uint32_t c, uint32_t op)
{
	struct agent_job *j = a->cl[c].job;
	int k = (int)(j - a->jobs);

	if (j->failed) {
		completion_op_done(a, c, op, RMAD_ERR_PROC_FAILED);
		return;
	}
	if (a->jb.bar_nwait[k] >= j->local_size || j->bar_local < 0) {
		/* a second barrier from one rank before the release */
		completion_op_done(a, c, op, RMAD_ERR_SYNC);
		return;
	}
	if (!a->jb.bar_wait[k]) {
		a->jb.bar_wait[k] = calloc((size_t)j->local_size,
					   sizeof(**a->jb.bar_wait));
		if (!a->jb.bar_wait[k]) {
			completion_op_done(a, c, op, RMAD_ERR_NOMEM);
			return;
		}
	}
	a->jb.bar_wait[k][a->jb.bar_nwait[k]++] = (struct pending_bar){
		.client = c, .gen = a->cl[c].gen, .op = op,
	};
	j->bar_local++;
	jobs_bar_retry(a, j);
}

