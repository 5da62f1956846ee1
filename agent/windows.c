/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * windows.c - window creation and freeing, collective over a group: the
 * clients' requests.
 *
 * Each member creates its window memory as a memfd and hands it to its
 * agent (WIN_CREATE).  The agent checks the request, maps the memory, so
 * it can later apply remote operations in place, and once all of the
 * node's members arrived, joins the window across agents (win_join.c).
 * An allocate_shared window's memory is the agent's: one memfd for the
 * node's members (shared_layout).  WIN_FREE from every local member
 * starts the free (win_join.c too).  The window objects: win_state.c;
 * the fence barrier and the PSCW notices between agents: winsync.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "jobs.h"
#include "mem.h"
#include "secret.h"
#include "winmem.h"
#include "wintab.h"
#include "windows.h"
#include "win_join.h"
#include "log.h"
#include "rmad_abi.h"
#include "counter.h"
#include "util.h"

/*
 * rmad_win_allocate_shared: every member is here (or the window is
 * refused).  One memfd for them all: their control pages, in arrival
 * order, then their memory in group order, each member's starting where
 * the previous one's ends unless alloc_shared_noncontig.
 */
static int shared_layout(struct agent *a, struct agent_win *w)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), off, total;
	int32_t *order;

	if (w->nlocal != w->gsize) {
		rmad_warn("window %llx: rmad_win_allocate_shared needs every "
			  "member on one node; %d of %d are on this one",
			  (unsigned long long)w->key, w->nlocal, w->gsize);
		return RMAD_ERR_ARG;
	}
	order = malloc(sizeof(*order) * (size_t)w->nhere);
	if (!order)
		return RMAD_ERR_NOMEM;
	for (int32_t i = 0; i < w->nhere; i++)
		order[w->local[i].grank] = i;	/* granks are 0..gsize-1 */
	off = (size_t)w->nhere * RMAD_WIN_CTL_SIZE;
	for (int32_t g = 0; g < w->nhere; g++) {
		struct win_local *l = &w->local[order[g]];

		if (w->noncontig)
			off = (off + psz - 1) / psz * psz;
		l->addr = off;		/* for now: its offset */
		off += l->size;
	}
	free(order);
	total = (off + psz - 1) / psz * psz;
	/* sealed before any member gets it: none can shrink it under
	 * our mapping or the others' */
	w->sfd = rmad_memfd_sealed("rmad-shared-window", total, 0);
	if (w->sfd < 0) {
		w->sfd = -1;
		return RMAD_ERR_NOMEM;
	}
	w->smap = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED,
		       w->sfd, 0);
	if (w->smap == MAP_FAILED) {
		w->smap = NULL;
		return RMAD_ERR_NOMEM;
	}
	w->slen = total;
	for (int32_t i = 0; i < w->nhere; i++) {
		struct win_local *l = &w->local[i];

		l->base = (char *)w->smap + (size_t)i * RMAD_WIN_CTL_SIZE;
		l->data = (char *)w->smap + l->addr;
	}
	return 0;
}

/* All local members arrived: report them to the root. */
static void win_local_complete(struct agent *a, struct agent_win *w)
{
	struct rmad_am_win_member *m;
	int err = w->shared ? shared_layout(a, w) : 0;

	if (err) {
		for (int32_t i = 0; i < w->nhere; i++)
			win_state_reply(a, w, &w->local[i], err);
		w->failed = 1;
		return;
	}
	m = calloc((size_t)w->nhere, sizeof(*m));
	if (!m) {
		for (int32_t i = 0; i < w->nhere; i++)
			win_state_reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
		return;
	}
	winmem_peers(a, w);
	for (int32_t i = 0; i < w->nhere; i++) {
		struct win_local *l = &w->local[i];

		m[i].status = l->status;
		m[i].grank = l->grank;
		m[i].disp_unit = l->disp_unit;
		m[i].size = l->size;
		/* large puts and gets then land without the agent's help;
		 * without it they travel as active messages */
		if (a->fab && l->size && a->p.rdma_threshold && l->data &&
		    !w->shared &&
		    !rmad_fabric_mr_reg(a->fab, l->data,
					l->size, 1, &l->mr, &l->mr_key,
					&l->mr_addr, NULL)) {
			m[i].mr_key = l->mr_key;
			m[i].mr_addr = l->mr_addr;
			m[i].has_mr = 1;
			l->fab_open = 1;
		}
	}
	win_join_send_members(a, w->root, RMAD_AM_WIN_JOIN, w, m, w->nhere);
	free(m);
}

/*
 * A create request's checks, before anything is made: 0, or the status
 * that refuses it.  *cstatus: memory the agent cannot reach, which is
 * the whole window's target_answer (through the root, so that no member waits
 * for another).
 */
static int win_create_check(struct agent *a, uint32_t c,
			    const struct rmad_ctl_win_create *m, size_t len,
			    int fd, int *cstatus)
{
	struct agent_client *ac = &a->cl[c];
	struct agent_job *j = ac->job;
	int32_t n = (m->flags & RMAD_WINF_ALL) ? 0 : m->gsize;
	int status;

	if (!ac->registered || !j || !j->map_ready)
		return RMAD_ERR_SYNC;
	if (m->gsize < 1 || m->gsize > j->size ||
	    (!(m->flags & RMAD_WINF_ALL) &&
	     (m->gsize > RMAD_WIN_GROUP_MAX ||
	      len != sizeof(*m) + sizeof(int32_t) * (size_t)n)) ||
	    ((m->flags & RMAD_WINF_ALL) &&
	     (len != sizeof(*m) || m->gsize != j->size)) ||
	    m->grank < 0 || m->grank >= m->gsize || m->disp_unit < 1 ||
	    m->size > WIN_SIZE_MAX ||
	    (m->flags & ~(uint32_t)(RMAD_WINF_ALL | RMAD_WINF_CREATE |
				    RMAD_WINF_DYNAMIC | RMAD_WINF_SHARED |
				    RMAD_WINF_NONCONTIG)))
		return RMAD_ERR_ARG;
	if ((m->flags & RMAD_WINF_DYNAMIC) &&
	    (!(m->flags & RMAD_WINF_CREATE) || m->size || m->disp_unit != 1))
		return RMAD_ERR_ARG;
	if (m->flags & RMAD_WINF_SHARED) {
		/* the agent makes the memory: no descriptor comes along */
		if (fd >= 0 || (m->flags & (RMAD_WINF_CREATE |
					    RMAD_WINF_DYNAMIC)))
			return RMAD_ERR_ARG;
	} else {
		/* what we map of it: the control page, then the dynamic
		 * window's region table or the allocated window; sealed at
		 * that size at least, or refused */
		uint64_t need = RMAD_WIN_CTL_SIZE +
			((m->flags & RMAD_WINF_DYNAMIC) ? RMAD_WIN_DYN_SIZE :
			 (m->flags & RMAD_WINF_CREATE) ? 0 : m->size);

		status = agent_mem_fd_check(a, c, fd, need, "window");
		if (status)
			return status;
	}
	if (m->flags & RMAD_WINF_CREATE) {
		status = winmem_check(a, c, m->addr, m->size,
				      RMAD_WIN_CTL_SIZE);
		if (status && status != RMAD_ERR_PERM)
			return status;
		*cstatus = status;
	}
	if (n && m->ranks[m->grank] != ac->rank)
		return RMAD_ERR_ARG;
	if (!n && m->grank != ac->rank)
		return RMAD_ERR_ARG;
	for (int32_t i = 0; i < n; i++)
		if (m->ranks[i] < 0 || m->ranks[i] >= j->size)
			return RMAD_ERR_ARG;
	return 0;
}

/* The window a create joins, made or fitted to its group size; NULL
 * with *status when it cannot be. */
static struct agent_win *win_create_find(struct agent *a,
					 struct agent_job *j,
					 const struct rmad_ctl_win_create *m,
					 int *status)
{
	struct agent_win *w = wintab_find(a, j, m->key);

	if (w && !w->local && w->gsize != m->gsize) {
		/* made by joins of another group size: nothing is in its
		 * table yet, and win_join_replay drops what said so */
		struct rmad_am_win_member *p = realloc(w->meta,
			sizeof(*p) * (size_t)m->gsize);

		if (!p) {
			*status = RMAD_ERR_NOMEM;
			return NULL;
		}
		w->meta = p;
		w->gsize = m->gsize;
		w->nmeta = 0;
		for (int32_t g = 0; g < w->gsize; g++)
			w->meta[g].grank = -1;
	}
	if (w && (w->gsize != m->gsize || w->ready || w->failed)) {
		*status = w->failed ? RMAD_ERR_PROC_FAILED : RMAD_ERR_ARG;
		return NULL;
	}
	if (!w) {
		w = win_state_new(a, j, m->key, m->gsize);
		if (!w)
			*status = RMAD_ERR_NOMEM;
	}
	return w;
}

/* The first local member: learn the group and our share of it.  0 or
 * RMAD_ERR_NOMEM. */
static int win_group_learn(struct agent *a, struct agent_win *w,
			   const struct rmad_ctl_win_create *m, uid_t uid)
{
	int32_t n = (m->flags & RMAD_WINF_ALL) ? 0 : m->gsize;

	w->all = !n;
	w->dynamic = !!(m->flags & RMAD_WINF_DYNAMIC);
	w->shared = !!(m->flags & RMAD_WINF_SHARED);
	w->noncontig = !!(m->flags & RMAD_WINF_NONCONTIG);
	if (n) {
		w->granks = malloc(sizeof(int32_t) * (size_t)n);
		if (!w->granks)
			return RMAD_ERR_NOMEM;
		memcpy(w->granks, m->ranks, sizeof(int32_t) * (size_t)n);
	}
	w->nlocal = 0;
	w->root = -1;
	for (int32_t g = 0; g < w->gsize; g++) {
		int node = win_state_member_node(w, g);

		if (node == a->node)
			w->nlocal++;
		if (node >= 0 && (w->root < 0 || node < w->root))
			w->root = node;
	}
	w->local = calloc((size_t)(w->nlocal ? w->nlocal : 1),
			  sizeof(*w->local));
	if (!w->local || w->root < 0)
		return RMAD_ERR_NOMEM;
	win_state_early_end(w);
	/* over the user's quota: refused on every member, through the root
	 * like unreachable memory */
	w->quota_err = wintab_quota_charge(a, w, uid);
	win_join_replay(a, w);	/* entries that came before it */
	return 0;
}

/* Member l of w, from its create request: its memory mapped. */
static void win_local_fill(struct agent *a, struct agent_win *w,
			   struct win_local *l,
			   const struct rmad_ctl_win_create *m, int fd)
{
	l->fd = fd;
	l->size = m->size;
	l->disp_unit = m->disp_unit;
	l->grank = m->grank;
	l->waiting = 1;
	l->lk = NULL;
	l->created = !!(m->flags & RMAD_WINF_CREATE);
	l->dynamic = !!(m->flags & RMAD_WINF_DYNAMIC);
	l->addr = l->created && !l->dynamic ? m->addr : 0;
	l->reg = NULL;
	l->nreg = 0;
	/* the control page (lock word) first, then the window; a dynamic
	 * window's region table instead; a shared window's come once the
	 * node's members are all here (shared_layout) */
	l->map_len = w->shared ? 0 : RMAD_WIN_CTL_SIZE +
		     (l->dynamic ? RMAD_WIN_DYN_SIZE :
		      l->created ? 0 : m->size);
	l->base = w->shared || l->status ? NULL :
		  mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (l->base == MAP_FAILED) {
		/* out of memory, or of mappings (vm.max_map_count): the
		 * window is refused on every member, through the root, so
		 * that none waits for this one */
		rmad_err("window %llx: cannot map rank %d's %llu bytes: %s "
			 "(%u windows here)", (unsigned long long)w->key,
			 l->rank, (unsigned long long)l->map_len,
			 strerror(errno), a->wn.nwins);
		l->base = NULL;
		l->status = RMAD_ERR_NOMEM;
	}
	if (!l->base)
		l->map_len = 0;
	l->data = l->base && !l->created ?
		  (char *)l->base + RMAD_WIN_CTL_SIZE : NULL;
	l->pub = l->dynamic && l->base ?
		 (void *)((char *)l->base + RMAD_WIN_CTL_SIZE) : NULL;
	if (l->pub)	/* the table is ours to write: start it empty */
		memset(l->pub, 0, offsetof(struct rmad_win_dyn, r));
}

void agent_win_create(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_create *m, size_t len, int fd)
{
	struct agent_client *ac = &a->cl[c];
	struct agent_win *w;
	struct win_local *l;
	int status, cstatus = 0;
	struct agent_win tmp = { .key = m->key, .block = -1 };
	struct win_local tl = { .client = c, .gen = ac->gen };

	status = win_create_check(a, c, m, len, fd, &cstatus);
	if (status)
		goto refuse;
	w = win_create_find(a, ac->job, m, &status);
	if (!w)
		goto refuse;
	status = RMAD_ERR_ARG;
	if (!w->local && win_group_learn(a, w, m, ac->uid)) {
		status = RMAD_ERR_NOMEM;
		goto refuse;
	}
	for (int32_t i = 0; i < w->nhere; i++)
		if (w->local[i].rank == ac->rank)
			goto refuse;	/* the same rank twice */
	if (w->dynamic != !!(m->flags & RMAD_WINF_DYNAMIC) ||
	    w->shared != !!(m->flags & RMAD_WINF_SHARED) ||
	    w->noncontig != !!(m->flags & RMAD_WINF_NONCONTIG))
		goto refuse;	/* every member's flavor is the same */
	if (w->nhere >= w->nlocal)
		goto refuse;
	l = &w->local[w->nhere];
	l->rank = ac->rank;
	l->client = c;
	l->gen = ac->gen;
	l->status = cstatus ? cstatus : w->quota_err;
	win_local_fill(a, w, l, m, fd);
	w->nhere++;
	if (w->nhere == w->nlocal)
		win_local_complete(a, w);
	return;
refuse:
	if (fd >= 0)
		close(fd);
	tl.waiting = 1;
	win_state_reply(a, &tmp, &tl, status);
}

void agent_win_free(struct agent *a, uint32_t c,
		    const struct rmad_ctl_win_free *m)
{
	struct agent_client *ac = &a->cl[c];
	struct agent_win *w = ac->job ? wintab_find(a, ac->job, m->key) : NULL;
	struct win_local *l = NULL;

	for (int32_t i = 0; w && i < w->nhere; i++)
		if (w->local[i].client == c && w->local[i].gen == ac->gen)
			l = &w->local[i];
	if (!w || !l || !w->ready || l->freeing || w->failed) {
		struct agent_win tmp = { .key = m->key, .block = -1 };
		struct win_local tl = { .client = c, .gen = ac->gen };

		win_state_reply(a, &tmp, &tl, w && w->failed ? RMAD_ERR_PROC_FAILED :
						     RMAD_ERR_ARG);
		return;
	}
	l->freeing = 1;
	l->waiting = 1;
	if (++w->nfreeing == w->nlocal) {
		struct rmad_am_hdr h = {
			.type = RMAD_AM_WIN_FREE_ARRIVE,
			.job = w->job->key,
		};
		struct rmad_am_win_sync s = { .wkey = w->key };

		am_send(a, w->root, &h, &s, sizeof(s));
	}
}

int agent_win_init(struct agent *a)
{
	if (secret_random_bytes(&a->wn.seed, sizeof(a->wn.seed)))
		a->wn.seed = rmad_now_ns() ^ (uint64_t)getpid() << 32;
	win_join_init(a);
	a->job_hooks.failed = agent_win_job_failed;
	a->job_hooks.freed = agent_win_job_freed;
	return 0;
}

void agent_win_fini(struct agent *a)
{
	while (a->wn.wins)
		win_state_destroy(a, a->wn.wins);
	agent_win_tick(a, 0);
	free(a->wn.blocks);
	free(a->wn.bfree);
	free(a->wn.hash);
	free(a->wn.quota);
	memset(&a->wn, 0, sizeof(a->wn));
	for (int k = 0; a->jobs && k < a->p.max_jobs; k++) {
		free(a->jobs[k].win_early);
		a->jobs[k].win_early = NULL;
	}
}

