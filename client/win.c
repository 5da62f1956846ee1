/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win.c - windows' life: allocation and creation (every flavor),
 * rmad_win_free, where a rank's window is (rmad_win_target), and the
 * window handles.
 *
 * A window's memory is a memfd this rank creates and maps; the agent
 * maps it too (it applies remote operations there) and hands back the
 * memfds of the window's other members on this node, which this rank
 * maps for rmad_win_shared_query and direct access.  Per-window state in
 * the client is O(members on this node); the table of every member's
 * size and unit is kept once per node, by the agent.
 *
 * Creation and freeing are collective over the group, and go through the
 * control socket (ctl.c: one request at a time, under rmad_ctl_lock,
 * which guards this file's list of windows and its grave too).
 */
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

static struct rmad_win_s *windows;

/* The API's window handles (handle.h). */
struct handle_table rmad_win_handles = HANDLE_TABLE_INIT(HANDLE_TAG_WIN);

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

int rmad_win_live(rmad_win_t w)
{
	int live = 0;

	/* w is readable: a window, or one in its grave (win_bury) */
	pthread_mutex_lock(&rmad_ctl_lock);
	live = w->listed && w->magic == WIN_MAGIC;
	pthread_mutex_unlock(&rmad_ctl_lock);
	return live;
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

/* Map the same-node members' memory that the agent sent. */
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
		long r = rmad_ctl_recv(c, &m, sizeof(m), fds, &nfds);
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

/*
 * The window's own memfd, mapped: its control page (the lock word), then
 * its memory unless created (the memfd is then the control page alone).
 * *fd is the memfd, or -1 (a shared window's memory comes from the
 * agent: get_peers).
 */
static int win_map(struct rmad_win_s *w, size_t size, void *user,
		   int flavor, int *fd)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	*fd = -1;
	/* the control page (lock word), then the window unless created */
	w->map_size = RMAD_WIN_CTL_SIZE +
		      (flavor == RMAD_WIN_FLAVOR_DYNAMIC ? RMAD_WIN_DYN_SIZE :
		       flavor == RMAD_WIN_FLAVOR_CREATE ? 0 :
		       (size + psz - 1) / psz * psz);
	/* a shared window's memory comes from the agent (get_peers); ours
	 * is sealed at its size, or the agent refuses it (it maps it) */
	if (flavor == RMAD_WIN_FLAVOR_SHARED) {
		w->map_size = 0;
		return 0;
	}
	*fd = rmad_memfd_sealed("rmad-window", w->map_size, 0);
	if (*fd < 0) {
		*fd = -1;
		return RMAD_ERR_NOMEM;
	}
	m = mmap(NULL, w->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
		 0);
	if (m == MAP_FAILED)
		return RMAD_ERR_NOMEM;
	w->ctl = m;
	w->base = flavor == RMAD_WIN_FLAVOR_CREATE ? user :
		  flavor == RMAD_WIN_FLAVOR_DYNAMIC ? NULL :
		  (char *)m + RMAD_WIN_CTL_SIZE;
	return 0;
}

/* WIN_CREATE for w, *len bytes, or NULL; its key is set under
 * rmad_ctl_lock (win_join). */
static struct rmad_ctl_win_create *create_msg(const struct rmad_win_s *w,
					      rmad_group_t group, int grank,
					      void *user, size_t *len)
{
	struct rmad_ctl_win_create *m;
	int gsize = w->gsize, flavor = w->flavor;

	*len = sizeof(*m) + (group == RMAD_GROUP_ALL ? 0 :
			     sizeof(int32_t) * (size_t)gsize);
	m = calloc(1, *len);
	if (!m)
		return NULL;
	m->h.magic = RMAD_CTL_MAGIC;
	m->h.abi_version = RMAD_ABI_VERSION;
	m->h.type = RMAD_CTL_WIN_CREATE;
	m->size = w->size;
	m->disp_unit = w->disp_unit;
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
	return m;
}

/*
 * The agent's half of a new window, under rmad_ctl_lock: its key,
 * WIN_CREATE with our memfd (fd, or none), the reply with the node's
 * table of members (meta), and the same-node members (get_peers).
 */
static int win_join(struct rmad_client *c, struct rmad_win_s *w,
		    rmad_group_t group, int grank, void *user, int fd)
{
	struct rmad_ctl_win_create *m;
	struct rmad_ctl_win_reply r;
	int err, mfd = -1;
	size_t mlen;

	m = create_msg(w, group, grank, user, &mlen);
	if (!m)
		return RMAD_ERR_NOMEM;
	pthread_mutex_lock(&rmad_ctl_lock);
	w->key = next_key(group);
	m->key = w->key;
	if (rmad_send_msg(c->sock, m, mlen, fd >= 0 ? &fd : NULL,
			  fd >= 0) < 0) {
		pthread_mutex_unlock(&rmad_ctl_lock);
		free(m);
		return RMAD_ERR_AGENT;
	}
	free(m);
	err = rmad_ctl_reply_fd(c, w->key, &r, &mfd);
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
				      (size_t)w->gsize;
			mm = mmap(NULL, w->meta_len, PROT_READ, MAP_SHARED,
				  mfd, 0);
			if (mm == MAP_FAILED)
				err = RMAD_ERR_NOMEM;
			else
				w->meta = mm;
		}
		if (!err)
			err = get_peers(c, w, r.nlocal);
		if (!err && w->flavor == RMAD_WIN_FLAVOR_SHARED && !w->ctl)
			err = RMAD_ERR_AGENT;	/* we were not among them */
		w->remote_members = w->npeers < w->gsize;
	}
	if (mfd >= 0)
		close(mfd);
	pthread_mutex_unlock(&rmad_ctl_lock);
	return err;
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
	struct rmad_win_s *w;
	int gsize, grank = -1, err, fd = -1;
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
	pthread_mutex_lock(&rmad_ctl_lock);
	w = win_new();
	pthread_mutex_unlock(&rmad_ctl_lock);
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
	err = win_map(w, size, user, flavor, &fd);
	if (!err)
		err = win_join(c, w, group, grank, user, fd);
	if (err)
		goto fail;
	close(fd);
	/*
	 * The window's own op pool: a shortfall is no error, the window
	 * then draws on the process's list like any other.
	 */
	if (w->hints.op_pool > 0 &&
	    rmad_op_pool_reserve(c, w, w->hints.op_pool))
		rmad_dbg("op_pool hint: reservation failed");
	w->magic = WIN_MAGIC;
	pthread_mutex_lock(&rmad_ctl_lock);
	w->prev = NULL;
	w->next = windows;
	if (windows)
		windows->prev = w;
	windows = w;
	w->listed = 1;
	pthread_mutex_unlock(&rmad_ctl_lock);
	if (base_out)	/* (a noncontiguous window's empty member: NULL,
			 * as shared_query says) */
		*base_out = !size && rmad_win_noncontig(w) ? NULL : w->base;
	*win = (rmad_win_t)h;
	return 0;
fail:
	handle_free(&rmad_win_handles, h);
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

	if (!win || !(w = rmad_win_get(*win)) || !rmad_win_live(w))
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
	pthread_mutex_lock(&rmad_ctl_lock);
	err = c->dead ? RMAD_ERR_AGENT :
	      rmad_send_msg(c->sock, &m, sizeof(m), NULL, 0) < 0 ?
	      RMAD_ERR_AGENT : rmad_ctl_reply(c, w->key, &r);
	if (err == RMAD_ERR_ARG) {
		pthread_mutex_unlock(&rmad_ctl_lock);
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
	pthread_mutex_unlock(&rmad_ctl_lock);
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
	pthread_mutex_lock(&rmad_ctl_lock);
	win_bury(w);
	pthread_mutex_unlock(&rmad_ctl_lock);
	*win = RMAD_WIN_NULL;
	return err;
}
