/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_rma.c - passive-target RMA, checked by every rank:
 *
 *   1. exact counters under concurrency (lock_all + accumulate/fetch_and_op)
 *   2. mutual exclusion: get+put read-modify-write under exclusive locks
 *   3. a compare_and_swap spin lock guarding a get+put counter
 *   4. every op x type combination against a locally computed value
 *   5. put/get integrity from 1 B to 4 MiB
 *   6. reuse of the origin buffer after flush_local
 *   7. tiny pools (op_pool=2,target_pool=1,slots=1), thousands of ops
 *   8. every bad-input class, each returning its code, changing nothing
 *   9. asynchronous progress: rank 0 computes for 3 s without calling
 *      rmad while the others finish many epochs against it
 *
 * Usage: prog_rma [iterations]  (default 200).  Each rank prints
 * "rank R: ok (...)" or "rank R: FAIL ..." lines and exits non-zero on
 * failure.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;


static size_t tsize(rmad_datatype_t t)
{
	static const size_t sz[] = { 0, 1, 1, sizeof(int), sizeof(long), 1, 2,
				     4, 8, 1, 2, 4, 8, 4, 8 };
	return sz[t];
}

/* ------------------------------------------------ the reference apply */

#define REF(T)								\
	static void ref_##T(T *d, const T *s, int op, int n, int isf)	\
	{								\
		for (int i = 0; i < n; i++) {				\
			T a = d[i], b = s ? s[i] : 0;			\
			switch (op) {					\
			case RMAD_SUM: d[i] = (T)(a + b); break;	\
			case RMAD_PROD: d[i] = (T)(a * b); break;	\
			case RMAD_MIN: d[i] = b < a ? b : a; break;	\
			case RMAD_MAX: d[i] = b > a ? b : a; break;	\
			case RMAD_LAND: d[i] = (T)(a && b); break;	\
			case RMAD_LOR: d[i] = (T)(a || b); break;	\
			case RMAD_LXOR: d[i] = (T)(!a != !b); break;	\
			case RMAD_REPLACE: d[i] = b; break;		\
			case RMAD_NO_OP: break;				\
			default:					\
				if (!isf)				\
					ref_bits_##T(d + i, b, op);	\
			}						\
		}							\
	}
#define BITS(T)								\
	static void ref_bits_##T(T *d, T b, int op)			\
	{								\
		uint64_t x = 0, y = 0;					\
		memcpy(&x, d, sizeof(T));				\
		memcpy(&y, &b, sizeof(T));				\
		x = op == RMAD_BAND ? x & y : op == RMAD_BOR ? x | y : x ^ y; \
		memcpy(d, &x, sizeof(T));				\
	}
BITS(int8_t) BITS(int16_t) BITS(int32_t) BITS(int64_t) BITS(uint8_t)
BITS(uint16_t) BITS(uint32_t) BITS(uint64_t) BITS(int) BITS(long)
BITS(float) BITS(double)
REF(int8_t) REF(int16_t) REF(int32_t) REF(int64_t) REF(uint8_t)
REF(uint16_t) REF(uint32_t) REF(uint64_t) REF(int) REF(long) REF(float)
REF(double)

static void ref_apply(void *d, const void *s, rmad_datatype_t t, int op,
		      int n)
{
	switch ((int)t) {
	case 1: case 9: ref_uint8_t(d, s, op, n, 0); break;
	case 3: ref_int(d, s, op, n, 0); break;
	case 4: ref_long(d, s, op, n, 0); break;
	case 5: ref_int8_t(d, s, op, n, 0); break;
	case 6: ref_int16_t(d, s, op, n, 0); break;
	case 7: ref_int32_t(d, s, op, n, 0); break;
	case 8: ref_int64_t(d, s, op, n, 0); break;
	case 10: ref_uint16_t(d, s, op, n, 0); break;
	case 11: ref_uint32_t(d, s, op, n, 0); break;
	case 12: ref_uint64_t(d, s, op, n, 0); break;
	case 13: ref_float(d, s, op, n, 1); break;
	case 14: ref_double(d, s, op, n, 1); break;
	case 2:		/* C's char */
		if (CHAR_MIN < 0)
			ref_int8_t(d, s, op, n, 0);
		else
			ref_uint8_t(d, s, op, n, 0);
		break;
	}
}

static int op_allowed(rmad_datatype_t t, int op)
{
	/* BYTE and CHAR take the integer ops, as in Open MPI and MPICH */
	int integer = t >= 1 && t <= 12, fl = t == 13 || t == 14;

	switch (op) {
	case RMAD_SUM: case RMAD_PROD: case RMAD_MIN: case RMAD_MAX:
		return integer || fl;
	case RMAD_LAND: case RMAD_LOR: case RMAD_LXOR:
		return integer;
	case RMAD_BAND: case RMAD_BOR: case RMAD_BXOR:
		return integer || t == RMAD_BYTE;
	default:
		return 1;	/* REPLACE, NO_OP */
	}
}

static void fill(void *p, rmad_datatype_t t, int n, int seed)
{
	uint8_t *b = p;

	for (int i = 0; i < n; i++) {
		int v = (seed * 7 + i * 3) % 5 + 1 + (i % 2 ? 0 : 1);

		switch ((int)t) {
		case 13: ((float *)p)[i] = (float)v * 0.5f; break;
		case 14: ((double *)p)[i] = (double)v * 0.25; break;
		default: {
			uint64_t x = (uint64_t)v;

			memcpy(b + (size_t)i * tsize(t), &x, tsize(t));
		}
		}
	}
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	int nt;
	rmad_win_t w = RMAD_WIN_NULL, tw = RMAD_WIN_NULL, stale;
	int64_t *base = NULL, *tbase = NULL;
	struct rmad_info in;
	const size_t BIG = 4u << 20;
	uint8_t *buf, *buf2;
	double t0;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	rmad_get_info(&in);
	nt = (rank + 1) % size;
	buf = malloc(BIG);
	buf2 = malloc(BIG);
	OK(t_win_allocate(BIG + 4096, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!base || !buf || !buf2)
		return 1;
	memset(base, 0, BIG + 4096);
	rmad_barrier();

	/* 1. exact counters: every rank adds 1 to slot 0 of every rank */
	OK(rmad_win_lock_all(0, w));
	for (int k = 0; k < iters; k++)
		for (int t = 0; t < size; t++) {
			int64_t one = 1, old;

			OK(rmad_accumulate(&one, 1, RMAD_INT64, t, 0, 1,
					   RMAD_INT64, RMAD_SUM, w));
			if (k % 16 == 0)
				OK(rmad_fetch_and_op(&one, &old, RMAD_INT64, t,
						     1, RMAD_SUM, w));
		}
	OK(rmad_win_flush_all(w));
	OK(rmad_win_unlock_all(w));
	rmad_barrier();
	CHECK(base[0] == (int64_t)size * iters, "counter: %lld, want %lld",
	      (long long)base[0], (long long)size * iters);
	CHECK(base[1] == (int64_t)size * ((iters + 15) / 16),
	      "fetch_and_op counter: %lld", (long long)base[1]);
	rmad_barrier();

	/* 2. mutual exclusion: read-modify-write of slot 2 under EXCL */
	for (int k = 0; k < iters; k++) {
		int t = (rank + k) % size;
		int64_t v = -1;

		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
		OK(rmad_get(&v, 1, RMAD_INT64, t, 2, 1, RMAD_INT64, w));
		OK(rmad_win_flush(t, w));
		v++;
		OK(rmad_put(&v, 1, RMAD_INT64, t, 2, 1, RMAD_INT64, w));
		OK(rmad_win_unlock(t, w));
	}
	rmad_barrier();
	CHECK(base[2] == iters, "exclusive RMW: %lld, want %d",
	      (long long)base[2], iters);
	rmad_barrier();

	/* 3. a CAS spin lock on rank 0's slot 3 guarding slot 4 */
	OK(rmad_win_lock_all(0, w));
	for (int k = 0; k < iters / 4 + 1; k++) {
		int64_t me = rank + 1, zero = 0, got = -1, v = 0;

		do {
			OK(rmad_compare_and_swap(&me, &zero, &got, RMAD_INT64,
						 0, 3, w));
			OK(rmad_win_flush(0, w));
		} while (got != 0 && !fails);
		OK(rmad_get(&v, 1, RMAD_INT64, 0, 4, 1, RMAD_INT64, w));
		OK(rmad_win_flush(0, w));
		v++;
		OK(rmad_put(&v, 1, RMAD_INT64, 0, 4, 1, RMAD_INT64, w));
		OK(rmad_win_flush(0, w));
		OK(rmad_compare_and_swap(&zero, &me, &got, RMAD_INT64, 0, 3,
					 w));
		OK(rmad_win_flush(0, w));
		CHECK(got == me, "spin lock released by another: %lld",
		      (long long)got);
	}
	OK(rmad_win_unlock_all(w));
	rmad_barrier();
	if (rank == 0)
		CHECK(base[4] == (int64_t)size * (iters / 4 + 1),
		      "CAS-locked counter %lld, want %lld", (long long)base[4],
		      (long long)size * (iters / 4 + 1));
	rmad_barrier();

	/* 4. every op x type, to the next rank, against a local model */
	{
		int combos = 0, bad = 0;
		uint8_t init[64], org[64], want[64], got[64], res[64],
			wantres[64];

		for (rmad_datatype_t t = 1; t <= 14; t++)
			for (int op = 1; op <= 12; op++) {
				size_t es = tsize(t);
				int n = (int)(48 / es) > 6 ? 6 : (int)(48 / es);
				int gacc = (op + (int)t) % 2;
				int allowed = op_allowed(t, op) &&
					      !(op == RMAD_NO_OP && !gacc);
				int e;

				memset(got, 0, sizeof(got));
				fill(init, t, n, (int)t + op);
				fill(org, t, n, op * 3 + rank);
				memcpy(want, init, es * (size_t)n);
				memcpy(wantres, init, es * (size_t)n);
				ref_apply(want, op == RMAD_NO_OP ? NULL : org,
					  t, op, n);
				/* init my own slot for my left neighbour */
				rmad_barrier();
				memcpy((uint8_t *)base + 64, init,
				       es * (size_t)n);
				rmad_barrier();
				OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, nt, 0, w));
				if (gacc)
					e = rmad_get_accumulate(
						org, n, t, res, n, t, nt, 8, n,
						t, op, w);
				else
					e = rmad_accumulate(org, n, t, nt, 8,
							    n, t, op, w);
				OK(rmad_win_flush(nt, w));
				OK(rmad_get(got, n, t, nt, 8, n, t, w));
				OK(rmad_win_unlock(nt, w));
				if (!allowed) {
					if (e != RMAD_ERR_OP ||
					    memcmp(got, init, es * (size_t)n))
						bad++, printf("rank %d: type %d op %d: %d\n", rank, (int)t, op, e);
					continue;
				}
				combos++;
				if (e || memcmp(got, want, es * (size_t)n) ||
				    (gacc && memcmp(res, wantres,
						    es * (size_t)n))) {
					bad++;
					printf("rank %d: type %d op %d gacc %d:"
					       " err %d\n", rank, (int)t, op,
					       gacc, e);
				}
			}
		CHECK(bad == 0, "op x type: %d wrong of %d", bad, combos);
	}
	rmad_barrier();

	/* 5. put/get integrity from 1 B to 4 MiB, 6. reuse after
	 * flush_local */
	{
		static const size_t lens[] = { 1, 7, 48, 49, 4096, 8200, 65536,
					       1u << 20, 4u << 20 };
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			size_t n = lens[k];

			for (size_t i = 0; i < n; i++)
				buf[i] = (uint8_t)(i * 31 + k + rank);
			memset(buf2, 0xee, n);
			OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, nt, 0, w));
			OK(rmad_put(buf, (int)n, RMAD_BYTE, nt, 1, (int)n,
				    RMAD_BYTE, w));
			OK(rmad_win_flush_local(nt, w));
			/* the origin buffer is ours again */
			memset(buf, 0x5a, n);
			OK(rmad_win_flush(nt, w));
			OK(rmad_get(buf2, (int)n, RMAD_BYTE, nt, 1, (int)n,
				    RMAD_BYTE, w));
			OK(rmad_win_unlock(nt, w));
			for (size_t i = 0; i < n; i++)
				if (buf2[i] != (uint8_t)(i * 31 + k + rank)) {
					CHECK(0, "put/get %zu bytes: byte %zu"
					      " is %u", n, i, buf2[i]);
					break;
				}
		}
	}
	rmad_barrier();

	/* 7. tiny pools */
	OK(t_win_allocate(4096, 8, "op_pool=2,target_pool=1,slots=1",
			     RMAD_GROUP_ALL, &tbase, &tw));
	if (tw) {
		int n = iters * 10;

		memset(tbase, 0, 4096);
		rmad_barrier();
		OK(rmad_win_lock_all(0, tw));
		for (int k = 0; k < n; k++) {
			int64_t one = 1;

			OK(rmad_accumulate(&one, 1, RMAD_INT64, k % size, 0,
					   1, RMAD_INT64, RMAD_SUM, tw));
		}
		OK(rmad_win_unlock_all(tw));
		/* several per-target locks held at once */
		for (int t = 0; t < size; t++)
			OK(rmad_win_lock(RMAD_LOCK_SHARED, t, 0, tw));
		for (int k = 0; k < n; k++) {
			int64_t one = 1;

			OK(rmad_accumulate(&one, 1, RMAD_INT64, k % size, 1,
					   1, RMAD_INT64, RMAD_SUM, tw));
		}
		for (int t = 0; t < size; t++)
			OK(rmad_win_unlock(t, tw));
		rmad_barrier();
		{
			int64_t want = 0;

			for (int r = 0; r < size; r++)
				for (int k = 0; k < n; k++)
					want += k % size == rank;
			CHECK(tbase[0] == want && tbase[1] == want,
			      "tiny pools: %lld %lld, want %lld",
			      (long long)tbase[0], (long long)tbase[1],
			      (long long)want);
		}
	}
	rmad_barrier();

	/* 8. bad input: each its code, nothing changed */
	{
		int64_t v = 77, r = 0;
		int e;

		rmad_barrier();
		base[10] = 10;
		rmad_barrier();
		CHECK(rmad_put(&v, 1, RMAD_INT64, nt, 10, 1, RMAD_INT64, w) ==
		      RMAD_ERR_SYNC, "put outside an epoch");
		OK(rmad_win_lock(RMAD_LOCK_SHARED, nt, 0, w));
		CHECK(rmad_win_lock(RMAD_LOCK_SHARED, nt, 0, w) ==
		      RMAD_ERR_SYNC, "second lock on a target");
		CHECK(rmad_win_lock_all(0, w) == RMAD_ERR_SYNC,
		      "lock_all inside a lock epoch");
		CHECK(rmad_put(NULL, 1, RMAD_INT64, nt, 10, 1, RMAD_INT64,
			       w) == RMAD_ERR_ARG, "NULL origin");
		CHECK(rmad_put(&v, 1, RMAD_INT64, size, 10, 1, RMAD_INT64,
			       w) == RMAD_ERR_RANK, "rank out of range");
		CHECK(rmad_put(&v, 1, RMAD_INT64, nt, (BIG + 4096) / 8, 1,
			       RMAD_INT64, w) == RMAD_ERR_DISP,
		      "displacement past the end");
		CHECK(rmad_put(&v, 2, RMAD_INT64, nt, (BIG + 4096) / 8 - 1,
			       2, RMAD_INT64, w) == RMAD_ERR_DISP,
		      "length past the end");
		CHECK(rmad_put(&v, 1, RMAD_INT64, nt, SIZE_MAX / 4, 1,
			       RMAD_INT64, w) == RMAD_ERR_DISP,
		      "huge displacement");
		CHECK(rmad_put(&v, 1, (rmad_datatype_t)99, nt, 10, 1,
			       (rmad_datatype_t)99, w) == RMAD_ERR_TYPE,
		      "bad datatype");
		CHECK(rmad_put(&v, 1, RMAD_INT64, nt, 10, 1, RMAD_INT32, w) ==
		      RMAD_ERR_TYPE, "type mismatch");
		CHECK(rmad_put(&v, -1, RMAD_INT64, nt, 10, -1, RMAD_INT64,
			       w) == RMAD_ERR_ARG, "negative count");
		CHECK(rmad_accumulate(&v, 1, RMAD_INT64, nt, 10, 1,
				      RMAD_INT64, RMAD_NO_OP, w) ==
		      RMAD_ERR_OP, "accumulate with NO_OP");
		CHECK(rmad_accumulate(&v, 1, RMAD_DOUBLE, nt, 10, 1,
				      RMAD_DOUBLE, RMAD_BAND, w) ==
		      RMAD_ERR_OP, "BAND on double");
		CHECK(rmad_accumulate(&v, 1, RMAD_INT64, nt, 10, 1,
				      RMAD_INT64, 99, w) == RMAD_ERR_OP,
		      "bad op");
		CHECK(rmad_compare_and_swap(&v, &v, &r, RMAD_LONG_DOUBLE_INT,
					    nt, 10, w) == RMAD_ERR_TYPE,
		      "CAS on a 32-byte type");
		CHECK(rmad_put(&v, 1, RMAD_INT64, nt, 10, 1, RMAD_INT64,
			       RMAD_WIN_NULL) == RMAD_ERR_ARG, "null window");
		CHECK(rmad_win_flush(size + 3, w) == RMAD_ERR_RANK,
		      "flush of a bad rank");
		OK(rmad_win_unlock(nt, w));
		CHECK(rmad_win_unlock(nt, w) == RMAD_ERR_SYNC,
		      "unlock twice");
		CHECK(rmad_win_lock(7, nt, 0, w) == RMAD_ERR_ARG,
		      "bad lock type");
		CHECK(rmad_win_lock(RMAD_LOCK_SHARED, nt, 0x400, w) ==
		      RMAD_ERR_ARG, "bad assert");
		CHECK(rmad_win_flush_all(w) == RMAD_ERR_SYNC,
		      "flush outside an epoch");
		stale = tw;
		OK(rmad_win_free(&tw));
		CHECK(tw == RMAD_WIN_NULL, "free sets the handle to null");
		e = rmad_win_lock_all(0, stale);
		CHECK(e == RMAD_ERR_ARG, "freed window: %d", e);
		rmad_barrier();
		CHECK(base[10] == 10, "bad input changed memory: %lld",
		      (long long)base[10]);
	}
	rmad_barrier();

	/* 9. asynchronous progress: rank 0 computes, never calling rmad */
	{
		double until, done_at = 0, t1;
		int64_t one = 1;
		volatile double x = 1;
		int64_t epochs = 0;

		base[20] = base[21] = 0;
		rmad_barrier();
		t0 = rmad_wtime();
		until = t0 + 3.0;
		if (rank == 0) {
			while (rmad_wtime() < until)
				for (int i = 0; i < 1000; i++)
					x = x * 1.0000001 + 1e-9;
			t1 = rmad_wtime();
		} else {
			for (int k = 0; k < iters / 2; k++) {
				OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w));
				OK(rmad_accumulate(&one, 1, RMAD_INT64, 0, 20,
						   1, RMAD_INT64, RMAD_SUM,
						   w));
				OK(rmad_win_unlock(0, w));
				OK(rmad_win_lock_all(0, w));
				OK(rmad_put(&one, 1, RMAD_INT64, 0, 22 + rank,
					    1, RMAD_INT64, w));
				OK(rmad_accumulate(&one, 1, RMAD_INT64, 0, 21,
						   1, RMAD_INT64, RMAD_SUM,
						   w));
				OK(rmad_win_flush(0, w));
				OK(rmad_win_unlock_all(w));
				epochs += 2;
			}
			done_at = rmad_wtime();
			t1 = done_at;
			/* generous: the whole run must fit in rank 0's
			 * compute phase, which it never leaves for rmad */
			CHECK(done_at < until,
			      "async progress: %lld epochs took %.3f s, "
			      "target computed for 3 s", (long long)epochs,
			      done_at - t0);
			printf("rank %d: async: %lld epochs in %.3f s while "
			       "rank 0 computed\n", rank, (long long)epochs,
			       done_at - t0);
		}
		(void)t1;
		rmad_barrier();
		if (rank == 0) {
			CHECK(base[20] == (int64_t)(size - 1) * (iters / 2) &&
			      base[21] == (int64_t)(size - 1) * (iters / 2),
			      "async counters %lld %lld, want %lld",
			      (long long)base[20], (long long)base[21],
			      (long long)(size - 1) * (iters / 2));
		}
	}
	rmad_barrier();
	OK(rmad_win_free(&w));
	if (!fails)
		printf("rank %d: ok (node %d of %d, %d iterations)\n", rank,
		       in.node, in.nnodes, iters);
	fflush(stdout);
	rmad_finalize();
	free(buf);
	free(buf2);
	return fails ? 1 : 0;
}
