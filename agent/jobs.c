/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs.c - the jobs an agent serves: their table, their rank->node map
 * and the deaths of their ranks.  The barrier (jobs_bar.c) is below it;
 * the job packets from other agents, nodes' deaths and the tick
 * (jobs_events.c) and the ping (jobs_ping.c) above it.
 *
 * Map: when all of a job's local ranks have attached, the agent sends
 * their runs to agent 0 (JOB_JOIN).  Agent 0 waits until the runs cover
 * every rank exactly once, then sends the merged map to every agent that
 * holds a rank (JOB_MAP).  The map is kept as runs of consecutive ranks,
 * so it is O(nodes) for block placements, and it is kept once per node.
 *
 * Barrier (jobs_bar.c): node-local first, then between agents, through
 * the job's lowest node; its packets are checked in jobs_events.c.
 *
 * Every message from the fabric is checked (jobs_events.c: version,
 * type, lengths, node and rank ranges) before it comes here.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "liveness.h"
#include "completion.h"
#include "jobs.h"
#include "jobs_bar.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"


/* The most runs (ranks in a row on one node) a job's map may have: it
 * bounds what a JOB_MAP makes us allocate (48 MiB). */
#define JOB_RUNS_MAX	(1 << 22)

static uint64_t nspace_key(const char *ns)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (; *ns; ns++)
		h = (h ^ (unsigned char)*ns) * 1099511628211ull;
	return h;
}

static struct agent_job *job_find(struct agent *a, uint64_t key)
{
	for (int k = 0; k < a->p.max_jobs; k++)
		if (a->jobs[k].in_use && a->jobs[k].key == key)
			return &a->jobs[k];
	return NULL;
}


/* An entry a node's JOIN made at this root, still waiting for its map
 * and holding no rank here: all that one node can make us keep. */
static int remote_pending(const struct agent_job *j)
{
	return j->in_use && j->made_by > 0 && j->local_size == 0 &&
	       j->nlocal == 0 && !j->failed && j->jranks >= 0;
}

/*
 * No slot is free: make room for a job of node for_node (-1: of a rank
 * here) by failing the oldest entry of the node whose JOINs made the
 * most waiting entries (remote_pending), if that node then still holds
 * more than for_node would.  So a node sending JOINs of made-up jobs
 * takes at most a fair share of max_jobs from the others, and is
 * refused the rest itself.  The failure is sent to every node, as any
 * (jobs_fail_all): the nodes of a real job so evicted fail its ranks.
 */
static struct agent_job *job_evict(struct agent *a, int for_node)
{
	int32_t *count = calloc((size_t)a->nnodes, sizeof(*count));
	struct agent_job *old = NULL;
	int most = -1;

	if (!count)
		return NULL;
	for (int k = 0; k < a->p.max_jobs; k++)
		if (remote_pending(&a->jobs[k]) &&
		    a->jobs[k].made_by <= a->nnodes)
			count[a->jobs[k].made_by - 1]++;
	for (int node = 0; node < a->nnodes; node++)
		if (most < 0 || count[node] > count[most])
			most = node;
	if (most >= 0 && count[most] >
	    (for_node >= 0 && for_node < a->nnodes ? count[for_node] : 0) + 1)
		for (int k = 0; k < a->p.max_jobs; k++) {
			struct agent_job *j = &a->jobs[k];

			if (remote_pending(j) && j->made_by == most + 1 &&
			    (!old || j->born_ns < old->born_ns))
				old = j;
		}
	if (old) {
		a->st.jobs_evicted++;
		char whose[32];

		if (for_node >= 0)
			snprintf(whose, sizeof(whose), "node %d", for_node);
		else
			snprintf(whose, sizeof(whose), "a rank here");
		rmad_warn("job %s: fails, to make room (max_jobs) for a job "
			  "of %s: node %d's JOINs made %d of the jobs that "
			  "wait here for their map", old->nspace, whose, most,
			  count[most]);
		jobs_fail_all(a, old, -1);
		jobs_free(a, old);
	}
	free(count);
	return old;
}

/* A free slot, else that of the oldest job kept only because it failed
 * before its map (agent_job_put), else one job_evict makes for a job of
 * node for_node (-1: of a rank here), else NULL. */
static struct agent_job *job_slot(struct agent *a, int for_node)
{
	struct agent_job *old = NULL;

	for (int k = 0; k < a->p.max_jobs; k++) {
		struct agent_job *j = &a->jobs[k];

		if (!j->in_use)
			return j;
		if (j->failed && !j->map_ready && j->nlocal == 0 &&
		    (!old || j->born_ns < old->born_ns))
			old = j;
	}
	if (!old)
		return job_evict(a, for_node);
	jobs_free(a, old);
	return old;
}

static struct agent_job *job_new(struct agent *a, const char *ns,
				 int32_t size, int32_t local_size,
				 int for_node)
{
	struct agent_job *j;

	if (jobs_bar_tables(a))
		return NULL;
	j = job_slot(a, for_node);
	if (j) {
		int k = (int)(j - a->jobs);

		memset(j, 0, sizeof(*j));
		j->in_use = 1;
		j->key = nspace_key(ns);
		snprintf(j->nspace, sizeof(j->nspace), "%s", ns);
		j->size = size;
		j->local_size = local_size;
		j->born_ns = rmad_now_ns();
		j->root = liveness_root(a);
		/* the map comes from there: watched closely meanwhile */
		j->watched_root = j->root;
		liveness_watch(a, j->root, 1);
		a->jb.bar_nwait[k] = 0;
		j->prev_root = -1;
	}
	return j;
}

/* Each node of j's map once, to liveness_watch (on: the map came; 0: the
 * job goes): its heartbeats go every heartbeat_ms meanwhile. */
static void watch_map(struct agent *a, struct agent_job *j, int on)
{
	for (int node = 0; node < a->nnodes; node++)
		for (int32_t k = 0; k < j->map_runs; k++)
			if (j->map[k].node == node) {
				liveness_watch(a, node, on);
				break;
			}
	j->watched_map = on;
}

/* The collector watches each node that joined j until the map is out
 * (or j goes): one watch per run it holds. */
void jobs_unwatch_joins(struct agent *a, struct agent_job *j)
{
	for (int32_t k = 0; k < j->jnruns; k++)
		liveness_watch(a, j->jruns[k].node, 0);
	free(j->jruns);
	j->jruns = NULL;
	j->jnruns = j->jcap = 0;
}

/* The collector of j tells node that it holds ranks of j too. */
static void send_held(struct agent *a, struct agent_job *j, int node)
{
	struct rmad_am_hdr h = { .type = RMAD_AM_JOB_HELD, .job = j->key };
	struct rmad_am_job_held jh = { .nranks = j->local_size };

	if (node != a->node)
		am_send(a, node, &h, &jh, sizeof(jh));
}

void jobs_free(struct agent *a, struct agent_job *j)
{
	if (j->watched_map)
		watch_map(a, j, 0);
	if (j->watched_root >= 0)
		liveness_watch(a, j->watched_root, 0);

	if (a->job_hooks.freed)
		a->job_hooks.freed(a, j);
	jobs_bar_free(a, j);
	free(j->map);
	free(j->node_bits);
	free(j->dead);
	jobs_unwatch_joins(a, j);
	memset(j, 0, sizeof(*j));
}

struct agent_job *agent_job_get(struct agent *a, const char *nspace,
				int32_t size, int32_t local_size, int *err)
{
	struct agent_job *j;

	*err = jobs_bar_tables(a);
	if (*err)
		return NULL;
	j = job_find(a, nspace_key(nspace));
	if (j && strcmp(j->nspace, nspace))
		j = NULL;	/* hash collision: treat as a new job */
	if (j) {
		/* a root-only entry learns its local size from its first
		 * rank, and tells the nodes that joined */
		if (j->local_size == 0 && j->nlocal == 0) {
			j->local_size = local_size;
			for (int32_t k = 0; k < j->jnruns; k++)
				if (!k || j->jruns[k].node !=
					  j->jruns[k - 1].node)
					send_held(a, j, j->jruns[k].node);
		}
		if (j->size != size || j->local_size != local_size ||
		    j->nlocal_ever >= local_size) {
			*err = RMAD_ERR_ARG;
			return NULL;
		}
	} else {
		j = job_new(a, nspace, size, local_size, -1);
		if (!j) {
			*err = RMAD_ERR_NOMEM;
			return NULL;
		}
	}
	j->nlocal++;
	j->nlocal_ever++;
	return j;
}

void agent_job_put(struct agent *a, struct agent_job *j)
{
	if (--j->nlocal > 0)
		return;
	/* the root keeps a job it still coordinates */
	if (j->root == a->node && j->jranks > 0 && j->jranks < j->size &&
	    !j->failed)
		return;
	/* one that failed before its map stays until attach_timeout_ms
	 * (attach_timeouts), to fail the JOINs and ranks that come late */
	if (j->failed && !j->map_ready && a->p.attach_timeout_ms > 0 &&
	    rmad_now_ns() - j->born_ns <
		    (uint64_t)a->p.attach_timeout_ms * 1000000ull)
		return;
	jobs_free(a, j);
}

int agent_job_rank_node(struct agent_job *j, int32_t rank)
{
	int lo = 0, hi = j->map_runs - 1;

	if (!j->map_ready || rank < 0 || rank >= j->size)
		return -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		struct rmad_am_rank_run *r = &j->map[mid];

		if (rank < r->first)
			hi = mid - 1;
		else if (rank >= r->first + r->count)
			lo = mid + 1;
		else
			return r->node;
	}
	return -1;
}

int32_t agent_job_node_ranks(const struct agent_job *j, int node)
{
	int32_t n = 0;

	if (!j->map_ready)
		return 0;
	for (int32_t k = 0; k < j->map_runs; k++)
		if (j->map[k].node == node)
			n += j->map[k].count;
	return n;
}

/* ---------------------------------------------------------- sending */

static size_t runs_per_msg(struct agent *a)
{
	size_t room = a->p.am_buf_size - sizeof(struct rmad_am_hdr) -
		      sizeof(struct rmad_am_job);

	if (room > RMAD_AM_MAX_PAYLOAD - sizeof(struct rmad_am_job))
		room = RMAD_AM_MAX_PAYLOAD - sizeof(struct rmad_am_job);
	return room / sizeof(struct rmad_am_rank_run);
}

/* Send runs [0, n) of a job as JOIN or MAP messages, in chunks. */
static void send_runs(struct agent *a, int node, int type,
		      struct agent_job *j, const struct rmad_am_rank_run *runs,
		      int32_t n)
{
	size_t per = runs_per_msg(a);
	int32_t off = 0;

	do {
		int32_t cnt = n - off;
		char buf[RMAD_AM_MAX_PAYLOAD];
		struct rmad_am_job *jp = (struct rmad_am_job *)buf;
		struct rmad_am_hdr h = { .type = (uint8_t)type, .job = j->key };

		if ((size_t)cnt > per)
			cnt = (int32_t)per;
		memset(jp, 0, sizeof(*jp));
		jp->size = j->size;
		jp->total_runs = n;
		jp->first_run = off;
		jp->nruns = cnt;
		snprintf(jp->nspace, sizeof(jp->nspace), "%s", j->nspace);
		memcpy(buf + sizeof(*jp), runs + off,
		       (size_t)cnt * sizeof(*runs));
		am_send(a, node, &h, buf,
			      sizeof(*jp) + (size_t)cnt * sizeof(*runs));
		off += cnt;
	} while (off < n);
}

/* --------------------------------------------------------- the map */

static int cmp_runs(const void *x, const void *y)
{
	const struct rmad_am_rank_run *p = x, *q = y;

	return (p->first > q->first) - (p->first < q->first);
}

void agent_job_client_joined(struct agent *a, struct agent_job *j)
{
	struct rmad_am_rank_run *runs;
	int32_t n = 0, *ranks, k = 0;

	if (j->joined || j->nlocal_ever < j->local_size)
		return;
	/* a static mesh: not to a root that may have died unseen (an
	 * idle node's timeout is long): it echoes our probe first, or is
	 * declared dead and replaced (join_retry) */
	j->join_wait = a->mesh && !liveness_node_fresh(a, j->root);
	if (j->join_wait)
		return;
	ranks = malloc(sizeof(*ranks) * (size_t)j->local_size);
	runs = malloc(sizeof(*runs) * (size_t)j->local_size);
	if (!ranks || !runs) {
		free(ranks);
		free(runs);
		rmad_err("out of memory joining job %s", j->nspace);
		return;
	}
	for (int c = 0; c < a->p.max_clients; c++)
		if (a->cl[c].registered && a->cl[c].job == j &&
		    k < j->local_size)
			ranks[k++] = a->cl[c].rank;
	/* insertion sort: local_size is small and this runs once per job */
	for (int x = 1; x < k; x++)
		for (int y = x; y > 0 && ranks[y - 1] > ranks[y]; y--) {
			int32_t t = ranks[y];

			ranks[y] = ranks[y - 1];
			ranks[y - 1] = t;
		}
	for (int x = 0; x < k; x++) {
		if (n && runs[n - 1].first + runs[n - 1].count == ranks[x]) {
			runs[n - 1].count++;
			continue;
		}
		runs[n].first = ranks[x];
		runs[n].count = 1;
		runs[n].node = a->node;
		runs[n].pad = 0;
		n++;
	}
	j->joined = 1;
	rmad_dbg("job %s: %d local ranks in %d runs, joining", j->nspace, k,
		 n);
	send_runs(a, j->root, RMAD_AM_JOB_JOIN, j, runs, n);
	free(ranks);
	free(runs);
}

/* Job j fails: tell every agent, so that no barrier, window creation or
 * free waits on it anywhere; with rank (>= 0, one of ours) which of its
 * processes died, once for each that does, so that every operation on
 * it ends there (agent_job_rank_dead). */
void jobs_fail_all(struct agent *a, struct agent_job *j, int32_t rank)
{
	struct rmad_am_hdr h = { .type = RMAD_AM_JOB_FAIL, .job = j->key };
	struct rmad_am_job_fail f = { .rank = rank >= 0 ? rank : -1 };

	if (j->failed && rank < 0)
		return;
	for (int node = 0; node < a->nnodes; node++)
		if (node != a->node)
			am_send(a, node, &h, &f, sizeof(f));
	if (j->failed)
		return;
	j->failed = 1;
	jobs_unwatch_joins(a, j);
	jobs_bar_fail(a, j, RMAD_ERR_PROC_FAILED);
	if (a->job_hooks.failed)
		a->job_hooks.failed(a, j);
}

/* Every rank of j joined: merge the runs, check that they cover each
 * rank once, and send the map to every node that holds ranks. */
static void root_send_map(struct agent *a, struct agent_job *j)
{
	int32_t m = 0, nodes = 0;
	struct rmad_am_rank_run *merged;

	qsort(j->jruns, (size_t)j->jnruns, sizeof(*j->jruns), cmp_runs);
	merged = malloc(sizeof(*merged) * (size_t)j->jnruns);
	if (!merged)
		return;
	for (int32_t k = 0; k < j->jnruns; k++) {
		struct rmad_am_rank_run *r = &j->jruns[k];
		int32_t expect = m ? merged[m - 1].first + merged[m - 1].count
				   : 0;

		if (r->first != expect) {
			rmad_err("job %s: rank map has a gap or overlap at %d",
				 j->nspace, r->first);
			free(merged);
			jobs_fail_all(a, j, -1);
			return;
		}
		if (m && merged[m - 1].node == r->node)
			merged[m - 1].count += r->count;
		else
			merged[m++] = *r;
	}
	if (j->jranks != j->size) {
		rmad_err("job %s: %d ranks joined, job has %d", j->nspace,
			 j->jranks, j->size);
		free(merged);
		jobs_fail_all(a, j, -1);
		return;
	}
	/* send the map to every node that holds ranks, once each */
	for (int node = 0; node < a->nnodes; node++) {
		int holds = 0;

		for (int32_t k = 0; k < m && !holds; k++)
			holds = merged[k].node == node;
		if (holds) {
			send_runs(a, node, RMAD_AM_JOB_MAP, j, merged, m);
			nodes++;
		}
	}
	rmad_info("job %s: %d ranks on %d nodes, map sent", j->nspace,
		  j->size, nodes);
	free(merged);
	jobs_unwatch_joins(a, j);
	j->jranks = -1;		/* done: a late JOIN is an error */
	if (j->local_size == 0 && j->nlocal == 0)
		jobs_free(a, j);
}

/* Agent 0: collect JOINs until every rank is covered once. */
void jobs_root_join(struct agent *a, const struct rmad_am_hdr *h,
		    const struct rmad_am_job *jp,
		    const struct rmad_am_rank_run *runs, int32_t n)
{
	struct agent_job *j = job_find(a, h->job);

	if (!j) {
		j = job_new(a, jp->nspace, jp->size, 0, (int)h->src_node);
		if (!j) {
			rmad_err("job %s: no job slot (max_jobs) for node %u's "
				 "JOIN", jp->nspace, h->src_node);
			return;
		}
		j->key = h->job;
		j->made_by = (int32_t)h->src_node + 1;
		j->root = a->node;
		liveness_watch(a, j->watched_root, 0);	/* no map to wait for */
		j->watched_root = -1;
	}
	if (j->size != jp->size) {
		rmad_warn("job %s: node %u says size %d, expected %d",
			  j->nspace, h->src_node, jp->size, j->size);
		return;
	}
	for (int32_t k = 0; k < n; k++)
		if (runs[k].node != (int32_t)h->src_node) {
			a->st.pkts_dropped++;
			rmad_warn("job %s: node %u joins ranks of node %d: "
				  "dropped", j->nspace, h->src_node,
				  runs[k].node);
			return;
		}
	if (j->failed) {
		/* a node whose ranks came after the job failed */
		struct rmad_am_hdr f = { .type = RMAD_AM_JOB_FAIL,
					 .job = j->key };
		struct rmad_am_job_fail jf = { .rank = -1 };

		am_send(a, (int)h->src_node, &f, &jf, sizeof(jf));
		return;
	}
	if (j->jranks < 0) {
		rmad_warn("job %s: late JOIN from node %u dropped", j->nspace,
			  h->src_node);
		return;
	}
	for (int32_t k = 0, sum = j->jranks; k < n; k++) {
		/* check_runs bounds each run by the size; not their sum */
		if (runs[k].count > j->size - sum) {
			rmad_err("job %s: node %u joins more ranks than the "
				 "job has", j->nspace, h->src_node);
			jobs_fail_all(a, j, -1);
			return;
		}
		sum += runs[k].count;
	}
	if (j->jnruns + n > j->jcap) {
		int32_t cap = (j->jcap ? j->jcap * 2 : 16) + n;
		void *p = realloc(j->jruns, sizeof(*j->jruns) * (size_t)cap);

		if (!p) {
			rmad_err("out of memory collecting job %s", j->nspace);
			return;
		}
		j->jruns = p;
		j->jcap = cap;
	}
	for (int32_t k = 0; k < n; k++) {
		j->jruns[j->jnruns++] = runs[k];
		liveness_watch(a, runs[k].node, 1);
		j->jranks += runs[k].count;
	}
	rmad_dbg("job %s: node %u joins, %d of %d ranks", j->nspace,
		 h->src_node, j->jranks, j->size);
	if (j->local_size > 0)
		send_held(a, j, (int)h->src_node);
	if (j->jranks < j->size)
		return;
	root_send_map(a, j);
}

void jobs_got_map(struct agent *a, const struct rmad_am_hdr *h,
		  const struct rmad_am_job *jp,
		  const struct rmad_am_rank_run *runs, int32_t n)
{
	struct agent_job *j = job_find(a, h->job);

	if (!j || j->map_ready) {
		rmad_warn("map for unknown or mapped job from node %u",
			  h->src_node);
		return;
	}
	if ((int)h->src_node != j->root &&
	    (int)h->src_node != j->prev_root) {
		a->st.pkts_dropped++;
		rmad_warn("job %s: a map from node %u, which does not "
			  "collect it (node %d does): dropped", j->nspace,
			  h->src_node, j->root);
		return;
	}
	if (jp->total_runs > JOB_RUNS_MAX) {
		rmad_err("job %s: a rank map of %d runs (more than %d): "
			 "refused", j->nspace, jp->total_runs, JOB_RUNS_MAX);
		return;
	}
	if (jp->total_runs < 1 || jp->total_runs > j->size ||
	    jp->first_run < 0 || jp->first_run > jp->total_runs - n ||
	    (j->map && j->map_runs != jp->total_runs)) {
		rmad_warn("job %s: inconsistent map chunk", j->nspace);
		return;
	}
	if (!j->map) {
		j->map = calloc((size_t)jp->total_runs, sizeof(*j->map));
		if (!j->map)
			return;
		j->map_runs = jp->total_runs;
	}
	memcpy(j->map + jp->first_run, runs, sizeof(*runs) * (size_t)n);
	j->map_filled += n;
	if (j->map_filled < j->map_runs)
		return;
	/* a chunk sent twice leaves holes: the runs must tile the job */
	for (int32_t k = 0, next = 0; k <= j->map_runs; k++) {
		if (k == j->map_runs ? next != j->size :
		    j->map[k].first != next || j->map[k].count < 1) {
			rmad_err("job %s: the rank map does not cover the job",
				 j->nspace);
			j->failed = 1;
			jobs_bar_fail(a, j, RMAD_ERR_PROC_FAILED);
			return;
		}
		if (k < j->map_runs)
			next += j->map[k].count;
	}
	j->node_bits = calloc((size_t)a->nnodes, 1);
	if (!j->node_bits) {
		rmad_err("out of memory for job %s's map", j->nspace);
		j->failed = 1;
		jobs_bar_fail(a, j, RMAD_ERR_PROC_FAILED);
		return;
	}
	j->job_nodes = 0;
	j->bar_root = j->map[0].node;
	for (int32_t k = 0; k < j->map_runs; k++) {
		int node = j->map[k].node;	/* check_runs: < nnodes */

		j->job_nodes += !(j->node_bits[node] & JN_IN);
		j->node_bits[node] |= JN_IN;
		if (node < j->bar_root)
			j->bar_root = node;
	}
	j->map_ready = 1;
	watch_map(a, j, 1);
	rmad_dbg("job %s: map ready, %d runs on %d nodes", j->nspace,
		 j->map_runs, j->job_nodes);
	jobs_bar_retry(a, j);
}

/* The index of rank in j's dead list, or where it would go (*found). */
static int32_t dead_at(const struct agent_job *j, int32_t rank, int *found)
{
	int32_t lo = 0, hi = j->ndead;

	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (j->dead[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < j->ndead && j->dead[lo] == rank;
	return lo;
}

int agent_job_proc_dead(const struct agent_job *j, int32_t rank)
{
	int found = 0;

	if (j->ndead)
		dead_at(j, rank, &found);
	return found;
}

int agent_job_rank_dead(struct agent *a, struct agent_job *j, int32_t rank)
{
	int node;

	if (agent_job_proc_dead(j, rank))
		return 1;
	node = agent_job_rank_node(j, rank);
	return node >= 0 && am_node_dead(a, node);
}

/* rank of j is dead: remembered, and the layers above told, once */
static void rank_dead(struct agent *a, struct agent_job *j, int32_t rank)
{
	int found;
	int32_t k;

	if (rank < 0 || rank >= j->size)
		return;
	k = dead_at(j, rank, &found);
	if (found)
		return;
	if (j->ndead == j->capdead) {
		int32_t cap = j->capdead ? 2 * j->capdead : 4;
		int32_t *p = realloc(j->dead, sizeof(*p) * (size_t)cap);

		if (!p) {
			/* the job's failure still fails its barriers and
			 * windows; operations on the rank are refused by
			 * its node */
			rmad_err("job %s: out of memory recording rank %d's "
				 "death", j->nspace, rank);
			return;
		}
		j->dead = p;
		j->capdead = cap;
	}
	memmove(j->dead + k + 1, j->dead + k,
		sizeof(*j->dead) * (size_t)(j->ndead - k));
	j->dead[k] = rank;
	j->ndead++;
	if (a->job_hooks.rank_dead)
		a->job_hooks.rank_dead(a, j, rank);
}

void agent_job_rank_failed(struct agent *a, struct agent_job *j,
			   int32_t rank)
{
	rank_dead(a, j, rank);
}

void agent_job_client_died(struct agent *a, struct agent_job *j,
			   int32_t rank)
{
	if (!j->failed)
		rmad_warn("job %s: rank %d died; its barriers fail, and every "
			  "operation on it", j->nspace, rank);
	rank_dead(a, j, rank);
	jobs_fail_all(a, j, rank);
}

/* Does job j have ranks on node?  Before the map: the node collecting
 * it may, and the collector knows the nodes that joined (a node that
 * has not joined yet is not known to have any). */
int agent_job_on_node(const struct agent *a, const struct agent_job *j,
		      int node)
{
	if (!j->map_ready) {
		if (node == j->root)
			return 1;
		if (a->node != j->root)
			return 0;
		for (int32_t k = 0; k < j->jnruns; k++)
			if ((int)j->jruns[k].node == node)
				return 1;
		return 0;
	}
	return node >= 0 && node < a->nnodes &&
	       (j->node_bits[node] & JN_IN);
}

struct agent_job *agent_job_find(struct agent *a, uint64_t key)
{
	return job_find(a, key);
}
