/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * windows.c - window creation and freeing, collective over a group.
 *
 * Each member creates its window memory as a memfd and hands it to its
 * agent (WIN_CREATE).  The agent maps it, so it can later apply remote
 * operations in place.  When all of the node's members arrived, the
 * agent sends their (size, disp_unit) to the window's root, the lowest
 * node holding a member (WIN_JOIN).  The root answers every member node
 * with the whole table once it is complete (WIN_READY).  Each agent then
 * keeps that table once for the node, as two numbers when every member
 * has the same size and unit, takes a window block in the segment, and
 * answers its members with the memfds of their same-node peers, so that
 * rmad_win_shared_query and direct loads and stores work.
 *
 * Freeing mirrors it: WIN_FREE from every local member, FREE_ARRIVE to
 * the root, FREE_DONE from the root once every member node arrived.
 *
 * A member that dies, or a JOB_FAIL from another node, fails every
 * pending create and free of the job with RMAD_ERR_PROC_FAILED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "rmad.h"
#include "util.h"

#define WIN_SIZE_MAX	(1ull << 40)	/* 1 TiB per rank */

struct win_local {
	int32_t rank;			/* job rank */
	int32_t grank;
	uint32_t client, gen;
	int fd;
	void *base;			/* the agent's mapping */
	uint64_t size;
	int32_t disp_unit;
	int waiting;			/* a reply is owed (create or free) */
	int freeing;
};

struct agent_win {
	struct agent_win *next;
	struct agent_job *job;
	uint64_t key;
	int32_t gsize;
	int32_t *granks;		/* group ranks, NULL for all or unknown */
	int all;
	int32_t nlocal;			/* expected members on this node */
	int32_t nhere;			/* arrived */
	struct win_local *local;
	int root;			/* node collecting the table */
	/* the table, once per node */
	struct rmad_am_win_member *meta;
	int32_t nmeta;			/* entries filled */
	int uniform;
	uint64_t usize;
	int32_t udisp;
	int ready;
	int block;			/* window block, -1 until ready */
	int failed;
	/* root only */
	int *nodes;			/* member nodes that joined */
	int nnodes;
	int free_arrived;
	int nfreeing;
};

static struct agent_win *wins;
static uint8_t *blocks;			/* max_windows flags */

static struct agent_win *win_find(struct agent_job *j, uint64_t key)
{
	for (struct agent_win *w = wins; w; w = w->next)
		if (w->job == j && w->key == key)
			return w;
	return NULL;
}

static struct agent_win *win_new(struct agent_job *j, uint64_t key,
				 int32_t gsize)
{
	struct agent_win *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->meta = calloc((size_t)gsize, sizeof(*w->meta));
	if (!w->meta) {
		free(w);
		return NULL;
	}
	for (int32_t i = 0; i < gsize; i++)
		w->meta[i].grank = -1;
	w->job = j;
	w->key = key;
	w->gsize = gsize;
	w->block = -1;
	w->root = -1;
	w->next = wins;
	wins = w;
	return w;
}

static void win_destroy(struct agent *a, struct agent_win *w)
{
	for (struct agent_win **pp = &wins; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	for (int32_t i = 0; i < w->nhere; i++) {
		if (w->local[i].base)
			munmap(w->local[i].base, w->local[i].size);
		if (w->local[i].fd >= 0)
			close(w->local[i].fd);
	}
	if (w->block >= 0 && blocks)
		blocks[w->block] = 0;
	free(w->local);
	free(w->granks);
	free(w->meta);
	free(w->nodes);
	free(w);
}

static int alive(struct agent *a, const struct win_local *l)
{
	return a->cl[l->client].registered && a->cl[l->client].gen == l->gen;
}

static void reply(struct agent *a, struct agent_win *w, struct win_local *l,
		  int status)
{
	struct rmad_ctl_win_reply r = { 0 };

	l->waiting = 0;
	if (!alive(a, l))
		return;
	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_WIN_REPLY;
	r.key = w->key;
	r.status = status;
	r.block = w->block < 0 ? 0 : (uint32_t)w->block;
	r.nlocal = w->nhere;
	r.uniform = w->uniform;
	rmad_send_msg(a->cl[l->client].fd, &r, sizeof(r), NULL, 0);
}

/* Fail everything of job j that waits: a member died. */
void agent_win_job_failed(struct agent *a, struct agent_job *j)
{
	for (struct agent_win *w = wins; w; w = w->next) {
		if (w->job != j)
			continue;
		w->failed = 1;
		for (int32_t i = 0; i < w->nhere; i++)
			if (w->local[i].waiting)
				reply(a, w, &w->local[i],
				      RMAD_ERR_PROC_FAILED);
	}
}

/* The job is gone from this agent: drop its windows. */
void agent_win_job_freed(struct agent *a, struct agent_job *j)
{
	struct agent_win *w = wins, *next;

	for (; w; w = next) {
		next = w->next;
		if (w->job == j)
			win_destroy(a, w);
	}
}

static int member_node(struct agent_win *w, int32_t grank)
{
	int32_t rank = w->all ? grank : w->granks[grank];

	return agent_rank_node(w->job, rank);
}

/* Send entries [0, n) in chunks that fit a message. */
static void send_members(struct agent *a, int node, int type,
			 struct agent_win *w,
			 const struct rmad_am_win_member *m, int32_t n)
{
	size_t room = a->p.am_buf_size - sizeof(struct rmad_am_hdr) -
		      sizeof(struct rmad_am_win);
	int32_t per = (int32_t)(room / sizeof(*m)), off = 0;
	char buf[16384];

	if (per > (int32_t)((sizeof(buf) - sizeof(struct rmad_am_win)) /
			    sizeof(*m)))
		per = (int32_t)((sizeof(buf) - sizeof(struct rmad_am_win)) /
				sizeof(*m));
	do {
		int32_t cnt = n - off > per ? per : n - off;
		struct rmad_am_win *hw = (struct rmad_am_win *)buf;
		struct rmad_am_hdr h = {
			.type = (uint8_t)type,
			.job = w->job->key,
			.seq = w->key,
			.count = (uint64_t)cnt,
		};

		hw->gsize = w->gsize;
		hw->first = off;
		memcpy(buf + sizeof(*hw), m + off, sizeof(*m) * (size_t)cnt);
		agent_am_send(a, node, &h, buf,
			      sizeof(*hw) + sizeof(*m) * (size_t)cnt);
		off += cnt;
	} while (off < n);
}

static void send_peers(struct agent *a, struct agent_win *w,
		       struct win_local *l)
{
	int32_t off = 0;

	while (off < w->nhere) {
		struct rmad_ctl_win_peers m = { 0 };
		int fds[RMAD_WIN_PEERS_PER_MSG];
		int cnt = 0;

		m.h.magic = RMAD_CTL_MAGIC;
		m.h.abi_version = RMAD_ABI_VERSION;
		m.h.type = RMAD_CTL_WIN_PEERS;
		m.key = w->key;
		while (cnt < RMAD_WIN_PEERS_PER_MSG && off < w->nhere) {
			struct win_local *p = &w->local[off++];

			m.p[cnt].rank = p->rank;
			m.p[cnt].disp_unit = p->disp_unit;
			m.p[cnt].size = p->size;
			fds[cnt++] = p->fd;
		}
		m.count = cnt;
		if (rmad_send_msg(a->cl[l->client].fd, &m, sizeof(m), fds,
				  cnt) < 0)
			return;
	}
}

/* The table is complete here: take a block and answer the members. */
static void win_ready(struct agent *a, struct agent_win *w)
{
	int b;

	w->uniform = 1;
	w->usize = w->meta[0].size;
	w->udisp = w->meta[0].disp_unit;
	for (int32_t i = 1; i < w->gsize; i++)
		if (w->meta[i].size != w->usize ||
		    w->meta[i].disp_unit != w->udisp)
			w->uniform = 0;
	if (w->uniform) {
		/* same_size/same_disp_unit: two numbers, not a table */
		free(w->meta);
		w->meta = NULL;
	}
	for (b = 0; b < a->p.max_windows && blocks[b]; b++)
		;
	if (b == a->p.max_windows) {
		rmad_warn("window %llx: no free window block (max_windows)",
			  (unsigned long long)w->key);
		for (int32_t i = 0; i < w->nhere; i++)
			reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
		w->failed = 1;
		return;
	}
	blocks[b] = 1;
	w->block = b;
	w->ready = 1;
	for (int32_t i = 0; i < w->nhere; i++) {
		struct win_local *l = &w->local[i];

		if (!alive(a, l))
			continue;
		reply(a, w, l, 0);
		send_peers(a, w, l);
	}
	rmad_dbg("window %llx ready: %d members, block %d%s",
		 (unsigned long long)w->key, w->gsize, b,
		 w->uniform ? ", uniform" : "");
}

static void meta_add(struct agent *a, struct agent_win *w,
		     const struct rmad_am_win_member *m, int32_t n)
{
	for (int32_t i = 0; i < n; i++) {
		int32_t g = m[i].grank;

		if (g < 0 || g >= w->gsize || !w->meta ||
		    w->meta[g].grank >= 0 || m[i].disp_unit < 1 ||
		    m[i].size > WIN_SIZE_MAX) {
			rmad_warn("window %llx: bad or repeated member %d",
				  (unsigned long long)w->key, g);
			continue;
		}
		w->meta[g] = m[i];
		w->nmeta++;
	}
}

/* All local members arrived: report them to the root. */
static void win_local_complete(struct agent *a, struct agent_win *w)
{
	struct rmad_am_win_member *m = calloc((size_t)w->nhere, sizeof(*m));

	if (!m) {
		for (int32_t i = 0; i < w->nhere; i++)
			reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
		return;
	}
	for (int32_t i = 0; i < w->nhere; i++) {
		m[i].grank = w->local[i].grank;
		m[i].disp_unit = w->local[i].disp_unit;
		m[i].size = w->local[i].size;
	}
	send_members(a, w->root, RMAD_AM_WIN_JOIN, w, m, w->nhere);
	free(m);
}

void agent_win_create(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_create *m, size_t len, int fd)
{
	struct agent_client *ac = &a->cl[c];
	struct agent_job *j = ac->job;
	struct agent_win *w;
	struct win_local *l;
	struct stat st;
	int32_t n = (m->flags & RMAD_WINF_ALL) ? 0 : m->gsize;
	int status = RMAD_ERR_ARG;
	struct agent_win tmp = { .key = m->key, .block = -1 };
	struct win_local tl = { .client = c, .gen = ac->gen };

	if (!ac->registered || !j || !j->map_ready) {
		status = RMAD_ERR_SYNC;
		goto refuse;
	}
	if (m->gsize < 1 || m->gsize > j->size ||
	    (!(m->flags & RMAD_WINF_ALL) &&
	     (m->gsize > RMAD_WIN_GROUP_MAX ||
	      len != sizeof(*m) + sizeof(int32_t) * (size_t)n)) ||
	    ((m->flags & RMAD_WINF_ALL) &&
	     (len != sizeof(*m) || m->gsize != j->size)) ||
	    m->grank < 0 || m->grank >= m->gsize || m->disp_unit < 1 ||
	    m->size > WIN_SIZE_MAX || fd < 0 || fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_size < m->size)
		goto refuse;
	if (n && m->ranks[m->grank] != ac->rank)
		goto refuse;
	if (!n && m->grank != ac->rank)
		goto refuse;
	for (int32_t i = 0; i < n; i++)
		if (m->ranks[i] < 0 || m->ranks[i] >= j->size)
			goto refuse;

	w = win_find(j, m->key);
	if (w && (w->gsize != m->gsize || w->ready || w->failed)) {
		status = w->failed ? RMAD_ERR_PROC_FAILED : RMAD_ERR_ARG;
		goto refuse;
	}
	if (!w) {
		w = win_new(j, m->key, m->gsize);
		if (!w) {
			status = RMAD_ERR_NOMEM;
			goto refuse;
		}
	}
	if (!w->local) {
		/* first local member: learn the group and our share of it */
		w->all = !n;
		if (n) {
			w->granks = malloc(sizeof(int32_t) * (size_t)n);
			if (!w->granks) {
				status = RMAD_ERR_NOMEM;
				goto refuse;
			}
			memcpy(w->granks, m->ranks, sizeof(int32_t) * (size_t)n);
		}
		w->nlocal = 0;
		w->root = -1;
		for (int32_t g = 0; g < w->gsize; g++) {
			int node = member_node(w, g);

			if (node == a->node)
				w->nlocal++;
			if (node >= 0 && (w->root < 0 || node < w->root))
				w->root = node;
		}
		w->local = calloc((size_t)(w->nlocal ? w->nlocal : 1),
				  sizeof(*w->local));
		if (!w->local || w->root < 0) {
			status = RMAD_ERR_NOMEM;
			goto refuse;
		}
	}
	for (int32_t i = 0; i < w->nhere; i++)
		if (w->local[i].rank == ac->rank)
			goto refuse;	/* the same rank twice */
	if (w->nhere >= w->nlocal)
		goto refuse;
	l = &w->local[w->nhere];
	l->fd = fd;
	l->size = m->size;
	l->disp_unit = m->disp_unit;
	l->rank = ac->rank;
	l->grank = m->grank;
	l->client = c;
	l->gen = ac->gen;
	l->waiting = 1;
	l->base = NULL;
	if (m->size) {
		l->base = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);
		if (l->base == MAP_FAILED) {
			l->base = NULL;
			status = RMAD_ERR_NOMEM;
			goto refuse;
		}
	}
	w->nhere++;
	if (w->nhere == w->nlocal)
		win_local_complete(a, w);
	return;
refuse:
	if (fd >= 0)
		close(fd);
	tl.waiting = 1;
	reply(a, &tmp, &tl, status);
}

void agent_win_free(struct agent *a, uint32_t c,
		    const struct rmad_ctl_win_free *m)
{
	struct agent_client *ac = &a->cl[c];
	struct agent_win *w = ac->job ? win_find(ac->job, m->key) : NULL;
	struct win_local *l = NULL;

	for (int32_t i = 0; w && i < w->nhere; i++)
		if (w->local[i].client == c && w->local[i].gen == ac->gen)
			l = &w->local[i];
	if (!w || !l || !w->ready || l->freeing || w->failed) {
		struct agent_win tmp = { .key = m->key, .block = -1 };
		struct win_local tl = { .client = c, .gen = ac->gen };

		reply(a, &tmp, &tl, w && w->failed ? RMAD_ERR_PROC_FAILED :
						     RMAD_ERR_ARG);
		return;
	}
	l->freeing = 1;
	l->waiting = 1;
	if (++w->nfreeing == w->nlocal) {
		struct rmad_am_hdr h = {
			.type = RMAD_AM_WIN_FREE_ARRIVE,
			.job = w->job->key,
			.seq = w->key,
		};
		agent_am_send(a, w->root, &h, NULL, 0);
	}
}

/* ------------------------------------------------ messages from agents */

void agent_win_am(struct agent *a, const struct rmad_am_hdr *h,
		  const void *payload, struct agent_job *j)
{
	struct agent_win *w = win_find(j, h->seq);

	switch (h->type) {
	case RMAD_AM_WIN_JOIN:
	case RMAD_AM_WIN_READY: {
		const struct rmad_am_win *hw = payload;
		int32_t n = (int32_t)h->count;

		if (h->payload_len != sizeof(*hw) + (uint64_t)n *
				      sizeof(struct rmad_am_win_member) ||
		    hw->gsize < 1 || hw->gsize > j->size ||
		    (w && w->gsize != hw->gsize)) {
			rmad_warn("dropped a bad window packet from node %u",
				  h->src_node);
			return;
		}
		if (!w) {
			if (h->type == RMAD_AM_WIN_READY)
				return;	/* not ours: nothing local waits */
			w = win_new(j, h->seq, hw->gsize);
			if (!w)
				return;
		}
		meta_add(a, w, (const void *)(hw + 1), n);
		if (h->type == RMAD_AM_WIN_JOIN) {
			int seen = 0;
			int *p;

			for (int k = 0; k < w->nnodes; k++)
				seen |= w->nodes[k] == (int)h->src_node;
			if (!seen) {
				p = realloc(w->nodes, sizeof(int) *
					    (size_t)(w->nnodes + 1));
				if (!p)
					return;
				w->nodes = p;
				w->nodes[w->nnodes++] = (int)h->src_node;
			}
			if (w->nmeta < w->gsize)
				return;
			/* complete: every member node gets the table */
			for (int k = 0; k < w->nnodes; k++)
				if (w->nodes[k] != a->node)
					send_members(a, w->nodes[k],
						     RMAD_AM_WIN_READY, w,
						     w->meta, w->gsize);
			win_ready(a, w);
			return;
		}
		if (w->nmeta == w->gsize && !w->ready)
			win_ready(a, w);
		return;
	}
	case RMAD_AM_WIN_FREE_ARRIVE:
		if (!w || w->root != a->node)
			return;
		if (++w->free_arrived < w->nnodes)
			return;
		{
			struct rmad_am_hdr d = {
				.type = RMAD_AM_WIN_FREE_DONE,
				.job = j->key,
				.seq = w->key,
			};

			/* ourselves last: that destroys w */
			for (int k = 0; k < w->nnodes; k++)
				if (w->nodes[k] != a->node)
					agent_am_send(a, w->nodes[k], &d,
						      NULL, 0);
			agent_am_send(a, a->node, &d, NULL, 0);
		}
		return;
	case RMAD_AM_WIN_FREE_DONE:
		if (!w)
			return;
		for (int32_t i = 0; i < w->nhere; i++)
			if (w->local[i].waiting)
				reply(a, w, &w->local[i], 0);
		win_destroy(a, w);
		return;
	}
}

int agent_win_init(struct agent *a)
{
	blocks = calloc((size_t)a->p.max_windows, 1);
	return blocks ? 0 : RMAD_ERR_NOMEM;
}

void agent_win_fini(struct agent *a)
{
	while (wins)
		win_destroy(a, wins);
	free(blocks);
	blocks = NULL;
}
