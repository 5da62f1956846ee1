/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_shared.c - contiguous shared windows (rmad_win_allocate_shared).
 *
 * The node's ranks (found with rmad_win_shared_query on an allocated
 * window) make a shared window, rank r of the group exposing
 * r * 24 bytes (so the first has none): each member's memory must
 * start where the previous one's ends, shared_query must give every
 * member's base, size and unit, and RMAD_PROC_NULL the lowest member
 * with memory.  Then plain stores into each other's memory, put, get and
 * fetch_and_op (with CPU atomics and rmad's mixed on one counter) under
 * fence and lock_all, operations on RMAD_PROC_NULL doing nothing, the
 * alloc_shared_noncontig hint (page-aligned members), and a window over
 * the whole job, which must fail with RMAD_ERR_ARG when the job spans
 * several nodes.
 *
 * Each rank prints "rank R: ok" or "rank R: FAIL ..." lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define UNIT	24

static void one(rmad_group_t g, int n, int me, const char *hints,
		int noncontig)
{
	size_t sz = (size_t)me * UNIT, qs;
	int64_t *base = NULL, *b0 = NULL;
	rmad_win_t w = RMAD_WIN_NULL;
	char *expect;
	int du, fl = 0, e;
	void *qb;
	long psz = sysconf(_SC_PAGESIZE);

	e = rmad_win_allocate_shared(sz, 8, hints, g, &base, &w);
	CHECK(!e, "allocate_shared: %s", rmad_strerror(e));
	if (e)
		return;
	OK(rmad_win_get_attr(w, RMAD_WIN_CREATE_FLAVOR, &fl));
	CHECK(fl == RMAD_WIN_FLAVOR_SHARED, "flavor %d", fl);
	/* the layout: member i of the group at i*(i-1)/2 * UNIT */
	{
		int *ranks = malloc(sizeof(int) * (size_t)n);

		OK(rmad_group_ranks(g, ranks));
		OK(rmad_win_shared_query(w, ranks[0], &qs, &du, &b0));
		expect = (char *)b0;
		for (int i = 0; i < n; i++) {
			OK(rmad_win_shared_query(w, ranks[i], &qs, &du, &qb));
			CHECK(qs == (size_t)i * UNIT && du == 8,
			      "member %d: size %zu unit %d", i, qs, du);
			if (noncontig)
				CHECK(((uintptr_t)qb % (uintptr_t)psz) == 0,
				      "member %d not page-aligned", i);
			else
				CHECK(qb == expect, "member %d at %p, not %p",
				      i, qb, (void *)expect);
			expect = (char *)qb + qs;
			if (i == me)
				CHECK(qb == base, "own base %p, not %p", qb,
				      (void *)base);
		}
		OK(rmad_win_shared_query(w, RMAD_PROC_NULL, &qs, &du, &qb));
		CHECK(qs == UNIT && qb != NULL,
		      "PROC_NULL: size %zu (lowest member with memory)", qs);
		/* member me stores into member me+1's first word and puts
		 * into its last: every member with memory hears from the
		 * one before it */
		OK(rmad_win_fence(0, w));
		if (me + 1 < n) {
			int64_t *p, v = 1000 + me;

			OK(rmad_win_shared_query(w, ranks[me + 1], &qs, &du,
						 &p));
			p[0] = 100 + me;
			OK(rmad_put(&v, 1, RMAD_INT64, ranks[me + 1],
				    (size_t)(me + 1) * UNIT / 8 - 1, 1,
				    RMAD_INT64, w));
		}
		OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
		if (me >= 1) {
			CHECK(base[0] == 100 + me - 1, "word 0: %lld",
			      (long long)base[0]);
			CHECK(base[sz / 8 - 1] == 1000 + me - 1,
			      "last word: %lld", (long long)base[sz / 8 - 1]);
		}
		/* one counter, CPU atomics and fetch_and_op mixed */
		if (n > 1) {
			int64_t *ctr = NULL, one1 = 1, old;

			OK(rmad_win_shared_query(w, ranks[1], &qs, &du, &ctr));
			OK(rmad_barrier());
			if (me == 0)
				ctr[1] = 0;
			OK(rmad_barrier());
			OK(rmad_win_lock_all(0, w));
			for (int i = 0; i < 500; i++) {
				__atomic_add_fetch(&ctr[1], 1,
						   __ATOMIC_SEQ_CST);
				OK(rmad_fetch_and_op(&one1, &old, RMAD_INT64,
						     ranks[1], 1, RMAD_SUM,
						     w));
			}
			/* RMAD_PROC_NULL: nothing happens, no error */
			OK(rmad_put(&one1, 1, RMAD_INT64, RMAD_PROC_NULL, 0, 1,
				    RMAD_INT64, w));
			OK(rmad_accumulate(&one1, 1, RMAD_INT64,
					   RMAD_PROC_NULL, 0, 1, RMAD_INT64,
					   RMAD_SUM, w));
			OK(rmad_win_flush(RMAD_PROC_NULL, w));
			OK(rmad_win_unlock_all(w));
			OK(rmad_barrier());
			CHECK(ctr[1] == 1000 * n, "counter %lld, not %d",
			      (long long)ctr[1], 1000 * n);
			OK(rmad_barrier());
		}
		free(ranks);
	}
	OK(rmad_win_free(&w));
}

int main(int argc, char **argv)
{
	int64_t *base = NULL;
	rmad_win_t w = RMAD_WIN_NULL;
	rmad_group_t g;
	int *locals, n = 0, me = -1, e;
	size_t qs;
	int du;
	void *qb;

	(void)argc;
	(void)argv;
	if (rmad_init(NULL, NULL)) {
		printf("rank ?: FAIL rmad_init\n");
		return 1;
	}
	rmad_rank(&rank);
	rmad_size(&size);
	/* who shares our node */
	locals = malloc(sizeof(int) * (size_t)size);
	OK(rmad_win_allocate(8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	for (int r = 0; r < size; r++) {
		e = rmad_win_shared_query(w, r, &qs, &du, &qb);
		if (!e) {
			if (r == rank)
				me = n;
			locals[n++] = r;
		}
	}
	OK(rmad_win_free(&w));
	OK(rmad_group_incl(locals, n, &g));
	one(g, n, me, NULL, 0);
	one(g, n, me, "alloc_shared_noncontig=true", 1);
	rmad_group_free(&g);
	/* over the whole job: only when it is on one node */
	e = rmad_win_allocate_shared(64, 8, NULL, RMAD_GROUP_ALL, &base, &w);
	if (n == size) {
		CHECK(!e, "one node, the whole job: %s", rmad_strerror(e));
		if (!e)
			OK(rmad_win_free(&w));
	} else {
		CHECK(e == RMAD_ERR_ARG, "members on several nodes: %s",
		      rmad_strerror(e));
	}
	OK(rmad_barrier());
	free(locals);
	rmad_finalize();
	if (!fails)
		printf("rank %d: ok (%d of %d ranks on this node)\n", rank, n,
		       size);
	return fails != 0;
}
