/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_wincreate.c - windows over memory the process already has
 * (rmad_win_create): heap, stack, static and rmad_alloc_mem memory.
 *
 * For each kind of memory: every rank puts to every rank's window under
 * lock_all, gets it back, and the results are exact; a fence ring
 * exchange and a post/start/complete/wait round work on it.  Then the
 * accumulates' atomicity: every rank fetch_and_op's 1 onto rank 0's
 * counter, same-node peers (across processes), rank 0 itself (in place)
 * and remote ranks (through the agents) all at once; the old values
 * must be a permutation of 0..T-1, which their count and sum check.
 * A compare_and_swap round, a zero-size member, an access past the end
 * (RMAD_ERR_DISP), the window queries, and bad arguments.
 *
 * usage: prog_wincreate [compute_ms | perm | refused]
 *
 * With compute_ms, rank 0 then computes that long without calling rmad
 * while the others lock, put, get and unlock on its created window: they
 * must finish within half of it ("completes while the target computes").
 * With perm (an agent run with cma=false, which cannot reach ordinary
 * memory in place), rmad_win_create over heap memory must return
 * RMAD_ERR_PERM at once, on every member even when only one member's
 * memory is out of reach, and over rmad_alloc_mem memory must work.
 * With refused (ranks the kernel keeps out of each other's memory: Yama
 * ptrace_scope 1 or more and no CAP_SYS_PTRACE, or different users),
 * rmad_win_create must return RMAD_ERR_PERM on every rank.
 * Each rank prints "rank R: ok" or "rank R: FAIL ..." lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#include "prog_async.h"

#define SLOTS	64
#define NFETCH	300

static int64_t static_mem[SLOTS];

/* put and get under lock_all, a fence ring and a PSCW round on win */
static void exercise(const char *kind, int64_t *mem, rmad_win_t w)
{
	int64_t v = 1000 * (rank + 1), got[SLOTS];
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	rmad_group_t gl, gr;

	for (int i = 0; i < SLOTS; i++)
		mem[i] = -1;
	OK(rmad_barrier());
	OK(rmad_win_lock_all(0, w));
	for (int t = 0; t < size; t++)
		OK(rmad_put(&v, 1, RMAD_INT64, t, (size_t)rank, 1, RMAD_INT64,
			    w));
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	for (int i = 0; i < size; i++)
		CHECK(mem[i] == 1000 * (i + 1), "%s: slot %d holds %lld", kind,
		      i, (long long)mem[i]);
	OK(rmad_win_lock(RMAD_LOCK_SHARED, right, 0, w));
	OK(rmad_get(got, size, RMAD_INT64, right, 0, size, RMAD_INT64, w));
	OK(rmad_win_unlock(right, w));
	for (int i = 0; i < size; i++)
		CHECK(got[i] == 1000 * (i + 1), "%s: get from %d: slot %d is "
		      "%lld", kind, right, i, (long long)got[i]);
	OK(rmad_barrier());

	/* fence: each rank writes its rank into its right neighbour's
	 * slot SLOTS-1 */
	OK(rmad_win_fence(0, w));
	v = rank;
	OK(rmad_put(&v, 1, RMAD_INT64, right, SLOTS - 1, 1, RMAD_INT64, w));
	OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
	CHECK(mem[SLOTS - 1] == left, "%s: fence ring: %lld, not %d", kind,
	      (long long)mem[SLOTS - 1], left);

	/* PSCW: expose to the left neighbour, access the right one */
	OK(rmad_group_incl(&left, 1, &gl));
	OK(rmad_group_incl(&right, 1, &gr));
	OK(rmad_win_post(gl, 0, w));
	OK(rmad_win_start(gr, 0, w));
	v = 7 * rank;
	OK(rmad_accumulate(&v, 1, RMAD_INT64, right, SLOTS - 2, 1, RMAD_INT64,
			   RMAD_REPLACE, w));
	OK(rmad_win_complete(w));
	OK(rmad_win_wait(w));
	CHECK(mem[SLOTS - 2] == 7 * left, "%s: pscw: %lld, not %d", kind,
	      (long long)mem[SLOTS - 2], 7 * left);
	rmad_group_free(&gl);
	rmad_group_free(&gr);
	OK(rmad_barrier());
	if (!fails)
		printf("rank %d: ok: %s window: put, get, fence, pscw\n", rank,
		       kind);
}

static void one(const char *kind, int64_t *mem)
{
	rmad_win_t w = RMAD_WIN_NULL;
	int e = rmad_win_create(mem, SLOTS * sizeof(int64_t), sizeof(int64_t),
				NULL, RMAD_GROUP_ALL, &w);

	CHECK(!e, "%s: rmad_win_create: %s", kind, rmad_strerror(e));
	if (e)
		return;
	exercise(kind, mem, w);
	OK(rmad_win_free(&w));
}

/* fetch_and_op from every rank at once onto rank 0's counter */
static void atomicity(void)
{
	int64_t *ctr = calloc(4, sizeof(int64_t)), one = 1, old, sum = 0, n;
	int64_t total[2] = { 0, 0 }, t;
	rmad_win_t w = RMAD_WIN_NULL;

	OK(rmad_win_create(ctr, 4 * sizeof(int64_t), sizeof(int64_t), NULL,
			   RMAD_GROUP_ALL, &w));
	OK(rmad_barrier());
	OK(rmad_win_lock_all(0, w));
	for (int i = 0; i < NFETCH; i++) {
		OK(rmad_fetch_and_op(&one, &old, RMAD_INT64, 0, 0, RMAD_SUM,
				     w));
		OK(rmad_win_flush(0, w));
		sum += old;
		/* plain accumulates on another word, mixed in */
		OK(rmad_accumulate(&one, 1, RMAD_INT64, 0, 1, 1, RMAD_INT64,
				   RMAD_SUM, w));
	}
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	/* the sums of the old values, gathered on rank 0's words 2 and 3 */
	OK(rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w));
	n = NFETCH;
	OK(rmad_accumulate(&sum, 1, RMAD_INT64, 0, 2, 1, RMAD_INT64, RMAD_SUM,
			   w));
	OK(rmad_accumulate(&n, 1, RMAD_INT64, 0, 3, 1, RMAD_INT64, RMAD_SUM,
			   w));
	OK(rmad_win_unlock(0, w));
	OK(rmad_barrier());
	t = (int64_t)size * NFETCH;
	if (rank == 0) {
		total[0] = ctr[2];
		total[1] = ctr[3];
		CHECK(ctr[0] == t, "fetch_and_op counter %lld, not %lld",
		      (long long)ctr[0], (long long)t);
		CHECK(ctr[1] == t, "accumulate counter %lld, not %lld",
		      (long long)ctr[1], (long long)t);
		CHECK(total[1] == t && total[0] == t * (t - 1) / 2,
		      "old values: %lld of sum %lld, not %lld of sum %lld",
		      (long long)total[1], (long long)total[0], (long long)t,
		      (long long)(t * (t - 1) / 2));
	}
	/* compare_and_swap: each rank claims word 0 of its right neighbour
	 * once; exactly one claim per word succeeds */
	ctr[0] = -1;
	OK(rmad_barrier());
	OK(rmad_win_lock_all(0, w));
	for (int r = 0; r < size; r++) {
		int64_t mine = rank, cmp = -1, res = 0;

		OK(rmad_compare_and_swap(&mine, &cmp, &res, RMAD_INT64, r, 0,
					 w));
		OK(rmad_win_flush(r, w));
		CHECK(res == -1 || (res >= 0 && res < size),
		      "cas on %d returned %lld", r, (long long)res);
	}
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	CHECK(ctr[0] >= 0 && ctr[0] < size, "cas winner %lld",
	      (long long)ctr[0]);
	OK(rmad_win_free(&w));
	free(ctr);
	if (!fails)
		printf("rank %d: ok: accumulates atomic across peers, self "
		       "and agents\n", rank);
}

/* a zero-size member, an access past the end, queries, bad arguments */
static void edges(void)
{
	int64_t mem[8] = { 0 }, v = 5;
	rmad_win_t w = RMAD_WIN_NULL;
	size_t sz = 0;
	void *b = NULL;
	int fl = 0, du = 0, e;

	/* odd ranks expose nothing */
	OK(rmad_win_create(rank % 2 ? NULL : mem,
			   rank % 2 ? 0 : sizeof(mem), 8, NULL,
			   RMAD_GROUP_ALL, &w));
	OK(rmad_win_get_attr(w, RMAD_WIN_CREATE_FLAVOR, &fl));
	CHECK(fl == RMAD_WIN_FLAVOR_CREATE, "flavor %d", fl);
	OK(rmad_win_get_attr(w, RMAD_WIN_BASE, &b));
	CHECK(b == (rank % 2 ? NULL : (void *)mem), "base %p, not %p", b,
	      (void *)mem);
	OK(rmad_win_get_attr(w, RMAD_WIN_SIZE, &sz));
	CHECK(sz == (rank % 2 ? 0 : sizeof(mem)), "size %zu", sz);
	OK(rmad_win_get_attr(w, RMAD_WIN_DISP_UNIT, &du));
	CHECK(du == 8, "disp_unit %d", du);
	OK(rmad_win_lock_all(0, w));
	for (int t = 0; t < size; t++) {
		e = rmad_put(&v, 1, RMAD_INT64, t, 8, 1, RMAD_INT64, w);
		CHECK(e == RMAD_ERR_DISP, "put past the end of %d: %s", t,
		      rmad_strerror(e));
		if (t % 2) {
			e = rmad_put(&v, 1, RMAD_INT64, t, 0, 1, RMAD_INT64, w);
			CHECK(e == RMAD_ERR_DISP, "put to zero-size %d: %s", t,
			      rmad_strerror(e));
		} else {
			OK(rmad_accumulate(&v, 1, RMAD_INT64, t, 7, 1,
					   RMAD_INT64, RMAD_SUM, w));
		}
	}
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	if (rank % 2 == 0)
		CHECK(mem[7] == 5 * size, "word 7: %lld, not %d",
		      (long long)mem[7], 5 * size);
	OK(rmad_win_free(&w));
	e = rmad_win_create(NULL, 64, 8, NULL, RMAD_GROUP_ALL, &w);
	CHECK(e == RMAD_ERR_ARG, "NULL base, 64 bytes: %s", rmad_strerror(e));
	e = rmad_win_create(mem, 64, 0, NULL, RMAD_GROUP_ALL, &w);
	CHECK(e == RMAD_ERR_ARG, "disp_unit 0: %s", rmad_strerror(e));
	e = rmad_win_create(mem, 64, 8, "no_locks=maybe", RMAD_GROUP_ALL, &w);
	CHECK(e == RMAD_ERR_HINT, "bad hint: %s", rmad_strerror(e));
	if (!fails)
		printf("rank %d: ok: zero-size member, bounds, queries, "
		       "arguments\n", rank);
}

/* rank 0 computes; the others' epochs on its window finish meanwhile */
static void async(double ms)
{
	int64_t *mem = calloc(SLOTS, sizeof(int64_t));
	rmad_win_t w = RMAD_WIN_NULL;

	OK(rmad_win_create(mem, SLOTS * sizeof(int64_t), sizeof(int64_t),
			   NULL, RMAD_GROUP_ALL, &w));
	t_async_epochs(w, mem, ms, 0, 1);
	OK(rmad_win_free(&w));
	free(mem);
}

int main(int argc, char **argv)
{
	int64_t stack_mem[SLOTS], *heap_mem, *rm = NULL;

	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	if (size > SLOTS - 2) {
		printf("rank %d: FAIL at most %d ranks\n", rank, SLOTS - 2);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "refused")) {
		/* the kernel keeps the ranks out of each other's memory */
		rmad_win_t w = RMAD_WIN_NULL;
		int e;

		heap_mem = malloc(SLOTS * sizeof(int64_t));
		e = rmad_win_create(heap_mem, SLOTS * sizeof(int64_t), 8, NULL,
				    RMAD_GROUP_ALL, &w);
		CHECK(e == RMAD_ERR_PERM, "created window the kernel "
		      "forbids: %s", rmad_strerror(e));
		free(heap_mem);
	} else if (argc > 1 && !strcmp(argv[1], "perm")) {
		rmad_win_t w = RMAD_WIN_NULL;
		int e;

		heap_mem = malloc(SLOTS * sizeof(int64_t));
		e = rmad_win_create(heap_mem, SLOTS * sizeof(int64_t), 8, NULL,
				    RMAD_GROUP_ALL, &w);
		CHECK(e == RMAD_ERR_PERM, "heap window without cma: %s",
		      rmad_strerror(e));
		OK(rmad_alloc_mem(SLOTS * sizeof(int64_t), (void **)&rm));
		/* only rank 1's memory is out of reach: every member is
		 * refused all the same, and none waits for another */
		e = rmad_win_create(rank == 1 ? (void *)heap_mem : (void *)rm,
				    SLOTS * sizeof(int64_t), 8, NULL,
				    RMAD_GROUP_ALL, &w);
		CHECK(e == RMAD_ERR_PERM, "rank 1's heap window: %s here",
		      rmad_strerror(e));
		free(heap_mem);
		if (rm)
			one("rmad_alloc_mem (no cma)", rm);
		rmad_free_mem(rm);
	} else if (argc > 1) {
		async(atof(argv[1]));
	} else {
		heap_mem = malloc(SLOTS * sizeof(int64_t));
		one("heap", heap_mem);
		one("stack", stack_mem);
		one("static", static_mem);
		OK(rmad_alloc_mem(SLOTS * sizeof(int64_t), (void **)&rm));
		if (rm)
			one("rmad_alloc_mem", rm);
		rmad_free_mem(rm);
		free(heap_mem);
		atomicity();
		edges();
	}
	OK(rmad_barrier());
	rmad_finalize();
	if (!fails)
		printf("rank %d: ok\n", rank);
	return fails != 0;
}
