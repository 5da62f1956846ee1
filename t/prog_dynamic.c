/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_dynamic.c - dynamic windows (rmad_win_create_dynamic,
 * rmad_win_attach, rmad_win_detach, rmad_get_address).
 *
 * Each rank attaches heap memory; the addresses go round through an
 * allocated window.  Then: put and get from every rank to every rank at
 * absolute addresses, with exact results; fetch_and_op on rank 0's
 * counter from everyone at once (old values a permutation); fence and
 * PSCW epochs; 64 more small regions attached and each reached; an
 * access past a region's end, and one on a region its owner detached:
 * RMAD_ERR_DISP (at the call for a same-node target, at the next flush
 * or unlock for another node's) and the detached memory untouched; the
 * same put in a fence epoch and in a PSCW epoch, reported once, by the
 * closing call or a later synchronization;
 * misuse (overlapping attach, detach of an unknown base, attach on a
 * window of another flavor); and the window queries.
 *
 * usage: prog_dynamic [compute_ms]
 *
 * With compute_ms, rank 0 computes that long without calling rmad while
 * the others' epochs on its attached memory must finish within half of
 * it.  Each rank prints "rank R: ok" or "rank R: FAIL ..." lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#include "prog_async.h"

#define SLOTS	64
#define NFETCH	200
#define NSMALL	64

/* an op that must fail with RMAD_ERR_DISP, at the call or the unlock */
static int put_fails(rmad_win_t w, int t, uint64_t addr)
{
	int64_t v = 99;
	int e, e2;

	OK(rmad_win_lock(RMAD_LOCK_SHARED, t, 0, w));
	e = rmad_put(&v, 1, RMAD_INT64, t, (size_t)addr, 1, RMAD_INT64, w);
	e2 = rmad_win_unlock(t, w);
	return (e == RMAD_ERR_DISP && e2 == 0) ||
	       (e == 0 && e2 == RMAD_ERR_DISP);
}

/*
 * An op that fails at its target inside an active-target epoch (a fence
 * epoch, or PSCW with the right neighbour): the closing call reports
 * RMAD_ERR_DISP, or, where it did not wait for the acknowledgements (on
 * an ordered channel a PSCW complete, and the fence of a two-node
 * window), a later synchronization does; never lost, reported once.
 * 1 if so.
 */
static int active_put_fails(rmad_win_t w, int right, int left,
			    uint64_t addr, int pscw)
{
	int64_t v = 99;
	int e[4] = { 0 }, ndisp = 0, nother = 0;
	rmad_group_t gl = RMAD_GROUP_NULL, gr = RMAD_GROUP_NULL;

	if (pscw) {
		OK(rmad_group_incl(&left, 1, &gl));
		OK(rmad_group_incl(&right, 1, &gr));
		OK(rmad_win_post(gl, 0, w));
		OK(rmad_win_start(gr, 0, w));
		e[0] = rmad_put(&v, 1, RMAD_INT64, right, (size_t)addr, 1,
				RMAD_INT64, w);
		e[1] = rmad_win_complete(w);
		OK(rmad_win_wait(w));
		rmad_group_free(&gl);
		rmad_group_free(&gr);
	} else {
		OK(rmad_win_fence(0, w));
		e[0] = rmad_put(&v, 1, RMAD_INT64, right, (size_t)addr, 1,
				RMAD_INT64, w);
		e[1] = rmad_win_fence(RMAD_MODE_NOSUCCEED, w);
	}
	OK(rmad_barrier());
	usleep(100000);		/* an error's answer comes meanwhile */
	e[2] = rmad_win_lock(RMAD_LOCK_SHARED, right, 0, w);
	if (!e[2])
		e[3] = rmad_win_unlock(right, w);
	for (int i = 0; i < 4; i++) {
		ndisp += e[i] == RMAD_ERR_DISP;
		nother += e[i] && e[i] != RMAD_ERR_DISP;
	}
	if (ndisp != 1 || nother)
		printf("rank %d: %s: put %d, close %d, lock %d, unlock %d\n",
		       rank, pscw ? "pscw" : "fence", e[0], e[1], e[2], e[3]);
	return ndisp == 1 && !nother;
}

static void basics(void)
{
	int64_t *mem = calloc(SLOTS, sizeof(int64_t)), v, got[SLOTS];
	int64_t *small[NSMALL], *detached = calloc(8, sizeof(int64_t));
	uint64_t *addr = calloc((size_t)size, 8), *saddr = calloc((size_t)size, 8);
	uint64_t *daddr = calloc((size_t)size, 8);
	rmad_win_t w = RMAD_WIN_NULL, wa = RMAD_WIN_NULL;
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	rmad_group_t gl, gr;
	size_t a = 0, sz = 1;
	void *b = (void *)1;
	int fl = 0, du = 0, e;

	OK(rmad_win_create_dynamic(NULL, RMAD_GROUP_ALL, &w));
	OK(rmad_win_get_attr(w, RMAD_WIN_CREATE_FLAVOR, &fl));
	CHECK(fl == RMAD_WIN_FLAVOR_DYNAMIC, "flavor %d", fl);
	OK(rmad_win_get_attr(w, RMAD_WIN_BASE, &b));
	OK(rmad_win_get_attr(w, RMAD_WIN_SIZE, &sz));
	OK(rmad_win_get_attr(w, RMAD_WIN_DISP_UNIT, &du));
	CHECK(!b && !sz && du == 1, "base %p size %zu unit %d", b, sz, du);
	OK(rmad_win_attach(w, mem, SLOTS * sizeof(int64_t)));
	OK(rmad_get_address(mem, &a));
	CHECK(a == (size_t)(uintptr_t)mem, "rmad_get_address");
	for (int i = 0; i < SLOTS; i++)
		mem[i] = -1;
	OK(t_gather((void *)(uintptr_t)a, addr));

	/* put to every rank, get back */
	v = 1000 * (rank + 1);
	OK(rmad_win_lock_all(0, w));
	for (int t = 0; t < size; t++)
		OK(rmad_put(&v, 1, RMAD_INT64, t, addr[t] + 8u * rank, 1,
			    RMAD_INT64, w));
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	for (int i = 0; i < size; i++)
		CHECK(mem[i] == 1000 * (i + 1), "slot %d: %lld", i,
		      (long long)mem[i]);
	OK(rmad_win_lock(RMAD_LOCK_SHARED, right, 0, w));
	OK(rmad_get(got, size, RMAD_INT64, right, addr[right], size,
		    RMAD_INT64, w));
	OK(rmad_win_unlock(right, w));
	for (int i = 0; i < size; i++)
		CHECK(got[i] == 1000 * (i + 1), "get from %d: slot %d: %lld",
		      right, i, (long long)got[i]);
	OK(rmad_barrier());

	/* fetch_and_op from everyone on rank 0's word SLOTS-1 */
	mem[SLOTS - 1] = 0;
	mem[SLOTS - 2] = 0;
	OK(rmad_barrier());
	{
		int64_t one = 1, old, sum = 0, t = (int64_t)size * NFETCH;

		OK(rmad_win_lock_all(0, w));
		for (int i = 0; i < NFETCH; i++) {
			OK(rmad_fetch_and_op(&one, &old, RMAD_INT64, 0,
					     addr[0] + 8 * (SLOTS - 1),
					     RMAD_SUM, w));
			OK(rmad_win_flush(0, w));
			sum += old;
		}
		OK(rmad_accumulate(&sum, 1, RMAD_INT64, 0,
				   addr[0] + 8 * (SLOTS - 2), 1, RMAD_INT64,
				   RMAD_SUM, w));
		OK(rmad_win_unlock_all(w));
		OK(rmad_barrier());
		if (rank == 0) {
			CHECK(mem[SLOTS - 1] == t, "counter %lld, not %lld",
			      (long long)mem[SLOTS - 1], (long long)t);
			CHECK(mem[SLOTS - 2] == t * (t - 1) / 2,
			      "old values sum to %lld, not %lld",
			      (long long)mem[SLOTS - 2],
			      (long long)(t * (t - 1) / 2));
		}
	}

	/* fence ring and PSCW */
	OK(rmad_win_fence(0, w));
	v = rank;
	OK(rmad_put(&v, 1, RMAD_INT64, right, addr[right] + 8 * (SLOTS - 3),
		    1, RMAD_INT64, w));
	OK(rmad_win_fence(RMAD_MODE_NOSUCCEED, w));
	CHECK(mem[SLOTS - 3] == left, "fence ring: %lld",
	      (long long)mem[SLOTS - 3]);
	OK(rmad_group_incl(&left, 1, &gl));
	OK(rmad_group_incl(&right, 1, &gr));
	OK(rmad_win_post(gl, 0, w));
	OK(rmad_win_start(gr, 0, w));
	v = 3 * rank;
	OK(rmad_put(&v, 1, RMAD_INT64, right, addr[right] + 8 * (SLOTS - 4),
		    1, RMAD_INT64, w));
	OK(rmad_win_complete(w));
	OK(rmad_win_wait(w));
	CHECK(mem[SLOTS - 4] == 3 * left, "pscw: %lld",
	      (long long)mem[SLOTS - 4]);
	rmad_group_free(&gl);
	rmad_group_free(&gr);

	/* many small regions: each reached by the left neighbour */
	for (int i = 0; i < NSMALL; i++) {
		small[i] = calloc(1, 16);
		OK(rmad_win_attach(w, small[i], 8));
	}
	OK(rmad_get_address(small[NSMALL / 2], &a));
	OK(t_gather((void *)(uintptr_t)a, saddr));
	OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, right, 0, w));
	v = 77 + rank;
	OK(rmad_put(&v, 1, RMAD_INT64, right, saddr[right], 1, RMAD_INT64,
		    w));
	OK(rmad_win_unlock(right, w));
	OK(rmad_barrier());
	CHECK(*small[NSMALL / 2] == 77 + left, "small region: %lld",
	      (long long)*small[NSMALL / 2]);

	/* past the end of a region; a detached region */
	OK(rmad_get_address(detached, &a));
	OK(rmad_win_attach(w, detached, 8 * sizeof(int64_t)));
	OK(t_gather((void *)(uintptr_t)a, daddr));
	for (int i = 0; i < 8; i++)
		detached[i] = 5;
	OK(rmad_win_detach(w, detached));
	OK(rmad_barrier());
	CHECK(put_fails(w, right, saddr[right] + 8),
	      "a put past a region's end did not fail with RMAD_ERR_DISP");
	CHECK(put_fails(w, right, daddr[right]),
	      "a put on a detached region did not fail with RMAD_ERR_DISP");
	CHECK(put_fails(w, right, 8),
	      "a put at address 8 did not fail with RMAD_ERR_DISP");
	CHECK(active_put_fails(w, right, left, saddr[right] + 8, 0),
	      "a failed put of a fence epoch was not reported once");
	CHECK(active_put_fails(w, right, left, saddr[right] + 8, 1),
	      "a failed put of a PSCW epoch was not reported once");
	OK(rmad_barrier());
	for (int i = 0; i < 8; i++)
		CHECK(detached[i] == 5, "detached memory changed: %lld",
		      (long long)detached[i]);

	/* misuse */
	e = rmad_win_attach(w, mem + 1, 8);
	CHECK(e == RMAD_ERR_ARG, "overlapping attach: %s", rmad_strerror(e));
	e = rmad_win_detach(w, mem + 1);
	CHECK(e == RMAD_ERR_ARG, "detach of no region's base: %s",
	      rmad_strerror(e));
	e = rmad_win_attach(w, NULL, 8);
	CHECK(e == RMAD_ERR_ARG, "attach NULL: %s", rmad_strerror(e));
	{
		int64_t *ab = NULL;

		OK(rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &ab, &wa));
		e = rmad_win_attach(wa, mem, 8);
		CHECK(e == RMAD_ERR_ARG, "attach on an allocated window: %s",
		      rmad_strerror(e));
		OK(rmad_win_free(&wa));
	}
	OK(rmad_barrier());
	for (int i = 0; i < NSMALL; i++) {
		OK(rmad_win_detach(w, small[i]));
		free(small[i]);
	}
	OK(rmad_win_detach(w, mem));
	OK(rmad_win_free(&w));
	free(mem);
	free(detached);
	free(addr);
	free(saddr);
	free(daddr);
	if (!fails)
		printf("rank %d: ok: put, get, atomics, fence, pscw, %d "
		       "regions, detach, misuse\n", rank, NSMALL + 2);
}

static void async(double ms)
{
	int64_t *mem = calloc(SLOTS, sizeof(int64_t));
	uint64_t *addr = calloc((size_t)size, 8);
	rmad_win_t w = RMAD_WIN_NULL;
	size_t a;

	OK(rmad_win_create_dynamic(NULL, RMAD_GROUP_ALL, &w));
	OK(rmad_win_attach(w, mem, SLOTS * sizeof(int64_t)));
	OK(rmad_get_address(mem, &a));
	OK(t_gather((void *)(uintptr_t)a, addr));
	t_async_epochs(w, mem, ms, addr[0], 8);
	OK(rmad_win_detach(w, mem));
	OK(rmad_win_free(&w));
	free(mem);
	free(addr);
}

int main(int argc, char **argv)
{
	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	if (size > SLOTS - 4) {
		printf("rank %d: FAIL at most %d ranks\n", rank, SLOTS - 4);
		return 1;
	}
	if (argc > 1)
		async(atof(argv[1]));
	else
		basics();
	OK(rmad_barrier());
	rmad_finalize();
	if (!fails)
		printf("rank %d: ok\n", rank);
	return fails != 0;
}
