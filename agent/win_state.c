/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win_state.c - the agent's window objects: made (win_state_new), found by
 * key, block, client or rank, failed with their job, and destroyed.  A
 * destroyed window's mapping and registration stay a while when
 * transfers from other nodes may still land there (keep_mapping).
 *
 * A member that dies, or a JOB_FAIL from another node, fails every
 * pending create and free of the job with RMAD_ERR_PROC_FAILED
 * (agent_win_job_failed), and tells the RMA layer through a->win_hooks.
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
#include "log.h"
#include "rmad_abi.h"
#include "counter.h"
#include "util.h"

/* The windows of job j that others' joins made here before any member
 * here (remote_win_ok bounds them), and their entries by node. */
void win_state_early_end(struct agent_win *w)
{
	if (w->joined_first) {
		w->joined_first = 0;
		w->job->win_early_all--;
	}
}

struct agent_win *win_state_new(struct agent *a, struct agent_job *j,
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

void win_state_joined_free(struct agent_win *w)
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

void win_state_destroy(struct agent *a, struct agent_win *w)
{
	wintab_remove(a, w);
	win_state_early_end(w);
	wintab_quota_release(a, w);
	if (a->win_hooks.gone)
		a->win_hooks.gone(a, w);	/* the RMA layer's state */
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
	win_state_joined_free(w);
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
int win_state_sort(struct agent_win *w)
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
int32_t win_state_member_index(const struct agent_win *w, int32_t rank)
{
	if (!w->sorted)
		return rank >= 0 && rank < w->gsize ? rank : -1;
	return sorted_find(w, rank);
}

int agent_win_target(struct agent_win *w, int32_t rank, uint64_t *size,
		     int32_t *disp_unit)
{
	int32_t k = win_state_member_index(w, rank);

	if (k < 0)
		return RMAD_ERR_RANK;
	*size = w->sorted ? w->sorted[k].size : w->usize;
	*disp_unit = w->sorted ? w->sorted[k].disp_unit : w->udisp;
	return 0;
}

int agent_win_rkey(struct agent_win *w, int32_t rank, uint64_t *key,
		   uint64_t *addr)
{
	int32_t k = w->rkeys ? win_state_member_index(w, rank) : -1;

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

int win_state_client_alive(struct agent *a, const struct win_local *l)
{
	return a->cl[l->client].registered && a->cl[l->client].gen == l->gen;
}

void win_state_reply(struct agent *a, struct agent_win *w, struct win_local *l,
		  int status)
{
	struct rmad_ctl_win_reply r = { 0 };

	l->waiting = 0;
	if (!win_state_client_alive(a, l))
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
				win_state_reply(a, w, l, RMAD_ERR_PROC_FAILED);
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
		if (fencing && a->win_hooks.fence)
			a->win_hooks.fence(a, w, RMAD_ERR_PROC_FAILED);
		/* origins waiting for a post that will not come */
		if (a->win_hooks.post)
			a->win_hooks.post(a, w);
	}
}

/* The job is gone from this agent: drop its windows. */
void agent_win_job_freed(struct agent *a, struct agent_job *j)
{
	struct agent_win *w = a->wn.wins, *next;

	for (; w; w = next) {
		next = w->next;
		if (w->job == j)
			win_state_destroy(a, w);
	}
	free(j->win_early);
	j->win_early = NULL;
	j->win_early_all = 0;
}

int win_state_member_node(struct agent_win *w, int32_t grank)
{
	int32_t rank = w->all ? grank : w->granks[grank];

	return agent_job_rank_node(w->job, rank);
}

