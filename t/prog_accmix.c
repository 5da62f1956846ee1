/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_accmix.c - large and small accumulates on overlapping ranges at
 * once, from every rank to rank 0's window, with exact totals.  Large
 * ones (from acc_bulk_threshold bytes) are combined in bulk with plain
 * loads and stores, small ones with per-element atomics, and MPI wants
 * them atomic per element against each other (rmad(7), "Atomicity and
 * ordering of accumulates"): a lost update shows as a wrong total.
 *
 * Every round a rank, with a generator seeded by (rank, round), does on
 * an int64 array and on a double array (integer values, exact):
 *   a large SUM over a random range of 64..511 elements (of 512);
 *   16 small SUMs of 1..4 elements at random places;
 *   a large get_accumulate SUM over a random range (its fetched values
 *   are checked to be whole and in range);
 *   2 fetch_and_op SUMs, and on the int64 array a compare-and-swap
 *   increment (read, then CAS until it takes);
 * then flushes.  Then the hot phase: a tight loop in which, turn about,
 * a rank adds 1 to the whole of two 512-element arrays (int64, double:
 * in bulk) or to one element of each, so that bulk and small updates of
 * the same elements meet as often as the cores allow.  Rank 0 replays
 * every rank's rounds and loop into the model and compares element by
 * element.
 *
 * Usage: prog_accmix [rounds [hot iterations]] (default 200, 4000).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

#define NEL	512		/* elements of each array */
#define BIGMAX	512
#define NSMALL	16		/* small SUMs a round, each array */
#define HOT	512		/* the hot arrays: 4 KiB, bulk by default */

static int rank, fails;

/* xorshift64*, seeded per (rank, round) so rank 0 can replay it */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static uint64_t seed_of(int r, int round)
{
	uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)r << 32) ^
		     (uint64_t)round;

	for (int i = 0; i < 4; i++)
		rng_next(&s);
	return s | 1;
}

/* One round's plan: the same draws for the rank that does it and for the
 * model. */
struct plan {
	int big_lo[2], big_n[2];	/* [0] int64, [1] double */
	int small_at[2][NSMALL], small_n[2][NSMALL];
	int64_t small_v[2][NSMALL];
	int gacc_lo[2], gacc_n[2];
	int fop_at[2][2];
	int cas_at;
};

static void make_plan(int r, int round, struct plan *p)
{
	uint64_t s = seed_of(r, round);

	for (int k = 0; k < 2; k++) {
		p->big_n[k] = 64 + (int)(rng_next(&s) % (BIGMAX - 64));
		p->big_lo[k] = (int)(rng_next(&s) % (NEL - p->big_n[k] + 1));
		for (int j = 0; j < NSMALL; j++) {
			p->small_n[k][j] = 1 + (int)(rng_next(&s) % 4);
			p->small_at[k][j] = (int)(rng_next(&s) %
						  (NEL - p->small_n[k][j] + 1));
			p->small_v[k][j] = 1 + (int64_t)(rng_next(&s) % 3);
		}
		p->gacc_n[k] = 64 + (int)(rng_next(&s) % (BIGMAX - 64));
		p->gacc_lo[k] = (int)(rng_next(&s) % (NEL - p->gacc_n[k] + 1));
		for (int j = 0; j < 2; j++)
			p->fop_at[k][j] = (int)(rng_next(&s) % NEL);
	}
	p->cas_at = (int)(rng_next(&s) % NEL);
}

/* The model: what round `round` of rank r adds. */
static void model_add(int r, int round, int64_t *mi, double *md)
{
	struct plan p;

	make_plan(r, round, &p);
	for (int i = 0; i < p.big_n[0]; i++)
		mi[p.big_lo[0] + i] += 1;
	for (int i = 0; i < p.big_n[1]; i++)
		md[p.big_lo[1] + i] += 1;
	for (int j = 0; j < NSMALL; j++) {
		for (int i = 0; i < p.small_n[0][j]; i++)
			mi[p.small_at[0][j] + i] += p.small_v[0][j];
		for (int i = 0; i < p.small_n[1][j]; i++)
			md[p.small_at[1][j] + i] += (double)p.small_v[1][j];
	}
	for (int i = 0; i < p.gacc_n[0]; i++)
		mi[p.gacc_lo[0] + i] += 2;
	for (int i = 0; i < p.gacc_n[1]; i++)
		md[p.gacc_lo[1] + i] += 2;
	for (int j = 0; j < 2; j++) {
		mi[p.fop_at[0][j]] += 1;
		md[p.fop_at[1][j]] += 1;
	}
	mi[p.cas_at] += 1;
}

/* The hot phase of rank r: who does what at iteration it. */
static int hot_bulk(int r, int it)
{
	return (r + it) % 2 == 0;
}

static int hot_at(int r, int it)
{
	return (r * 7 + it * 3) % HOT;
}

int main(int argc, char **argv)
{
	int size, rounds = argc > 1 ? atoi(argv[1]) : 200;
	int hot = argc > 2 ? atoi(argv[2]) : 4000;
	static int64_t hmi[HOT];
	static double hmd[HOT];
	static int64_t ones_i[HOT], twos_i[BIGMAX], res_i[BIGMAX];
	static double ones_d[HOT], twos_d[BIGMAX], res_d[BIGMAX];
	int64_t *base, *mi = calloc(NEL, sizeof(*mi)), *wi;
	double *md = calloc(NEL, sizeof(*md)), *wd;
	rmad_win_t w = NULL;
	const size_t DOFF = NEL;	/* the doubles, in 8-byte units */
	const size_t HOFF = 2 * NEL;	/* the hot int64s, then doubles */

	if (rmad_init(&argc, &argv) || !mi || !md) {
		printf("rank ?: FAIL rmad_init\n");
		return 1;
	}
	rmad_rank(&rank);
	rmad_size(&size);
	for (int i = 0; i < HOT; i++) {
		ones_i[i] = 1;
		ones_d[i] = 1;
	}
	for (int i = 0; i < BIGMAX; i++) {
		twos_i[i] = 2;
		twos_d[i] = 2;
	}
	OK(t_win_allocate((2 * NEL + 2 * HOT) * 8, 8, NULL, RMAD_GROUP_ALL,
			  &base, &w));
	if (!w)
		return 1;
	memset(base, 0, (2 * NEL + 2 * HOT) * 8);
	rmad_barrier();
	OK(rmad_win_lock_all(0, w));
	for (int round = 0; round < rounds && !fails; round++) {
		struct plan p;
		int64_t one_i = 1, old_i, got_i;
		double one_d = 1, old_d;

		make_plan(rank, round, &p);
		OK(rmad_accumulate(ones_i, p.big_n[0], RMAD_INT64, 0,
				   T_D(w, 0, p.big_lo[0]), p.big_n[0],
				   RMAD_INT64, RMAD_SUM, w));
		OK(rmad_accumulate(ones_d, p.big_n[1], RMAD_DOUBLE, 0,
				   T_D(w, 0, DOFF + p.big_lo[1]), p.big_n[1],
				   RMAD_DOUBLE, RMAD_SUM, w));
		for (int j = 0; j < NSMALL; j++) {
			int64_t vi[4];
			double vd[4];

			for (int i = 0; i < 4; i++) {
				vi[i] = p.small_v[0][j];
				vd[i] = (double)p.small_v[1][j];
			}
			OK(rmad_accumulate(vi, p.small_n[0][j], RMAD_INT64, 0,
					   T_D(w, 0, p.small_at[0][j]),
					   p.small_n[0][j], RMAD_INT64,
					   RMAD_SUM, w));
			OK(rmad_accumulate(vd, p.small_n[1][j], RMAD_DOUBLE, 0,
					   T_D(w, 0, DOFF + p.small_at[1][j]),
					   p.small_n[1][j], RMAD_DOUBLE,
					   RMAD_SUM, w));
		}
		OK(rmad_get_accumulate(twos_i, p.gacc_n[0], RMAD_INT64, res_i,
				       p.gacc_n[0], RMAD_INT64, 0,
				       T_D(w, 0, p.gacc_lo[0]), p.gacc_n[0],
				       RMAD_INT64, RMAD_SUM, w));
		OK(rmad_get_accumulate(twos_d, p.gacc_n[1], RMAD_DOUBLE, res_d,
				       p.gacc_n[1], RMAD_DOUBLE, 0,
				       T_D(w, 0, DOFF + p.gacc_lo[1]),
				       p.gacc_n[1], RMAD_DOUBLE, RMAD_SUM, w));
		for (int j = 0; j < 2; j++) {
			OK(rmad_fetch_and_op(&one_i, &old_i, RMAD_INT64, 0,
					     T_D(w, 0, p.fop_at[0][j]),
					     RMAD_SUM, w));
			OK(rmad_fetch_and_op(&one_d, &old_d, RMAD_DOUBLE, 0,
					     T_D(w, 0, DOFF + p.fop_at[1][j]),
					     RMAD_SUM, w));
		}
		/* a compare-and-swap increment: read, then CAS until it takes */
		OK(rmad_fetch_and_op(NULL, &old_i, RMAD_INT64, 0,
				     T_D(w, 0, p.cas_at), RMAD_NO_OP, w));
		OK(rmad_win_flush(0, w));
		for (int tries = 0; tries < 100000 && !fails; tries++) {
			int64_t nv = old_i + 1;

			OK(rmad_compare_and_swap(&nv, &old_i, &got_i,
						 RMAD_INT64, 0,
						 T_D(w, 0, p.cas_at), w));
			OK(rmad_win_flush(0, w));
			if (got_i == old_i)
				break;
			old_i = got_i;
		}
		for (int i = 0; i < p.gacc_n[1]; i++)
			CHECK(res_d[i] >= 0 && res_d[i] == (double)(int64_t)
			      res_d[i], "round %d: fetched double %g is not "
			      "whole", round, res_d[i]);
		for (int i = 0; i < p.gacc_n[0]; i++)
			CHECK(res_i[i] >= 0, "round %d: fetched %lld", round,
			      (long long)res_i[i]);
	}
	for (int it = 0; it < hot && !fails; it++) {
		int64_t one_i = 1;
		double one_d = 1;
		int n = hot_bulk(rank, it) ? HOT : 1;
		size_t at = hot_bulk(rank, it) ? 0 : (size_t)hot_at(rank, it);

		OK(rmad_accumulate(n > 1 ? ones_i : &one_i, n, RMAD_INT64, 0,
				   T_D(w, 0, HOFF + at), n, RMAD_INT64,
				   RMAD_SUM, w));
		OK(rmad_accumulate(n > 1 ? ones_d : &one_d, n, RMAD_DOUBLE, 0,
				   T_D(w, 0, HOFF + HOT + at), n, RMAD_DOUBLE,
				   RMAD_SUM, w));
		if (it % 256 == 255)
			OK(rmad_win_flush(0, w));
	}
	OK(rmad_win_unlock_all(w));
	rmad_barrier();
	if (rank == 0) {
		int bad = 0;

		for (int r = 0; r < size; r++)
			for (int round = 0; round < rounds; round++)
				model_add(r, round, mi, md);
		for (int r = 0; r < size; r++)
			for (int it = 0; it < hot; it++)
				for (int i = 0; i < HOT; i++)
					if (hot_bulk(r, it) ||
					    i == hot_at(r, it)) {
						hmi[i]++;
						hmd[i]++;
					}
		for (int i = 0; i < HOT; i++) {
			if (base[HOFF + i] != hmi[i] && bad++ < 5)
				printf("rank 0: FAIL hot int64[%d] = %lld, want "
				       "%lld\n", i, (long long)base[HOFF + i],
				       (long long)hmi[i]);
			if (((double *)base)[HOFF + HOT + i] != hmd[i] &&
			    bad++ < 5)
				printf("rank 0: FAIL hot double[%d] = %.0f, "
				       "want %.0f\n", i,
				       ((double *)base)[HOFF + HOT + i], hmd[i]);
		}
		wi = base;
		wd = (double *)(base + DOFF);
		for (int i = 0; i < NEL; i++) {
			if (wi[i] != mi[i] && bad++ < 5)
				printf("rank 0: FAIL int64[%d] = %lld, want "
				       "%lld\n", i, (long long)wi[i],
				       (long long)mi[i]);
			if (wd[i] != md[i] && bad++ < 5)
				printf("rank 0: FAIL double[%d] = %.0f, want "
				       "%.0f\n", i, wd[i], md[i]);
		}
		fails += bad;
		if (!bad)
			printf("rank 0: %d ranks x %d rounds, %d hot "
			       "iterations: all %d elements exact\n", size,
			       rounds, hot, 2 * NEL + 2 * HOT);
	}
	rmad_barrier();
	OK(rmad_win_free(&w));
	free(mi);
	free(md);
	rmad_finalize();
	if (fails)
		printf("rank %d: %d failures\n", rank, fails);
	return fails ? 1 : 0;
}
