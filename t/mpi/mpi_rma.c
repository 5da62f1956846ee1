/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_rma.c - an MPI-3.1 RMA program written from the standard's text
 * (chapter 11), knowing nothing of rmad: every window flavor, every
 * operation and its request form, fence, PSCW, passive target, derived
 * datatypes (distributed arrays too), attributes, and the error classes
 * of misuse.  Results are
 * exact.  It runs under plain Open MPI and under rmad-run --mpi
 * (t/mpi.sh); rank 0 prints TAP.
 *
 * Checks whose outcome MPI leaves to the implementation (an access
 * outside the window, a call outside an epoch: "erroneous", which Open
 * MPI's osc sm does not detect) run only when the rmad library is
 * loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, ntest, nfail, rmad_loaded;

/* Every rank's verdict on one check; rank 0 says it. */
static void ok(int cond, const char *name)
{
	int all = 0;

	MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	ntest++;
	if (!all)
		nfail++;
	if (me == 0)
		printf("%sok %d - %s\n", all ? "" : "not ", ntest, name);
	fflush(stdout);
}

static int right(void) { return (me + 1) % np; }
static int left(void) { return (me + np - 1) % np; }

/* Read my own window memory at a consistent point (passive target). */
static void self_sync(MPI_Win w)
{
	MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
	MPI_Win_sync(w);
	MPI_Win_unlock(me, w);
}

static void t_allocate(void)
{
	const int n = 64;
	int *base, got[64], good = 1;
	MPI_Win w;

	MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	for (int i = 0; i < n; i++)
		base[i] = -1;
	MPI_Barrier(MPI_COMM_WORLD);
	int src[64];
	for (int i = 0; i < n; i++)
		src[i] = me * 1000 + i;
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, w);
	MPI_Put(src, n, MPI_INT, right(), 0, n, MPI_INT, w);
	MPI_Win_unlock(right(), w);
	MPI_Barrier(MPI_COMM_WORLD);
	self_sync(w);
	for (int i = 0; i < n; i++)
		good &= base[i] == left() * 1000 + i;
	ok(good, "allocate: put to the right neighbour under an exclusive lock");
	memset(got, 0, sizeof(got));
	MPI_Win_lock(MPI_LOCK_SHARED, left(), 0, w);
	MPI_Get(got, n, MPI_INT, left(), 0, n, MPI_INT, w);
	MPI_Win_unlock(left(), w);
	good = 1;
	for (int i = 0; i < n; i++)
		good &= got[i] == ((left() + np - 1) % np) * 1000 + i;
	ok(good, "allocate: get from the left neighbour under a shared lock");
	MPI_Win_free(&w);
}

static void t_accumulate(void)
{
	long *base, src[16], expect = 0;
	int good = 1, rounds = 50;
	MPI_Win w;

	MPI_Win_allocate(16 * sizeof(long), sizeof(long), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	memset(base, 0, 16 * sizeof(long));
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 16; i++)
		src[i] = me + 1;
	for (int r = 0; r < rounds; r++) {
		MPI_Win_lock(r & 1 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0,
			     0, w);
		MPI_Accumulate(src, 16, MPI_LONG, 0, 0, 16, MPI_LONG, MPI_SUM,
			       w);
		MPI_Win_unlock(0, w);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < np; r++)
		expect += (long)rounds * (r + 1);
	if (me == 0) {
		self_sync(w);
		for (int i = 0; i < 16; i++)
			good &= base[i] == expect;
	}
	ok(good, "accumulate: concurrent MPI_SUM from every rank, exact total");
	MPI_Win_free(&w);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void t_atomics(void)
{
	int64_t *base, one = 1, got[100], *all = NULL, v;
	int good = 1, k = 100;
	MPI_Win w;

	MPI_Win_allocate(4 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	memset(base, 0, 4 * sizeof(int64_t));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < k; i++) {
		MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, 0, 0, MPI_SUM, w);
		MPI_Win_flush(0, w);
	}
	/* compare-and-swap: one rank wins the empty slot */
	int64_t mine = me + 1, zero = 0, old = -1;
	MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT64_T, 0, 1, w);
	MPI_Win_flush(0, w);
	/* get_accumulate: REPLACE swaps, NO_OP reads */
	int64_t put = 7, prev = -1;
	MPI_Get_accumulate(&put, 1, MPI_INT64_T, &prev, 1, MPI_INT64_T, 0, 2,
			   1, MPI_INT64_T, MPI_REPLACE, w);
	MPI_Win_unlock_all(w);
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == 0)
		all = malloc(sizeof(int64_t) * (size_t)(k * np));
	MPI_Gather(got, k, MPI_INT64_T, all, k, MPI_INT64_T, 0,
		   MPI_COMM_WORLD);
	if (me == 0) {
		qsort(all, (size_t)(k * np), sizeof(int64_t), cmp_i64);
		for (int i = 0; i < k * np; i++)
			good &= all[i] == i;
		free(all);
	}
	ok(good, "fetch_and_op: a shared counter hands out every ticket once");
	int won = old == 0, wins = 0;
	MPI_Allreduce(&won, &wins, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	ok(wins == 1, "compare_and_swap: exactly one rank wins the slot");
	int saw7 = prev == 7, n7 = 0;
	MPI_Allreduce(&saw7, &n7, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	ok(n7 == np - 1, "get_accumulate REPLACE: all but the first saw 7");
	MPI_Win_lock_all(0, w);
	v = -1;
	MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &v, 1, MPI_INT64_T, 0, 0, 1,
			   MPI_INT64_T, MPI_NO_OP, w);
	MPI_Win_unlock_all(w);
	ok(v == (int64_t)k * np, "get_accumulate NO_OP reads the total");
	MPI_Win_free(&w);
}

static void t_minloc(void)
{
	struct { int v, i; } *base, mine, want = { 1 << 30, 0 };
	MPI_Win w;
	int good = 1;

	MPI_Win_allocate(sizeof(*base), sizeof(*base), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	base->v = 1 << 30;
	base->i = -1;
	MPI_Barrier(MPI_COMM_WORLD);
	mine.v = (me * 7) % np + 10;
	mine.i = me;
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
	MPI_Accumulate(&mine, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MINLOC, w);
	MPI_Win_unlock(0, w);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < np; r++) {
		int v = (r * 7) % np + 10;

		if (v < want.v) {
			want.v = v;
			want.i = r;
		}
	}
	if (me == 0) {
		self_sync(w);
		good = base->v == want.v && base->i == want.i;
	}
	ok(good, "accumulate MPI_MINLOC on MPI_2INT: the lowest index wins ties");
	MPI_Win_free(&w);
}

/*
 * Fortran's pair types, whose index is a value of the pair's own type:
 * every rank puts { value, index } into rank 0's two pairs, MAXLOC on
 * MPI_2REAL and MINLOC on MPI_2DOUBLE_PRECISION, with ties that the
 * smaller index wins; then all fetch them with a NO_OP.
 */
static void t_fortran_pairs(void)
{
	struct fp { float v, i; } *f, fm, fg;
	struct dp { double v, i; } *d, dm, dg;
	struct fp fw = { -1, 100 };
	struct dp dw = { 1e9, -1 };
	MPI_Win w;
	char *base;

	MPI_Win_allocate(sizeof(*f) + sizeof(*d), 1, MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	f = (struct fp *)base;
	d = (struct dp *)(base + sizeof(*f));
	*f = fw;
	*d = dw;
	MPI_Barrier(MPI_COMM_WORLD);
	fm = (struct fp){ me % 2 ? 5.0f : 3.0f, (float)me };
	dm = (struct dp){ me % 2 ? 2.5 : 3.5, me + 0.5 };
	MPI_Win_lock_all(0, w);
	MPI_Accumulate(&fm, 1, MPI_2REAL, 0, 0, 1, MPI_2REAL, MPI_MAXLOC, w);
	MPI_Accumulate(&dm, 1, MPI_2DOUBLE_PRECISION, 0, sizeof(*f), 1,
		       MPI_2DOUBLE_PRECISION, MPI_MINLOC, w);
	MPI_Win_unlock_all(w);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	MPI_Get_accumulate(NULL, 0, MPI_2REAL, &fg, 1, MPI_2REAL, 0, 0, 1,
			   MPI_2REAL, MPI_NO_OP, w);
	MPI_Get_accumulate(NULL, 0, MPI_2DOUBLE_PRECISION, &dg, 1,
			   MPI_2DOUBLE_PRECISION, 0, sizeof(*f), 1,
			   MPI_2DOUBLE_PRECISION, MPI_NO_OP, w);
	MPI_Win_unlock_all(w);
	for (int r = 0; r < np; r++) {
		struct fp a = { r % 2 ? 5.0f : 3.0f, (float)r };
		struct dp b = { r % 2 ? 2.5 : 3.5, r + 0.5 };

		if (a.v > fw.v || (a.v == fw.v && a.i < fw.i))
			fw = a;
		if (b.v < dw.v || (b.v == dw.v && b.i < dw.i))
			dw = b;
	}
	ok(fg.v == fw.v && fg.i == fw.i && dg.v == dw.v && dg.i == dw.i,
	   "Fortran pairs: MAXLOC on MPI_2REAL, MINLOC on "
	   "MPI_2DOUBLE_PRECISION, the lowest index wins ties");
	MPI_Win_free(&w);
}

/*
 * MPI_PACKED: what MPI_Pack made moves as bytes.  Each rank puts its
 * packed ints into its right neighbour's window, replaces the second
 * half with an accumulate, and gets the whole back.
 */
static void t_packed(void)
{
	int in[4] = { me, me + 100, me + 200, me + 300 }, out[4] = { 0 };
	char pk[64], back[64], *base;
	int pos = 0, n, good;
	MPI_Win w;

	MPI_Pack(in, 4, MPI_INT, pk, sizeof(pk), &pos, MPI_COMM_WORLD);
	n = pos;
	MPI_Win_allocate(sizeof(pk), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			 &w);
	memset(base, 0, sizeof(pk));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	MPI_Put(pk, n / 2, MPI_PACKED, right(), 0, n / 2, MPI_PACKED, w);
	MPI_Accumulate(pk + n / 2, n - n / 2, MPI_PACKED, right(), n / 2,
		       n - n / 2, MPI_PACKED, MPI_REPLACE, w);
	MPI_Win_flush(right(), w);
	MPI_Get(back, n, MPI_PACKED, right(), 0, n, MPI_PACKED, w);
	MPI_Win_unlock_all(w);
	pos = 0;
	MPI_Unpack(back, sizeof(back), &pos, out, 4, MPI_INT, MPI_COMM_WORLD);
	good = !memcmp(in, out, sizeof(in));
	MPI_Barrier(MPI_COMM_WORLD);
	ok(good, "MPI_PACKED: put, REPLACE accumulate and get of packed ints");
	MPI_Win_free(&w);
}

static void check_slots(const int *buf, const char *what)
{
	int good = 1;

	for (int r = 0; r < np; r++)
		good &= buf[r] == (r == me ? -1 : r * 10 + me);
	ok(good, what);
}

static void t_fence(void)
{
	int *mem, *heap;
	MPI_Win w;

	MPI_Alloc_mem(np * sizeof(int), MPI_INFO_NULL, &mem);
	for (int r = 0; r < np; r++)
		mem[r] = -1;
	MPI_Win_create(mem, np * sizeof(int), sizeof(int), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &w);
	MPI_Win_fence(MPI_MODE_NOPRECEDE, w);
	for (int r = 0; r < np; r++) {
		int v = me * 10 + r;

		if (r != me)
			MPI_Put(&v, 1, MPI_INT, r, me, 1, MPI_INT, w);
	}
	MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
	check_slots(mem, "create over MPI_Alloc_mem: all-to-all puts under fence");
	MPI_Win_free(&w);
	MPI_Free_mem(mem);

	heap = malloc(np * sizeof(int));
	for (int r = 0; r < np; r++)
		heap[r] = -1;
	MPI_Win_create(heap, np * sizeof(int), sizeof(int), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &w);
	MPI_Win_fence(0, w);
	for (int r = 0; r < np; r++) {
		int v = me * 10 + r;

		if (r != me)
			MPI_Accumulate(&v, 1, MPI_INT, r, me, 1, MPI_INT,
				       MPI_REPLACE, w);
	}
	MPI_Win_fence(0, w);
	check_slots(heap, "create over malloc: accumulate REPLACE under fence");
	MPI_Win_free(&w);
	free(heap);
}

static void t_pscw(void)
{
	MPI_Group world, from, to;
	int *base, l = left(), r = right(), good = 1;
	MPI_Win w;

	MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	base[0] = base[1] = -1;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &l, &from);
	MPI_Group_incl(world, 1, &r, &to);
	for (int round = 0; round < 3; round++) {
		int v = me * 100 + round;

		MPI_Win_post(from, 0, w);
		MPI_Win_start(to, 0, w);
		MPI_Put(&v, 1, MPI_INT, r, 0, 1, MPI_INT, w);
		MPI_Win_complete(w);
		MPI_Win_wait(w);
		good &= base[0] == l * 100 + round;
	}
	ok(good, "post/start/complete/wait around a ring, three epochs");
	/* MPI_Win_test polls the exposure epoch to its end */
	int flag = 0, v = 5;
	MPI_Win_post(from, 0, w);
	MPI_Win_start(to, 0, w);
	MPI_Put(&v, 1, MPI_INT, r, 1, 1, MPI_INT, w);
	MPI_Win_complete(w);
	while (!flag)
		MPI_Win_test(w, &flag);
	ok(base[1] == 5, "MPI_Win_test ends the exposure epoch");
	MPI_Group_free(&from);
	MPI_Group_free(&to);
	MPI_Group_free(&world);
	MPI_Win_free(&w);
}

static void t_dynamic(void)
{
	int *buf = malloc(8 * sizeof(int)), good = 1;
	MPI_Aint mine, *addr = malloc(sizeof(MPI_Aint) * (size_t)np);
	MPI_Win w;

	for (int i = 0; i < 8; i++)
		buf[i] = -1;
	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	MPI_Win_attach(w, buf, 8 * sizeof(int));
	MPI_Get_address(buf, &mine);
	MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
	int src[8];
	for (int i = 0; i < 8; i++)
		src[i] = me + i;
	MPI_Win_lock_all(0, w);
	MPI_Put(src, 8, MPI_INT, right(), addr[right()], 8, MPI_INT, w);
	MPI_Win_flush(right(), w);
	MPI_Win_unlock_all(w);
	MPI_Barrier(MPI_COMM_WORLD);
	self_sync(w);
	for (int i = 0; i < 8; i++)
		good &= buf[i] == left() + i;
	ok(good, "dynamic: attach, MPI_Get_address, put to the neighbour");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_detach(w, buf);
	MPI_Win_free(&w);
	free(buf);
	free(addr);
}

static void t_shared(void)
{
	MPI_Comm node;
	int nme, nn, *base, *peer, du = 0, good = 1;
	MPI_Aint sz = 0;
	MPI_Win w;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &nme);
	MPI_Comm_size(node, &nn);
	MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
				node, &base, &w);
	MPI_Win_shared_query(w, (nme + 1) % nn, &sz, &du, &peer);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < 4; i++)
		peer[i] = nme * 10 + i;	/* a plain store into the neighbour */
	MPI_Win_sync(w);
	MPI_Barrier(node);
	MPI_Win_sync(w);
	for (int i = 0; i < 4; i++)
		good &= base[i] == ((nme + nn - 1) % nn) * 10 + i;
	MPI_Win_unlock_all(w);
	ok(good && sz == 4 * sizeof(int) && du == (int)sizeof(int),
	   "allocate_shared: shared_query and load/store into a neighbour");
	MPI_Win_free(&w);
	MPI_Comm_free(&node);
}

static void t_attrs(void)
{
	double *base;
	void *b = NULL;
	MPI_Aint *size = NULL;
	int *du = NULL, *flavor = NULL, *model = NULL, f1, f2, f3, f4, f5;
	MPI_Group g;
	int gs = 0, good;
	char name[MPI_MAX_OBJECT_NAME];
	int len = 0;
	MPI_Info info;
	MPI_Win w;

	MPI_Win_allocate(10 * sizeof(double), sizeof(double), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	MPI_Win_get_attr(w, MPI_WIN_BASE, &b, &f1);
	MPI_Win_get_attr(w, MPI_WIN_SIZE, &size, &f2);
	MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &du, &f3);
	MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &f4);
	MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &f5);
	good = f1 && f2 && f3 && f4 && f5 && b == base &&
	       *size == 10 * sizeof(double) && *du == sizeof(double) &&
	       *flavor == MPI_WIN_FLAVOR_ALLOCATE && *model == MPI_WIN_UNIFIED;
	ok(good, "MPI_Win_get_attr: base, size, disp_unit, flavor, model");
	MPI_Win_get_group(w, &g);
	MPI_Group_size(g, &gs);
	MPI_Group_free(&g);
	MPI_Win_set_name(w, "halo");
	MPI_Win_get_name(w, name, &len);
	ok(gs == np && !strcmp(name, "halo"),
	   "MPI_Win_get_group and names work on the window's handle");
	MPI_Win_get_info(w, &info);
	ok(info != MPI_INFO_NULL, "MPI_Win_get_info gives an info object");
	MPI_Info_free(&info);
	MPI_Win_free(&w);
}

static void t_requests(void)
{
	enum { K = 2000 };
	int *base, *src = malloc(sizeof(int) * K), good = 1;
	MPI_Request *rq = malloc(sizeof(MPI_Request) * K);
	MPI_Win w;

	MPI_Win_allocate(K * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	for (int i = 0; i < K; i++) {
		base[i] = -1;
		src[i] = me * 100000 + i;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < K; i++)
		MPI_Rput(&src[i], 1, MPI_INT, right(), i, 1, MPI_INT, w,
			 &rq[i]);
	MPI_Waitall(K, rq, MPI_STATUSES_IGNORE);
	MPI_Win_flush(right(), w);
	int got = -1;
	MPI_Request r1;
	MPI_Rget(&got, 1, MPI_INT, right(), K - 1, 1, MPI_INT, w, &r1);
	MPI_Wait(&r1, MPI_STATUS_IGNORE);
	good &= got == me * 100000 + K - 1;
	/* raccumulate completed by MPI_Test */
	int add = 1, flag = 0;
	MPI_Raccumulate(&add, 1, MPI_INT, right(), 0, 1, MPI_INT, MPI_SUM, w,
			&r1);
	while (!flag)
		MPI_Test(&r1, &flag, MPI_STATUS_IGNORE);
	MPI_Win_flush(right(), w);
	/* rget_accumulate next to point-to-point requests, in waitany */
	MPI_Request mix[3];
	int fetched = -1, sendv = me, recvv = -1, idx, left_ = 3;
	MPI_Rget_accumulate(NULL, 0, MPI_INT, &fetched, 1, MPI_INT, right(),
			    0, 1, MPI_INT, MPI_NO_OP, w, &mix[0]);
	MPI_Irecv(&recvv, 1, MPI_INT, left(), 9, MPI_COMM_WORLD, &mix[1]);
	MPI_Isend(&sendv, 1, MPI_INT, right(), 9, MPI_COMM_WORLD, &mix[2]);
	while (left_--)
		MPI_Waitany(3, mix, &idx, MPI_STATUS_IGNORE);
	good &= fetched == me * 100000 + 1 && recvv == left();
	MPI_Win_unlock_all(w);
	MPI_Barrier(MPI_COMM_WORLD);
	self_sync(w);
	for (int i = 1; i < K; i++)
		good &= base[i] == left() * 100000 + i;
	ok(good, "request ops: 2000 rputs in waitall, rget+wait, "
	   "raccumulate+test, rget_accumulate in waitany with isend/irecv");
	MPI_Win_free(&w);
	free(src);
	free(rq);
}

/*
 * Fortran types from C: the named ones and the Fortran 90 parameterized
 * ones.  Each rank adds its values twice to its right neighbour's four
 * elements with MPI_SUM, then fetches them with a NO_OP get-accumulate;
 * LOGICAL takes a LAND.  Values are small integers, exact in any real.
 */
struct ft_case {
	const char *name;
	MPI_Datatype t;
	int cls;		/* 'i' integer, 'r' real, 'c' complex, 'l' */
	int rmad_only;		/* plain Open MPI 4.1.4's own sums of it are
				 * not binary128's: checked with rmad only */
};

static void ft_set(char *p, int cls, int sz, int i, double v)
{
	int w = cls == 'c' ? sz / 2 : sz;

	for (int part = 0; part < (cls == 'c' ? 2 : 1); part++) {
		char *q = p + (size_t)i * sz + part * w;
		double x = part ? -v : v;

		if (cls == 'r' || cls == 'c') {
			if (w == 4) { float f = (float)x; memcpy(q, &f, 4); }
			else if (w == 16) { __float128 f = x; memcpy(q, &f, 16); }
			else { memcpy(q, &x, 8); }
		} else {
			long long n = (long long)x;

			if (w == 1) { int8_t a = (int8_t)n; memcpy(q, &a, 1); }
			else if (w == 2) { int16_t a = (int16_t)n; memcpy(q, &a, 2); }
			else if (w == 4) { int32_t a = (int32_t)n; memcpy(q, &a, 4); }
			else { int64_t a = n; memcpy(q, &a, 8); }
		}
	}
}

static int ft_is(const char *p, int cls, int sz, int i, double v)
{
	char want[32];

	ft_set(want, cls, sz, 0, v);
	return memcmp(p + (size_t)i * sz, want, sz) == 0;
}

static void t_fortran(void)
{
	MPI_Datatype fi4, fi8, fi1, fr4, fr8, fc8, fc16;
	int good = 1;

	MPI_Type_create_f90_integer(9, &fi4);
	MPI_Type_create_f90_integer(18, &fi8);
	MPI_Type_create_f90_integer(2, &fi1);
	MPI_Type_create_f90_real(6, MPI_UNDEFINED, &fr4);
	MPI_Type_create_f90_real(15, MPI_UNDEFINED, &fr8);
	MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &fc8);
	MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &fc16);
	const struct ft_case cases[] = {
		{ "INTEGER", MPI_INTEGER, 'i' },
		{ "INTEGER8", MPI_INTEGER8, 'i' },
		{ "INTEGER2", MPI_INTEGER2, 'i' },
		{ "REAL", MPI_REAL, 'r' },
		{ "DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, 'r' },
		{ "COMPLEX", MPI_COMPLEX, 'c' },
		{ "DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX, 'c' },
		{ "f90 integer r=9", fi4, 'i' },
		{ "f90 integer r=18", fi8, 'i' },
		{ "f90 integer r=2", fi1, 'i' },
		{ "f90 real p=6", fr4, 'r' },
		{ "f90 real p=15", fr8, 'r' },
		{ "REAL16", MPI_REAL16, 'r', 1 },
		{ "COMPLEX32", MPI_COMPLEX32, 'c', 1 },
		{ "f90 complex p=6", fc8, 'c' },
		{ "f90 complex p=15", fc16, 'c' },
		{ "LOGICAL", MPI_LOGICAL, 'l' },
#ifdef MPI_LOGICAL1
		{ "LOGICAL1", MPI_LOGICAL1, 'l' },
#endif
#ifdef MPI_LOGICAL8
		{ "LOGICAL8", MPI_LOGICAL8, 'l' },
#endif
		/* C++'s, named from C the same way */
		{ "CXX_BOOL", MPI_CXX_BOOL, 'l' },
		{ "CXX_FLOAT_COMPLEX", MPI_CXX_FLOAT_COMPLEX, 'c' },
		{ "CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX, 'c' },
	};
	char bad[256] = "";

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct ft_case *c = &cases[k];
		int sz = 0, cls = c->cls == 'l' ? 'i' : c->cls, g = 1;

		if (c->rmad_only && !rmad_loaded)
			continue;
		char src[4 * 32] __attribute__((aligned(16)));
		char got[4 * 32] __attribute__((aligned(16)));
		char *base;
		MPI_Win w;

		MPI_Type_size(c->t, &sz);
		MPI_Win_allocate(4 * sz, sz, MPI_INFO_NULL, MPI_COMM_WORLD,
				 &base, &w);
		for (int i = 0; i < 4; i++) {
			/* LAND: target 1,1,0,0 and origin 1,0,1,0 */
			ft_set(base, cls, sz, i, c->cls == 'l' ? i < 2 :
			       10 * i);
			ft_set(src, cls, sz, i, c->cls == 'l' ? !(i & 1) :
			       me + i + 1);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock_all(0, w);
		for (int r = 0; r < (c->cls == 'l' ? 1 : 2); r++)
			MPI_Accumulate(src, 4, c->t, right(), 0, 4, c->t,
				       c->cls == 'l' ? MPI_LAND : MPI_SUM, w);
		MPI_Win_flush(right(), w);
		MPI_Get_accumulate(NULL, 0, c->t, got, 4, c->t, right(), 0, 4,
				   c->t, MPI_NO_OP, w);
		MPI_Win_unlock_all(w);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < 4; i++) {
			/* the right rank got my values: mine, then theirs */
			double want = c->cls == 'l' ? i == 0 :
				      10 * i + 2 * (me + i + 1);

			g &= ft_is(got, cls, sz, i, want);
		}
		if (!g && strlen(bad) < 200) {
			strcat(bad, " ");
			strcat(bad, c->name);
		}
		good &= g;
		MPI_Win_free(&w);
	}
	if (!good)
		printf("rank %d: wrong:%s\n", me, bad);
	ok(good, "Fortran types (named and f90 integer, real, complex; "
	   "LOGICAL with LAND) and C++'s bool and complex: accumulate and "
	   "fetch exact");
}

static void t_types(void)
{
	enum { N = 8 };
	int *base, src[N], good = 1;
	MPI_Datatype vec, sub;
	MPI_Win w;

	MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	for (int i = 0; i < 2 * N; i++)
		base[i] = -1;
	MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int i = 0; i < N; i++)
		src[i] = me * 10 + i;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, w);
	/* N contiguous ints into every other int: the same signature */
	MPI_Put(src, N, MPI_INT, right(), 0, 1, vec, w);
	MPI_Accumulate(src, N, MPI_INT, right(), 1, 1, vec, MPI_SUM, w);
	MPI_Win_unlock(right(), w);
	MPI_Type_free(&vec);	/* freed after use: rmad's copy goes too */
	MPI_Barrier(MPI_COMM_WORLD);
	self_sync(w);
	for (int i = 0; i < N; i++)
		good &= base[2 * i] == left() * 10 + i &&
			base[2 * i + 1] == left() * 10 + i - 1;
	ok(good, "vector target type: put and accumulate, contiguous origin");

	/* a 2x3 block at (1,2) of a 4x6 array of doubles, both orders */
	double *d;
	MPI_Win wd;
	int sizes[2] = { 4, 6 }, subs[2] = { 2, 3 }, starts[2] = { 1, 2 };
	int fsizes[2] = { 6, 4 }, fsubs[2] = { 3, 2 }, fstarts[2] = { 2, 1 };
	double blk[6];
	MPI_Datatype fsub;

	MPI_Win_allocate(24 * sizeof(double), sizeof(double), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &d, &wd);
	for (int i = 0; i < 24; i++)
		d[i] = 0;
	MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C,
				 MPI_DOUBLE, &sub);
	MPI_Type_commit(&sub);
	MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN,
				 MPI_DOUBLE, &fsub);
	MPI_Type_commit(&fsub);
	for (int i = 0; i < 6; i++)
		blk[i] = me + i / 10.0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right(), 0, wd);
	MPI_Put(blk, 6, MPI_DOUBLE, right(), 0, 1, sub, wd);
	MPI_Win_unlock(right(), wd);
	MPI_Barrier(MPI_COMM_WORLD);
	self_sync(wd);
	good = 1;
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 6; c++) {
			int in = r >= 1 && r < 3 && c >= 2 && c < 5;
			double want = in ? left() + ((r - 1) * 3 + c - 2) / 10.0 : 0;

			good &= d[r * 6 + c] == want;
		}
	/* the Fortran-order twin names the same elements: get them back */
	double back[6] = { 0 };
	MPI_Win_lock(MPI_LOCK_SHARED, me, 0, wd);
	MPI_Get(back, 6, MPI_DOUBLE, me, 0, 1, fsub, wd);
	MPI_Win_unlock(me, wd);
	for (int i = 0; i < 6; i++)
		good &= back[i] == left() + i / 10.0;
	ok(good, "subarray target types, C and Fortran order");
	MPI_Type_free(&sub);
	MPI_Type_free(&fsub);
	MPI_Win_free(&wd);
	MPI_Win_free(&w);
}

/*
 * Distributed arrays (MPI_Type_create_darray): each rank puts its own
 * piece, contiguous at the origin, into its right neighbour's copy of
 * the global array through the piece's type, accumulates 1 onto it,
 * and gets it back; the neighbour compares its window with MPI's own
 * MPI_Unpack of the same data through the same type (the reference),
 * under a fence epoch.  Block, cyclic (darg 1 and more), none and
 * default arguments, C and Fortran order, a piece that is empty on the
 * last rank, and an old type of two ints.
 */
struct da_case {
	const char *what;
	int nd, order, per;		/* per: ints per old-type element */
	int gs[3], dist[3], darg[3];
	int grid;			/* the dimension of np processes */
};

static MPI_Datatype da_type(const struct da_case *c, int rank)
{
	int ps[3] = { 1, 1, 1 };
	MPI_Datatype old = MPI_INT, t;

	if (c->per > 1)
		MPI_Type_contiguous(c->per, MPI_INT, &old);
	ps[c->grid] = np;
	MPI_Type_create_darray(np, rank, c->nd, c->gs, c->dist, c->darg, ps,
			       c->order, old, &t);
	MPI_Type_commit(&t);
	if (old != MPI_INT)
		MPI_Type_free(&old);
	return t;
}

static void t_darray(void)
{
	const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC;
	const int N = MPI_DISTRIBUTE_NONE, D = MPI_DISTRIBUTE_DFLT_DARG;
	const struct da_case cases[] = {
		{ "2-d C, block x cyclic(2)", 2, MPI_ORDER_C, 1,
		  { 7, 9 }, { B, C }, { D, 2 }, 1 },
		{ "2-d C, cyclic x block", 2, MPI_ORDER_C, 1,
		  { 11, 5 }, { C, B }, { D, D }, 0 },
		{ "3-d Fortran, cyclic(3) x none x block", 3,
		  MPI_ORDER_FORTRAN, 1, { 10, 3, 4 }, { C, N, B },
		  { 3, D, D }, 0 },
		{ "3-d Fortran, none x block(4) x cyclic, 2 ints", 3,
		  MPI_ORDER_FORTRAN, 2, { 3, 4 * np, 5 }, { N, B, C },
		  { D, 4, D }, 1 },
		{ "1-d block(3): the last rank owns nothing", 1,
		  MPI_ORDER_C, 1, { np > 1 ? 3 * np - 3 : 3 }, { B }, { 3 },
		  0 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct da_case *c = &cases[k];
		MPI_Datatype mine = da_type(c, me), theirs = da_type(c, left());
		int ng = c->per, nm, nt, good = 1, pos = 0, sz;
		int *base, *src, *back, *ref, *tsrc;
		char *pk, name[128];
		MPI_Win w;

		for (int i = 0; i < c->nd; i++)
			ng *= c->gs[i];
		MPI_Type_size(mine, &sz);
		nm = sz / (int)sizeof(int);
		MPI_Type_size(theirs, &sz);
		nt = sz / (int)sizeof(int);
		src = malloc((nm + 1) * sizeof(int));
		back = malloc((nm + 1) * sizeof(int));
		tsrc = malloc((nt + 1) * sizeof(int));
		ref = malloc(ng * sizeof(int));
		pk = malloc((nt + 1) * sizeof(int) + 64);
		for (int i = 0; i < nm; i++)
			src[i] = me * 100000 + i;
		for (int i = 0; i < nt; i++)
			tsrc[i] = left() * 100000 + i;
		MPI_Win_allocate(ng * sizeof(int), sizeof(int), MPI_INFO_NULL,
				 MPI_COMM_WORLD, &base, &w);
		for (int i = 0; i < ng; i++)
			base[i] = ref[i] = -1;
		/* the reference: MPI's unpack of the left rank's piece */
		MPI_Pack(tsrc, nt, MPI_INT, pk, (nt + 1) * sizeof(int) + 64,
			 &pos, MPI_COMM_SELF);
		pos = 0;
		MPI_Unpack(pk, (nt + 1) * sizeof(int) + 64, &pos, ref, 1,
			   theirs, MPI_COMM_SELF);
		MPI_Win_fence(0, w);
		MPI_Put(src, nm, MPI_INT, right(), 0, 1, mine, w);
		MPI_Win_fence(0, w);
		for (int i = 0; i < ng; i++)
			good &= base[i] == ref[i];
		MPI_Barrier(MPI_COMM_WORLD);	/* read before the next op */
		MPI_Accumulate(src, nm, MPI_INT, right(), 0, 1, mine, MPI_SUM,
			       w);
		MPI_Win_fence(0, w);
		for (int i = 0; i < ng; i++)
			good &= base[i] == (ref[i] == -1 ? -1 : 2 * ref[i]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Get(back, nm, MPI_INT, right(), 0, 1, mine, w);
		MPI_Win_fence(0, w);
		for (int i = 0; i < nm; i++)
			good &= back[i] == 2 * src[i];
		snprintf(name, sizeof(name), "darray %s: put, accumulate, get "
			 "(%d of %d ints here)", c->what, nm, ng);
		ok(good, name);
		MPI_Win_free(&w);
		MPI_Type_free(&mine);
		MPI_Type_free(&theirs);
		free(src);
		free(back);
		free(tsrc);
		free(ref);
		free(pk);
	}
}

static int cls(int rc)
{
	int c = rc;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &c);
	return c;
}

static void t_errors(void)
{
	int *base, v = 1, good = 1;
	MPI_Win w;

	MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &base, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Win_lock_all(0, w);
	good &= cls(MPI_Put(&v, 1, MPI_INT, np, 0, 1, MPI_INT, w)) ==
		MPI_ERR_RANK;
	good &= cls(MPI_Put(&v, -1, MPI_INT, 0, 0, -1, MPI_INT, w)) ==
		MPI_ERR_COUNT;
	good &= MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w) ==
		MPI_SUCCESS;
	if (rmad_loaded) {
		good &= cls(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, w)) ==
			MPI_ERR_RMA_RANGE;
		good &= cls(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT,
					   MPI_MINLOC, w)) == MPI_ERR_OP;
	}
	MPI_Win_unlock_all(w);
	if (rmad_loaded) {
		good &= cls(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w)) ==
			MPI_ERR_RMA_SYNC;
		good &= cls(MPI_Win_unlock(0, w)) == MPI_ERR_RMA_SYNC;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	self_sync(w);
	ok(good, rmad_loaded ? "misuse returns MPI's classes: RANK, COUNT, "
	   "RMA_RANGE, OP, RMA_SYNC; PROC_NULL is a no-op" :
	   "misuse returns MPI's classes: RANK, COUNT; PROC_NULL is a no-op");
	MPI_Win_free(&w);
}

/*
 * --unmapped: a put whose types are MPI_2COMPLEX (Open MPI's pair of
 * complexes, which MPI no longer names and rmad has no type for), or
 * under MPICH, which lacks it, MPIX_C_FLOAT16 (half floats, which rmad
 * lacks too).
 * Prints the error class the put returned; under RMAD_MPI_STRICT=1 the
 * job aborts with the reason.
 */
static int unmapped(void)
{
	int rc;
	long double v[4] = { 1, 2, 3, 4 }, *base;
#ifdef MPI_2COMPLEX
	MPI_Datatype fi = MPI_2COMPLEX;
#else
	MPI_Datatype fi = MPIX_C_FLOAT16;
#endif
	MPI_Win w;

	MPI_Win_allocate(4 * np * 16, 16, MPI_INFO_NULL, MPI_COMM_WORLD,
			 &base, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Win_lock_all(0, w);
	rc = MPI_Put(v, 4, fi, right(), 0, 4, fi, w);
	MPI_Win_unlock_all(w);
	printf("rank %d: unmapped put: class %d (MPI_ERR_TYPE is %d)\n",
	       me, cls(rc), MPI_ERR_TYPE);
	MPI_Win_free(&w);
	MPI_Finalize();
	return 0;
}

/*
 * --status CMD: three allocated windows are made, then rank 0 runs CMD
 * (t/mpi.sh: rmadctl status, with max_windows set so that MPI serves
 * the last) while they all exist; then they are freed.
 */
static int status(const char *cmd)
{
	MPI_Win w[3];
	void *base;

	for (int i = 0; i < 3; i++)
		MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
				 &w[i]);
	MPI_Barrier(MPI_COMM_WORLD);
	if (me == 0 && system(cmd) != 0)
		printf("rank 0: '%s' failed\n", cmd);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 2; i >= 0; i--)
		MPI_Win_free(&w[i]);
	MPI_Finalize();
	return 0;
}

int main(int argc, char **argv)
{
	int provided;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	/* served by rmad: its library is in, and not told to stand aside */
	rmad_loaded = dlsym(RTLD_DEFAULT, "rmad_init") != NULL &&
		      !(getenv("RMAD_MPI_DISABLE") &&
			!strcmp(getenv("RMAD_MPI_DISABLE"), "1"));
	if (argc > 1 && !strcmp(argv[1], "--unmapped"))
		return unmapped();
	if (argc > 2 && !strcmp(argv[1], "--status"))
		return status(argv[2]);
	if (me == 0)
		printf("# %d ranks, %s\n", np,
		       rmad_loaded ? "librmad-mpi serving" : "plain MPI");
	t_allocate();
	t_accumulate();
	t_atomics();
	t_minloc();
	t_fence();
	t_pscw();
	t_dynamic();
	t_shared();
	t_attrs();
	t_requests();
	t_types();
	t_darray();
	t_fortran();
	t_fortran_pairs();
	t_packed();
	t_errors();
	if (me == 0)
		printf("1..%d\n", ntest);
	MPI_Finalize();
	return nfail ? 1 : 0;
}
