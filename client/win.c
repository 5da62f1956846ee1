/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win.c - memory and windows: rmad_alloc_mem, allocation, freeing, the
 * shared-memory query and rmad_win_stats.
 *
 * A window's memory is a memfd this rank creates and maps; the agent
 * maps it too (it applies remote operations there) and hands back the
 * memfds of the window's other members on this node, which this rank
 * maps for rmad_win_shared_query and direct access.  Per-window state in
 * the client is O(members on this node); the table of every member's
 * size and unit is kept once per node, by the agent.
 *
 * Creation and freeing are collective over the group, and go through the
 * control socket (one request at a time, under ctl_lock).  So does
 * rmad_win_stats, which asks the agent for its counters and adds this
 * process's own (rma.c keeps them in the window).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hints.h"
#include "internal.h"
#include "log.h"
#include "util.h"

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static int ctl_call(struct rmad_client *c, const void *m, size_t len, int fd,
		    uint64_t key);
static struct rmad_win_s *windows;

/* The API's window handles (handle.h). */
struct handle_table rmad_win_handles = HANDLE_TABLE_INIT(HANDLE_TAG_WIN);

/* Regions from rmad_alloc_mem, which the agent maps too. */
struct mem_region {
	struct mem_region *next;
	void *base;
	size_t size;
};
static struct mem_region *mems;

/* How many windows each group has made: the key's second half. */
static struct group_seq {
	uint64_t hash;
	uint64_t seq;
} *seqs;
static int nseqs;

static uint64_t next_key(rmad_group_t g)
{
	uint64_t h = g == RMAD_GROUP_ALL ? 0x616c6cull : rmad_group_hash(g);
	int i;

	for (i = 0; i < nseqs && seqs[i].hash != h; i++)
		;
	if (i == nseqs) {
		struct group_seq *p = realloc(seqs, sizeof(*p) *
					      (size_t)(nseqs + 1));

		if (!p)
			return 0;
		seqs = p;
		seqs[nseqs].hash = h;
		seqs[nseqs].seq = 0;
		nseqs++;
	}
	return (h * 1099511628211ull) ^ ++seqs[i].seq;
}

/*
 * Where is rank's window: *peer when on this node, else NULL; its size
 * and unit from the node's table.  RMAD_ERR_RANK when not a member.
 */
int rmad_win_target(rmad_win_t w, int rank, struct win_peer **peer,
		    uint64_t *size, int *disp_unit)
{
	/* a hint shared by the process's threads: relaxed, and checked */
	int lo, hi, last = __atomic_load_n(&w->last_peer, __ATOMIC_RELAXED);

	*peer = NULL;
	if (w->flavor == RMAD_WIN_FLAVOR_DYNAMIC) {
		/* any address; the target's regions decide */
		*size = RMAD_DYN_SPAN;
		*disp_unit = 1;
	}
	if (last >= 0 && last < w->npeers && w->peers[last].rank == rank)
		*peer = &w->peers[last];
	for (int i = 0; !*peer && i < w->npeers; i++)
		if (w->peers[i].rank == rank) {
			*peer = &w->peers[i];
			__atomic_store_n(&w->last_peer, i, __ATOMIC_RELAXED);
		}
	if (*peer) {
		if (w->flavor == RMAD_WIN_FLAVOR_DYNAMIC)
			return 0;
		*size = (*peer)->size;
		*disp_unit = (*peer)->disp_unit;
		return 0;
	}
	if (!w->meta) {
		if (rank < 0 || rank >= w->gsize)
			return RMAD_ERR_RANK;
		if (w->flavor == RMAD_WIN_FLAVOR_DYNAMIC)
			return 0;
		*size = w->usize;
		*disp_unit = w->udisp;
		return 0;
	}
	lo = 0;
	hi = w->gsize - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (w->meta[mid].rank == rank) {
			if (w->flavor == RMAD_WIN_FLAVOR_DYNAMIC)
				return 0;
			*size = w->meta[mid].size;
			*disp_unit = w->meta[mid].disp_unit;
			return 0;
		}
		if (w->meta[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return RMAD_ERR_RANK;
}

static int win_live(rmad_win_t w)
{
	int live = 0;

	/* w is readable: a window, or one in its grave (win_bury) */
	pthread_mutex_lock(&ctl_lock);
	live = w->listed && w->magic == WIN_MAGIC;
	pthread_mutex_unlock(&ctl_lock);
	return live;
}

/* Wait for the agent's answer; a dead agent ends the wait. */
static long ctl_recv(struct rmad_client *c, void *buf, size_t len, int *fds,
		     int *nfds)
{
	for (;;) {
		struct pollfd p = { .fd = c->sock, .events = POLLIN };
		int r = poll(&p, 1, 100);

		if (r > 0) {
			long n = rmad_recv_msg(c->sock, buf, len, fds, nfds);

			if (n <= 0) {
				c->dead = 1;
				return RMAD_ERR_AGENT;
			}
			return n;
		}
		if (r < 0 && errno != EINTR)
			return RMAD_ERR_AGENT;
		if (c->dead)
			return RMAD_ERR_AGENT;
	}
}

static int ctl_reply_fd(struct rmad_client *c, uint64_t key,
			struct rmad_ctl_win_reply *r, int *fd)
{
	int fds[1] = { -1 }, nfds = fd ? 1 : 0;
	long n = ctl_recv(c, r, sizeof(*r), fd ? fds : NULL, &nfds);

	if (fd)
		*fd = nfds == 1 ? fds[0] : -1;
	else
		for (int i = 0; i < nfds; i++)
			close(fds[i]);

	if (n < 0)
		return (int)n;
	if (n != (long)sizeof(*r) || r->h.magic != RMAD_CTL_MAGIC ||
	    r->h.type != RMAD_CTL_WIN_REPLY || r->key != key)
		return RMAD_ERR_AGENT;
	if (r->status > 0 || r->status < RMAD_ERR_LAST)
		return RMAD_ERR_AGENT;
	return r->status;
}

static int ctl_reply(struct rmad_client *c, uint64_t key,
		     struct rmad_ctl_win_reply *r)
{
	return ctl_reply_fd(c, key, r, NULL);
}

/* Freed handles stay readable (magic 0) until many more were freed, so a
 * stale handle is refused rather than read after free. */
#define GRAVE_KEEP	256
static struct rmad_win_s *grave_head, *grave_tail;
static int ngrave;

static struct rmad_win_s *win_new(void)
{
	struct rmad_win_s *w;

	if (ngrave > GRAVE_KEEP) {
		w = grave_head;
		grave_head = w->next;
		if (!grave_head)
			grave_tail = NULL;
		ngrave--;
		memset(w, 0, sizeof(*w));
		return w;
	}
	return calloc(1, sizeof(*w));
}

static void win_bury(struct rmad_win_s *w)
{
	__atomic_store_n(&w->magic, 0, __ATOMIC_RELAXED);
	w->next = NULL;
	if (grave_tail)
		grave_tail->next = w;
	else
		grave_head = w;
	grave_tail = w;
	ngrave++;
}

static void unmap_peers(struct rmad_win_s *w)
{
	for (int i = 0; i < w->npeers; i++)
		if (w->peers[i].map_size)
			munmap(w->peers[i].ctl, w->peers[i].map_size);
	free(w->peers);
	w->peers = NULL;
	w->npeers = 0;
}

/* Map the same-node members' memory that the agent sent. */
/*
 * A member of a shared window: every peer comes with the node's memfd,
 * mapped here once; its control page and memory lie where the agent
 * says, which must be inside it.
 */
static int shared_peer(struct rmad_client *c, struct rmad_win_s *w,
		       struct win_peer *p, const struct rmad_ctl_win_peer *e,
		       int fd, int n)
{
	uint64_t ctl = (uint64_t)(uint32_t)e->pid * RMAD_WIN_CTL_SIZE;

	if (!w->smap) {
		struct stat st;
		void *m;

		if (fstat(fd, &st) < 0 || st.st_size <= 0)
			return RMAD_ERR_AGENT;
		m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return RMAD_ERR_NOMEM;
		w->smap = m;
		w->slen = (size_t)st.st_size;
	}
	if (e->pid < 0 || e->pid >= n || ctl + RMAD_WIN_CTL_SIZE > w->slen ||
	    e->addr < (uint64_t)n * RMAD_WIN_CTL_SIZE || e->addr > w->slen ||
	    p->size > w->slen - e->addr)
		return RMAD_ERR_AGENT;
	p->ctl = (void *)((char *)w->smap + ctl);
	p->base = (char *)w->smap + e->addr;
	p->created = 0;
	if (p->rank == c->b.rank) {
		w->ctl = p->ctl;
		w->base = p->base;
	}
	return 0;
}

static int get_peers(struct rmad_client *c, struct rmad_win_s *w, int n)
{
	int dyn = w->flavor == RMAD_WIN_FLAVOR_DYNAMIC;
	int shr = w->flavor == RMAD_WIN_FLAVOR_SHARED;

	w->peers = calloc((size_t)(n ? n : 1), sizeof(*w->peers));
	if (!w->peers)
		return RMAD_ERR_NOMEM;
	while (w->npeers < n) {
		struct rmad_ctl_win_peers m;
		int fds[RMAD_WIN_PEERS_PER_MSG], nfds = RMAD_WIN_PEERS_PER_MSG;
		long r = ctl_recv(c, &m, sizeof(m), fds, &nfds);
		int err = 0;

		if (r < 0)
			return (int)r;
		if (r != (long)sizeof(m) || m.h.type != RMAD_CTL_WIN_PEERS ||
		    m.key != w->key || m.count < 1 || m.count != nfds ||
		    m.count > n - w->npeers)
			err = RMAD_ERR_AGENT;
		for (int i = 0; i < nfds; i++) {
			struct win_peer *p = &w->peers[w->npeers];

			if (!err) {
				p->rank = m.p[i].rank;
				p->disp_unit = m.p[i].disp_unit;
				p->size = m.p[i].size;
				p->base = NULL;
				p->ctl = NULL;
				p->map_size = 0;
				p->locked = 0;
				p->created = w->flavor ==
					     RMAD_WIN_FLAVOR_CREATE || dyn;
				p->pid = m.p[i].pid;
				p->addr = m.p[i].addr;
				p->dyn = NULL;
				if (p->created !=
				    !!(m.p[i].flags & RMAD_WINF_CREATE) ||
				    dyn != !!(m.p[i].flags &
					      RMAD_WINF_DYNAMIC) ||
				    shr != !!(m.p[i].flags &
					      RMAD_WINF_SHARED)) {
					err = RMAD_ERR_AGENT;
				} else if (shr) {
					err = shared_peer(c, w, p, &m.p[i],
							  fds[i], n);
				} else if (p->rank == c->b.rank) {
					p->base = w->base;
					p->ctl = w->ctl;
					if (dyn)
						p->dyn = (void *)((char *)
							w->ctl +
							RMAD_WIN_CTL_SIZE);
				} else if (p->size > (1ull << 40)) {
					err = RMAD_ERR_AGENT;
				} else {
					/* a created window's memory is not
					 * mapped: its control page alone */
					size_t ms = RMAD_WIN_CTL_SIZE +
						    (dyn ? RMAD_WIN_DYN_SIZE :
						     p->created ? 0 :
						     p->size);
					void *m = mmap(NULL, ms,
						       PROT_READ | PROT_WRITE,
						       MAP_SHARED, fds[i], 0);

					if (m == MAP_FAILED) {
						err = RMAD_ERR_NOMEM;
					} else {
						p->ctl = m;
						p->map_size = ms;
						if (dyn)
							p->dyn = (void *)
							((char *)m +
							 RMAD_WIN_CTL_SIZE);
						if (!p->created)
							p->base = (char *)m +
							RMAD_WIN_CTL_SIZE;
					}
				}
				if (!err)
					w->npeers++;
			}
			close(fds[i]);
		}
		if (err)
			return err;
	}
	return 0;
}

static int w_noncontig(rmad_win_t w)
{
	return w->flavor == RMAD_WIN_FLAVOR_SHARED &&
	       w->hints.alloc_shared_noncontig;
}

/*
 * Make a window: allocated (user NULL: the memory follows the control
 * page in our memfd) or created over the user's memory (the memfd is
 * the control page alone).  Collective over group.
 */
static int win_make(size_t size, int disp_unit, const char *hints,
		    rmad_group_t group, void *user, int flavor,
		    void **base_out, rmad_win_t *win)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_ctl_win_create *m = NULL;
	struct rmad_ctl_win_reply r;
	struct rmad_win_s *w;
	int gsize, grank = -1, err, fd = -1, mfd = -1;
	size_t mlen, psz = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t h;

	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if (c->dead)
		return RMAD_ERR_AGENT;
	err = rmad_group_members(group, &gsize);
	if (err)
		return err;
	for (int i = 0; i < gsize; i++)
		if (rmad_group_rank(group, i) == c->b.rank)
			grank = i;
	if (grank < 0 || gsize > RMAD_WIN_GROUP_MAX)
		return RMAD_ERR_ARG;	/* not a member, or too large */
	pthread_mutex_lock(&ctl_lock);
	w = win_new();
	pthread_mutex_unlock(&ctl_lock);
	if (!w)
		return RMAD_ERR_NOMEM;
	/* not live (no WIN_MAGIC) before the window is made */
	err = handle_new(&rmad_win_handles, w, &h);
	if (err) {
		free(w);
		return err;
	}
	if (rmad_hints_parse(hints, &w->hints)) {
		handle_free(&rmad_win_handles, h);
		free(w);
		return RMAD_ERR_HINT;
	}
	w->size = size;
	w->disp_unit = disp_unit;
	w->gsize = gsize;
	w->flavor = flavor;
	if (group != RMAD_GROUP_ALL) {
		/* rmad_win_get_group: the group may be freed before */
		w->granks = malloc(sizeof(int32_t) * (size_t)gsize);
		if (!w->granks) {
			handle_free(&rmad_win_handles, h);
			free(w);
			return RMAD_ERR_NOMEM;
		}
		for (int i = 0; i < gsize; i++)
			w->granks[i] = rmad_group_rank(group, i);
	}
	/* the control page (lock word), then the window unless created */
	w->map_size = RMAD_WIN_CTL_SIZE +
		      (flavor == RMAD_WIN_FLAVOR_DYNAMIC ? RMAD_WIN_DYN_SIZE :
		       flavor == RMAD_WIN_FLAVOR_CREATE ? 0 :
		       (size + psz - 1) / psz * psz);
	/* a shared window's memory comes from the agent (get_peers); ours
	 * is sealed at its size, or the agent refuses it (it maps it) */
	if (flavor == RMAD_WIN_FLAVOR_SHARED)
		w->map_size = 0;
	else
		fd = rmad_memfd_sealed("rmad-window", w->map_size, 0);
	if (flavor != RMAD_WIN_FLAVOR_SHARED && fd < 0) {
		fd = -1;
		err = RMAD_ERR_NOMEM;
		goto fail;
	}
	if (flavor != RMAD_WIN_FLAVOR_SHARED) {
		void *m = mmap(NULL, w->map_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);

		if (m == MAP_FAILED) {
			err = RMAD_ERR_NOMEM;
			goto fail;
		}
		w->ctl = m;
		w->base = flavor == RMAD_WIN_FLAVOR_CREATE ? user :
			  flavor == RMAD_WIN_FLAVOR_DYNAMIC ? NULL :
			  (char *)m + RMAD_WIN_CTL_SIZE;
	}
	mlen = sizeof(*m) + (group == RMAD_GROUP_ALL ? 0 :
			     sizeof(int32_t) * (size_t)gsize);
	m = calloc(1, mlen);
	if (!m) {
		err = RMAD_ERR_NOMEM;
		goto fail;
	}
	pthread_mutex_lock(&ctl_lock);
	w->key = next_key(group);
	m->h.magic = RMAD_CTL_MAGIC;
	m->h.abi_version = RMAD_ABI_VERSION;
	m->h.type = RMAD_CTL_WIN_CREATE;
	m->key = w->key;
	m->size = size;
	m->disp_unit = disp_unit;
	m->gsize = gsize;
	m->grank = grank;
	if (flavor == RMAD_WIN_FLAVOR_CREATE) {
		m->flags |= RMAD_WINF_CREATE;
		m->addr = (uint64_t)(uintptr_t)user;
	}
	if (flavor == RMAD_WIN_FLAVOR_DYNAMIC)
		m->flags |= RMAD_WINF_CREATE | RMAD_WINF_DYNAMIC;
	if (flavor == RMAD_WIN_FLAVOR_SHARED)
		m->flags |= RMAD_WINF_SHARED |
			    (w->hints.alloc_shared_noncontig ?
			     RMAD_WINF_NONCONTIG : 0);
	if (group == RMAD_GROUP_ALL)
		m->flags |= RMAD_WINF_ALL;
	else
		for (int i = 0; i < gsize; i++)
			m->ranks[i] = rmad_group_rank(group, i);
	if (rmad_send_msg(c->sock, m, mlen, fd >= 0 ? &fd : NULL,
			  fd >= 0) < 0) {
		pthread_mutex_unlock(&ctl_lock);
		err = RMAD_ERR_AGENT;
		goto fail;
	}
	err = ctl_reply_fd(c, w->key, &r, &mfd);
	if (!err) {
		w->block = r.block;
		w->uniform = r.uniform;
		w->usize = r.usize;
		w->udisp = r.udisp;
		if (r.meta && mfd < 0)
			err = RMAD_ERR_AGENT;
		if (!err && mfd >= 0) {
			void *mm;

			w->meta_len = sizeof(struct rmad_win_meta) *
				      (size_t)gsize;
			mm = mmap(NULL, w->meta_len, PROT_READ, MAP_SHARED,
				  mfd, 0);
			if (mm == MAP_FAILED)
				err = RMAD_ERR_NOMEM;
			else
				w->meta = mm;
		}
		if (!err)
			err = get_peers(c, w, r.nlocal);
		if (!err && flavor == RMAD_WIN_FLAVOR_SHARED && !w->ctl)
			err = RMAD_ERR_AGENT;	/* we were not among them */
		w->remote_members = w->npeers < gsize;
	}
	if (mfd >= 0)
		close(mfd);
	pthread_mutex_unlock(&ctl_lock);
	if (err)
		goto fail;
	free(m);
	close(fd);
	/*
	 * The window's own op pool: a shortfall is no error, the window
	 * then draws on the process's list like any other.
	 */
	if (w->hints.op_pool > 0 &&
	    rmad_op_pool_reserve(c, w, w->hints.op_pool))
		rmad_dbg("op_pool hint: reservation failed");
	w->magic = WIN_MAGIC;
	pthread_mutex_lock(&ctl_lock);
	w->prev = NULL;
	w->next = windows;
	if (windows)
		windows->prev = w;
	windows = w;
	w->listed = 1;
	pthread_mutex_unlock(&ctl_lock);
	if (base_out)	/* (a noncontiguous window's empty member: NULL,
			 * as shared_query says) */
		*base_out = !size && w_noncontig(w) ? NULL : w->base;
	*win = (rmad_win_t)h;
	return 0;
fail:
	handle_free(&rmad_win_handles, h);
	free(m);
	unmap_peers(w);
	if (w->meta)
		munmap((void *)w->meta, w->meta_len);
	if (w->ctl && w->map_size)
		munmap(w->ctl, w->map_size);
	if (w->smap)
		munmap(w->smap, w->slen);
	if (fd >= 0)
		close(fd);
	free(w->granks);
	free(w->acc);
	free(w);
	return err;
}

int rmad_win_allocate(size_t size, int disp_unit, const char *hints,
		      rmad_group_t group, void *base_out, rmad_win_t *win)
{
	if (!base_out || !win || disp_unit < 1 || size > (1ull << 40))
		return RMAD_ERR_ARG;
	return win_make(size, disp_unit, hints, group, NULL,
			RMAD_WIN_FLAVOR_ALLOCATE, base_out, win);
}

int rmad_win_allocate_shared(size_t size, int disp_unit, const char *hints,
			     rmad_group_t group, void *base_out,
			     rmad_win_t *win)
{
	int err;

	if (!base_out || !win || disp_unit < 1 || size > (1ull << 40))
		return RMAD_ERR_ARG;
	err = win_make(size, disp_unit, hints, group, NULL,
		       RMAD_WIN_FLAVOR_SHARED, base_out, win);
	if (err == RMAD_ERR_ARG)
		rmad_err("rmad_win_allocate_shared: the window's members must "
			 "all be on one node (see the agent's log)");
	return err;
}

int rmad_win_create(void *base, size_t size, int disp_unit, const char *hints,
		    rmad_group_t group, rmad_win_t *win)
{
	int err;

	if (!win || disp_unit < 1 || size > (1ull << 40) || (size && !base))
		return RMAD_ERR_ARG;
	/* refused at creation, on every member alike, when a member's
	 * memory cannot be reached in place (agent/winmem.c) */
	err = win_make(size, disp_unit, hints, group, base,
		       RMAD_WIN_FLAVOR_CREATE, NULL, win);
	if (err == RMAD_ERR_PERM)
		rmad_err("rmad_win_create: a member's memory cannot be reached "
			 "in place (the agents' logs say which and why); use "
			 "rmad_alloc_mem memory or rmad_win_allocate");
	return err;
}

int rmad_win_create_dynamic(const char *hints, rmad_group_t group,
			    rmad_win_t *win)
{
	int err;

	if (!win)
		return RMAD_ERR_ARG;
	err = win_make(0, 1, hints, group, NULL, RMAD_WIN_FLAVOR_DYNAMIC,
		       NULL, win);
	if (err == RMAD_ERR_PERM)
		rmad_err("rmad_win_create_dynamic: same-node members cannot "
			 "reach each other's memory in place (the agents' "
			 "logs say why)");
	return err;
}

int rmad_ctl_request(const void *m, size_t len, uint64_t key)
{
	int err;

	pthread_mutex_lock(&ctl_lock);
	err = ctl_call(&rmad_cl, m, len, -1, key);
	pthread_mutex_unlock(&ctl_lock);
	return err;
}

rmad_win_t rmad_win_resolve(rmad_win_t handle)
{
	return rmad_win_get(handle);
}

void rmad_mpi_window_note(int by_rmad)
{
	struct rmad_shm_client *me = rmad_cl.me;

	if (me)
		__atomic_fetch_add(by_rmad ? &me->mpi_rmad : &me->mpi_fallback,
				   1, __ATOMIC_RELAXED);
}

int rmad_win_free(rmad_win_t *win)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_ctl_win_free m = { 0 };
	struct rmad_ctl_win_reply r;
	struct rmad_win_s *w;
	int err;

	if (!win || !(w = rmad_win_get(*win)) || !win_live(w))
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if ((w->epoch != EPOCH_NONE &&
	     (w->epoch != EPOCH_FENCE ||
	      __atomic_load_n(&w->fence_moved, __ATOMIC_RELAXED))) ||
	    w->exposed)
		return RMAD_ERR_SYNC;	/* an epoch is still open */
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_WIN_FREE;
	m.key = w->key;
	pthread_mutex_lock(&ctl_lock);
	err = c->dead ? RMAD_ERR_AGENT :
	      rmad_send_msg(c->sock, &m, sizeof(m), NULL, 0) < 0 ?
	      RMAD_ERR_AGENT : ctl_reply(c, w->key, &r);
	if (err == RMAD_ERR_ARG) {
		pthread_mutex_unlock(&ctl_lock);
		return err;	/* the agent refused: nothing changed */
	}
	/* freed, or the job/agent failed: the memory goes either way */
	if (w->listed) {
		if (w->prev)
			w->prev->next = w->next;
		else
			windows = w->next;
		if (w->next)
			w->next->prev = w->prev;
		w->listed = 0;
	}
	pthread_mutex_unlock(&ctl_lock);
	/* its epochs are over everywhere: its op pool goes back */
	rmad_op_pool_return(c, w);
	unmap_peers(w);
	if (w->meta)
		munmap((void *)w->meta, w->meta_len);
	if (w->ctl && w->map_size)
		munmap(w->ctl, w->map_size);
	if (w->smap)
		munmap(w->smap, w->slen);
	free(w->rlocks);
	free(w->granks);
	free(w->acc);
	w->granks = NULL;
	handle_free(&rmad_win_handles, (uintptr_t)*win);
	pthread_mutex_lock(&ctl_lock);
	win_bury(w);
	pthread_mutex_unlock(&ctl_lock);
	*win = RMAD_WIN_NULL;
	return err;
}

int rmad_win_shared_query(rmad_win_t handle, int rank, size_t *size,
			  int *disp_unit, void *base_out)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t win = rmad_win_get(handle);

	if (!win || !win_live(win) || !size || !disp_unit || !base_out)
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
		*(void **)base_out = *size || !w_noncontig(win) ? p->base :
				     NULL;
		return 0;
	}
	return RMAD_ERR_NOT_LOCAL;
}

/* One request on the control socket and its WIN_REPLY, under ctl_lock. */
static int ctl_call(struct rmad_client *c, const void *m, size_t len, int fd,
		    uint64_t key)
{
	struct rmad_ctl_win_reply r;

	if (c->dead)
		return RMAD_ERR_AGENT;
	if (rmad_send_msg(c->sock, m, len, fd >= 0 ? &fd : NULL,
			  fd >= 0) < 0)
		return RMAD_ERR_AGENT;
	return ctl_reply(c, key, &r);
}

int rmad_stage_probe(struct rmad_client *c)
{
	static volatile uint64_t magic = 0x7374616765645f3fULL;
	struct rmad_ctl_mem m = { 0 };
	int err;

	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_CMA_PROBE;
	m.addr = (uint64_t)(uintptr_t)&magic;
	m.size = magic;
	pthread_mutex_lock(&ctl_lock);
	err = ctl_call(c, &m, sizeof(m), -1, m.addr);
	pthread_mutex_unlock(&ctl_lock);
	c->staged = err == RMAD_ERR_PERM;
	if (c->staged)
		rmad_info("the agent cannot reach this process's memory: "
			  "remote operations on it are staged");
	return err == RMAD_ERR_PERM ? 0 : err;
}

int rmad_mem_shared(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	int in = 0;

	pthread_mutex_lock(&ctl_lock);
	for (struct mem_region *r = mems; r && !in; r = r->next)
		in = a >= (uintptr_t)r->base && len <= r->size &&
		     a - (uintptr_t)r->base <= r->size - len;
	pthread_mutex_unlock(&ctl_lock);
	return in;
}

int rmad_alloc_mem(size_t size, void **ptr)
{
	struct rmad_client *c = &rmad_cl;
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	struct rmad_ctl_mem m = { 0 };
	struct mem_region *r;
	int fd, err;

	if (!ptr || size > (1ull << 40))
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	r = calloc(1, sizeof(*r));
	if (!r)
		return RMAD_ERR_NOMEM;
	/* 0 bytes still gives a distinct pointer, as malloc may */
	r->size = (size ? size + psz - 1 : psz) / psz * psz;
	/* sealed at its size, or the agent refuses it (it maps it) */
	fd = rmad_memfd_sealed("rmad-mem", r->size, 0);
	if (fd < 0) {
		fd = -1;
		goto nomem;
	}
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       0);
	if (r->base == MAP_FAILED)
		goto nomem;
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_MEM_REG;
	m.addr = (uint64_t)(uintptr_t)r->base;
	m.size = r->size;
	pthread_mutex_lock(&ctl_lock);
	err = ctl_call(c, &m, sizeof(m), fd, m.addr);
	if (!err) {
		r->next = mems;
		mems = r;
	}
	pthread_mutex_unlock(&ctl_lock);
	close(fd);
	if (err) {
		munmap(r->base, r->size);
		free(r);
		return err;
	}
	*ptr = r->base;
	return 0;
nomem:
	if (fd >= 0)
		close(fd);
	free(r);
	return RMAD_ERR_NOMEM;
}

int rmad_free_mem(void *ptr)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_ctl_mem m = { 0 };
	struct mem_region **pp, *r = NULL;
	int err;

	if (!ptr)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	pthread_mutex_lock(&ctl_lock);
	for (pp = &mems; *pp; pp = &(*pp)->next)
		if ((*pp)->base == ptr) {
			r = *pp;
			*pp = r->next;
			break;
		}
	if (!r) {
		pthread_mutex_unlock(&ctl_lock);
		return RMAD_ERR_ARG;	/* not from rmad_alloc_mem */
	}
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_MEM_DEREG;
	m.addr = (uint64_t)(uintptr_t)r->base;
	m.size = r->size;
	err = ctl_call(c, &m, sizeof(m), -1, m.addr);
	pthread_mutex_unlock(&ctl_lock);
	/* the pages are ours to drop whatever the agent said */
	munmap(r->base, r->size);
	free(r);
	return err == RMAD_ERR_AGENT ? 0 : err;
}

/*
 * The stats reply, matched by type and key.  Under ctl_lock only one
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
		long n = ctl_recv(c, r, sizeof(*r), fds, &nfds);

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
	/* ctl_lock held throughout: the window cannot be freed under us */
	pthread_mutex_lock(&ctl_lock);
	live = win->listed && win->magic == WIN_MAGIC;
	if (!live) {
		pthread_mutex_unlock(&ctl_lock);
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
		pthread_mutex_unlock(&ctl_lock);
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
	pthread_mutex_unlock(&ctl_lock);
	return err;
}
