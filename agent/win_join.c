/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win_join.c - windows across agents, the packets between them.  When
 * all of a node's members arrived (windows.c), its agent sends their
 * (size, disp_unit) to the window's root, the lowest node holding a
 * member (WIN_JOIN).  The root answers every member node with the whole
 * table once it is complete (WIN_READY).  Each agent then keeps that
 * table once for the node, as two numbers when every member has the
 * same size and unit, takes a window block in the segment, and answers
 * its members with the memfds of their same-node peers (win_ready), so
 * that rmad_win_shared_query and direct loads and stores work.  Joins
 * that reach the root before its group is known wait by node
 * (joined_keep) and are checked once it is (win_join_replay).
 *
 * Freeing mirrors it: FREE_ARRIVE to the root once a node's members all
 * freed, FREE_DONE from the root once every member node arrived.  Each
 * packet type has its own handler.
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
#include "win_state.h"
#include "win_join.h"
#include "log.h"
#include "rmad_abi.h"
#include "counter.h"
#include "util.h"

/* Send entries [0, n) in chunks that fit a message. */
void win_join_send_members(struct agent *a, int node, int type,
			 struct agent_win *w,
			 const struct rmad_am_win_member *m, int32_t n)
{
	size_t room = a->p.am_buf_size - sizeof(struct rmad_am_hdr) -
		      sizeof(struct rmad_am_win);
	int32_t per = (int32_t)(room / sizeof(*m)), off = 0;
	char buf[RMAD_AM_MAX_PAYLOAD];

	if (per > (int32_t)((sizeof(buf) - sizeof(struct rmad_am_win)) /
			    sizeof(*m)))
		per = (int32_t)((sizeof(buf) - sizeof(struct rmad_am_win)) /
				sizeof(*m));
	do {
		int32_t cnt = n - off > per ? per : n - off;
		struct rmad_am_win hw = {
			.wkey = w->key,
			.gsize = w->gsize,
			.first = off,
			.nentries = cnt,
		};
		struct rmad_am_hdr h = {
			.type = (uint8_t)type,
			.job = w->job->key,
		};

		memcpy(buf, &hw, sizeof(hw));
		memcpy(buf + sizeof(hw), m + off, sizeof(*m) * (size_t)cnt);
		am_send(a, node, &h, buf,
			      sizeof(hw) + sizeof(*m) * (size_t)cnt);
		off += cnt;
	} while (off < n);
}

static_assert(RMAD_WIN_PEERS_PER_MSG <= RMAD_MSG_MAXFDS, "peers per msg");

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
			if (p->created) {
				m.p[cnt].flags = RMAD_WINF_CREATE |
					(p->dynamic ? RMAD_WINF_DYNAMIC : 0);
				m.p[cnt].addr = p->addr;
				m.p[cnt].pid = (int32_t)a->cl[p->client].pid;
			}
			if (w->shared) {
				m.p[cnt].flags = RMAD_WINF_SHARED;
				m.p[cnt].addr = p->addr;
				m.p[cnt].pid = off - 1;	/* its control page */
			}
			fds[cnt++] = w->shared ? w->sfd : p->fd;
		}
		m.count = cnt;
		if (rmad_send_msg(a->cl[l->client].fd, &m, sizeof(m), fds,
				  cnt) < 0) {
			rmad_warn("window %llx: cannot send its peers to "
				  "client %u", (unsigned long long)w->key,
				  l->client);
			return;
		}
	}
}

static void win_close_fds(struct agent_win *w)
{
	for (int32_t i = 0; i < w->nhere; i++)
		if (w->local[i].fd >= 0) {
			close(w->local[i].fd);
			w->local[i].fd = -1;
		}
	if (w->meta_fd >= 0)
		close(w->meta_fd);
	if (w->sfd >= 0)
		close(w->sfd);
	w->meta_fd = w->sfd = -1;
}

/*
 * The table is complete here: take a block and answer the members.  May
 * destroy w (a window every node refuses: its nodes have the table, so
 * no packet of it comes any more).
 */
static void win_ready(struct agent *a, struct agent_win *w)
{
	int b, st = 0;

	/* a node found memory that cannot be reached in place: the window
	 * is refused on every member, each node deciding alike */
	for (int32_t i = 0; i < w->gsize && !st; i++)
		st = w->meta[i].status;
	if (st) {
		for (int32_t i = 0; i < w->nhere; i++)
			win_state_reply(a, w, &w->local[i], st < 0 ? st : RMAD_ERR_PERM);
		w->failed = 1;
		/* every node answers its members alike and has the table:
		 * nothing of the window is left to come, and its memory
		 * (and quota) goes now, not at the job's end */
		win_state_destroy(a, w);
		return;
	}

	w->uniform = 1;
	w->usize = w->meta[0].size;
	w->udisp = w->meta[0].disp_unit;
	for (int32_t i = 1; i < w->gsize; i++)
		if (w->meta[i].size != w->usize ||
		    w->meta[i].disp_unit != w->udisp)
			w->uniform = 0;
	if (!w->uniform || !w->all) {
		/* the table sorted by rank, in a memfd the members map */
		if (win_state_sort(w) < 0) {
			for (int32_t i = 0; i < w->nhere; i++)
				win_state_reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
			w->failed = 1;
			return;
		}
	}
	if (a->fab && rmad_fabric_has_rma(a->fab)) {
		/* who is open to fi_write/fi_read, laid out like sorted */
		w->rkeys = calloc((size_t)w->gsize, sizeof(*w->rkeys));
		for (int32_t g = 0; w->rkeys && g < w->gsize; g++) {
			int32_t k = win_state_member_index(w, agent_win_rank_of(w, g));

			if (k < 0)
				continue;
			w->rkeys[k].key = w->meta[g].mr_key;
			w->rkeys[k].addr = w->meta[g].mr_addr;
			w->rkeys[k].ok = w->meta[g].has_mr == 1;
		}
	}
	if (w->uniform) {
		/* same_size/same_disp_unit: two numbers, not a table */
		free(w->meta);
		w->meta = NULL;
	}
	if (wintab_block_take(a, w)) {
		/* (make_sorted's memfd goes with the window) */
		rmad_err("window %llx: no memory for its window block (%u "
			 "windows here)", (unsigned long long)w->key,
			 a->wn.nwins);
		for (int32_t i = 0; i < w->nhere; i++)
			win_state_reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
		w->failed = 1;
		return;
	}
	b = w->block;
	w->ready = 1;
	for (int32_t i = 0; i < w->nhere; i++) {
		struct win_local *l = &w->local[i];

		if (!win_state_client_alive(a, l))
			continue;
		win_state_reply(a, w, l, 0);
		send_peers(a, w, l);
	}
	/* the members have their descriptors: what the agent needs is
	 * mapped, so the window holds no descriptor from now on */
	win_close_fds(w);
	rmad_dbg("window %llx ready: %d members, block %d%s",
		 (unsigned long long)w->key, w->gsize, b,
		 w->uniform ? ", uniform" : "");
	if (a->win_hooks.ready)
		a->win_hooks.ready(a, w);	/* notices that came early */
}

/*
 * Entries of the table.  A joining node speaks only for the members on
 * it, which only the group tells: entries that come before it is known
 * here (no local member yet) are kept by node, at most as many from a
 * node as it serves ranks of the job (no more can be its own), and
 * checked once it is (joined_replay).  So no node can take another's
 * place in the table, before or after, nor push another's entries out.
 */
static void joined_keep(struct agent *a, struct agent_win *w,
			int32_t gsize, const struct rmad_am_win_member *m,
			int32_t n, int from)
{
	struct win_joined *r = NULL;
	int32_t take;

	for (int32_t k = 0; k < w->njoined && !r; k++)
		if (w->joined[k].node == from)
			r = &w->joined[k];
	if (!r) {
		struct win_joined *p = realloc(w->joined, sizeof(*p) *
					       (size_t)(w->njoined + 1));
		int32_t cap = agent_job_node_ranks(w->job, from);

		if (cap > gsize)
			cap = gsize;
		if (!p)
			goto lost;
		w->joined = p;
		if (!w->job->win_early)
			w->job->win_early = calloc((size_t)a->nnodes,
						   sizeof(int32_t));
		if (!w->job->win_early || from < 0 || from >= a->nnodes)
			goto lost;
		r = &w->joined[w->njoined];
		*r = (struct win_joined){ .node = from, .gsize = gsize,
					  .cap = cap };
		r->m = malloc(sizeof(*r->m) * (size_t)(cap ? cap : 1));
		if (!r->m)
			goto lost;
		w->njoined++;
		w->job->win_early[from]++;
	}
	take = r->gsize != gsize ? 0 : n < r->cap - r->n ? n : r->cap - r->n;
	memcpy(&r->m[r->n], m, sizeof(*m) * (size_t)take);
	r->n += take;
	if (take < n) {
		a->st.pkts_dropped++;
		rmad_warn("window %llx: node %d joined with more entries than "
			  "it serves ranks (%d), or another group size: %d "
			  "dropped", (unsigned long long)w->key, from, r->cap,
			  n - take);
	}
	return;
lost:
	/* the window then waits for entries that never come: said */
	rmad_err("window %llx: no memory to keep node %d's entries",
		 (unsigned long long)w->key, from);
}

/* Entries of the table; from: the node that joined with them, or -1
 * for the root's table (which speaks for every member).  The number
 * taken. */
static int32_t meta_add(struct agent *a, struct agent_win *w,
			const struct rmad_am_win_member *m, int32_t n,
			int from)
{
	int32_t taken = 0;

	for (int32_t i = 0; i < n; i++) {
		int32_t g = m[i].grank;

		if (from >= 0 && g >= 0 && g < w->gsize &&
		    win_state_member_node(w, g) != from) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped node %d's entry for "
				  "member %d, which is on node %d",
				  (unsigned long long)w->key, from, g,
				  win_state_member_node(w, g));
			continue;
		}
		if (g < 0 || g >= w->gsize || !w->meta ||
		    w->meta[g].grank >= 0 || m[i].disp_unit < 1 ||
		    m[i].size > WIN_SIZE_MAX) {
			rmad_warn("window %llx: bad or repeated member %d",
				  (unsigned long long)w->key, g);
			continue;
		}
		w->meta[g] = m[i];
		w->nmeta++;
		taken++;
	}
	return taken;
}

/* Root: node joined (once in w->nodes); -1 without memory. */
static int node_joined(struct agent_win *w, int node)
{
	int *p;

	for (int k = 0; k < w->nnodes; k++)
		if (w->nodes[k] == node)
			return 0;
	p = realloc(w->nodes, sizeof(int) * (size_t)(w->nnodes + 1));
	if (!p)
		return -1;
	w->nodes = p;
	w->nodes[w->nnodes++] = node;
	return 0;
}

/*
 * May node's join make window key of job j here, before a member here
 * did?  A rank waits in one window's creation at a time, and its node
 * joins a window for it only then: a node is ahead of us in at most as
 * many windows as it serves ranks of the job, and all nodes together in
 * fewer than the job has ranks.  So no node's joins crowd out another's,
 * and what a node can make us keep is bounded by its own share of the
 * job, however many windows the job makes.  Counted, not searched.
 */
static int remote_win_ok(struct agent *a, struct agent_job *j, int node)
{
	int32_t cap = agent_job_node_ranks(j, node), mine;

	if (node < 0 || node >= a->nnodes)
		return 0;
	mine = j->win_early ? j->win_early[node] : 0;
	if (j->win_early_all < j->size && mine < cap)
		return 1;
	a->st.pkts_dropped++;
	rmad_warn("job %s: dropped node %d's join of a window none of our "
		  "members made yet: %d such windows from it (it serves %d "
		  "ranks), %d in all (the job has %d ranks)", j->nspace, node,
		  mine, cap, j->win_early_all, j->size);
	return 0;
}

/* The group is known now: the entries that came before it, checked
 * (and all dropped unless we collect the table). */
void win_join_replay(struct agent *a, struct agent_win *w)
{
	for (int32_t k = 0; k < w->njoined; k++) {
		struct win_joined *r = &w->joined[k];

		if (w->root != a->node || r->gsize != w->gsize) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped node %d's join (of %d "
				  "members; the window has %d, its root is "
				  "node %d)", (unsigned long long)w->key,
				  r->node, r->gsize, w->gsize, w->root);
			continue;
		}
		if (meta_add(a, w, r->m, r->n, r->node) > 0 &&
		    node_joined(w, r->node))
			rmad_err("window %llx: no memory for node %d's join",
				 (unsigned long long)w->key, r->node);
	}
	win_state_joined_free(w);
}


/* ------------------------------------------------ messages from agents */

/* The job a packet names, or NULL when it is not one this agent serves
 * with the node it came from: dropped. */
static struct agent_job *win_pkt_job(struct agent *a,
				     const struct rmad_am_hdr *h)
{
	struct agent_job *j = agent_job_find(a, h->job);

	if (!j || !j->map_ready || !agent_job_on_node(a, j, (int)h->src_node)) {
		a->st.pkts_dropped++;
		return NULL;
	}
	return j;
}

/* A checked WIN_JOIN or WIN_READY: its window, made here by the first
 * join when no member here made it yet; NULL when it is dropped. */
static struct agent_win *win_pkt_take(struct agent *a,
				      const struct rmad_am_hdr *h,
				      const struct rmad_am_win *hw,
				      struct agent_job *j)
{
	struct agent_win *w = wintab_find(a, j, hw->wkey);
	int32_t n = hw->nentries;

	if (n < 0 || h->payload_len != sizeof(*hw) + (uint64_t)n *
				       sizeof(struct rmad_am_win_member) ||
	    hw->gsize < 1 || hw->gsize > j->size ||
	    (w && w->local && w->gsize != hw->gsize)) {
		rmad_warn("dropped a bad window packet from node %u",
			  h->src_node);
		return NULL;
	}
	if (h->type == RMAD_AM_WIN_READY &&
	    (!w || (int)h->src_node != w->root)) {
		/* not ours (nothing local waits), or not from the root
		 * that collects the table */
		if (w) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped a table from node %u "
				  "(its root is %d)",
				  (unsigned long long)w->key, h->src_node,
				  w->root);
		}
		return NULL;
	}
	if (w)
		return w;
	if (!remote_win_ok(a, j, (int)h->src_node))
		return NULL;
	w = win_state_new(a, j, hw->wkey, hw->gsize);
	if (!w) {
		rmad_err("window %llx: no memory for node %u's join",
			 (unsigned long long)hw->wkey, h->src_node);
		return NULL;
	}
	w->joined_first = 1;
	j->win_early_all++;
	return w;
}

/* WIN_JOIN: a member node's entries, to the root. */
static void on_win_join(struct agent *a, const struct rmad_am_hdr *h,
			const void *payload)
{
	struct rmad_am_win hw;
	const struct rmad_am_win_member *m = (const void *)
		((const char *)payload + sizeof(hw));
	struct agent_job *j;
	struct agent_win *w;
	int32_t n, taken;

	if (am_payload(a, h, payload, &hw, sizeof(hw), 0))
		return;
	j = win_pkt_job(a, h);
	w = j ? win_pkt_take(a, h, &hw, j) : NULL;
	n = hw.nentries;
	if (!w)
		return;
	if (!w->local) {
		/* before the group: kept, checked once it is */
		joined_keep(a, w, hw.gsize, m, n, (int)h->src_node);
		return;
	}
	if (w->root != a->node || w->ready || w->failed) {
		a->st.pkts_dropped++;
		rmad_warn("window %llx: dropped a join from node %u "
			  "(its root is %d%s)", (unsigned long long)w->key,
			  h->src_node, w->root, w->ready || w->failed ?
			  ", and the table is made" : "");
		return;
	}
	taken = meta_add(a, w, m, n, (int)h->src_node);
	/* a node counts among the members' nodes (the table goes to it,
	 * its free is waited for) only with an entry of its own */
	if (taken > 0 && node_joined(w, (int)h->src_node))
		return;
	if (w->nmeta < w->gsize)
		return;
	/* complete: every member node gets the table */
	for (int k = 0; k < w->nnodes; k++)
		if (w->nodes[k] != a->node)
			win_join_send_members(a, w->nodes[k], RMAD_AM_WIN_READY, w,
					 w->meta, w->gsize);
	win_ready(a, w);
}

/* WIN_READY: the whole table, from the root. */
static void on_win_ready(struct agent *a, const struct rmad_am_hdr *h,
			 const void *payload)
{
	struct rmad_am_win hw;
	struct agent_job *j;
	struct agent_win *w;

	if (am_payload(a, h, payload, &hw, sizeof(hw), 0))
		return;
	j = win_pkt_job(a, h);
	w = j ? win_pkt_take(a, h, &hw, j) : NULL;
	if (!w)
		return;
	meta_add(a, w, (const void *)((const char *)payload + sizeof(hw)),
		 hw.nentries, -1);
	if (w->nmeta == w->gsize && !w->ready)
		win_ready(a, w);
}

/* WIN_FREE_ARRIVE: a member node's members all freed, to the root. */
static void on_win_free_arrive(struct agent *a, const struct rmad_am_hdr *h,
			       const void *payload)
{
	struct rmad_am_hdr d = { .type = RMAD_AM_WIN_FREE_DONE };
	struct rmad_am_win_sync s;
	struct agent_job *j;
	struct agent_win *w;
	int k = 0;

	if (am_payload(a, h, payload, &s, sizeof(s), 1))
		return;
	j = win_pkt_job(a, h);
	w = j ? wintab_find(a, j, s.wkey) : NULL;
	if (!w || w->root != a->node)
		return;
	/* once from each member node, and only once the table is made (its
	 * nodes have their window then): an extra or an early one would
	 * free the window under the members still in it, or answer the
	 * ones making it */
	while (k < w->nnodes && w->nodes[k] != (int)h->src_node)
		k++;
	if (k < w->nnodes && !w->free_from)
		w->free_from = calloc((size_t)w->nnodes, 1);
	if (k == w->nnodes || !w->ready || !w->free_from || w->free_from[k]) {
		a->st.pkts_dropped++;
		rmad_warn("window %llx: dropped a free from node %u",
			  (unsigned long long)w->key, h->src_node);
		return;
	}
	w->free_from[k] = 1;
	if (++w->free_arrived < w->nnodes)
		return;
	d.job = j->key;
	memset(&s, 0, sizeof(s));
	s.wkey = w->key;
	/* ourselves last: that destroys w */
	for (k = 0; k < w->nnodes; k++)
		if (w->nodes[k] != a->node)
			am_send(a, w->nodes[k], &d, &s, sizeof(s));
	am_send(a, a->node, &d, &s, sizeof(s));
}

/* WIN_FREE_DONE: every member node freed, from the root. */
static void on_win_free_done(struct agent *a, const struct rmad_am_hdr *h,
			     const void *payload)
{
	struct rmad_am_win_sync s;
	struct agent_job *j;
	struct agent_win *w;

	if (am_payload(a, h, payload, &s, sizeof(s), 1))
		return;
	j = win_pkt_job(a, h);
	w = j ? wintab_find(a, j, s.wkey) : NULL;
	if (!w)
		return;
	if ((int)h->src_node != w->root) {
		a->st.pkts_dropped++;
		rmad_warn("window %llx: dropped a free's end from node %u "
			  "(its root is %d)", (unsigned long long)w->key,
			  h->src_node, w->root);
		return;
	}
	for (int32_t i = 0; i < w->nhere; i++)
		if (w->local[i].waiting)
			win_state_reply(a, w, &w->local[i], 0);
	win_state_destroy(a, w);
}

void win_join_init(struct agent *a)
{
	am_register(a, RMAD_AM_WIN_JOIN, on_win_join);
	am_register(a, RMAD_AM_WIN_READY, on_win_ready);
	am_register(a, RMAD_AM_WIN_FREE_ARRIVE, on_win_free_arrive);
	am_register(a, RMAD_AM_WIN_FREE_DONE, on_win_free_done);
}
