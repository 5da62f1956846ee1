/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_bigtypes.c - large operations whose target layout is a derived
 * datatype, to other nodes: at rdma_threshold bytes and more the
 * packed stream moves in chunks that the target's agent reads (puts,
 * accumulates) or writes into the origin's memory (gets) and walks
 * through the type it cached (rma_type.c, rma_pull.c).  Every rank, to
 * every other rank, in one lock_all epoch each:
 *
 *   1. put NEL doubles, contiguous at the origin, into every second
 *      double of its own region of the target (a vector of 1-blocks,
 *      stride 2), the gaps left as they were; the target checks both;
 *   2. get the strided region back, into malloc'd memory and into
 *      rmad_alloc_mem memory (written in place), and compare; then a
 *      get-accumulate SUM of 1.0 through the same type, whose results
 *      must be what the get saw, and a get-accumulate NO_OP after it,
 *      whose results must be that plus 1 (the target's agent reads the
 *      operands, walks its cached type and writes the results back);
 *   3. accumulate (SUM) NACC times a large vector of int64 (every
 *      third element of a shared region) and, in the same epoch, as
 *      many small ones over the same elements: exact totals from every
 *      rank, so large and small stayed atomic per element;
 *   4. the same SUM with a struct of an int32 and a double (mixed
 *      basic types: chunks of whole instances), resized so that the
 *      target's instances lie every second struct;
 *   5. on rank 0's window only: a rank of rank 0's node accumulates
 *      ones into every second int64 of NBIG (16 MiB) with one strided
 *      op, twice, which it applies itself in some thousand batches
 *      under the accumulate lock of a created window, while every rank
 *      of another node accumulates small strided SUMs into the same
 *      elements through rank 0's agent, which needs that lock between
 *      the batches: every op succeeds, and the totals are exact.
 *
 * Each rank reports the chunks the targets read or wrote for it
 * (rmad_win_stats rdma_reads + rdma_writes) as "N chunks moved".  With
 * RMAD_T_FLAVOR=create or dynamic (prog.h) the windows are the
 * process's own memory.
 *
 * Usage: prog_bigtypes [rounds] (default 1).  Prints "rank R: ok (...)"
 * or "rank R: FAIL ..." lines and exits non-zero on failure.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define NEL	(40 * 1000 + 7)		/* doubles per put: 320 KiB */
#define NIDX	(24 * 1000 + 5)		/* int64s per strided acc: 192 KiB */
#define NSMALL	64			/* of them, per small accumulate */
#define NACC	3
#define NST	(12 * 1000)		/* structs per struct acc */
struct pair {
	int32_t i;
	double d;
};

#define NBIG	(1 << 20)		/* int64s of step 5's big acc */
#define BUSY_NS	(400ull * 1000 * 1000)	/* step 5's remote ranks */

/* every rank's v, through an allocated window */
static void allgather(int32_t v, int32_t *all)
{
	int32_t *b = NULL;
	rmad_win_t g = RMAD_WIN_NULL;

	OK(rmad_win_allocate((size_t)size * 4, 4, NULL, RMAD_GROUP_ALL, &b,
			     &g));
	OK(rmad_win_lock_all(0, g));
	for (int r = 0; r < size; r++)
		OK(rmad_put(&v, 1, RMAD_INT32, r, (size_t)rank, 1, RMAD_INT32,
			    g));
	OK(rmad_win_unlock_all(g));
	rmad_barrier();
	memcpy(all, b, (size_t)size * 4);
	rmad_barrier();
	OK(rmad_win_free(&g));
}

/* 5.: the same-node big accumulate against the agent's small ones */
static void busy_lock(int rounds)
{
	int64_t *b = NULL, *ones = malloc(NBIG * sizeof(int64_t));
	int32_t *nodes = malloc((size_t)size * 4);
	int32_t *counts = malloc((size_t)size * 4);
	rmad_datatype_t big = 0, small = 0;
	rmad_win_t w = RMAD_WIN_NULL;
	struct rmad_info in;
	int local = -1, n = 0;
	int64_t want_small = 0;

	if (!ones || !nodes || !counts) {
		CHECK(0, "step 5: no memory");
		goto out;
	}
	rmad_get_info(&in);
	allgather(in.node, nodes);
	for (int r = 1; r < size && local < 0; r++)
		if (nodes[r] == nodes[0])
			local = r;
	for (size_t k = 0; k < NBIG; k++)
		ones[k] = 1;
	OK(rmad_type_vector(NBIG / 2, 1, 2, RMAD_INT64, &big));
	OK(rmad_type_commit(&big));
	OK(rmad_type_vector(64, 1, 2, RMAD_INT64, &small));
	OK(rmad_type_commit(&small));
	OK(t_win_allocate(rank == 0 ? NBIG * sizeof(int64_t) : 8,
			  sizeof(int64_t), NULL, RMAD_GROUP_ALL, &b, &w));
	if (rank == 0 && b)
		memset(b, 0, NBIG * sizeof(int64_t));
	rmad_barrier();
	if (w && rank == local) {
		for (int r = 0; r < rounds; r++) {
			OK(rmad_win_lock_all(0, w));
			OK(rmad_accumulate(ones, NBIG / 2, RMAD_INT64, 0,
					   T_D(w, 0, 0), 1, big, RMAD_SUM,
					   w));
			OK(rmad_win_unlock_all(w));
		}
	} else if (w && nodes[rank] != nodes[0]) {
		double t0 = rmad_wtime();

		OK(rmad_win_lock_all(0, w));
		while (!fails && rmad_wtime() - t0 < BUSY_NS / 1e9) {
			OK(rmad_accumulate(ones, 64, RMAD_INT64, 0,
					   T_D(w, 0, 0), 1, small, RMAD_SUM,
					   w));
			OK(rmad_win_flush(0, w));
			n++;
		}
		OK(rmad_win_unlock_all(w));
	}
	allgather(n, counts);
	for (int r = 0; r < size; r++)
		want_small += counts[r];
	if (rank == 0 && b) {
		size_t bad = NBIG;

		rmad_win_sync(w);
		for (size_t k = 0; k < NBIG && bad == NBIG; k++) {
			int64_t want = k % 2 ? 0 :
				       (local >= 0 ? rounds : 0) +
				       (k / 2 < 64 ? want_small : 0);

			if (b[k] != want)
				bad = k;
		}
		CHECK(bad == NBIG, "a big same-node accumulate with %lld "
		      "small remote ones: int64 %zu is %lld",
		      (long long)want_small, bad,
		      bad < NBIG ? (long long)b[bad] : 0LL);
	}
	rmad_barrier();
out:
	if (w)
		OK(rmad_win_free(&w));
	if (big)
		rmad_type_free(&big);
	if (small)
		rmad_type_free(&small);
	free(ones);
	free(nodes);
	free(counts);
}

static double val(int origin, int round, size_t k)
{
	return (double)(origin * 1000003 + round * 7919) + (double)k * 0.5;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	size_t vreg = 2 * (size_t)NEL;		/* doubles per origin */
	size_t ireg = 3 * (size_t)NIDX;		/* int64s, one region */
	double *vb = NULL, *src = NULL, *dst = NULL, *adst = NULL;
	double *dones = NULL;
	int64_t *ib = NULL, *ones = NULL;
	struct pair *sb = NULL, *sones = NULL;
	rmad_win_t wv = RMAD_WIN_NULL, wi = RMAD_WIN_NULL, ws = RMAD_WIN_NULL;
	rmad_datatype_t vec = 0, idx = 0, sidx = 0, pair = 0, pvec = 0;
	uint64_t moved = 0;
	struct rmad_info in;

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	src = malloc(NEL * sizeof(double));
	dst = malloc(NEL * sizeof(double));
	ones = malloc(NIDX * sizeof(int64_t));
	sones = malloc(NST * sizeof(struct pair));
	dones = malloc(NEL * sizeof(double));
	OK(rmad_alloc_mem(NEL * sizeof(double), (void **)&adst));
	if (!src || !dst || !ones || !sones || !adst || !dones)
		goto out;
	for (int k = 0; k < NEL; k++)
		dones[k] = 1.0;
	for (int k = 0; k < NIDX; k++)
		ones[k] = 1;
	for (int k = 0; k < NST; k++) {
		sones[k].i = 1;
		sones[k].d = 0.25;
	}
	OK(rmad_type_vector(NEL, 1, 2, RMAD_DOUBLE, &vec));
	OK(rmad_type_commit(&vec));
	OK(rmad_type_vector(NIDX, 1, 3, RMAD_INT64, &idx));
	OK(rmad_type_commit(&idx));
	OK(rmad_type_vector(NSMALL, 1, 3, RMAD_INT64, &sidx));
	OK(rmad_type_commit(&sidx));
	{
		int bl[2] = { 1, 1 };
		ptrdiff_t d[2] = { offsetof(struct pair, i),
				   offsetof(struct pair, d) };
		rmad_datatype_t ty[2] = { RMAD_INT32, RMAD_DOUBLE };

		OK(rmad_type_create_struct(2, bl, d, ty, &pair));
		OK(rmad_type_commit(&pair));
		/* instances every second struct of the target's region */
		OK(rmad_type_create_resized(pair, 0,
					    2 * (ptrdiff_t)sizeof(struct pair),
					    &pvec));
		OK(rmad_type_commit(&pvec));
	}
	OK(t_win_allocate(vreg * (size_t)size * sizeof(double),
			  sizeof(double), NULL, RMAD_GROUP_ALL, &vb, &wv));
	OK(t_win_allocate(ireg * sizeof(int64_t), sizeof(int64_t), NULL,
			  RMAD_GROUP_ALL, &ib, &wi));
	OK(t_win_allocate(2 * NST * sizeof(struct pair), 1, NULL,
			  RMAD_GROUP_ALL, &sb, &ws));
	if (!wv || !wi || !ws || fails)
		goto out;

	for (int r = 0; r < rounds; r++) {
		for (size_t k = 0; k < vreg * (size_t)size; k++)
			vb[k] = -1.0;
		memset(ib, 0, ireg * sizeof(int64_t));
		memset(sb, 0, 2 * NST * sizeof(struct pair));
		for (size_t k = 0; k < NEL; k++)
			src[k] = val(rank, r, k);
		rmad_barrier();

		/* 1. a contiguous origin into a strided target */
		OK(rmad_win_lock_all(0, wv));
		for (int t = 0; t < size; t++)
			if (t != rank)
				OK(rmad_put(src, NEL, RMAD_DOUBLE, t,
					    T_D(wv, t, (size_t)rank * vreg),
					    1, vec, wv));
		OK(rmad_win_unlock_all(wv));
		rmad_barrier();
		rmad_win_sync(wv);
		for (int o = 0; o < size; o++) {
			const double *g = vb + (size_t)o * vreg;
			size_t bad = vreg;

			if (o == rank)
				continue;
			for (size_t k = 0; k < vreg && bad == vreg; k++)
				if (g[k] != (k % 2 ? -1.0 : val(o, r, k / 2)))
					bad = k;
			CHECK(bad == vreg, "round %d: strided put from %d: "
			      "double %zu is %g", r, o, bad,
			      bad < vreg ? g[bad] : 0.0);
		}
		rmad_barrier();

		/* 2. and back, into malloc and rmad_alloc_mem memory */
		OK(rmad_win_lock_all(0, wv));
		for (int t = 0; t < size; t++) {
			size_t bd = NEL, ba = NEL;

			if (t == rank)
				continue;
			memset(dst, 0, NEL * sizeof(double));
			memset(adst, 0, NEL * sizeof(double));
			OK(rmad_get(dst, NEL, RMAD_DOUBLE, t,
				    T_D(wv, t, (size_t)rank * vreg), 1, vec,
				    wv));
			OK(rmad_get(adst, NEL, RMAD_DOUBLE, t,
				    T_D(wv, t, (size_t)rank * vreg), 1, vec,
				    wv));
			OK(rmad_win_flush(t, wv));
			for (size_t k = 0; k < NEL; k++) {
				if (bd == NEL && dst[k] != src[k])
					bd = k;
				if (ba == NEL && adst[k] != src[k])
					ba = k;
			}
			CHECK(bd == NEL && ba == NEL, "round %d: strided get "
			      "from %d: element %zu (malloc), %zu "
			      "(alloc_mem)", r, t, bd, ba);
			memset(dst, 0, NEL * sizeof(double));
			memset(adst, 0, NEL * sizeof(double));
			OK(rmad_get_accumulate(dones, NEL, RMAD_DOUBLE, dst,
					       NEL, RMAD_DOUBLE, t,
					       T_D(wv, t, (size_t)rank * vreg),
					       1, vec, RMAD_SUM, wv));
			OK(rmad_get_accumulate(NULL, 0, RMAD_DOUBLE, adst,
					       NEL, RMAD_DOUBLE, t,
					       T_D(wv, t, (size_t)rank * vreg),
					       1, vec, RMAD_NO_OP, wv));
			OK(rmad_win_flush(t, wv));
			bd = ba = NEL;
			for (size_t k = 0; k < NEL; k++) {
				if (bd == NEL && dst[k] != src[k])
					bd = k;
				if (ba == NEL && adst[k] != src[k] + 1.0)
					ba = k;
			}
			CHECK(bd == NEL && ba == NEL, "round %d: strided "
			      "get-accumulate at %d: element %zu (SUM), %zu "
			      "(NO_OP after it)", r, t, bd, ba);
		}
		OK(rmad_win_unlock_all(wv));
		rmad_barrier();

		/* 3. large and small indexed accumulates, same elements */
		OK(rmad_win_lock_all(0, wi));
		for (int k = 0; k < NACC; k++)
			for (int t = 0; t < size; t++) {
				if (t == rank)
					continue;
				OK(rmad_accumulate(ones, NIDX, RMAD_INT64, t,
						   T_D(wi, t, 0), 1, idx,
						   RMAD_SUM, wi));
				OK(rmad_accumulate(ones, NSMALL, RMAD_INT64,
						   t, T_D(wi, t, 0), 1, sidx,
						   RMAD_SUM, wi));
			}
		OK(rmad_win_unlock_all(wi));

		/* 4. mixed basic types in one instance */
		OK(rmad_win_lock_all(0, ws));
		for (int t = 0; t < size; t++)
			if (t != rank)
				OK(rmad_accumulate(sones, NST, pair, t,
						   T_D(ws, t, 0), NST, pvec,
						   RMAD_SUM, ws));
		OK(rmad_win_unlock_all(ws));
		rmad_barrier();
		rmad_win_sync(wi);
		rmad_win_sync(ws);
		{
			int64_t want = (int64_t)NACC * (size - 1);
			size_t bad = ireg;

			for (size_t k = 0; k < ireg && bad == ireg; k++) {
				int64_t w = k % 3 ? 0 :
					    k / 3 < NSMALL ? 2 * want : want;

				if (ib[k] != w)
					bad = k;
			}
			CHECK(bad == ireg, "round %d: strided accumulates: "
			      "int64 %zu is %lld", r, bad,
			      bad < ireg ? (long long)ib[bad] : 0LL);
			bad = 2 * NST;
			for (size_t k = 0; k < 2 * (size_t)NST && bad ==
			     2 * (size_t)NST; k++) {
				int32_t wi32 = k % 2 ? 0 : size - 1;
				double wd = k % 2 ? 0.0 : 0.25 * (size - 1);

				if (sb[k].i != wi32 || sb[k].d != wd)
					bad = k;
			}
			CHECK(bad == 2 * (size_t)NST, "round %d: struct "
			      "accumulates: struct %zu is {%d, %g}", r, bad,
			      bad < 2 * (size_t)NST ? sb[bad].i : 0,
			      bad < 2 * (size_t)NST ? sb[bad].d : 0.0);
		}
		rmad_barrier();
	}
	busy_lock(2);
	{
		struct rmad_stats st;

		OK(rmad_win_stats(wv, &st));
		moved += st.rdma_reads + st.rdma_writes;
		OK(rmad_win_stats(wi, &st));
		moved += st.rdma_reads + st.rdma_writes;
		OK(rmad_win_stats(ws, &st));
		moved += st.rdma_reads + st.rdma_writes;
	}
out:
	if (wv)
		OK(rmad_win_free(&wv));
	if (wi)
		OK(rmad_win_free(&wi));
	if (ws)
		OK(rmad_win_free(&ws));
	if (vec)
		rmad_type_free(&vec);
	if (idx)
		rmad_type_free(&idx);
	if (sidx)
		rmad_type_free(&sidx);
	if (pvec)
		rmad_type_free(&pvec);
	if (pair)
		rmad_type_free(&pair);
	if (adst)
		OK(rmad_free_mem(adst));
	free(src);
	free(dst);
	free(ones);
	free(sones);
	free(dones);
	return t_finish(rank, fails, " (node %d of %d, %d rounds, %llu chunks "
			"moved)", in.node, in.nnodes, rounds,
			(unsigned long long)moved);
}
