/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_rdma.c - large puts and gets, the ones that move by fi_write and
 * fi_read when the target is on another node, checked by every rank:
 *
 *   1. lock_all: every rank puts a pattern of odd length at an odd
 *      displacement into every other rank's window, many ops in flight
 *      at once (more chunks than the agent keeps in flight), then
 *      flush_all; every rank checks its own window with plain loads.
 *      Odd rounds put from rmad_alloc_mem memory, which the agent
 *      moves without a bounce buffer (over shm, its own CMA writes)
 *   2. lock_all: every rank gets those bytes back, from ordinary memory
 *      and into rmad_alloc_mem memory, and compares
 *   3. exclusive lock: put, flush, get of the same bytes, unlock
 *
 * With RMAD_T_FLAVOR=create or dynamic (prog.h) the window is the
 * process's own memory, which the target's agent does not register:
 * the puts are then read by the target's agent and written in place,
 * and the gets read in place and written into the origin's memory by
 * it (rma_pull.c).
 *
 * Usage: prog_rdma [rounds] (default 2).  Prints "rank R: ok (...)" or
 * "rank R: FAIL ..." lines and exits non-zero on failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;


#define NPIECE	12			/* puts per target per round */
#define PIECE	(100 * 1000 + 13)	/* bytes per put */
#define SEG	(NPIECE * PIECE + 64)	/* bytes per origin in a window */

static uint8_t pat(int origin, int round, size_t i)
{
	return (uint8_t)(i * 131 + (size_t)origin * 7 + (size_t)round * 3 + 1);
}

static size_t bad_byte(const uint8_t *p, int origin, int round, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(origin, round, i))
			return i;
	return n;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2;
	struct rmad_info in;
	uint8_t *base, *src, *dst, *adst = NULL, *asrc = NULL, *from;
	size_t span = (size_t)NPIECE * PIECE;
	rmad_win_t w = RMAD_WIN_NULL;

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	src = malloc(span);
	dst = malloc(span);
	OK(rmad_alloc_mem(span, (void **)&adst));
	OK(rmad_alloc_mem(span, (void **)&asrc));
	OK(t_win_allocate((size_t)SEG * (size_t)size, 1, NULL,
			  RMAD_GROUP_ALL, &base, &w));
	if (!src || !dst || !adst || !asrc || !w)
		goto out;
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < span; i++)
			src[i] = pat(rank, r, i);
		memcpy(asrc, src, span);
		from = r % 2 ? asrc : src;
		memset(base, 0, (size_t)SEG * (size_t)size);
		rmad_barrier();

		/* 1. many large puts in flight, then one flush */
		OK(rmad_win_lock_all(0, w));
		for (int k = 0; k < NPIECE; k++)
			for (int t = 0; t < size; t++)
				if (t != rank)
					OK(rmad_put(from + (size_t)k * PIECE,
						    PIECE, RMAD_BYTE, t,
						    T_D(w, t, (size_t)rank *
							SEG + 7 + (size_t)k *
							PIECE),
						    PIECE, RMAD_BYTE, w));
		OK(rmad_win_flush_all(w));
		OK(rmad_win_unlock_all(w));
		rmad_barrier();
		for (int o = 0; o < size; o++) {
			size_t b;

			if (o == rank)
				continue;
			b = bad_byte(base + (size_t)o * SEG + 7, o, r, span);
			CHECK(b == span, "round %d: put from %d: byte %zu",
			      r, o, b);
		}
		rmad_barrier();

		/* 2. get it all back, into malloc and rmad_alloc_mem */
		OK(rmad_win_lock_all(0, w));
		for (int t = 0; t < size; t++) {
			if (t == rank)
				continue;
			memset(dst, 0, span);
			memset(adst, 0, span);
			OK(rmad_get(dst, (int)span, RMAD_BYTE, t,
				    T_D(w, t, (size_t)rank * SEG + 7),
				    (int)span, RMAD_BYTE, w));
			OK(rmad_get(adst, (int)span, RMAD_BYTE, t,
				    T_D(w, t, (size_t)rank * SEG + 7),
				    (int)span, RMAD_BYTE, w));
			OK(rmad_win_flush(t, w));
			CHECK(bad_byte(dst, rank, r, span) == span,
			      "round %d: get from %d: byte %zu", r, t,
			      bad_byte(dst, rank, r, span));
			CHECK(bad_byte(adst, rank, r, span) == span,
			      "round %d: get (alloc_mem) from %d: byte %zu",
			      r, t, bad_byte(adst, rank, r, span));
		}
		OK(rmad_win_unlock_all(w));
		rmad_barrier();

		/* 3. under an exclusive lock, put then get the same bytes */
		{
			int t = (rank + 1) % size;
			size_t n = span / 2 + 1;

			for (size_t i = 0; i < n; i++)
				src[i] = pat(rank + 100, r, i);
			OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
			OK(rmad_put(src, (int)n, RMAD_BYTE, t,
				    T_D(w, t, (size_t)rank * SEG + 3), (int)n,
				    RMAD_BYTE, w));
			OK(rmad_win_flush(t, w));
			memset(dst, 0, n);
			OK(rmad_get(dst, (int)n, RMAD_BYTE, t,
				    T_D(w, t, (size_t)rank * SEG + 3), (int)n,
				    RMAD_BYTE, w));
			OK(rmad_win_unlock(t, w));
			CHECK(bad_byte(dst, rank + 100, r, n) == n,
			      "round %d: exclusive put+get at %d: byte %zu",
			      r, t, bad_byte(dst, rank + 100, r, n));
		}
		rmad_barrier();
	}
out:
	if (w)
		OK(rmad_win_free(&w));
	if (adst)
		OK(rmad_free_mem(adst));
	if (asrc)
		OK(rmad_free_mem(asrc));
	free(src);
	free(dst);
	return t_finish(rank, fails, " (node %d of %d, %d rounds)", in.node,
			in.nnodes, rounds);
}
