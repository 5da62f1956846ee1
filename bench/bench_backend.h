/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_backend.h - rmad-bench's backends: the same small set of calls
 * (b_*) on librmad, or on MPI-3 RMA when BENCH_MPI is defined (mpi-bench).
 * Included once, by rmad-bench.c.
 */
#ifndef RMAD_BENCH_BACKEND_H
#define RMAD_BENCH_BACKEND_H

#define BF_NOPRECEDE	1	/* b_fence bits */
#define BF_NOSUCCEED	2

/*
 * Window flavors (-w): allocate (the default), create (over page-aligned
 * heap memory), dynamic (the same memory attached; displacements are
 * the targets' addresses, gathered at creation) and shared (one node).
 * The created and dynamic windows' memory and address tables are kept
 * by handle, for the displacements and for freeing.
 */
enum { BW_ALLOCATE, BW_CREATE, BW_DYNAMIC, BW_SHARED };
static const char *const bw_names[] = { "allocate", "create", "dynamic",
					"shared" };
static int b_flavor;

/* ------------------------------------------------------------ types */
#ifdef BENCH_MPI
#include <mpi.h>

#define IMPL_NAME "mpi"
#define PROG_NAME "mpi-bench"
typedef MPI_Win bwin_t;
typedef MPI_Datatype btype_t;
#define B_BYTE MPI_BYTE
#define B_UINT8 MPI_UINT8_T
#define B_INT64 MPI_INT64_T
#define B_DOUBLE MPI_DOUBLE
typedef MPI_Request breq_t;
#else /* librmad */
#include <rmad.h>

#define IMPL_NAME "rmad"
#define PROG_NAME "rmad-bench"
typedef rmad_win_t bwin_t;
typedef rmad_datatype_t btype_t;
#define B_BYTE RMAD_BYTE
#define B_UINT8 RMAD_UINT8
#define B_INT64 RMAD_INT64
#define B_DOUBLE RMAD_DOUBLE
typedef rmad_request_t breq_t;
#endif

#define BW_MAX 4
static struct bw_slot {
	int used;
	bwin_t w;
	void *user;		/* create, dynamic: our memory */
	uint64_t *tbase;	/* dynamic: every rank's address */
} bw_slots[BW_MAX];

static struct bw_slot *bw_of(bwin_t w)
{
	for (int i = 0; i < BW_MAX; i++)
		if (bw_slots[i].used && bw_slots[i].w == w)
			return &bw_slots[i];
	return NULL;
}

/* a displacement on target r of w: its address in a dynamic window */
static uint64_t bw_disp(bwin_t w, int r, size_t d)
{
	struct bw_slot *s = b_flavor == BW_DYNAMIC ? bw_of(w) : NULL;

	return s && s->tbase ? s->tbase[r] + d : d;
}

/* a free slot holding size zeroed page-aligned bytes (and, dynamic, an
 * address table of nranks entries), or NULL */
static struct bw_slot *bw_take(size_t size, int nranks)
{
	struct bw_slot *s = NULL;

	for (int i = 0; i < BW_MAX && !s; i++)
		if (!bw_slots[i].used)
			s = &bw_slots[i];
	if (!s || posix_memalign(&s->user, 4096, size ? size : 1))
		return NULL;
	memset(s->user, 0, size);
	s->tbase = b_flavor == BW_DYNAMIC ?
		   calloc((size_t)nranks, sizeof(uint64_t)) : NULL;
	if (b_flavor == BW_DYNAMIC && !s->tbase) {
		free(s->user);
		s->user = NULL;
		return NULL;
	}
	return s;
}

/* the window is made (used) or failed; or it is freed: drop the slot */
static void bw_drop(struct bw_slot *s)
{
	if (!s)
		return;
	free(s->user);
	free(s->tbase);
	memset(s, 0, sizeof(*s));
}
/* ------------------------------------------------------------ backends */
#ifdef BENCH_MPI

static int b_init(int *argc, char ***argv)
{
	return MPI_Init(argc, argv) == MPI_SUCCESS ? 0 : -1;
}

/*
 * MPICH 4.0.2 over UCX with MPICH_ASYNC_PROGRESS=1 can hang in
 * MPI_Finalize here: one rank waits in the PMI barrier while the other
 * progresses its endpoints' closing flush, which the first no longer
 * answers.  The rows are printed and checked by then, so a finalize
 * that does not return within FINALIZE_GRACE seconds ends the rank with
 * status B_EXIT_FINALIZE (bench/compare notes it apart from failures).
 */
#define FINALIZE_GRACE 10
#define B_EXIT_FINALIZE 4
#define B_STR_(x) #x
#define B_STR(x) B_STR_(x)

static void on_finalize_alarm(int sig)
{
	static const char msg[] = PROG_NAME ": MPI_Finalize did not return "
		"in " B_STR(FINALIZE_GRACE) " s (rows complete): exiting\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(B_EXIT_FINALIZE);
	_exit(B_EXIT_FINALIZE);
}

static void b_finalize(void)
{
	signal(SIGALRM, on_finalize_alarm);
	alarm(FINALIZE_GRACE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	alarm(0);
}

static void b_rank_size(int *rank, int *size)
{
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
}

static int b_barrier(void)
{
	return MPI_Barrier(MPI_COMM_WORLD);
}

static int b_alloc_mem(size_t size, void *p)
{
	return MPI_Alloc_mem((MPI_Aint)size, MPI_INFO_NULL, p);
}

static void b_free_mem(void *p)
{
	MPI_Free_mem(p);
}

static MPI_Aint D(bwin_t w, int r, size_t d)
{
	return (MPI_Aint)bw_disp(w, r, d);
}

static int b_win_alloc(size_t size, void *base, bwin_t *w)
{
	struct bw_slot *s;
	int nranks, rc;

	if (b_flavor == BW_ALLOCATE)
		return MPI_Win_allocate((MPI_Aint)size, 1, MPI_INFO_NULL,
					MPI_COMM_WORLD, base, w);
	if (b_flavor == BW_SHARED)
		return MPI_Win_allocate_shared((MPI_Aint)size, 1,
					       MPI_INFO_NULL, MPI_COMM_WORLD,
					       base, w);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	s = bw_take(size, nranks);
	if (!s)
		return -1;
	*(void **)base = s->user;
	if (b_flavor == BW_CREATE) {
		rc = MPI_Win_create(s->user, (MPI_Aint)size, 1, MPI_INFO_NULL,
				    MPI_COMM_WORLD, w);
	} else {
		MPI_Aint a;
		uint64_t mine;

		rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, w);
		rc = rc ? rc : MPI_Win_attach(*w, s->user, (MPI_Aint)size);
		rc = rc ? rc : MPI_Get_address(s->user, &a);
		mine = (uint64_t)a;
		rc = rc ? rc : MPI_Allgather(&mine, 1, MPI_UINT64_T, s->tbase,
					     1, MPI_UINT64_T, MPI_COMM_WORLD);
	}
	if (rc) {
		bw_drop(s);
		return rc;
	}
	s->used = 1;
	s->w = *w;
	return 0;
}

static void b_win_free(bwin_t *w)
{
	struct bw_slot *s = bw_of(*w);

	if (s && b_flavor == BW_DYNAMIC)
		MPI_Win_detach(*w, s->user);
	MPI_Win_free(w);
	bw_drop(s);
}

static int b_put(const void *b, int n, btype_t t, int r, size_t d, bwin_t w)
{
	return MPI_Put(b, n, t, r, D(w, r, d), n, t, w);
}

static int b_get(void *b, int n, btype_t t, int r, size_t d, bwin_t w)
{
	return MPI_Get(b, n, t, r, D(w, r, d), n, t, w);
}

static int b_acc(const void *b, int n, btype_t t, int r, size_t d, bwin_t w)
{
	return MPI_Accumulate(b, n, t, r, D(w, r, d), n, t, MPI_SUM, w);
}

/* strided ops: n int64 blocks of 8 bytes at a stride of 16 (a vector
 * type); the origin side is n contiguous int64 */
static int b_vtype(int n, btype_t *t)
{
	int rc = MPI_Type_vector(n, 1, 2, MPI_INT64_T, t);

	return rc ? rc : MPI_Type_commit(t);
}

static void b_type_free(btype_t *t)
{
	MPI_Type_free(t);
}

static int b_vput(const void *b, int n, btype_t vt, int r, bwin_t w)
{
	return MPI_Put(b, n, MPI_INT64_T, r, D(w, r, 0), 1, vt, w);
}

static int b_vget(void *b, int n, btype_t vt, int r, bwin_t w)
{
	return MPI_Get(b, n, MPI_INT64_T, r, D(w, r, 0), 1, vt, w);
}

static int b_vacc(const void *b, int n, btype_t vt, int r, bwin_t w)
{
	return MPI_Accumulate(b, n, MPI_INT64_T, r, D(w, r, 0), 1, vt,
			      MPI_SUM, w);
}

/* halo and overlap rows: a put with two types, an (n+2)^2 grid's column
 * col of rows 1..n, a request-based get and its wait */
static int b_xput(const void *b, int oc, btype_t ot, int r, size_t d,
		  int tc, btype_t tt, bwin_t w)
{
	return MPI_Put(b, oc, ot, r, D(w, r, d), tc, tt, w);
}

static int b_column(int n, int col, btype_t *t)
{
	int sizes[2] = { n + 2, n + 2 }, sub[2] = { n, 1 }, st[2] = { 1, col };
	int rc = MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C,
					  MPI_DOUBLE, t);

	return rc ? rc : MPI_Type_commit(t);
}

static int b_rget(void *b, int n, btype_t t, int r, size_t d, bwin_t w,
		  breq_t *q)
{
	return MPI_Rget(b, n, t, r, D(w, r, d), n, t, w, q);
}

static int b_req_wait(breq_t *q)
{
	return MPI_Wait(q, MPI_STATUS_IGNORE);
}

static int b_gacc(const void *b, void *res, int n, btype_t t, int r, size_t d,
		  bwin_t w)
{
	return MPI_Get_accumulate(b, n, t, res, n, t, r, D(w, r, d), n, t,
				  MPI_SUM, w);
}

static int b_fop(const void *b, void *res, int r, size_t d, bwin_t w)
{
	return MPI_Fetch_and_op(b, res, MPI_INT64_T, r, D(w, r, d), MPI_SUM,
				w);
}

static int b_cas(const void *b, const void *c, void *res, int r, size_t d,
		 bwin_t w)
{
	return MPI_Compare_and_swap(b, c, res, MPI_INT64_T, r, D(w, r, d), w);
}

static int b_lock(int r, bwin_t w)
{
	return MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, w);
}

static int b_unlock(int r, bwin_t w)
{
	return MPI_Win_unlock(r, w);
}

static int b_lock_all(bwin_t w)
{
	return MPI_Win_lock_all(0, w);
}

static int b_unlock_all(bwin_t w)
{
	return MPI_Win_unlock_all(w);
}

static int b_flush(int r, bwin_t w)
{
	return MPI_Win_flush(r, w);
}

static int b_flush_local(int r, bwin_t w)
{
	return MPI_Win_flush_local(r, w);
}

static int b_flush_all(bwin_t w)
{
	return MPI_Win_flush_all(w);
}

/* fence; bits BF_NOPRECEDE, BF_NOSUCCEED */
static int b_fence(int bits, bwin_t w)
{
	return MPI_Win_fence((bits & BF_NOPRECEDE ? MPI_MODE_NOPRECEDE : 0) |
			     (bits & BF_NOSUCCEED ? MPI_MODE_NOSUCCEED : 0), w);
}

/* post/start/complete/wait with one peer: a group of it */
typedef MPI_Group bgroup_t;
static int b_group1(int peer, bgroup_t *g)
{
	MPI_Group world;
	int rc = MPI_Comm_group(MPI_COMM_WORLD, &world);

	if (!rc)
		rc = MPI_Group_incl(world, 1, &peer, g);
	MPI_Group_free(&world);
	return rc;
}

static void b_group_free(bgroup_t *g)
{
	MPI_Group_free(g);
}

static int b_post(bgroup_t g, bwin_t w)
{
	return MPI_Win_post(g, 0, w);
}

static int b_start(bgroup_t g, bwin_t w)
{
	return MPI_Win_start(g, 0, w);
}

static int b_complete(bwin_t w)
{
	return MPI_Win_complete(w);
}

static int b_wait(bwin_t w)
{
	return MPI_Win_wait(w);
}

/* the job's sum of v, valid on rank 0; collective */
static int b_sum0(double v, double *out)
{
	return MPI_Reduce(&v, out, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

/* every rank's v, by rank, into all[] on rank 0; collective */
static int b_gather0(double v, double *all)
{
	return MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0,
			  MPI_COMM_WORLD);
}

struct binfo {
	int nodes, local_rank, agent_pid;
	char provider[64];
};

static int b_info(struct binfo *in)
{
	MPI_Comm node;
	int lr, first, nodes;
	const char *p = getenv("BENCH_MPI_FLAVOR");

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &lr);
	MPI_Comm_free(&node);
	first = lr == 0;
	MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	in->nodes = nodes;
	in->local_rank = lr;
	in->agent_pid = 0;
	snprintf(in->provider, sizeof(in->provider), "%s", p ? p : "-");
	return 0;
}

static int b_ctl_init(void)
{
	return 0;
}

static void b_ctl_fini(void)
{
}

#else /* librmad */

static int b_init(int *argc, char ***argv)
{
	return rmad_init(argc, argv);
}

static void b_finalize(void)
{
	rmad_finalize();
}

static void b_rank_size(int *rank, int *size)
{
	rmad_rank(rank);
	rmad_size(size);
}

static int b_barrier(void)
{
	return rmad_barrier();
}

static int b_alloc_mem(size_t size, void *p)
{
	return rmad_alloc_mem(size, (void **)p);
}

static void b_free_mem(void *p)
{
	rmad_free_mem(p);
}

static size_t D(bwin_t w, int r, size_t d)
{
	return (size_t)bw_disp(w, r, d);
}

/* every rank's address, through an allocated window */
static int bw_gather_addr(uint64_t mine, uint64_t *all)
{
	uint64_t *b = NULL;
	rmad_win_t t = RMAD_WIN_NULL;
	int nranks, rc;

	rmad_size(&nranks);
	rc = rmad_win_allocate((size_t)nranks * 8, 8, NULL, RMAD_GROUP_ALL,
			       &b, &t);
	rc = rc ? rc : rmad_win_lock_all(0, t);
	for (int r = 0; !rc && r < nranks; r++) {
		int me;

		rmad_rank(&me);
		rc = rmad_put(&mine, 1, RMAD_UINT64, r, (size_t)me, 1,
			      RMAD_UINT64, t);
	}
	rc = rc ? rc : rmad_win_unlock_all(t);
	rc = rc ? rc : rmad_barrier();
	if (!rc)
		memcpy(all, b, (size_t)nranks * 8);
	rc = rc ? rc : rmad_barrier();
	if (t != RMAD_WIN_NULL)
		rmad_win_free(&t);
	return rc;
}

static int b_win_alloc(size_t size, void *base, bwin_t *w)
{
	struct bw_slot *s;
	int nranks, rc;

	if (b_flavor == BW_ALLOCATE)
		return rmad_win_allocate(size, 1, NULL, RMAD_GROUP_ALL, base,
					 w);
	if (b_flavor == BW_SHARED)
		return rmad_win_allocate_shared(size, 1, NULL, RMAD_GROUP_ALL,
						base, w);
	rmad_size(&nranks);
	s = bw_take(size, nranks);
	if (!s)
		return -1;
	*(void **)base = s->user;
	if (b_flavor == BW_CREATE) {
		rc = rmad_win_create(s->user, size, 1, NULL, RMAD_GROUP_ALL,
				     w);
	} else {
		size_t a;

		rc = rmad_win_create_dynamic(NULL, RMAD_GROUP_ALL, w);
		rc = rc ? rc : rmad_win_attach(*w, s->user, size);
		rc = rc ? rc : rmad_get_address(s->user, &a);
		rc = rc ? rc : bw_gather_addr((uint64_t)a, s->tbase);
	}
	if (rc) {
		bw_drop(s);
		return rc;
	}
	s->used = 1;
	s->w = *w;
	return 0;
}

static void b_win_free(bwin_t *w)
{
	struct bw_slot *s = bw_of(*w);

	if (s && b_flavor == BW_DYNAMIC)
		rmad_win_detach(*w, s->user);
	rmad_win_free(w);
	bw_drop(s);
}

static int b_put(const void *b, int n, btype_t t, int r, size_t d, bwin_t w)
{
	return rmad_put(b, n, t, r, D(w, r, d), n, t, w);
}

static int b_get(void *b, int n, btype_t t, int r, size_t d, bwin_t w)
{
	return rmad_get(b, n, t, r, D(w, r, d), n, t, w);
}

static int b_acc(const void *b, int n, btype_t t, int r, size_t d, bwin_t w)
{
	return rmad_accumulate(b, n, t, r, D(w, r, d), n, t, RMAD_SUM, w);
}

static int b_vtype(int n, btype_t *t)
{
	int rc = rmad_type_vector(n, 1, 2, RMAD_INT64, t);

	return rc ? rc : rmad_type_commit(t);
}

static void b_type_free(btype_t *t)
{
	rmad_type_free(t);
}

static int b_vput(const void *b, int n, btype_t vt, int r, bwin_t w)
{
	return rmad_put(b, n, RMAD_INT64, r, D(w, r, 0), 1, vt, w);
}

static int b_vget(void *b, int n, btype_t vt, int r, bwin_t w)
{
	return rmad_get(b, n, RMAD_INT64, r, D(w, r, 0), 1, vt, w);
}

static int b_vacc(const void *b, int n, btype_t vt, int r, bwin_t w)
{
	return rmad_accumulate(b, n, RMAD_INT64, r, D(w, r, 0), 1, vt,
			       RMAD_SUM, w);
}

/* halo and overlap rows: a put with two types, an (n+2)^2 grid's column
 * col of rows 1..n, a request-based get and its wait */
static int b_xput(const void *b, int oc, btype_t ot, int r, size_t d,
		  int tc, btype_t tt, bwin_t w)
{
	return rmad_put(b, oc, ot, r, D(w, r, d), tc, tt, w);
}

static int b_column(int n, int col, btype_t *t)
{
	int sizes[2] = { n + 2, n + 2 }, sub[2] = { n, 1 }, st[2] = { 1, col };
	int rc = rmad_type_create_subarray(2, sizes, sub, st, RMAD_ORDER_C,
					   RMAD_DOUBLE, t);

	return rc ? rc : rmad_type_commit(t);
}

static int b_rget(void *b, int n, btype_t t, int r, size_t d, bwin_t w,
		  breq_t *q)
{
	return rmad_rget(b, n, t, r, D(w, r, d), n, t, w, q);
}

static int b_req_wait(breq_t *q)
{
	return rmad_wait(q);
}

static int b_gacc(const void *b, void *res, int n, btype_t t, int r, size_t d,
		  bwin_t w)
{
	return rmad_get_accumulate(b, n, t, res, n, t, r, D(w, r, d), n, t,
				   RMAD_SUM,
				   w);
}

static int b_fop(const void *b, void *res, int r, size_t d, bwin_t w)
{
	return rmad_fetch_and_op(b, res, RMAD_INT64, r, D(w, r, d), RMAD_SUM,
				 w);
}

static int b_cas(const void *b, const void *c, void *res, int r, size_t d,
		 bwin_t w)
{
	return rmad_compare_and_swap(b, c, res, RMAD_INT64, r, D(w, r, d),
				     w);
}

static int b_lock(int r, bwin_t w)
{
	return rmad_win_lock(RMAD_LOCK_EXCLUSIVE, r, 0, w);
}

static int b_unlock(int r, bwin_t w)
{
	return rmad_win_unlock(r, w);
}

static int b_lock_all(bwin_t w)
{
	return rmad_win_lock_all(0, w);
}

static int b_unlock_all(bwin_t w)
{
	return rmad_win_unlock_all(w);
}

static int b_flush(int r, bwin_t w)
{
	return rmad_win_flush(r, w);
}

static int b_flush_local(int r, bwin_t w)
{
	return rmad_win_flush_local(r, w);
}

static int b_flush_all(bwin_t w)
{
	return rmad_win_flush_all(w);
}

static int b_fence(int bits, bwin_t w)
{
	return rmad_win_fence((bits & BF_NOPRECEDE ? RMAD_MODE_NOPRECEDE : 0) |
			      (bits & BF_NOSUCCEED ? RMAD_MODE_NOSUCCEED : 0),
			      w);
}

typedef rmad_group_t bgroup_t;
static int b_group1(int peer, bgroup_t *g)
{
	return rmad_group_incl(&peer, 1, g);
}

static void b_group_free(bgroup_t *g)
{
	rmad_group_free(g);
}

static int b_post(bgroup_t g, bwin_t w)
{
	return rmad_win_post(g, 0, w);
}

static int b_start(bgroup_t g, bwin_t w)
{
	return rmad_win_start(g, 0, w);
}

static int b_complete(bwin_t w)
{
	return rmad_win_complete(w);
}

static int b_wait(bwin_t w)
{
	return rmad_win_wait(w);
}

/*
 * rmad has no reduction: every rank puts its value into its slot of a
 * small window on rank 0, and the barrier after the unlocks orders those
 * puts before rank 0 reads the slots.
 */
static bwin_t ctl_win = RMAD_WIN_NULL;
static volatile double *ctl_base;

static int b_ctl_init(void)
{
	int size;

	rmad_size(&size);
	return rmad_win_allocate((size_t)size * sizeof(double), 1, NULL,
				 RMAD_GROUP_ALL, &ctl_base, &ctl_win);
}

static void b_ctl_fini(void)
{
	if (ctl_win != RMAD_WIN_NULL)
		rmad_win_free(&ctl_win);
}

/* every rank's v, by rank, into all[] on rank 0; collective */
static int b_gather0(double v, double *all)
{
	int rank, size, rc;

	b_rank_size(&rank, &size);
	rc = rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, ctl_win);
	if (!rc)
		rc = rmad_put(&v, 1, RMAD_DOUBLE, 0, (size_t)rank * sizeof(v),
			      1, RMAD_DOUBLE, ctl_win);
	if (!rc)
		rc = rmad_win_unlock(0, ctl_win);
	if (!rc)
		rc = rmad_barrier();
	if (!rc && rank == 0)
		for (int i = 0; i < size; i++)
			all[i] = ctl_base[i];
	/* no rank may overwrite a slot before rank 0 has read it */
	if (!rc)
		rc = rmad_barrier();
	return rc;
}

static int b_sum0(double v, double *out)
{
	int rank, size, rc;
	double *all;

	b_rank_size(&rank, &size);
	all = calloc((size_t)size, sizeof(*all));
	if (!all)
		return -1;
	rc = b_gather0(v, all);
	if (!rc && rank == 0) {
		*out = 0;
		for (int i = 0; i < size; i++)
			*out += all[i];
	}
	free(all);
	return rc;
}

struct binfo {
	int nodes, local_rank, agent_pid;
	char provider[64];
};

static int b_info(struct binfo *in)
{
	struct rmad_info ri;
	int rc = rmad_get_info(&ri);

	if (rc)
		return rc;
	in->nodes = ri.nnodes;
	in->local_rank = ri.local_rank;
	in->agent_pid = ri.agent_pid;
	snprintf(in->provider, sizeof(in->provider), "%s",
		 ri.provider[0] ? ri.provider : "-");
	return 0;
}
#endif

#endif
