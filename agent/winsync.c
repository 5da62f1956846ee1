/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * winsync.c - the active-target synchronization of windows between
 * agents: the fence barrier (FENCE_ARRIVE to the window's root,
 * FENCE_RELEASE from it) and the post/start/complete/wait notices
 * (WIN_POST, WIN_COMPLETE).  The windows and their tables are
 * windows.c's; the RMA layer above (rma_win.c, rma_pscw.c) decides when
 * to arrive and what a release or a post lets go, through the hooks
 * a->win_hooks.fence and a->win_hooks.post.  A job's failure resets what
 * waits here (agent_win_job_failed, windows.c).
 */
#include <stdint.h>
#include <stdlib.h>

#include "agent.h"
#include "am.h"
#include "jobs.h"
#include "windows.h"
#include "winsync.h"
#include "log.h"
#include "rmad_abi.h"
#include "counter.h"

/* ------------------------------------------------------ fence barrier */

int winsync_fence_arrive(struct agent *a, struct agent_win *w,
			   struct win_local *l)
{
	struct rmad_am_hdr h = {
		.type = RMAD_AM_WIN_FENCE_ARRIVE,
		.job = w->job->key,
	};
	struct rmad_am_win_sync s = { .wkey = w->key };

	if (w->failed || w->job->failed)
		return RMAD_ERR_PROC_FAILED;
	if (!w->ready || l->fencing || l->freeing)
		return RMAD_ERR_SYNC;
	l->fencing = 1;
	if (++w->fence_here < w->nlocal)
		return 0;
	s.epoch = w->fence_epoch;
	w->fence_sent += w->root != a->node;
	am_send(a, w->root, &h, &s, sizeof(s));
	return 0;
}

/*
 * The root: is an ARRIVE from node src for epoch ep one to count?  Only
 * from a member node, for the epoch at hand or the next (a fast node
 * may arrive again before our own release ran), and once per epoch.
 */
static int fence_arrival_ok(struct agent_win *w, uint32_t src, uint64_t ep)
{
	int k;

	for (k = 0; k < w->nnodes; k++)
		if (w->nodes[k] == (int)src)
			break;
	if (k == w->nnodes || (ep != w->fence_epoch &&
			       ep != (uint64_t)w->fence_epoch + 1))
		return 0;
	if (!w->fence_from) {
		w->fence_from = calloc((size_t)w->nnodes,
				       sizeof(*w->fence_from));
		if (!w->fence_from)
			return 0;
	}
	if (w->fence_from[k] == (uint32_t)ep + 1)
		return 0;
	w->fence_from[k] = (uint32_t)ep + 1;
	return 1;
}

/* the root: node src arrived at epoch ep */
static void fence_root_arrive(struct agent *a, struct agent_win *w,
			      uint64_t ep)
{
	int par = (int)(ep & 1);
	struct rmad_am_hdr h = {
		.type = RMAD_AM_WIN_FENCE_RELEASE,
		.job = w->job->key,
	};
	struct rmad_am_win_sync s = { .wkey = w->key, .epoch = ep };

	if (++w->fence_arrived[par] < w->nnodes)
		return;
	w->fence_arrived[par] = 0;
	/* the other nodes first: our own release wakes our members, a
	 * system call the others need not wait for */
	for (int k = 0; k < w->nnodes; k++)
		if (w->nodes[k] != a->node) {
			w->fence_sent++;
			am_send(a, w->nodes[k], &h, &s, sizeof(s));
		}
	am_send(a, a->node, &h, &s, sizeof(s));
}

static void fence_release(struct agent *a, struct agent_win *w, uint64_t ep)
{
	if (ep != w->fence_epoch || w->fence_here < w->nlocal) {
		rmad_warn("window %llx: fence release of epoch %llu, at %u "
			  "with %d of %d here", (unsigned long long)w->key,
			  (unsigned long long)ep, w->fence_epoch,
			  w->fence_here, w->nlocal);
		return;
	}
	w->fence_epoch++;
	w->fence_here = 0;
	for (int32_t i = 0; i < w->nhere; i++)
		w->local[i].fencing = 0;
	if (a->win_hooks.fence)
		a->win_hooks.fence(a, w, 0);
}

/* ------------------------------------------- post/start/complete/wait */

/* Is rank a member of w on node (the sender of a notice about it)? */
static int member_on(struct agent_win *w, int32_t rank, uint32_t node)
{
	uint64_t size;
	int32_t du;

	return !agent_win_target(w, rank, &size, &du) &&
	       agent_job_rank_node(w->job, rank) == (int)node;
}

/* Is rank a member of w's group (known once a local member came)? */
static int in_group(const struct agent_win *w, int32_t rank)
{
	if (w->all)
		return rank >= 0 && rank < w->gsize;
	for (int32_t g = 0; w->granks && g < w->gsize; g++)
		if (w->granks[g] == rank)
			return 1;
	return 0;
}

/*
 * A post or complete notice for a window that is not ready here yet:
 * the peer's READY and its notice come on different channels, so the
 * notice may come first.  Kept until the window is ready (early_take).
 * Its sender's window is ready, so all our members made ours: what it
 * says is checked now as far as the group tells (our member, the peer a
 * member on the sending node), and once per kind, member and peer, so
 * at most two for each pair of our members and others: no node can
 * crowd out another's.  Dropped ones are said, never silent.
 */
static void early_keep(struct agent *a, struct agent_win *w,
		       const struct winsync_notice *h)
{
	int post = h->type == RMAD_AM_WIN_POST;
	int32_t ours = post ? h->origin : h->target;
	int32_t peer = post ? h->target : h->origin;
	const char *why = NULL;

	if (!w->local || w->nhere < w->nlocal)
		why = "before its members made it here";
	else if (h->node == (uint32_t)a->node ||
		 !agent_win_local(w, ours) || !in_group(w, peer) ||
		 agent_job_rank_node(w->job, peer) != (int)h->node)
		why = "naming members that are not its and ours";
	for (int32_t k = 0; !why && k < w->nearly; k++)
		if (w->early[k].type == h->type &&
		    w->early[k].origin == h->origin &&
		    w->early[k].target == h->target)
			why = "a second time";
	if (!why && w->nearly == w->capearly) {
		int32_t cap = w->capearly ? 2 * w->capearly : 8;
		struct winsync_notice *p = realloc(w->early,
						   sizeof(*p) * (size_t)cap);

		if (!p)
			why = "without memory to keep it";
		else {
			w->early = p;
			w->capearly = cap;
		}
	}
	if (why) {
		a->st.pkts_dropped++;
		rmad_warn("window %llx: dropped a %s notice from node %u "
			  "(origin %d, target %d) before it is ready, %s",
			  (unsigned long long)w->key,
			  post ? "post" : "complete", h->node, h->origin,
			  h->target, why);
		return;
	}
	w->early[w->nearly++] = *h;
}

static void post_recv(struct agent *a, struct agent_win *w,
		      const struct winsync_notice *h);
static void complete_recv(struct agent *a, struct agent_win *w,
			  const struct winsync_notice *h);

/* The window is ready: the notices that came before. */
static void early_take(struct agent *a, struct agent_win *w)
{
	for (int32_t k = 0; k < w->nearly; k++) {
		if (w->early[k].type == RMAD_AM_WIN_POST)
			post_recv(a, w, &w->early[k]);
		else
			complete_recv(a, w, &w->early[k]);
	}
	free(w->early);
	w->early = NULL;
	w->nearly = 0;
	w->capearly = 0;
}

/* Target h->target on node src posted to our member h->origin. */
static void post_recv(struct agent *a, struct agent_win *w,
		      const struct winsync_notice *h)
{
	struct win_local *l = agent_win_local(w, h->origin);

	if (!l || h->node == (uint32_t)a->node ||
	    !member_on(w, h->target, h->node) || l->nposts >= w->gsize) {
		rmad_warn("window %llx: dropped a post notice from node %u "
			  "(target %d, origin %d)", (unsigned long long)w->key,
			  h->node, h->target, h->origin);
		return;
	}
	if (l->nposts == l->capposts) {
		int32_t cap = l->capposts ? 2 * l->capposts : 8;
		int32_t *p = realloc(l->posts, sizeof(*p) * (size_t)cap);

		if (!p) {
			rmad_warn("window %llx: no memory for a post notice",
				  (unsigned long long)w->key);
			return;
		}
		l->posts = p;
		l->capposts = cap;
	}
	l->posts[l->nposts++] = h->target;
	w->pscw_recv++;
	if (a->win_hooks.post)
		a->win_hooks.post(a, w);
}

/* Origin h->origin on node src completed its epoch at our h->target:
 * its operations are applied, so the target's wait counts it. */
static void complete_recv(struct agent *a, struct agent_win *w,
			  const struct winsync_notice *h)
{
	struct win_local *l = agent_win_local(w, h->target);
	struct rmad_win_ctl *ctl = l ? l->base : NULL;

	if (!ctl || h->node == (uint32_t)a->node ||
	    !member_on(w, h->origin, h->node)) {
		rmad_warn("window %llx: dropped a complete notice from node "
			  "%u (origin %d, target %d)",
			  (unsigned long long)w->key, h->node, h->origin,
			  h->target);
		return;
	}
	w->pscw_recv++;
	winsync_count_complete(a, l);
}

void winsync_count_complete(struct agent *a, struct win_local *l)
{
	struct rmad_win_ctl *ctl = l->base;

	if (!ctl)
		return;
	/* the operations were applied before: seq_cst orders them */
	__atomic_add_fetch(&ctl->pscw_done, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ctl->pscw_sleepers, __ATOMIC_SEQ_CST)) {
		am_flush(a);	/* sends before wakes (completion_flush_wakeups) */
		rmad_futex_wake(&ctl->pscw_done, INT32_MAX);
		/* as for a counter's waiter (completion_flush_wakeups): its next
		 * post comes soon, and finds us polling (sched_idle_poll)
		 * rather than asleep, which saves a doorbell and a wakeup */
		a->woke = 1;
	}
}

int winsync_post_take(struct win_local *l, int32_t target)
{
	for (int32_t i = 0; i < l->nposts; i++)
		if (l->posts[i] == target) {
			l->posts[i] = l->posts[--l->nposts];
			return 1;
		}
	return 0;
}

/* ------------------------------------------------ messages from agents */

/* FENCE_ARRIVE, FENCE_RELEASE, WIN_POST, WIN_COMPLETE */
static void on_sync(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);
	struct rmad_am_win_sync s;
	struct winsync_notice n;
	struct agent_win *w;

	if (am_payload(a, h, payload, &s, sizeof(s), 1))
		return;
	if (!j || !j->map_ready || !agent_job_on_node(a, j, (int)h->src_node)) {
		a->st.pkts_dropped++;
		return;
	}
	/* ready, or not yet ready and not failed */
	w = agent_win_by_key(a, j, s.wkey);
	n = (struct winsync_notice){ .type = h->type, .node = h->src_node,
				     .origin = s.origin, .target = s.target };
	switch (h->type) {
	case RMAD_AM_WIN_FENCE_ARRIVE:
		if (!w || w->root != a->node || !w->ready)
			return;
		if (!fence_arrival_ok(w, h->src_node, s.epoch)) {
			rmad_warn("window %llx: dropped a fence arrival from "
				  "node %u for epoch %llu",
				  (unsigned long long)w->key, h->src_node,
				  (unsigned long long)s.epoch);
			return;
		}
		w->fence_recv += (int)h->src_node != a->node;
		fence_root_arrive(a, w, s.epoch);
		return;
	case RMAD_AM_WIN_POST:
	case RMAD_AM_WIN_COMPLETE:
		if (w && !w->ready && !w->failed)
			early_keep(a, w, &n);
		else if (w && w->ready && h->type == RMAD_AM_WIN_POST)
			post_recv(a, w, &n);
		else if (w && w->ready)
			complete_recv(a, w, &n);
		return;
	case RMAD_AM_WIN_FENCE_RELEASE:
		if (!w || !w->ready || (int)h->src_node != w->root)
			return;
		w->fence_recv += (int)h->src_node != a->node;
		fence_release(a, w, s.epoch);
		return;
	}
}

void winsync_init(struct agent *a)
{
	am_register(a, RMAD_AM_WIN_FENCE_ARRIVE, on_sync);
	am_register(a, RMAD_AM_WIN_FENCE_RELEASE, on_sync);
	am_register(a, RMAD_AM_WIN_POST, on_sync);
	am_register(a, RMAD_AM_WIN_COMPLETE, on_sync);
	a->win_hooks.ready = early_take;
}
