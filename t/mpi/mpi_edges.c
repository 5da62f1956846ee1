/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_edges.c - the corners of MPI RMA that MPICH's test/mpi/rma found
 * open, one check each (t/mpi-edges.sh runs it on one node and on 2
 * vnodes, 4 ranks):
 *   zero      zero-count operations, NULL buffers and types of no size
 *             or of different basic types, are no-ops (badrma);
 *   bottom    MPI_BOTTOM as origin and result with a type of absolute
 *             addresses, to a created window (put_bottom);
 *   query     MPI_Win_shared_query on allocated, created and dynamic
 *             windows (MPI-4.0): a same-node member's memory where the
 *             window maps it, size 0 and NULL elsewhere;
 *   span      a dynamic window's access across two regions attached end
 *             to end (win_dynamic_rma_flush_get -count=9216);
 *   empty     a noncontiguous shared window's members of size 0: size 0
 *             and base NULL (win_shared_noncontig_put);
 *   split     MPI_Win_allocate over MPI_COMM_TYPE_SHARED, which under
 *             vnodes is one communicator per vnode on one host, 40
 *             times (win_zero, win_large_shm: Open MPI's own segment
 *             names collided);
 *   mixed     a lock epoch of one rank between fences, then fences
 *             again (mixedsync hung across vnodes).
 * Rank 0 prints TAP.  Knows nothing of rmad.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, npoint;

/* one TAP point: bad is this rank's count of failures */
static void point(int bad, const char *what)
{
	int all = 0;

	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%sok %d - %s (%d failures)\n", all ? "not " : "",
		       ++npoint, what, all);
	fflush(stdout);
}

static int zero(void)
{
	int buf[16] = { 0 }, res[16], bad = 0;
	MPI_Datatype none, types[3];
	MPI_Win w;

	MPI_Type_contiguous(0, MPI_INT, &none);
	MPI_Type_commit(&none);
	types[0] = none;
	types[1] = MPI_INT;
	types[2] = MPI_DOUBLE;
	MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Win_fence(0, w);
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++) {
			int oc = a == 0 ? 1 : 0, tc = b == 0 ? 1 : 0;
			int t = (rank + 1) % size;

			bad += MPI_Put(NULL, oc, types[a], t, 0, tc, types[b],
				       w) != MPI_SUCCESS;
			bad += MPI_Get(NULL, oc, types[a], t, 0, tc, types[b],
				       w) != MPI_SUCCESS;
			bad += MPI_Accumulate(NULL, oc, types[a], t, 0, tc,
					      types[b], MPI_SUM, w) !=
			       MPI_SUCCESS;
			bad += MPI_Get_accumulate(NULL, oc, types[a], res, 0,
						  types[b], t, 0, tc, types[b],
						  MPI_SUM, w) != MPI_SUCCESS;
			bad += MPI_Get_accumulate(NULL, oc, types[a], NULL, 0,
						  types[a], t, 0, tc, types[b],
						  MPI_SUM, w) != MPI_SUCCESS;
		}
	MPI_Win_fence(0, w);
	for (int i = 0; i < 16; i++)
		bad += buf[i] != 0;
	MPI_Win_free(&w);
	MPI_Type_free(&none);
	return bad;
}

static int bottom(void)
{
	enum { ROWS = 64, COLS = 32, LD = 48 };
	double *win = calloc(ROWS * LD, sizeof(double));
	double *src = malloc(ROWS * LD * sizeof(double));
	double *back = calloc(ROWS * LD, sizeof(double));
	int blen[ROWS], rdisp[ROWS], bad = 0, peer = (rank + 1) % size;
	int from = (rank + size - 1) % size;
	MPI_Aint addr[ROWS], baddr[ROWS];
	MPI_Datatype st, bt, dt;
	MPI_Win w;

	for (int i = 0; i < ROWS * LD; i++)
		src[i] = rank * 1000.0 + i;
	for (int j = 0; j < ROWS; j++) {
		MPI_Get_address(&src[j * LD], &addr[j]);
		MPI_Get_address(&back[j * LD], &baddr[j]);
		blen[j] = COLS * (int)sizeof(double);
		rdisp[j] = j * LD * (int)sizeof(double);
	}
	MPI_Type_create_hindexed(ROWS, blen, addr, MPI_BYTE, &st);
	MPI_Type_create_hindexed(ROWS, blen, baddr, MPI_BYTE, &bt);
	MPI_Type_create_indexed_block(ROWS, COLS * (int)sizeof(double), rdisp,
				      MPI_BYTE, &dt);
	MPI_Type_commit(&st);
	MPI_Type_commit(&bt);
	MPI_Type_commit(&dt);
	MPI_Win_create(win, ROWS * LD * sizeof(double), 1, MPI_INFO_NULL,
		       MPI_COMM_WORLD, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, w);
	bad += MPI_Put(MPI_BOTTOM, 1, st, peer, 0, 1, dt, w) != MPI_SUCCESS;
	MPI_Win_unlock(peer, w);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int j = 0; j < ROWS; j++)
		for (int i = 0; i < LD; i++)
			bad += win[j * LD + i] !=
			       (i < COLS ? from * 1000.0 + j * LD + i : 0.0);
	MPI_Barrier(MPI_COMM_WORLD);
	/* and back into a result of absolute addresses */
	MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, w);
	bad += MPI_Get(MPI_BOTTOM, 1, bt, peer, 0, 1, dt, w) != MPI_SUCCESS;
	MPI_Win_unlock(peer, w);
	for (int j = 0; j < ROWS; j++)
		for (int i = 0; i < COLS; i++)
			bad += back[j * LD + i] != src[j * LD + i];
	MPI_Win_free(&w);
	MPI_Type_free(&st);
	MPI_Type_free(&bt);
	MPI_Type_free(&dt);
	free(win);
	free(src);
	free(back);
	return bad;
}

/* shared_query on a window of flavor f: never an error; memory that is
 * reported is the member's (its first int says whose) */
static int query_one(int f, MPI_Comm node)
{
	int *base = NULL, bad = 0, *mine = NULL, nrank;
	MPI_Win w;
	MPI_Group wg, ng;

	if (f == 0) {
		MPI_Win_allocate(64, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
				 &base, &w);
	} else if (f == 1) {
		MPI_Alloc_mem(64, MPI_INFO_NULL, &mine);
		base = mine;
		MPI_Win_create(mine, 64, sizeof(int), MPI_INFO_NULL,
			       MPI_COMM_WORLD, &w);
	} else {
		MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	}
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	if (base) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w);
		base[0] = 7000 + rank;
		MPI_Win_unlock(rank, w);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Comm_group(node, &ng);
	for (int r = 0; r < size; r++) {
		MPI_Aint sz = -1;
		int du = -1, *b = (int *)1;

		bad += MPI_Win_shared_query(w, r, &sz, &du, &b) != MPI_SUCCESS;
		MPI_Group_translate_ranks(wg, 1, &r, ng, &nrank);
		if (sz > 0) {
			/* only a member of this node can be reachable */
			bad += nrank == MPI_UNDEFINED || !b || sz != 64 ||
			       du != sizeof(int);
			if (b && nrank != MPI_UNDEFINED)
				bad += b[0] != 7000 + r;
		} else {
			bad += sz != 0 || b != NULL;
		}
		/* an allocated window's own memory is always reachable */
		if (f == 0 && r == rank)
			bad += sz != 64 || b != base;
	}
	MPI_Group_free(&wg);
	MPI_Group_free(&ng);
	MPI_Win_free(&w);
	if (mine)
		MPI_Free_mem(mine);
	return bad;
}

static int query(void)
{
	MPI_Comm node;
	int bad = 0;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	for (int f = 0; f < 3; f++)
		bad += query_one(f, node);
	MPI_Comm_free(&node);
	return bad;
}

static int span(void)
{
	enum { N = 8192, CNT = 9216 };
	int *mem = calloc(2 * N, sizeof(int)), *loc = malloc(CNT * sizeof(int));
	int *chk = calloc(CNT, sizeof(int)), bad = 0, dst = (rank + 1) % size;
	MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)size), mine;
	MPI_Win w;

	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	MPI_Win_attach(w, mem, N * sizeof(int));
	MPI_Win_attach(w, mem + N, N * sizeof(int));
	MPI_Get_address(mem, &mine);
	MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
	for (int i = 0; i < CNT; i++)
		loc[i] = rank * 100000 + i;
	/* 8192 of one region and 1024 of the next, with each of put,
	 * accumulate and get */
	MPI_Win_lock_all(0, w);
	bad += MPI_Put(loc, CNT, MPI_INT, dst, addrs[dst], CNT, MPI_INT, w) !=
	       MPI_SUCCESS;
	MPI_Win_flush(dst, w);
	bad += MPI_Accumulate(loc, CNT, MPI_INT, dst, addrs[dst], CNT, MPI_INT,
			      MPI_SUM, w) != MPI_SUCCESS;
	MPI_Win_flush(dst, w);
	bad += MPI_Get(chk, CNT, MPI_INT, dst, addrs[dst], CNT, MPI_INT, w) !=
	       MPI_SUCCESS;
	MPI_Win_flush(dst, w);
	MPI_Win_unlock_all(w);
	for (int i = 0; i < CNT; i++)
		bad += chk[i] != 2 * loc[i];
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_detach(w, mem);
	MPI_Win_detach(w, mem + N);
	MPI_Win_free(&w);
	free(mem);
	free(loc);
	free(chk);
	free(addrs);
	return bad;
}

static int empty(void)
{
	MPI_Comm node;
	MPI_Info info;
	MPI_Win w;
	int nr, nn, bad = 0, *base;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &nr);
	MPI_Comm_size(node, &nn);
	MPI_Info_create(&info);
	MPI_Info_set(info, "alloc_shared_noncontig", "true");
	MPI_Win_allocate_shared(nr % 2 ? 0 : 16 * sizeof(int), sizeof(int),
				info, node, &base, &w);
	bad += (nr % 2) && base != NULL;
	for (int i = 0; i < nn; i++) {
		MPI_Aint sz;
		int du, *b;

		MPI_Win_shared_query(w, i, &sz, &du, &b);
		if (i % 2)
			bad += sz != 0 || b != NULL;
		else
			bad += sz != 16 * sizeof(int) || b == NULL;
	}
	MPI_Win_free(&w);
	MPI_Info_free(&info);
	MPI_Comm_free(&node);
	return bad;
}

static int split(void)
{
	MPI_Comm node;
	int bad = 0;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
	for (int i = 0; i < 40; i++) {
		MPI_Win w;
		void *b;

		if (MPI_Win_allocate(i % 3 ? 4096 : 0, 1, MPI_INFO_NULL, node,
				     &b, &w) != MPI_SUCCESS) {
			bad++;
			break;
		}
		MPI_Win_free(&w);
	}
	MPI_Comm_free(&node);
	return bad;
}

static int mixed(void)
{
	int *buf, bad = 0, src[64];
	MPI_Win w;

	for (int i = 0; i < 64; i++)
		src[i] = i;
	MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &buf, &w);
	for (int loop = 0; loop < 3; loop++) {
		memset(buf, 0, 64 * sizeof(int));
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {	/* the other ranks stay in the fences */
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
			MPI_Put(src, 64, MPI_INT, 0, 0, 64, MPI_INT, w);
			MPI_Win_unlock(0, w);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_fence(0, w);
		if (rank == 1)
			MPI_Put(src, 32, MPI_INT, size - 1, 0, 32, MPI_INT, w);
		MPI_Win_fence(0, w);
		if (rank == size - 1)
			for (int i = 0; i < 32; i++)
				bad += buf[i] != i;
	}
	MPI_Win_free(&w);
	return bad;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0)
		printf("1..7\n");
	point(zero(), "zero-count ops with NULL buffers and any types");
	point(bottom(), "MPI_BOTTOM origin and result, absolute addresses");
	point(query(), "MPI_Win_shared_query on allocate, create, dynamic");
	point(span(), "dynamic window: an access across adjacent regions");
	point(empty(), "noncontig shared window: empty members are NULL");
	point(split(), "40 windows over MPI_COMM_TYPE_SHARED communicators");
	point(mixed(), "a lock epoch between fences, then fences");
	MPI_Finalize();
	return 0;
}
