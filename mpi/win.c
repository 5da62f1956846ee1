/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win.c - MPI windows on rmad windows.
 *
 * The user's MPI_Win is a real MPI window: for a window rmad serves it
 * is a window of no memory over the same communicator, never accessed,
 * so that names, error handlers, attributes and
 * MPI_Win_get_group, which this library does not intercept, work as
 * MPI says.  rmad's state hangs off it in a table keyed by the handle,
 * read without a lock on every op (open addressing, entries written
 * under a mutex at creation and free).  A window rmad cannot serve is
 * created by MPI as asked, and every call on it goes to MPI.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmpi.h"

/*
 * The table: open addressing over a power of two of slots, at most half
 * of them used (live entries and tombstones).  Readers take no lock: a
 * sequence count, odd while the table is rebuilt in place (tombstones
 * cleared), tells them to look again under the lock, as a miss does
 * (every window made here is in the table, MPI's ones too).  A table
 * outgrown is kept, never freed, so that a reader still in it reads
 * memory; the old tables together are smaller than the current one.
 */
#define WTAB0 1024
struct wslot {
	MPI_Win key;
	struct mwin *w;			/* NULL: freed (a tombstone) */
};
struct wtab {
	struct wtab *old;		/* outgrown ones, kept */
	unsigned int mask;		/* slots - 1 */
	struct wslot s[];
};
static struct wtab *wcur;
static unsigned int wseq;		/* odd: being rebuilt */
static unsigned int nlive, nused;	/* entries; entries and tombstones */
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static int serials;			/* windows made by this process */

static unsigned int whash(MPI_Win w)
{
	uintptr_t v = rmpi_hword(w);

	v ^= v >> 17;
	v *= (uintptr_t)0x9e3779b97f4a7c15ull;
	return (unsigned int)(v >> 32 ^ v);
}

struct mwin *rmpi_last_win;		/* rmpi_win's one-entry cache */

/* 1 if w is in t (*m its window, NULL for a tombstone's), else 0. */
static int tab_find(const struct wtab *t, MPI_Win w, struct mwin **m)
{
	unsigned int h = whash(w);

	for (unsigned int i = 0; i <= t->mask; i++) {
		const struct wslot *s = &t->s[(h + i) & t->mask];
		MPI_Win k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (k == (MPI_Win)0)
			return 0;
		if (k != w)
			continue;
		*m = __atomic_load_n(&s->w, __ATOMIC_ACQUIRE);
		return 1;
	}
	return 0;
}

struct mwin *rmpi_win_slow(MPI_Win w)
{
	unsigned int seq = __atomic_load_n(&wseq, __ATOMIC_ACQUIRE);
	struct wtab *t = __atomic_load_n(&wcur, __ATOMIC_ACQUIRE);
	struct mwin *m = NULL;
	int found = !(seq & 1) && t && tab_find(t, w, &m);

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!found || __atomic_load_n(&wseq, __ATOMIC_RELAXED) != seq) {
		/* a miss, or rebuilt under us: under the lock */
		m = NULL;
		pthread_mutex_lock(&wlock);
		if (wcur)
			tab_find(wcur, w, &m);
		pthread_mutex_unlock(&wlock);
	}
	if (m)
		__atomic_store_n(&rmpi_last_win, m, __ATOMIC_RELEASE);
	return m;
}

/* Put w's entry into t (a rebuild: no reader looks at t yet, or the
 * sequence count is odd). */
static void tab_put(struct wtab *t, MPI_Win key, struct mwin *m)
{
	unsigned int h = whash(key);

	for (unsigned int i = 0;; i++) {
		struct wslot *s = &t->s[(h + i) & t->mask];

		if (s->key == (MPI_Win)0) {
			__atomic_store_n(&s->w, m, __ATOMIC_RELAXED);
			__atomic_store_n(&s->key, key, __ATOMIC_RELAXED);
			return;
		}
	}
}

static struct wtab *tab_new(unsigned int slots)
{
	struct wtab *t = calloc(1, sizeof(*t) + sizeof(t->s[0]) * slots);

	if (t)
		t->mask = slots - 1;
	return t;
}

/* Room for one more entry (wlock held): the table grows when its live
 * entries fill a quarter of it, else is rebuilt in place when tombstones
 * fill it to half.  0, or RMAD_ERR_NOMEM. */
static int tab_room(void)
{
	struct wtab *t = wcur, *n;
	struct wslot *live;
	unsigned int k = 0;

	if (t && (nused + 1) * 2 <= t->mask + 1)
		return 0;
	if (!t || (nlive + 1) * 4 > t->mask + 1) {
		n = tab_new(t ? (t->mask + 1) * 2 : WTAB0);
		if (!n || (t && n->mask < t->mask))
			goto nomem;
		for (unsigned int i = 0; t && i <= t->mask; i++)
			if (t->s[i].key && t->s[i].w)
				tab_put(n, t->s[i].key, t->s[i].w);
		n->old = t;
		__atomic_store_n(&wcur, n, __ATOMIC_RELEASE);
		nused = nlive;
		return 0;
	}
	/* tombstones: rebuilt in place, the live entries copied aside */
	live = malloc(sizeof(*live) * (nlive ? nlive : 1));
	if (!live)
		return RMAD_ERR_NOMEM;
	for (unsigned int i = 0; i <= t->mask; i++)
		if (t->s[i].key && t->s[i].w)
			live[k++] = t->s[i];
	__atomic_store_n(&wseq, wseq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int i = 0; i <= t->mask; i++) {
		__atomic_store_n(&t->s[i].key, (MPI_Win)0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->s[i].w, NULL, __ATOMIC_RELAXED);
	}
	for (unsigned int i = 0; i < k; i++)
		tab_put(t, live[i].key, live[i].w);
	__atomic_store_n(&wseq, wseq + 1, __ATOMIC_RELEASE);
	free(live);
	nused = nlive;
	return 0;
nomem:
	free(n);
	return RMAD_ERR_NOMEM;
}

static int win_insert(struct mwin *m)
{
	unsigned int h = whash(m->handle);
	int err;

	pthread_mutex_lock(&wlock);
	err = tab_room();
	for (unsigned int i = 0; !err; i++) {
		struct wslot *s = &wcur->s[(h + i) & wcur->mask];

		if (s->key == m->handle) {
			/* a freed handle's tombstone, made again */
			if (!s->w)
				nlive++;
			__atomic_store_n(&s->w, m, __ATOMIC_RELEASE);
			break;
		}
		if (s->key == (MPI_Win)0) {
			__atomic_store_n(&s->w, m, __ATOMIC_RELEASE);
			__atomic_store_n(&s->key, m->handle, __ATOMIC_RELEASE);
			nlive++;
			nused++;
			break;
		}
	}
	if (!err)
		m->serial = ++serials;
	pthread_mutex_unlock(&wlock);
	return err;
}

static void win_remove(struct mwin *m)
{
	unsigned int h = whash(m->handle);

	pthread_mutex_lock(&wlock);
	__atomic_store_n(&rmpi_last_win, NULL, __ATOMIC_RELEASE);
	for (unsigned int i = 0; wcur && i <= wcur->mask; i++) {
		struct wslot *s = &wcur->s[(h + i) & wcur->mask];

		if (s->key == m->handle) {
			if (s->w == m) {
				__atomic_store_n(&s->w, NULL,
						 __ATOMIC_RELEASE);
				nlive--;
			}
			break;
		}
		if (s->key == (MPI_Win)0)
			break;
	}
	pthread_mutex_unlock(&wlock);
}

static int cmp_serial(const void *x, const void *y)
{
	const struct mwin *p = *(struct mwin *const *)x;
	const struct mwin *q = *(struct mwin *const *)y;

	return (p->serial > q->serial) - (p->serial < q->serial);
}

/* The end-of-job report (RMAD_MPI_REPORT=1): who served each window
 * not freed, in the order they were made. */
void rmpi_win_report(void)
{
	struct mwin **v = NULL;
	unsigned int n = 0;

	pthread_mutex_lock(&wlock);
	if (wcur && nlive)
		v = malloc(sizeof(*v) * nlive);
	for (unsigned int i = 0; v && i <= wcur->mask; i++)
		if (wcur->s[i].key && wcur->s[i].w && n < nlive)
			v[n++] = wcur->s[i].w;
	pthread_mutex_unlock(&wlock);
	if (v)
		qsort(v, n, sizeof(*v), cmp_serial);
	for (unsigned int i = 0; i < n; i++)
		fprintf(stderr, "rmad-mpi: rank %d: window %d (flavor %d): "
			"%s, %llu ops (not freed)\n", rmpi.rank, v[i]->serial,
			v[i]->flavor, v[i]->rw ? "rmad" : "MPI",
			(unsigned long long)v[i]->ops);
	free(v);
}

static void report_free(const struct mwin *m)
{
	char name[MPI_MAX_OBJECT_NAME] = "";
	int len = 0;

	if (!rmpi.report)
		return;
	PMPI_Win_get_name(m->handle, name, &len);
	fprintf(stderr, "rmad-mpi: rank %d: window %d '%s' (flavor %d): "
		"served by %s, %llu ops\n", rmpi.rank, m->serial, name, m->flavor,
		m->rw ? "rmad" : "MPI", (unsigned long long)m->ops);
}

/* Raise an rmad error on the window's error handler. */
int rmpi_win_raise(struct mwin *m, int err)
{
	int cls = rmpi_errclass(err);

	PMPI_Win_call_errhandler(m->handle, cls);
	return cls;
}

static int comm_err(MPI_Comm comm, int err)
{
	int cls = rmpi_errclass(err);

	PMPI_Comm_call_errhandler(comm, cls);
	return cls;
}

static void mwin_free(struct mwin *m)
{
	if (!m)
		return;
	if (m->prg)
		rmad_group_free(&m->prg);
	if (m->srg)
		rmad_group_free(&m->srg);
	if (m->has_grp)
		PMPI_Group_free(&m->grp);
	free(m->pranks);
	free(m->sranks);
	free(m->world);
	free(m);
}

/*
 * Begin a window: its state, the communicator's ranks as a group, and
 * the hints.  *g is the rmad group of comm.  Returns 0, or an error for
 * which MPI serves the window (said once, fatal when strict).
 */
static int begin(MPI_Comm comm, MPI_Info info, int flavor, struct mwin **out,
		 rmad_group_t *g, char *hints, size_t hlen)
{
	struct mwin *m;
	int err;

	*out = NULL;
	*g = RMAD_GROUP_NULL;
	if (!rmpi.on)
		return RMAD_ERR_AGENT;
	m = calloc(1, sizeof(*m));
	if (!m)
		return RMAD_ERR_NOMEM;
	m->flavor = flavor;
	m->model = MPI_WIN_UNIFIED;
	err = rmpi_comm_world_ranks(comm, &m->world, &m->gsize);
	if (!err)
		err = rmpi_info_hints(info, hints, hlen);
	if (!err && m->world)
		err = rmad_group_incl(m->world, m->gsize, g);
	else if (!err)
		*g = m->gsize == rmpi.size ? RMAD_GROUP_ALL : RMAD_GROUP_NULL;
	if (!err && *g == RMAD_GROUP_NULL) {
		int *ids = malloc(sizeof(int) * (size_t)m->gsize);

		err = RMAD_ERR_NOMEM;
		if (ids) {
			for (int i = 0; i < m->gsize; i++)
				ids[i] = i;
			err = rmad_group_incl(ids, m->gsize, g);
			free(ids);
		}
	}
	if (err) {
		mwin_free(m);
		return err;
	}
	*out = m;
	return 0;
}

static void end_group(rmad_group_t *g)
{
	if (*g != RMAD_GROUP_NULL && *g != RMAD_GROUP_ALL)
		rmad_group_free(g);
}

/* After rmad made the window (or failed to): agreement, and the MPI
 * handle.  m may be NULL (begin failed). */
static int finish(struct mwin *m, MPI_Comm comm, int err, MPI_Win *win)
{
	int rc, bad = err != 0, any = 0;

	/* rmad's window creation fails on every member or on none; a
	 * window made on some members only can be neither used nor freed
	 * (its free is collective), so that is fatal, said plainly */
	PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_SUM, comm);
	if (any && !bad) {
		fprintf(stderr, "rmad-mpi: rank %d: an rmad window was made "
			"on some ranks only; aborting\n", rmpi.rank);
		PMPI_Abort(comm, MPI_ERR_INTERN);
	}
	if (err) {
		mwin_free(m);
		return err;
	}
	/*
	 * The handle: a window of no memory on MPI_COMM_SELF, its group
	 * kept for MPI_Win_get_group.  On comm itself, Open MPI 4.1.4's
	 * osc sm (and rdma) would name its segment by the communicator's
	 * context id, which disjoint communicators on one host share (an
	 * MPI_Comm_split, or MPI_COMM_TYPE_SHARED across virtual nodes): a
	 * second window of the same name failed with "A system call failed
	 * during shared memory initialization" (open: ENOENT).  Allocated,
	 * because Open MPI 4.1 cannot create or create_dynamic on a
	 * one-rank communicator; local, so no collective either.
	 */
	if (PMPI_Comm_group(comm, &m->grp) == MPI_SUCCESS)
		m->has_grp = 1;
	rc = PMPI_Win_allocate(0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &m->dummy,
			       win);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "rmad-mpi: rank %d: MPI cannot make the "
			"window's handle; aborting\n", rmpi.rank);
		PMPI_Abort(comm, rc);
	}
	m->handle = *win;
	if (win_insert(m)) {
		fprintf(stderr, "rmad-mpi: rank %d: no memory for the table "
			"of windows; aborting\n", rmpi.rank);
		PMPI_Abort(comm, MPI_ERR_INTERN);
	}
	return 0;
}

/* MPI serves the window; it is still in the table, for the report. */
static void served_by_mpi(MPI_Win win, int flavor, int why)
{
	struct mwin *m;

	if (!rmpi.disabled)
		rmpi_unmapped("window of flavor %d: %s; MPI serves it", flavor,
			      rmad_strerror(why));
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->handle = win;
	m->flavor = flavor;
	if (win_insert(m))
		free(m);
}

struct mk {
	int flavor;
	MPI_Aint size;
	int disp_unit;
	void *base;			/* create */
	void *baseptr;			/* allocate, shared: a void ** */
	MPI_Info info;
	MPI_Comm comm;
};

static int make_rmad_flavor(const struct mk *a, struct mwin *m,
			    rmad_group_t g, const char *hints)
{
	if (a->size < 0 || a->disp_unit <= 0)
		return RMAD_ERR_ARG;
	m->size = a->size;
	m->disp_unit = a->disp_unit;
	switch (a->flavor) {
	case MPI_WIN_FLAVOR_ALLOCATE:
		return rmad_win_allocate((size_t)a->size, a->disp_unit, hints,
					 g, a->baseptr, &m->rw);
	case MPI_WIN_FLAVOR_SHARED:
		return rmad_win_allocate_shared((size_t)a->size, a->disp_unit,
						hints, g, a->baseptr, &m->rw);
	case MPI_WIN_FLAVOR_CREATE:
		m->base = a->base;
		return rmad_win_create(a->size ? a->base : NULL,
				       (size_t)a->size, a->disp_unit, hints, g,
				       &m->rw);
	default:
		m->base = MPI_BOTTOM;
		m->size = 0;
		m->disp_unit = 1;
		return rmad_win_create_dynamic(hints, g, &m->rw);
	}
}

/* rmad's window, and the window itself behind its handle for the op path */
static int make_rmad(const struct mk *a, struct mwin *m, rmad_group_t g,
		     const char *hints)
{
	int err = make_rmad_flavor(a, m, g, hints);

	if (!err)
		m->wp = rmad_win_resolve(m->rw);
	return err;
}

static int make_mpi(const struct mk *a, MPI_Win *win)
{
	switch (a->flavor) {
	case MPI_WIN_FLAVOR_ALLOCATE:
		return PMPI_Win_allocate(a->size, a->disp_unit, a->info,
					 a->comm, a->baseptr, win);
	case MPI_WIN_FLAVOR_SHARED:
		return PMPI_Win_allocate_shared(a->size, a->disp_unit, a->info,
						a->comm, a->baseptr, win);
	case MPI_WIN_FLAVOR_CREATE:
		return PMPI_Win_create(a->base, a->size, a->disp_unit, a->info,
				       a->comm, win);
	default:
		return PMPI_Win_create_dynamic(a->info, a->comm, win);
	}
}

/* Every flavor's creation: rmad's window, else MPI's (said once). */
static int make(const struct mk *a, MPI_Win *win)
{
	char hints[512];
	struct mwin *m;
	rmad_group_t g;
	int err, rc;

	err = begin(a->comm, a->info, a->flavor, &m, &g, hints, sizeof(hints));
	if (!err) {
		err = make_rmad(a, m, g, hints[0] ? hints : NULL);
		end_group(&g);
		if (!err && a->baseptr)
			m->base = *(void **)a->baseptr;
	}
	err = finish(m, a->comm, err, win);
	if (!err) {
		rmad_mpi_window_note(1);
		return MPI_SUCCESS;
	}
	if (err == RMAD_ERR_ARG || err == RMAD_ERR_HINT ||
	    (err == RMAD_ERR_NOMEM && rmpi.strict)) {
		/* strict: out of memory (or over the agent's max_windows
		 * quota; its log says which) is MPI_ERR_NO_MEM, as MPI
		 * itself would answer, not a window MPI serves */
		if (err == RMAD_ERR_NOMEM)
			fprintf(stderr, "rmad-mpi: rank %d: window of flavor "
				"%d: %s (MPI_ERR_NO_MEM)\n", rmpi.rank,
				a->flavor, rmad_strerror(err));
		*win = MPI_WIN_NULL;
		return comm_err(a->comm, err);
	}
	rc = make_mpi(a, win);
	if (rc == MPI_SUCCESS) {
		served_by_mpi(*win, a->flavor, err);
		rmad_mpi_window_note(0);
	}
	return rc;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
		     MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	struct mk a = { MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, NULL,
			baseptr, info, comm };

	return make(&a, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
			    MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	struct mk a = { MPI_WIN_FLAVOR_SHARED, size, disp_unit, NULL,
			baseptr, info, comm };

	return make(&a, win);
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
		   MPI_Comm comm, MPI_Win *win)
{
	struct mk a = { MPI_WIN_FLAVOR_CREATE, size, disp_unit, base, NULL,
			info, comm };

	return make(&a, win);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	struct mk a = { MPI_WIN_FLAVOR_DYNAMIC, 0, 1, NULL, NULL, info, comm };

	return make(&a, win);
}

int MPI_Win_free(MPI_Win *win)
{
	struct mwin *m = win ? rmpi_win(*win) : NULL;
	int err;

	if (!m)
		return PMPI_Win_free(win);
	report_free(m);
	if (!m->rw) {
		win_remove(m);
		free(m);
		return PMPI_Win_free(win);
	}
	err = rmad_win_free(&m->rw);
	if (err)
		return rmpi_win_err(m, err);
	win_remove(m);
	mwin_free(m);
	return PMPI_Win_free(win);
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw || !m->has_grp)
		return PMPI_Win_get_group(win, group);
	/* a new handle of the same group, which the caller frees */
	return PMPI_Group_union(m->grp, MPI_GROUP_EMPTY, group);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_attach(win, base, size);
	if (size < 0)
		return rmpi_win_err(m, RMAD_ERR_ARG);
	return rmpi_win_err(m, rmad_win_attach(m->rw, base, (size_t)size));
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_detach(win, base);
	return rmpi_win_err(m, rmad_win_detach(m->rw, base));
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size,
			 int *disp_unit, void *baseptr)
{
	struct mwin *m = rmpi_win(win);
	size_t sz = 0;
	int t, err;

	if (!m || !m->rw)
		return PMPI_Win_shared_query(win, rank, size, disp_unit,
					     baseptr);
	t = rmpi_target(m, rank);
	if (m->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
		err = t < 0 ? RMAD_ERR_RANK : 1;	/* no base to show */
	} else {
		err = rmad_win_shared_query(m->rw, t, &sz, disp_unit,
					    baseptr);
		/* MPI-4.0 12.2.3: on the other flavors, memory not reachable
		 * by load/store (another node's, or a created window's
		 * that rmad reaches through the kernel) is size 0 and base
		 * NULL, not an error */
		if (err == RMAD_ERR_NOT_LOCAL &&
		    m->flavor != MPI_WIN_FLAVOR_SHARED)
			err = 1;
	}
	if (err == 0) {
		*size = (MPI_Aint)sz;
		return MPI_SUCCESS;
	}
	if (err == 1) {
		*size = 0;
		*disp_unit = 1;
		*(void **)baseptr = NULL;
		return MPI_SUCCESS;
	}
	return rmpi_win_err(m, err);
}

int MPI_Win_get_attr(MPI_Win win, int key, void *val, int *flag)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_get_attr(win, key, val, flag);
	*flag = 1;
	if (key == MPI_WIN_BASE)
		*(void **)val = m->base;
	else if (key == MPI_WIN_SIZE)
		*(MPI_Aint **)val = &m->size;
	else if (key == MPI_WIN_DISP_UNIT)
		*(int **)val = &m->disp_unit;
	else if (key == MPI_WIN_CREATE_FLAVOR)
		*(int **)val = &m->flavor;
	else if (key == MPI_WIN_MODEL)
		*(int **)val = &m->model;
	else
		return PMPI_Win_get_attr(win, key, val, flag);
	return MPI_SUCCESS;
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	struct mwin *m = rmpi_win(win);
	char hints[512];
	int err;

	if (!m || !m->rw)
		return PMPI_Win_set_info(win, info);
	err = rmpi_info_hints(info, hints, sizeof(hints));
	if (!err && hints[0])
		err = rmad_win_set_info(m->rw, hints);
	return rmpi_win_err(m, err);
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
	struct mwin *m = rmpi_win(win);
	char hints[RMAD_MAX_INFO_LEN];
	int err;

	if (!m || !m->rw)
		return PMPI_Win_get_info(win, info);
	err = rmad_win_get_info(m->rw, hints, sizeof(hints));
	if (!err)
		err = rmpi_hints_info(hints, info);
	return rmpi_win_err(m, err);
}

int MPI_Win_set_name(MPI_Win win, const char *name)
{
	struct mwin *m = rmpi_win(win);

	/* rmadctl shows the name too */
	if (m && m->rw && name)
		rmad_win_set_name(m->rw, name);
	return PMPI_Win_set_name(win, name);
}

/*
 * A shared-memory communicator is the ranks of one rmad node: on real
 * nodes that is the host, and with virtual nodes it is the vnode, which
 * rmad treats as a node of its own (a shared window cannot span two).
 */
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
			MPI_Comm *out)
{
	struct rmad_info ri;

	if (!rmpi.on || type != MPI_COMM_TYPE_SHARED || rmad_get_info(&ri))
		return PMPI_Comm_split_type(comm, type, key, info, out);
	return PMPI_Comm_split(comm, ri.node, key, out);
}

/* ---------------------------------------------------------- memory */

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	int err;

	if (!rmpi.on)
		return PMPI_Alloc_mem(size, info, baseptr);
	if (size < 0) {
		PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_SIZE);
		return MPI_ERR_SIZE;
	}
	err = rmad_alloc_mem((size_t)size, baseptr);
	if (err) {
		PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
		return MPI_ERR_NO_MEM;
	}
	return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
	if (!rmpi.on || !base)
		return PMPI_Free_mem(base);
	if (rmad_free_mem(base) == 0)
		return MPI_SUCCESS;
	return PMPI_Free_mem(base);	/* MPI's, from before rmad */
}
