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
 * The fence barrier and the PSCW notices between agents: winsync.c.
 *
 * A member that dies, or a JOB_FAIL from another node, fails every
 * pending create and free of the job with RMAD_ERR_PROC_FAILED.
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
#include "windows.h"
#include "wintab.h"
#include "log.h"
#include "rmad_abi.h"
#include "counter.h"
#include "util.h"

#define WIN_SIZE_MAX	(1ull << 40)	/* 1 TiB per rank */

/* The windows of job j that others' joins made here before any member
 * here (remote_win_ok bounds them), and their entries by node. */
static void early_end(struct agent_win *w)
{
	if (w->joined_first) {
		w->joined_first = 0;
		w->job->win_early_all--;
	}
}

static struct agent_win *win_new(struct agent *a, struct agent_job *j,
				 uint64_t key, int32_t gsize)
{
	struct agent_win *w;

	w = calloc(1, sizeof(*w));
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
	w->meta_fd = -1;
	w->sfd = -1;
	if (wintab_insert(a, w)) {
		free(w->meta);
		free(w);
		return NULL;
	}
	return w;
}

/* Entries a node joined with before the group was known (meta_add). */
struct win_joined {
	int node;
	int32_t gsize;			/* the group's size it said */
	int32_t n, cap;
	struct rmad_am_win_member *m;
};

static void joined_free(struct agent_win *w)
{
	for (int32_t k = 0; k < w->njoined; k++) {
		if (w->job->win_early)
			w->job->win_early[w->joined[k].node]--;
		free(w->joined[k].m);
	}
	free(w->joined);
	w->joined = NULL;
	w->njoined = 0;
}

/*
 * A freed window's mapping that was open to the fabric, and its
 * registration.  A transfer the provider already took may still be
 * placing bytes there (tcp reads a write's data off the socket straight
 * into the mapping, after the key was checked; shm's fast RMA is a
 * process_vm_writev of the origin's agent into ours, checked by no
 * key): unmapped at once, it writes into freed memory, or into whatever
 * the address maps next (t/deaths.sh found the first).  Nor may the
 * registration close at once: tcp;ofi_rxm answers a write that names a
 * closed key by dropping the connection to the origin's agent, and with
 * it every message queued on it, other ranks' and other jobs' (a lock
 * grant, a barrier: their job fails; t/deaths.sh found that too).  So
 * both stay WIN_KEEP_NS after the free: by then the origins have heard
 * of the death or the free (one message) and every chunk they had in
 * flight (rdma_chunk bytes, a few per op) has landed or failed.
 */
#define WIN_KEEP_NS	(10ull * 1000 * 1000 * 1000)
struct win_keep {
	struct win_keep *next;
	void *base;
	size_t len;
	struct rmad_fabric_mr *mr;
	uint64_t until;
};

static void keep_mapping(struct agent *a, void *base, size_t len,
			 struct rmad_fabric_mr *mr)
{
	struct win_keep *k = malloc(sizeof(*k));

	if (!k) {
		/* rather a leak of address space than a write into it */
		rmad_err("out of memory keeping a window's mapping: leaked");
		return;
	}
	k->mr = mr;
	k->base = base;
	k->len = len;
	k->until = rmad_now_ns() + WIN_KEEP_NS;
	k->next = a->wn.kept;
	a->wn.kept = k;
}

/* Kept mappings whose time is up go (now: 0 at exit: all of them). */
void agent_win_tick(struct agent *a, uint64_t now)
{
	for (struct win_keep **pp = &a->wn.kept; *pp;) {
		struct win_keep *k = *pp;

		if (now && now < k->until) {
			pp = &k->next;
			continue;
		}
		*pp = k->next;
		rmad_fabric_mr_close(k->mr);	/* before its memory goes */
		munmap(k->base, k->len);
		free(k);
	}
}

/*
 * Member l of w died: its same-node peers, which reach its window with
 * loads and stores of their own, see its control page say so (every
 * later access and synchronization on it fails, client/rma.c); requests
 * from other nodes are refused (rma_pkt.c), and their origins fail
 * every op on it once they hear of the death.  Its registration stays
 * open until the window goes, and a while after (keep_mapping): what
 * lands there meanwhile lands in memory no one reads, where a write to
 * a closed key would cost the connection it came on.
 */
void agent_win_member_dead(struct agent *a, struct agent_win *w,
			   struct win_local *l)
{
	struct rmad_win_ctl *ctl = l->base;

	(void)w;
	(void)a;
	l->dead = 1;
	if (ctl) {
		/* release: what the agent did for the death (its locks
		 * released) comes before the flag; and a peer asleep on
		 * the lock word (held, maybe for origins elsewhere that
		 * will not unlock it now) looks at it */
		__atomic_store_n(&ctl->dead, 1, __ATOMIC_RELEASE);
		rmad_futex_wake(&ctl->lock, INT32_MAX);
	}
}

static void win_destroy(struct agent *a, struct agent_win *w)
{
	wintab_remove(a, w);
	early_end(w);
	wintab_quota_release(a, w);
	if (a->win_gone_hook)
		a->win_gone_hook(a, w);	/* the RMA layer's state */
	for (int32_t i = 0; i < w->nhere; i++) {
		struct win_local *l = &w->local[i];

		/* a window freed as MPI says (every epoch on it complete
		 * everywhere) has nothing in flight; one of a failed job,
		 * or with a dead member, may (keep_mapping) */
		if (l->base && l->map_len && l->fab_open && !a->stopping &&
		    (w->failed || w->job->failed || l->dead)) {
			keep_mapping(a, l->base, l->map_len, l->mr);
		} else {
			/* closed before the memory it covers goes */
			rmad_fabric_mr_close(l->mr);
			if (l->base && l->map_len)
				munmap(l->base, l->map_len);
		}
		l->mr = NULL;
		if (w->local[i].fd >= 0)
			close(w->local[i].fd);
		free(w->local[i].posts);
		free(w->local[i].reg);
	}
	wintab_block_put(a, w);
	if (w->meta_fd >= 0)
		close(w->meta_fd);
	if (w->smap)
		munmap(w->smap, w->slen);
	if (w->sfd >= 0)
		close(w->sfd);
	free(w->sorted);
	free(w->rkeys);
	free(w->early);
	free(w->local);
	free(w->granks);
	free(w->meta);
	joined_free(w);
	free(w->nodes);
	free(w->fence_from);
	free(w->free_from);
	free(w);
}

static int cmp_meta(const void *x, const void *y)
{
	const struct rmad_win_meta *p = x, *q = y;

	return (p->rank > q->rank) - (p->rank < q->rank);
}

/* The table by job rank, kept here and in a memfd for the members. */
static int make_sorted(struct agent_win *w)
{
	size_t len = sizeof(*w->sorted) * (size_t)w->gsize;

	w->sorted = malloc(len);
	if (!w->sorted)
		return -1;
	for (int32_t g = 0; g < w->gsize; g++) {
		w->sorted[g].rank = w->all ? g : w->granks[g];
		w->sorted[g].disp_unit = w->meta[g].disp_unit;
		w->sorted[g].size = w->meta[g].size;
	}
	qsort(w->sorted, (size_t)w->gsize, sizeof(*w->sorted), cmp_meta);
	/* sealed: the members map it, and none may change its size or,
	 * once written, its bytes under the others */
	w->meta_fd = rmad_memfd_sealed("rmad-winmeta", len, 1);
	if (w->meta_fd < 0) {
		w->meta_fd = -1;
		return -1;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = pwrite(w->meta_fd, (char *)w->sorted + off,
				   len - off, (off_t)off);

		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return rmad_memfd_seal(w->meta_fd, F_SEAL_WRITE) ? -1 : 0;
}

struct agent_win *agent_win_by_block(struct agent *a, uint32_t block,
				     uint64_t key)
{
	struct agent_win *w;

	if (block >= a->wn.bused)
		return NULL;
	w = a->wn.blocks[block];
	/* a ready window stays usable by the survivors of a failed job */
	return w && w->ready && w->key == key ? w : NULL;
}

struct agent_win *agent_win_by_key(struct agent *a, struct agent_job *j,
				   uint64_t key)
{
	struct agent_win *w = wintab_find(a, j, key);

	/* not yet ready is fine: every member mapped its memory already;
	 * a ready window stays usable by the survivors of a failed job */
	return w && (w->ready || !w->failed) ? w : NULL;
}

/*
 * The window named key in client c's job, if c (this generation) is a
 * member and is not freeing it; NULL otherwise.  For requests naming a window by
 * key, such as rmad_win_stats: the key comes from the client, so it is
 * only ever looked up, never trusted.
 */
struct agent_win *agent_win_of_client(struct agent *a, uint32_t c,
				      uint64_t key)
{
	struct agent_client *ac = &a->cl[c];
	struct agent_win *w = ac->job ? wintab_find(a, ac->job, key) : NULL;

	for (int32_t i = 0; w && w->ready && i < w->nhere; i++)
		if (w->local[i].client == c && w->local[i].gen == ac->gen &&
		    !w->local[i].freeing)
			return w;
	return NULL;
}

struct agent_win *agent_win_first(struct agent *a)
{
	return a->wn.wins;
}

int agent_win_rank_of(struct agent_win *w, int32_t grank)
{
	if (grank < 0 || grank >= w->gsize)
		return -1;
	return w->all ? grank : w->granks[grank];
}

/* Index of rank in the sorted table, or -1. */
static int32_t sorted_find(const struct agent_win *w, int32_t rank)
{
	int32_t lo = 0, hi = w->gsize - 1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (w->sorted[mid].rank == rank)
			return mid;
		if (w->sorted[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Index of rank in tables kept like sorted (by rank when there is no
 * sorted table), or -1 if it is no member. */
static int32_t member_index(const struct agent_win *w, int32_t rank)
{
	if (!w->sorted)
		return rank >= 0 && rank < w->gsize ? rank : -1;
	return sorted_find(w, rank);
}

int agent_win_target(struct agent_win *w, int32_t rank, uint64_t *size,
		     int32_t *disp_unit)
{
	int32_t k = member_index(w, rank);

	if (k < 0)
		return RMAD_ERR_RANK;
	*size = w->sorted ? w->sorted[k].size : w->usize;
	*disp_unit = w->sorted ? w->sorted[k].disp_unit : w->udisp;
	return 0;
}

int agent_win_rkey(struct agent_win *w, int32_t rank, uint64_t *key,
		   uint64_t *addr)
{
	int32_t k = w->rkeys ? member_index(w, rank) : -1;

	if (k < 0 || !w->rkeys[k].ok)
		return -1;
	*key = w->rkeys[k].key;
	*addr = w->rkeys[k].addr;
	return 0;
}

struct win_local *agent_win_local(struct agent_win *w, int32_t rank)
{
	for (int32_t i = 0; i < w->nhere; i++)
		if (w->local[i].rank == rank)
			return &w->local[i];
	return NULL;
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
	r.usize = w->usize;
	r.udisp = w->udisp;
	r.meta = status == 0 && w->meta_fd >= 0;
	rmad_send_msg(a->cl[l->client].fd, &r, sizeof(r), &w->meta_fd,
		      r.meta ? 1 : 0);
}

/* Fail everything of job j that waits: a member died. */
void agent_win_job_failed(struct agent *a, struct agent_job *j)
{
	for (struct agent_win *w = a->wn.wins; w; w = w->next) {
		int fencing = 0;

		if (w->job != j)
			continue;
		w->failed = 1;
		for (int32_t i = 0; i < w->nhere; i++) {
			struct win_local *l = &w->local[i];
			struct rmad_win_ctl *ctl = l->base;

			if (l->waiting)
				reply(a, w, l, RMAD_ERR_PROC_FAILED);
			fencing |= l->fencing;
			l->fencing = 0;
			if (ctl) {
				/* the same-node fence barrier: wake its
				 * waiters with the news */
				__atomic_store_n(&ctl->bar_failed, 1,
						 __ATOMIC_SEQ_CST);
				rmad_futex_wake(&ctl->bar_gen, INT32_MAX);
				/* and PSCW's waiters: start, wait */
				rmad_futex_wake(&ctl->post_gen, INT32_MAX);
				rmad_futex_wake(&ctl->pscw_done, INT32_MAX);
			}
		}
		w->fence_here = 0;
		if (fencing && a->win_fence_hook)
			a->win_fence_hook(a, w, RMAD_ERR_PROC_FAILED);
		/* origins waiting for a post that will not come */
		if (a->win_post_hook)
			a->win_post_hook(a, w);
	}
}

/* The job is gone from this agent: drop its windows. */
void agent_win_job_freed(struct agent *a, struct agent_job *j)
{
	struct agent_win *w = a->wn.wins, *next;

	for (; w; w = next) {
		next = w->next;
		if (w->job == j)
			win_destroy(a, w);
	}
	free(j->win_early);
	j->win_early = NULL;
	j->win_early_all = 0;
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
	char buf[RMAD_AM_MAX_PAYLOAD];

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
		am_send(a, node, &h, buf,
			      sizeof(*hw) + sizeof(*m) * (size_t)cnt);
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
			reply(a, w, &w->local[i], st < 0 ? st : RMAD_ERR_PERM);
		w->failed = 1;
		/* every node answers its members alike and has the table:
		 * nothing of the window is left to come, and its memory
		 * (and quota) goes now, not at the job's end */
		win_destroy(a, w);
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
		if (make_sorted(w) < 0) {
			for (int32_t i = 0; i < w->nhere; i++)
				reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
			w->failed = 1;
			return;
		}
	}
	if (a->fab && rmad_fabric_has_rma(a->fab)) {
		/* who is open to fi_write/fi_read, laid out like sorted */
		w->rkeys = calloc((size_t)w->gsize, sizeof(*w->rkeys));
		for (int32_t g = 0; w->rkeys && g < w->gsize; g++) {
			int32_t k = member_index(w, agent_win_rank_of(w, g));

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
			reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
		w->failed = 1;
		return;
	}
	b = w->block;
	w->ready = 1;
	for (int32_t i = 0; i < w->nhere; i++) {
		struct win_local *l = &w->local[i];

		if (!alive(a, l))
			continue;
		reply(a, w, l, 0);
		send_peers(a, w, l);
	}
	/* the members have their descriptors: what the agent needs is
	 * mapped, so the window holds no descriptor from now on */
	win_close_fds(w);
	rmad_dbg("window %llx ready: %d members, block %d%s",
		 (unsigned long long)w->key, w->gsize, b,
		 w->uniform ? ", uniform" : "");
	if (a->win_ready_hook)
		a->win_ready_hook(a, w);	/* notices that came early */
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
		    member_node(w, g) != from) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped node %d's entry for "
				  "member %d, which is on node %d",
				  (unsigned long long)w->key, from, g,
				  member_node(w, g));
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
static void joined_replay(struct agent *a, struct agent_win *w)
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
	joined_free(w);
}

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
			reply(a, w, &w->local[i], err);
		w->failed = 1;
		return;
	}
	m = calloc((size_t)w->nhere, sizeof(*m));
	if (!m) {
		for (int32_t i = 0; i < w->nhere; i++)
			reply(a, w, &w->local[i], RMAD_ERR_NOMEM);
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
	int32_t n = (m->flags & RMAD_WINF_ALL) ? 0 : m->gsize;
	int status = RMAD_ERR_ARG, cstatus = 0;
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
	    m->size > WIN_SIZE_MAX ||
	    (m->flags & ~(uint32_t)(RMAD_WINF_ALL | RMAD_WINF_CREATE |
				    RMAD_WINF_DYNAMIC | RMAD_WINF_SHARED |
				    RMAD_WINF_NONCONTIG)))
		goto refuse;
	if ((m->flags & RMAD_WINF_DYNAMIC) &&
	    (!(m->flags & RMAD_WINF_CREATE) || m->size || m->disp_unit != 1))
		goto refuse;
	if (m->flags & RMAD_WINF_SHARED) {
		/* the agent makes the memory: no descriptor comes along */
		if (fd >= 0 || (m->flags & (RMAD_WINF_CREATE |
					    RMAD_WINF_DYNAMIC)))
			goto refuse;
	} else {
		/* what we map of it: the control page, then the dynamic
		 * window's region table or the allocated window; sealed at
		 * that size at least, or refused */
		uint64_t need = RMAD_WIN_CTL_SIZE +
			((m->flags & RMAD_WINF_DYNAMIC) ? RMAD_WIN_DYN_SIZE :
			 (m->flags & RMAD_WINF_CREATE) ? 0 : m->size);

		status = agent_memfd_check(a, c, fd, need, "window");
		if (status)
			goto refuse;
		status = RMAD_ERR_ARG;
	}
	if (m->flags & RMAD_WINF_CREATE) {
		/* unreachable memory is the whole window's answer (status,
		 * through the root), so that no member waits for another */
		status = winmem_check(a, c, m->addr, m->size,
				      RMAD_WIN_CTL_SIZE);
		if (status && status != RMAD_ERR_PERM)
			goto refuse;
		cstatus = status;
		status = RMAD_ERR_ARG;
	}
	if (n && m->ranks[m->grank] != ac->rank)
		goto refuse;
	if (!n && m->grank != ac->rank)
		goto refuse;
	for (int32_t i = 0; i < n; i++)
		if (m->ranks[i] < 0 || m->ranks[i] >= j->size)
			goto refuse;

	w = wintab_find(a, j, m->key);
	if (w && !w->local && w->gsize != m->gsize) {
		/* made by joins of another group size: nothing is in its
		 * table yet, and joined_replay drops what said so */
		struct rmad_am_win_member *p = realloc(w->meta,
			sizeof(*p) * (size_t)m->gsize);

		if (!p) {
			status = RMAD_ERR_NOMEM;
			goto refuse;
		}
		w->meta = p;
		w->gsize = m->gsize;
		w->nmeta = 0;
		for (int32_t g = 0; g < w->gsize; g++)
			w->meta[g].grank = -1;
	}
	if (w && (w->gsize != m->gsize || w->ready || w->failed)) {
		status = w->failed ? RMAD_ERR_PROC_FAILED : RMAD_ERR_ARG;
		goto refuse;
	}
	if (!w) {
		w = win_new(a, j, m->key, m->gsize);
		if (!w) {
			status = RMAD_ERR_NOMEM;
			goto refuse;
		}
	}
	if (!w->local) {
		/* first local member: learn the group and our share of it */
		w->all = !n;
		w->dynamic = !!(m->flags & RMAD_WINF_DYNAMIC);
		w->shared = !!(m->flags & RMAD_WINF_SHARED);
		w->noncontig = !!(m->flags & RMAD_WINF_NONCONTIG);
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
		early_end(w);
		/* over the user's quota: refused on every member, through
		 * the root like unreachable memory */
		w->quota_err = wintab_quota_charge(a, w, ac->uid);
		joined_replay(a, w);	/* entries that came before it */
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
	l->fd = fd;
	l->size = m->size;
	l->disp_unit = m->disp_unit;
	l->rank = ac->rank;
	l->grank = m->grank;
	l->client = c;
	l->gen = ac->gen;
	l->waiting = 1;
	l->lk = NULL;
	l->status = cstatus ? cstatus : w->quota_err;
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
	struct agent_win *w = ac->job ? wintab_find(a, ac->job, m->key) : NULL;
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
		am_send(a, w->root, &h, NULL, 0);
	}
}

/* ------------------------------------------------ messages from agents */

void agent_win_am(struct agent *a, const struct rmad_am_hdr *h,
		  const void *payload, struct agent_job *j)
{
	struct agent_win *w = wintab_find(a, j, h->seq);

	switch (h->type) {
	case RMAD_AM_WIN_JOIN:
	case RMAD_AM_WIN_READY: {
		const struct rmad_am_win *hw = payload;
		int32_t n = (int32_t)h->count, taken;

		if (h->payload_len != sizeof(*hw) + (uint64_t)n *
				      sizeof(struct rmad_am_win_member) ||
		    hw->gsize < 1 || hw->gsize > j->size ||
		    (w && w->local && w->gsize != hw->gsize)) {
			rmad_warn("dropped a bad window packet from node %u",
				  h->src_node);
			return;
		}
		if (h->type == RMAD_AM_WIN_READY &&
		    (!w || (int)h->src_node != w->root)) {
			/* not ours (nothing local waits), or not from the
			 * root that collects the table */
			if (w) {
				a->st.pkts_dropped++;
				rmad_warn("window %llx: dropped a table from "
					  "node %u (its root is %d)",
					  (unsigned long long)w->key,
					  h->src_node, w->root);
			}
			return;
		}
		if (!w && !remote_win_ok(a, j, (int)h->src_node))
			return;
		if (!w) {
			w = win_new(a, j, h->seq, hw->gsize);
			if (!w) {
				rmad_err("window %llx: no memory for node %u's "
					 "join", (unsigned long long)h->seq,
					 h->src_node);
				return;
			}
			w->joined_first = 1;
			j->win_early_all++;
		}
		if (h->type == RMAD_AM_WIN_JOIN && !w->local) {
			/* before the group: kept, checked once it is */
			joined_keep(a, w, hw->gsize, (const void *)(hw + 1),
				    n, (int)h->src_node);
			return;
		}
		if (h->type == RMAD_AM_WIN_JOIN &&
		    (w->root != a->node || w->ready || w->failed)) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped a join from node %u "
				  "(its root is %d%s)",
				  (unsigned long long)w->key, h->src_node,
				  w->root, w->ready || w->failed ?
				  ", and the table is made" : "");
			return;
		}
		taken = meta_add(a, w, (const void *)(hw + 1), n,
				 h->type == RMAD_AM_WIN_JOIN ?
				 (int)h->src_node : -1);
		if (h->type == RMAD_AM_WIN_JOIN) {
			/* a node counts among the members' nodes (the
			 * table goes to it, its free is waited for) only
			 * with an entry of its own */
			if (taken > 0 && node_joined(w, (int)h->src_node))
				return;
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
	case RMAD_AM_WIN_FREE_ARRIVE: {
		int k = 0;

		if (!w || w->root != a->node)
			return;
		/* once from each member node, and only once the table is
		 * made (its nodes have their window then): an extra or an
		 * early one would free the window under the members still
		 * in it, or answer the ones making it */
		while (k < w->nnodes && w->nodes[k] != (int)h->src_node)
			k++;
		if (k < w->nnodes && !w->free_from)
			w->free_from = calloc((size_t)w->nnodes, 1);
		if (k == w->nnodes || !w->ready || !w->free_from ||
		    w->free_from[k]) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped a free from node %u",
				  (unsigned long long)w->key, h->src_node);
			return;
		}
		w->free_from[k] = 1;
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
					am_send(a, w->nodes[k], &d,
						      NULL, 0);
			am_send(a, a->node, &d, NULL, 0);
		}
		return;
	}
	case RMAD_AM_WIN_FREE_DONE:
		if (!w)
			return;
		if ((int)h->src_node != w->root) {
			a->st.pkts_dropped++;
			rmad_warn("window %llx: dropped a free's end from node "
				  "%u (its root is %d)",
				  (unsigned long long)w->key, h->src_node,
				  w->root);
			return;
		}
		for (int32_t i = 0; i < w->nhere; i++)
			if (w->local[i].waiting)
				reply(a, w, &w->local[i], 0);
		win_destroy(a, w);
		return;
	}
}

/* WIN_JOIN, WIN_READY, WIN_FREE_ARRIVE, WIN_FREE_DONE */
static void on_win(struct agent *a, const struct rmad_am_hdr *h,
		   const void *payload)
{
	struct agent_job *j = agent_job_find(a, h->job);

	if (!j || !j->map_ready || !agent_job_on_node(a, j, (int)h->src_node)) {
		a->st.pkts_dropped++;
		return;
	}
	agent_win_am(a, h, payload, j);
}

int agent_win_init(struct agent *a)
{
	if (rmad_random_bytes(&a->wn.seed, sizeof(a->wn.seed)))
		a->wn.seed = rmad_now_ns() ^ (uint64_t)getpid() << 32;
	am_register(a, RMAD_AM_WIN_JOIN, on_win);
	am_register(a, RMAD_AM_WIN_READY, on_win);
	am_register(a, RMAD_AM_WIN_FREE_ARRIVE, on_win);
	am_register(a, RMAD_AM_WIN_FREE_DONE, on_win);
	a->job_hooks.failed = agent_win_job_failed;
	a->job_hooks.freed = agent_win_job_freed;
	return 0;
}

void agent_win_fini(struct agent *a)
{
	while (a->wn.wins)
		win_destroy(a, a->wn.wins);
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
