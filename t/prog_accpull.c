/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_accpull.c - large accumulates to other nodes, the ones whose
 * operands the target's agent reads with fi_read (rma_pull.c), checked
 * by every rank with plain loads of its own window:
 *
 *   1. lock_all: every rank adds rank+1 to every element of a shared
 *      region S of every other rank's window in one large SUM, and 1 to
 *      a few elements of S in small SUMs between (small and pulled
 *      accumulates on the same elements: the totals must be exact);
 *   2. in the same epoch, per target, in its own segment: a large
 *      REPLACE with A, small REPLACEs with -1-k at a few places, a large
 *      SUM of 1, then a large MAX of doubles: the window must show
 *      B+1 at those places and A+1 elsewhere (accumulates are applied
 *      in order: a pulled one before the small one after it);
 *   3. exclusive lock: a large SUM of 2 into the next rank's segment,
 *      flush, a large get of it back, compared; then a large
 *      get-accumulate SUM of 1 there and a large get-accumulate NO_OP
 *      after it (its operands read and its results written back by the
 *      target's agent): the first fetches what the get saw, the second
 *      that plus 1;
 *   4. fence: a large SUM of 1 into S of every other rank, fence,
 *      checked.
 *
 * Each rank reports how many chunks of its round-1 accumulates the
 * targets read (rmad_win_stats rdma_reads), and how many chunks of
 * results its get-accumulates of round 1 had written back (rdma_writes
 * across them; 0 when the target shares its node).
 *
 * With RMAD_T_MEM=alloc the operands (and the get's buffer) lie in
 * rmad_alloc_mem memory, which the origin's agent hands to the target's
 * read in place, without its bounce copy.
 *
 * Usage: prog_accpull [rounds] (default 2).  Prints "rank R: ok (...)" or
 * "rank R: FAIL ..." lines and exits non-zero on failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define NS	(100 * 1000 + 7)	/* int64s in the shared region */
#define NSEG	(150 * 1000 + 3)	/* int64s (and doubles) per origin */
#define NHOT	8			/* small accumulates' places */

/* the window: S, then per origin NSEG int64s and NSEG doubles */
static size_t seg_i(int o)
{
	return NS + (size_t)o * 2 * NSEG;
}

static size_t seg_d(int o)
{
	return seg_i(o) + NSEG;
}

static size_t hot(int k)
{
	return (size_t)k * (NSEG / NHOT) + 5;
}

static int use_alloc_mem;

static void *buf_get(size_t n)
{
	void *p = NULL;

	if (!use_alloc_mem)
		return malloc(n);
	return rmad_alloc_mem(n, &p) ? NULL : p;
}

static void buf_put(void *p)
{
	if (p && use_alloc_mem)
		OK(rmad_free_mem(p));
	else
		free(p);
}

int main(int argc, char **argv)
{
	const char *mem = getenv("RMAD_T_MEM");
	int rounds = argc > 1 ? atoi(argv[1]) : 2;
	struct rmad_info in;
	int64_t *base, *src, *one, *back, *fet, *fet2;
	double *dsrc;
	size_t nel;
	uint64_t pulled = 0, gwritten = 0;
	rmad_win_t w = RMAD_WIN_NULL;

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	nel = NS + (size_t)size * 2 * NSEG;
	use_alloc_mem = mem && !strcmp(mem, "alloc");
	src = buf_get(NSEG * sizeof(*src));
	one = buf_get(NSEG * sizeof(*one));
	back = buf_get(NSEG * sizeof(*back));
	fet = buf_get(NSEG * sizeof(*fet));
	fet2 = buf_get(NSEG * sizeof(*fet2));
	dsrc = buf_get(NSEG * sizeof(*dsrc));
	OK(t_win_allocate(nel * 8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!src || !one || !back || !fet || !fet2 || !dsrc || !w)
		goto out;
	for (size_t i = 0; i < NSEG; i++)
		one[i] = 1;
	for (int r = 0; r < rounds && !fails; r++) {
		int64_t A = (int64_t)r * 1000 + rank, inc = rank + 1;
		int64_t want = 0;

		memset(base, 0, nel * 8);
		rmad_barrier();

		/* 1 and 2, one lock_all epoch */
		for (size_t i = 0; i < NSEG; i++) {
			src[i] = A;
			dsrc[i] = (double)(i % 1000) + 0.5 * rank;
		}
		for (size_t i = 0; i < NS; i++)
			back[i] = inc;
		OK(rmad_win_lock_all(0, w));
		for (int t = 0; t < size; t++) {
			if (t == rank)
				continue;
			OK(rmad_accumulate(back, NS, RMAD_INT64, t,
					   T_D(w, t, 0), NS, RMAD_INT64,
					   RMAD_SUM, w));
			for (int k = 0; k < NHOT; k++)
				OK(rmad_accumulate(one, 1 + k % 4, RMAD_INT64,
						   t, T_D(w, t, hot(k) % NS),
						   1 + k % 4, RMAD_INT64,
						   RMAD_SUM, w));
			OK(rmad_accumulate(src, NSEG, RMAD_INT64, t,
					   T_D(w, t, seg_i(rank)), NSEG,
					   RMAD_INT64, RMAD_REPLACE, w));
			for (int k = 0; k < NHOT; k++) {
				int64_t b = -1 - k;

				OK(rmad_accumulate(&b, 1, RMAD_INT64, t,
						   T_D(w, t, seg_i(rank) +
						       hot(k)), 1,
						   RMAD_INT64, RMAD_REPLACE,
						   w));
			}
			OK(rmad_accumulate(one, NSEG, RMAD_INT64, t,
					   T_D(w, t, seg_i(rank)), NSEG,
					   RMAD_INT64, RMAD_SUM, w));
			OK(rmad_accumulate(dsrc, NSEG, RMAD_DOUBLE, t,
					   T_D(w, t, seg_d(rank)), NSEG,
					   RMAD_DOUBLE, RMAD_MAX, w));
		}
		OK(rmad_win_unlock_all(w));
		rmad_barrier();
		for (int o = 0; o < size; o++)
			if (o != rank)
				want += o + 1;
		for (size_t i = 0; i < NS; i++) {
			int64_t e = want;

			for (int k = 0; k < NHOT; k++)
				if (i >= hot(k) % NS &&
				    i < hot(k) % NS + 1 + (size_t)(k % 4))
					e += size - 1;
			if (base[i] != e) {
				CHECK(0, "round %d: S[%zu] = %lld, want %lld",
				      r, i, (long long)base[i], (long long)e);
				break;
			}
		}
		for (int o = 0; o < size; o++) {
			int64_t *s = base + seg_i(o);
			double *d = (double *)base + seg_d(o);
			int64_t Ao = (int64_t)r * 1000 + o;

			if (o == rank)
				continue;
			for (size_t i = 0, k = 0; i < NSEG; i++) {
				int64_t e = Ao + 1;
				double de = (double)(i % 1000) + 0.5 * o;

				if (k < NHOT && i == hot((int)k))
					e = -1 - (int64_t)k++ + 1;
				if (s[i] != e) {
					CHECK(0, "round %d: from %d: seg[%zu] "
					      "= %lld, want %lld (order)", r,
					      o, i, (long long)s[i],
					      (long long)e);
					break;
				}
				if (d[i] != de) {
					CHECK(0, "round %d: from %d: max[%zu]"
					      " = %g, want %g", r, o, i, d[i],
					      de);
					break;
				}
			}
		}
		if (r == 0) {
			/* only accumulates so far: their chunks that the
			 * targets read count among the fi_read chunks */
			struct rmad_stats st;

			OK(rmad_win_stats(w, &st));
			pulled = st.rdma_reads;
		}
		rmad_barrier();

		/* 3. exclusive lock: add, flush, read back */
		if (size > 1) {
			int t = (rank + 1) % size;

			for (size_t i = 0; i < NSEG; i++)
				src[i] = 2;
			OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
			OK(rmad_accumulate(src, NSEG, RMAD_INT64, t,
					   T_D(w, t, seg_i(rank)), NSEG,
					   RMAD_INT64, RMAD_SUM, w));
			OK(rmad_win_flush(t, w));
			memset(back, 0, NSEG * sizeof(*back));
			OK(rmad_get(back, NSEG, RMAD_INT64, t,
				    T_D(w, t, seg_i(rank)), NSEG, RMAD_INT64,
				    w));
			OK(rmad_win_flush(t, w));
			if (r == 0) {
				struct rmad_stats st;

				OK(rmad_win_stats(w, &st));
				gwritten = st.rdma_writes;
			}
			memset(fet, 0x5a, NSEG * sizeof(*fet));
			memset(fet2, 0x5a, NSEG * sizeof(*fet2));
			OK(rmad_get_accumulate(one, NSEG, RMAD_INT64, fet,
					       NSEG, RMAD_INT64, t,
					       T_D(w, t, seg_i(rank)), NSEG,
					       RMAD_INT64, RMAD_SUM, w));
			OK(rmad_get_accumulate(NULL, 0, RMAD_INT64, fet2,
					       NSEG, RMAD_INT64, t,
					       T_D(w, t, seg_i(rank)), NSEG,
					       RMAD_INT64, RMAD_NO_OP, w));
			OK(rmad_win_unlock(t, w));
			if (r == 0) {
				struct rmad_stats st;

				OK(rmad_win_stats(w, &st));
				gwritten = st.rdma_writes - gwritten;
			}
			for (size_t i = 0; i < NSEG; i++)
				if (fet[i] != back[i] ||
				    fet2[i] != back[i] + 1) {
					CHECK(0, "round %d: get-accumulate at "
					      "%d: [%zu] fetched %lld then "
					      "%lld, want %lld then %lld", r,
					      t, i, (long long)fet[i],
					      (long long)fet2[i],
					      (long long)back[i],
					      (long long)back[i] + 1);
					break;
				}
			for (size_t i = 0, k = 0; i < NSEG; i++) {
				int64_t e = A + 3;

				if (k < NHOT && i == hot((int)k))
					e = -1 - (int64_t)k++ + 3;
				if (back[i] != e) {
					CHECK(0, "round %d: exclusive at %d: "
					      "[%zu] = %lld, want %lld", r, t,
					      i, (long long)back[i],
					      (long long)e);
					break;
				}
			}
		}
		rmad_barrier();

		/* 4. fence */
		OK(rmad_win_fence(0, w));
		for (int t = 0; t < size; t++)
			if (t != rank)
				OK(rmad_accumulate(one, NS, RMAD_INT64, t,
						   T_D(w, t, 0), NS,
						   RMAD_INT64, RMAD_SUM, w));
		OK(rmad_win_fence(0, w));
		for (size_t i = 0; i < NS; i++) {
			int64_t e = want + size - 1;

			for (int k = 0; k < NHOT; k++)
				if (i >= hot(k) % NS &&
				    i < hot(k) % NS + 1 + (size_t)(k % 4))
					e += size - 1;
			if (base[i] != e) {
				CHECK(0, "round %d: fence: S[%zu] = %lld, "
				      "want %lld", r, i, (long long)base[i],
				      (long long)e);
				break;
			}
		}
		OK(rmad_win_fence(0, w));
		rmad_barrier();
	}
out:
	if (w)
		OK(rmad_win_free(&w));
	buf_put(src);
	buf_put(one);
	buf_put(back);
	buf_put(fet);
	buf_put(fet2);
	buf_put(dsrc);
	return t_finish(rank, fails, " (node %d of %d, %d rounds, %llu chunks "
			"pulled, %llu gacc chunks written)", in.node,
			in.nnodes, rounds, (unsigned long long)pulled,
			(unsigned long long)gwritten);
}
