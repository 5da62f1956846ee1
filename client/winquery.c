/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * winquery.c - what a window is: its group, attributes, hints and name
 * (rmad_win_get_group, _get_attr, _set_info, _get_info, _set_name,
 * _get_name), with MPI's meanings, a shared window's members' memory
 * (rmad_win_shared_query), and what it did (rmad_win_stats).  All local
 * but rmad_win_stats, which asks the agent for its counters (through
 * the control socket, ctl.c) and adds this process's own (rma.c,
 * lock.c and flush.c keep them in the window).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"

/* The live window of a handle, or NULL. */
static struct rmad_win_s *live(rmad_win_t handle)
{
	struct rmad_win_s *w = rmad_win_get(handle);

	return rmad_win_ok(w) ? w : NULL;
}

int rmad_win_get_group(rmad_win_t handle, rmad_group_t *group)
{
	struct rmad_win_s *w = live(handle);
	int *ranks, err;

	if (!w || !group)
		return RMAD_ERR_ARG;
	if (w->granks)
		return rmad_group_incl(w->granks, w->gsize, group);
	ranks = malloc(sizeof(int) * (size_t)(w->gsize ? w->gsize : 1));
	if (!ranks)
		return RMAD_ERR_NOMEM;
	for (int i = 0; i < w->gsize; i++)
		ranks[i] = i;	/* RMAD_GROUP_ALL: the job in rank order */
	err = rmad_group_incl(ranks, w->gsize, group);
	free(ranks);
	return err;
}

int rmad_win_get_attr(rmad_win_t handle, int attr, void *value)
{
	struct rmad_win_s *w = live(handle);

	if (!w || !value)
		return RMAD_ERR_ARG;
	switch (attr) {
	case RMAD_WIN_BASE:
		*(void **)value = w->base;
		return 0;
	case RMAD_WIN_SIZE:
		*(size_t *)value = w->size;
		return 0;
	case RMAD_WIN_DISP_UNIT:
		*(int *)value = w->disp_unit;
		return 0;
	case RMAD_WIN_CREATE_FLAVOR:
		*(int *)value = w->flavor;
		return 0;
	case RMAD_WIN_MODEL:
		*(int *)value = RMAD_WIN_UNIFIED;
		return 0;
	}
	return RMAD_ERR_ARG;
}

/* The hints in force, as "key=value,..." (every key; the per-window
 * sizes only where the window set them: rmad.conf decides otherwise). */
static int hints_format(const struct rmad_hints *h, char *buf, size_t len)
{
	static const char *const bits[] = { "rar", "raw", "war", "waw" };
	char order[32] = "";
	size_t n;
	int k;

	for (int b = 0; b < 4; b++)
		if (h->acc_ordering & (1u << b))
			snprintf(order + strlen(order),
				 sizeof(order) - strlen(order), "%s%s",
				 order[0] ? "+" : "", bits[b]);
	k = snprintf(buf, len,
		     "no_locks=%s,same_size=%s,same_disp_unit=%s,"
		     "accumulate_ordering=%s,accumulate_ops=%s",
		     h->no_locks ? "true" : "false",
		     h->same_size ? "true" : "false",
		     h->same_disp_unit ? "true" : "false",
		     order[0] ? order : "none",
		     h->acc_ops == RMAD_ACC_OPS_SAME_OP ? "same_op" :
		     "same_op_no_op");
	if (k < 0 || (size_t)k >= len)
		return RMAD_ERR_ARG;
	n = (size_t)k;
	if (h->op_pool >= 0)
		n += (size_t)snprintf(buf + n, len - n, ",op_pool=%ld",
				      h->op_pool);
	if (n < len && h->target_pool >= 0)
		n += (size_t)snprintf(buf + n, len - n, ",target_pool=%ld",
				      h->target_pool);
	if (n < len && h->alloc_shared_noncontig)
		n += (size_t)snprintf(buf + n, len - n,
				      ",alloc_shared_noncontig=true");
	if (n < len && h->slots >= 0)
		n += (size_t)snprintf(buf + n, len - n, ",slots=%ld",
				      h->slots);
	return n < len ? 0 : RMAD_ERR_ARG;
}

int rmad_win_get_info(rmad_win_t handle, char *buf, size_t len)
{
	struct rmad_win_s *w = live(handle);
	int err;

	if (!w || !buf || !len)
		return RMAD_ERR_ARG;
	err = hints_format(&w->hints, buf, len);
	if (err)
		buf[0] = '\0';
	return err;
}

/*
 * Every key rmad understands is fixed when the window is made: the sizes
 * size its pools, and the promises let the agents skip work from the
 * start.  MPI lets an implementation ignore a hint, so a valid string is
 * accepted, a key that would change a value in force is logged and
 * ignored, and rmad_win_get_info keeps reporting what is in force.
 */
int rmad_win_set_info(rmad_win_t handle, const char *hints)
{
	struct rmad_win_s *w = live(handle);
	char now[RMAD_MAX_INFO_LEN], want[RMAD_MAX_INFO_LEN];
	struct rmad_hints merged;

	if (!w)
		return RMAD_ERR_ARG;
	/* the keys the string gives, over the window's own values */
	merged = w->hints;
	if (rmad_hints_apply(hints, &merged))
		return RMAD_ERR_HINT;
	if (!hints_format(&w->hints, now, sizeof(now)) &&
	    !hints_format(&merged, want, sizeof(want)) && strcmp(now, want))
		rmad_info("rmad_win_set_info: hints are fixed when the window "
			  "is made; keeping %s (ignoring %s)", now, hints);
	return 0;
}

int rmad_win_set_name(rmad_win_t handle, const char *name)
{
	struct rmad_win_s *w = live(handle);

	if (!w || !name)
		return RMAD_ERR_ARG;
	pthread_mutex_lock(&rmad_cl.pool_lock);
	/* longer names are truncated, as MPI_Win_set_name does */
	snprintf(w->name, sizeof(w->name), "%s", name);
	/* and copied to our control page, where rmadctl's agent reads it */
	if (w->ctl)
		snprintf(w->ctl->name, sizeof(w->ctl->name), "%s", w->name);
	pthread_mutex_unlock(&rmad_cl.pool_lock);
	return 0;
}

int rmad_win_get_name(rmad_win_t handle, char *buf, size_t len)
{
	struct rmad_win_s *w = live(handle);
	int err = 0;

	if (!w || !buf || !len)
		return RMAD_ERR_ARG;
	pthread_mutex_lock(&rmad_cl.pool_lock);
	if (strlen(w->name) >= len) {
		buf[0] = '\0';
		err = RMAD_ERR_ARG;
	} else {
		memcpy(buf, w->name, strlen(w->name) + 1);
	}
	pthread_mutex_unlock(&rmad_cl.pool_lock);
	return err;
}

int rmad_win_shared_query(rmad_win_t handle, int rank, size_t *size,
			  int *disp_unit, void *base_out)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t win = rmad_win_get(handle);

	if (!win || !rmad_win_live(win) || !size || !disp_unit || !base_out)
		return RMAD_ERR_ARG;
	if (rank == RMAD_PROC_NULL) {
		/* the lowest member with memory, else the lowest */
		int lo = -1, lz = -1;

		for (int i = 0; i < win->npeers; i++) {
			struct win_peer *p = &win->peers[i];
			size_t sz = p->rank == c->b.rank ? win->size : p->size;

			if (sz && (lo < 0 || p->rank < lo))
				lo = p->rank;
			if (lz < 0 || p->rank < lz)
				lz = p->rank;
		}
		rank = lo >= 0 ? lo : lz;
		if (rank < 0)
			return RMAD_ERR_NOT_LOCAL;
	}
	if (rank < 0 || rank >= c->b.size)
		return RMAD_ERR_RANK;
	for (int i = 0; i < win->npeers; i++) {
		struct win_peer *p = &win->peers[i];

		if (p->rank != rank)
			continue;
		if (!p->base && p->rank != c->b.rank)
			return RMAD_ERR_NOT_LOCAL;	/* created: unmapped */
		*size = p->rank == c->b.rank ? win->size : p->size;
		*disp_unit = p->disp_unit;
		/* in a noncontiguous window a member with no memory has no
		 * base (as MPICH and Open MPI answer); in a contiguous one
		 * its base is where the next member's memory begins */
		*(void **)base_out = *size || !rmad_win_noncontig(win) ?
				     p->base : NULL;
		return 0;
	}
	return RMAD_ERR_NOT_LOCAL;
}

/*
 * The stats reply, matched by type and key.  Under rmad_ctl_lock only one
 * request is outstanding, so anything else on the socket is left over
 * from a request that failed half-way (say, peers of a window whose
 * creation failed): drop it, within reason.
 */
#define STALE_MAX	16
static int ctl_stats_reply(struct rmad_client *c, uint64_t key,
			   struct rmad_ctl_win_stats_reply *r)
{
	for (int stale = 0; stale < STALE_MAX; stale++) {
		int fds[RMAD_WIN_PEERS_PER_MSG];
		int nfds = RMAD_WIN_PEERS_PER_MSG;
		long n = rmad_ctl_recv(c, r, sizeof(*r), fds, &nfds);

		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (n < 0)
			return (int)n;
		if (n != (long)sizeof(*r) || r->h.magic != RMAD_CTL_MAGIC ||
		    r->h.type != RMAD_CTL_WIN_STATS_REPLY || r->key != key) {
			rmad_dbg("win_stats: dropped a stale message (type "
				 "%u)", n >= (long)sizeof(r->h) ?
				 (unsigned)r->h.type : 0u);
			continue;
		}
		if (r->status > 0 || r->status < RMAD_ERR_LAST)
			return RMAD_ERR_AGENT;
		return r->status;
	}
	return RMAD_ERR_AGENT;
}

int rmad_win_stats(rmad_win_t handle, struct rmad_stats *out)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t win = rmad_win_get(handle);
	struct rmad_ctl_win_stats m = { 0 };
	struct rmad_ctl_win_stats_reply r;
	int err, live = 0;

	if (!handle || !out)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if (!win)
		return RMAD_ERR_ARG;
	/* rmad_ctl_lock held throughout: the window cannot be freed under us */
	pthread_mutex_lock(&rmad_ctl_lock);
	live = win->listed && win->magic == WIN_MAGIC;
	if (!live) {
		pthread_mutex_unlock(&rmad_ctl_lock);
		return RMAD_ERR_ARG;
	}
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_WIN_STATS;
	m.key = win->key;
	err = c->dead ? RMAD_ERR_AGENT :
	      rmad_send_msg(c->sock, &m, sizeof(m), NULL, 0) < 0 ?
	      RMAD_ERR_AGENT : ctl_stats_reply(c, win->key, &r);
	/* the agent's half, then ours; a dead agent leaves ours, a
	 * refusal (the agent does not know the window) leaves nothing */
	if (err && err != RMAD_ERR_AGENT) {
		pthread_mutex_unlock(&rmad_ctl_lock);
		return err;
	}
	if (!err)
		*out = r.stats;
	else
		memset(out, 0, sizeof(*out));
	/* relaxed loads: each counter is read whole, none orders another */
	out->ops_posted = __atomic_load_n(&win->st_ops_posted,
					  __ATOMIC_RELAXED);
	out->ops_local = __atomic_load_n(&win->st_ops_local,
					 __ATOMIC_RELAXED);
	out->ops_remote = __atomic_load_n(&win->st_ops_remote,
					  __ATOMIC_RELAXED);
	out->sync_calls = __atomic_load_n(&win->st_sync_calls,
					  __ATOMIC_RELAXED);
	out->sync_wait_ns = __atomic_load_n(&win->st_sync_wait_ns,
					    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rmad_ctl_lock);
	return err;
}
