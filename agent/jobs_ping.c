/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobs_ping.c - rmad_ping, above the jobs table (jobs.c): a PING to the
 * node that serves the target rank (am.c answers it with a PONG), the
 * pings that wait for their PONG, and their end: answered, unanswered
 * for PING_TIMEOUT_NS, or their node declared dead.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "jobs_ping.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

/* A pong that has not come back by then is not coming (agent lost). */
#define PING_TIMEOUT_NS	(10ull * 1000000000ull)

void jobs_ping_op(struct agent *a, uint32_t c, uint32_t op,
		   const struct rmad_op_elem *e)
{
	struct agent_job *j = a->cl[c].job;
	int32_t target = e->target;
	struct agent_ping *p;
	struct rmad_am_hdr h = { .type = RMAD_AM_PING };
	struct rmad_am_ping pp = { 0 };
	int node;

	if (!j->map_ready) {
		completion_op_done(a, c, op, RMAD_ERR_SYNC);
		return;
	}
	node = agent_job_rank_node(j, target);
	if (node < 0) {
		completion_op_done(a, c, op, RMAD_ERR_RANK);
		return;
	}
	if (node == a->node) {
		completion_op_done(a, c, op, 0);
		return;
	}
	if (am_node_dead(a, node)) {
		completion_op_done(a, c, op, RMAD_ERR_PROC_FAILED);
		return;
	}
	p = malloc(sizeof(*p));
	if (!p) {
		completion_op_done(a, c, op, RMAD_ERR_NOMEM);
		return;
	}
	p->client = c;
	p->gen = a->cl[c].gen;
	p->op = op;
	p->cookie = ++a->next_cookie;
	p->t0 = rmad_now_ns();
	p->node = node;
	p->next = a->pings;
	a->pings = p;
	h.job = j->key;
	pp.cookie = p->cookie;
	if (am_send(a, node, &h, &pp, sizeof(pp))) {
		a->pings = p->next;
		free(p);
		completion_op_done(a, c, op, RMAD_ERR_FABRIC);
	}
}

/* A ping (off the list) ends: its client gets status, unless the client
 * is gone, in which case its element goes home. */
static void ping_end(struct agent *a, struct agent_ping *p, int status)
{
	if (a->cl[p->client].registered && a->cl[p->client].gen == p->gen)
		completion_op_done(a, p->client, p->op, status);
	else
		completion_op_abandon(a, p->op);
	free(p);
}

/* Fail pings whose answer never came (from the agent's tick). */
void jobs_ping_tick(struct agent *a)
{
	uint64_t now = rmad_now_ns();
	int done = 0;

	for (struct agent_ping **pp = &a->pings; *pp;) {
		struct agent_ping *p = *pp;

		if (now - p->t0 < PING_TIMEOUT_NS) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		rmad_warn("ping to a remote agent unanswered for 10 s");
		ping_end(a, p, RMAD_ERR_FABRIC);
		done = 1;
	}
	if (done)
		completion_flush_wakeups(a);
}

static void got_pong(struct agent *a, const struct rmad_am_hdr *h,
		     uint64_t cookie)
{
	for (struct agent_ping **pp = &a->pings; *pp; pp = &(*pp)->next) {
		struct agent_ping *p = *pp;

		if (p->cookie != cookie)
			continue;
		*pp = p->next;
		ping_end(a, p, 0);
		completion_flush_wakeups(a);
		return;
	}
	rmad_dbg("pong with unknown cookie from node %u", h->src_node);
}

static void on_pong(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload)
{
	struct rmad_am_ping pp;

	if (am_payload(a, h, payload, &pp, sizeof(pp), 1))
		return;
	got_pong(a, h, pp.cookie);
}

/* Node is dead: pings to it end with PROC_FAILED. */
static void ping_node_dead(struct agent *a, int node)
{
	int done = 0;

	for (struct agent_ping **pp = &a->pings; *pp;) {
		struct agent_ping *p = *pp;

		if (p->node != node) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		ping_end(a, p, RMAD_ERR_PROC_FAILED);
		done = 1;
	}
	if (done)
		completion_flush_wakeups(a);
}

void jobs_ping_init(struct agent *a)
{
	am_on_node_dead(a, ping_node_dead);
	am_register(a, RMAD_AM_PONG, on_pong);
}
