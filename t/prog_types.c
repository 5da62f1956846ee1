/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_types.c - operations with derived datatypes, origin and target
 * types differing with matching signatures: a contiguous origin put into
 * a strided target (vector), a get into a strided origin, accumulates
 * from every rank through an indexed_block target with exact totals, a
 * put into a 2-D subarray, a get_accumulate into a strided result, a
 * struct of mixed types, a request-based put with a derived type; and
 * the errors (signature mismatch, uncommitted and freed types, a
 * footprint outside the window), which change nothing.  Then the
 * types wider than 8 bytes, accumulated by every rank into every rank at
 * once (LONG_DOUBLE and C_DOUBLE_COMPLEX SUM, DOUBLE_INT MINLOC,
 * LONG_DOUBLE_INT MAXLOC, with atomic reads by get_accumulate NO_OP):
 * exact totals, so each element stayed whole.  Each rank prints
 * "rank R: ok" or FAIL lines.
 */
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define SLOTS 256

#define NWIDE	60

/* wide types: bytes 0 LONG_DOUBLE, 16 C_DOUBLE_COMPLEX, 32 DOUBLE_INT,
 * 64 LONG_DOUBLE_INT of every rank's window */
static void wide(void)
{
	struct { double v; int i; } di = { 100.0 - rank, rank }, dr;
	struct { long double v; int i; } li = { rank % 2, rank };
	long double one = 0.5L * (rank + 1), got;
	double _Complex c = 1.0 + rank * I;
	unsigned char *b = NULL;
	rmad_win_t w = RMAD_WIN_NULL;
	long double want = 0;

	OK(t_win_allocate(128, 1, NULL, RMAD_GROUP_ALL, &b, &w));
	memset(b, 0, 128);
	{
		struct { double v; int i; } d0 = { 1e9, -1 };
		struct { long double v; int i; } l0 = { -1, -1 };

		memcpy(b + 32, &d0, sizeof(d0));
		memcpy(b + 64, &l0, sizeof(l0));
	}
	OK(rmad_barrier());
	OK(rmad_win_lock_all(0, w));
	for (int k = 0; k < NWIDE; k++) {
		for (int r = 0; r < size; r++) {
			OK(rmad_accumulate(&one, 1, RMAD_LONG_DOUBLE, r,
					   T_D(w, r, 0), 1, RMAD_LONG_DOUBLE,
					   RMAD_SUM, w));
			OK(rmad_accumulate(&c, 1, RMAD_C_DOUBLE_COMPLEX, r,
					   T_D(w, r, 16), 1,
					   RMAD_C_DOUBLE_COMPLEX, RMAD_SUM,
					   w));
			OK(rmad_accumulate(&di, 1, RMAD_DOUBLE_INT, r,
					   T_D(w, r, 32), 1, RMAD_DOUBLE_INT,
					   RMAD_MINLOC, w));
			OK(rmad_accumulate(&li, 1, RMAD_LONG_DOUBLE_INT, r,
					   T_D(w, r, 64), 1,
					   RMAD_LONG_DOUBLE_INT, RMAD_MAXLOC,
					   w));
		}
		/* an atomic read of a wide element mid-way */
		OK(rmad_get_accumulate(NULL, 0, RMAD_DOUBLE_INT, &dr, 1,
				       RMAD_DOUBLE_INT, (rank + 1) % size,
				       T_D(w, (rank + 1) % size, 32), 1,
				       RMAD_DOUBLE_INT, RMAD_NO_OP, w));
		if (k % 10 == 9)
			OK(rmad_win_flush_all(w));
	}
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	for (int r = 0; r < size; r++)
		want += 0.5L * (r + 1) * NWIDE;
	memcpy(&got, b, sizeof(got));
	CHECK(got == want, "LONG_DOUBLE SUM: %Lg, not %Lg", got, want);
	{
		double _Complex z;
		double im = 0;

		for (int r = 0; r < size; r++)
			im += (double)r * NWIDE;
		memcpy(&z, b + 16, sizeof(z));
		CHECK(creal(z) == (double)size * NWIDE && cimag(z) == im,
		      "C_DOUBLE_COMPLEX SUM: %g%+gi", creal(z), cimag(z));
	}
	memcpy(&dr, b + 32, sizeof(dr));
	CHECK(dr.v == 100.0 - (size - 1) && dr.i == size - 1,
	      "DOUBLE_INT MINLOC: (%g, %d)", dr.v, dr.i);
	memcpy(&li, b + 64, sizeof(li));
	CHECK(li.v == (size > 1 ? 1 : 0) && li.i == (size > 1 ? 1 : 0),
	      "LONG_DOUBLE_INT MAXLOC: (%Lg, %d)", li.v, li.i);
	OK(rmad_win_free(&w));
}

int main(int argc, char **argv)
{
	int64_t *base = NULL, src[16], buf[16], res[8];
	rmad_win_t w = RMAD_WIN_NULL;
	rmad_datatype_t vec, vget, iblk, sub, gvec, sres, mixed, unc, freed;
	int nxt, prv, disp4[4] = { 0, 5, 9, 20 };

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	nxt = (rank + 1) % size;
	prv = (rank + size - 1) % size;
	OK(t_win_allocate(SLOTS * 8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		goto out;
	memset(base, 0, SLOTS * 8);
	for (int i = 0; i < 4; i++)
		base[32 + i] = 1000 * rank + i;
	for (int i = 0; i < 8; i++)
		base[40 + i] = 10 * rank + i;
	{
		/* MINLOC and MAXLOC targets: 2INT at slots 240 and 241 */
		int32_t *m = (int32_t *)&base[240];

		m[0] = 1000;
		m[1] = -1;
		m[2] = -5;
		m[3] = -1;
	}
	OK(rmad_type_vector(8, 1, 2, RMAD_INT64, &vec));
	OK(rmad_type_commit(&vec));
	OK(rmad_type_vector(4, 1, 3, RMAD_INT64, &vget));
	OK(rmad_type_commit(&vget));
	OK(rmad_type_create_indexed_block(4, 1, disp4, RMAD_INT64, &iblk));
	OK(rmad_type_commit(&iblk));
	{
		int sz[2] = { 4, 6 }, ss[2] = { 2, 3 }, st[2] = { 1, 2 };

		OK(rmad_type_create_subarray(2, sz, ss, st, RMAD_ORDER_C,
					     RMAD_INT64, &sub));
		OK(rmad_type_commit(&sub));
	}
	OK(rmad_type_vector(2, 1, 3, RMAD_INT64, &gvec));
	OK(rmad_type_commit(&gvec));
	OK(rmad_type_create_hvector(2, 1, 16, RMAD_INT64, &sres));
	OK(rmad_type_commit(&sres));
	{
		/* {int32, int64} with the int64 at byte 8: two of them are
		 * the 32 bytes at slot 200; the target sees INT32, INT64
		 * runs in the same order */
		int bl[2] = { 1, 1 };
		ptrdiff_t d[2] = { 0, 8 };
		rmad_datatype_t ty[2] = { RMAD_INT32, RMAD_INT64 };

		OK(rmad_type_create_struct(2, bl, d, ty, &mixed));
		OK(rmad_type_commit(&mixed));
	}
	OK(rmad_type_contiguous(2, RMAD_INT64, &unc));	/* never committed */
	OK(rmad_type_contiguous(2, RMAD_INT64, &freed));
	{
		rmad_datatype_t f2 = freed;

		OK(rmad_type_commit(&f2));
		OK(rmad_type_free(&f2));
	}
	rmad_barrier();

	OK(rmad_win_lock_all(0, w));
	/* A: 8 contiguous into every other slot of 0..15 */
	for (int i = 0; i < 16; i++)
		src[i] = 100 * rank + i;
	OK(rmad_put(src, 8, RMAD_INT64, nxt, 0, 1, vec, w));
	/* B: 4 contiguous slots of the target into every third of buf */
	for (int i = 0; i < 16; i++)
		buf[i] = -1;
	OK(rmad_get(buf, 1, vget, nxt, 32, 4, RMAD_INT64, w));
	/* C: every rank adds rank+1 at 64 + {0, 5, 9, 20} of everyone */
	for (int i = 0; i < 4; i++)
		src[i] = rank + 1;
	for (int r = 0; r < size; r++)
		OK(rmad_accumulate(src, 4, RMAD_INT64, r, 64, 1, iblk,
				   RMAD_SUM, w));
	/* D: 6 values into rows 1..2, columns 2..4 of a 4x6 array at 100 */
	for (int i = 0; i < 6; i++)
		src[8 + i] = 7000 + 10 * rank + i;
	OK(rmad_put(&src[8], 6, RMAD_INT64, nxt, 100, 1, sub, w));
	/* E: fetch slots 40 and 43 of the target into res[0] and res[2],
	 * adding 1 to them */
	for (int i = 0; i < 8; i++)
		res[i] = -1;
	{
		int64_t ones[2] = { 1, 1 };

		OK(rmad_get_accumulate(ones, 2, RMAD_INT64, res, 1, sres, nxt,
				       40, 1, gvec, RMAD_SUM, w));
	}
	/* I: every rank's MINLOC and MAXLOC into every rank */
	{
		int32_t lo[2] = { 100 - rank, rank }, hi[2] = { rank % 2, rank };

		for (int r = 0; r < size; r++) {
			OK(rmad_accumulate(lo, 1, RMAD_2INT, r, 240, 1,
					   RMAD_2INT, RMAD_MINLOC, w));
			OK(rmad_accumulate(hi, 1, RMAD_2INT, r, 241, 1,
					   RMAD_2INT, RMAD_MAXLOC, w));
		}
		CHECK(rmad_accumulate(lo, 2, RMAD_INT32, nxt, 240, 2,
				      RMAD_INT32, RMAD_MINLOC, w) ==
		      RMAD_ERR_OP, "MINLOC on INT32: RMAD_ERR_OP");
	}
	OK(rmad_win_flush_all(w));
	CHECK(buf[0] == 1000 * nxt && buf[3] == 1000 * nxt + 1 &&
	      buf[6] == 1000 * nxt + 2 && buf[9] == 1000 * nxt + 3 &&
	      buf[1] == -1 && buf[10] == -1,
	      "B: strided get: %lld %lld %lld %lld (gaps %lld %lld)",
	      (long long)buf[0], (long long)buf[3], (long long)buf[6],
	      (long long)buf[9], (long long)buf[1], (long long)buf[10]);
	CHECK(res[0] == 10 * nxt && res[2] == 10 * nxt + 3 && res[1] == -1,
	      "E: strided result: %lld %lld %lld", (long long)res[0],
	      (long long)res[2], (long long)res[1]);
	/* F: a struct of mixed types, to bytes 1600.. of the target */
	{
		struct { int32_t a; int32_t pad; int64_t b; } m[2] = {
			{ 11 + rank, -7, 22 + rank }, { 33 + rank, -7, 44 + rank }
		};

		OK(rmad_put(m, 2, mixed, nxt, 200, 2, mixed, w));
	}
	/* F2: blocks in reverse order inside a contiguous type: the packed
	 * order is not the address order (slots 150..153 of the target
	 * get 2 1 4 3 of the 4 values) */
	{
		int bl[2] = { 1, 1 }, dd[2] = { 1, 0 };
		rmad_datatype_t rev, two;
		/* the origin buffer must live until the flush */
		static int64_t v[4];

		for (int i = 0; i < 4; i++)
			v[i] = i + 1 + rank;
		OK(rmad_type_indexed(2, bl, dd, RMAD_INT64, &rev));
		OK(rmad_type_contiguous(2, rev, &two));
		OK(rmad_type_commit(&two));
		OK(rmad_put(v, 4, RMAD_INT64, nxt, 150, 1, two, w));
		OK(rmad_type_free(&rev));
		OK(rmad_type_free(&two));
	}
	/* G: a request-based put with a derived type */
	{
		rmad_request_t rq;

		for (int i = 0; i < 8; i++)
			src[i] = 500 + rank;
		OK(rmad_rput(src, 8, RMAD_INT64, nxt, 16, 1, vec, w, &rq));
		OK(rmad_wait(&rq));
	}
	/* G2: many derived-type rgets in flight at once, then waitall and
	 * a test loop; each result is the strided data G wrote */
	{
		enum { NR = 200 };
		rmad_request_t rqs[NR], one;
		int64_t (*got)[8] = calloc(NR, sizeof(*got));
		int bad = 0, done = 0;

		OK(rmad_win_flush(nxt, w));
		for (int k = 0; k < NR; k++)
			OK(rmad_rget(got[k], 8, RMAD_INT64, nxt, 16, 1, vec, w,
				     &rqs[k]));
		OK(rmad_waitall(NR, rqs));
		for (int k = 0; k < NR; k++)
			for (int i = 0; i < 8; i++)
				bad |= got[k][i] != 500 + rank;
		memset(got[0], 0, sizeof(got[0]));
		OK(rmad_rget(got[0], 8, RMAD_INT64, nxt, 16, 1, vec, w, &one));
		while (!done)
			OK(rmad_test(&one, &done));
		for (int i = 0; i < 8; i++)
			bad |= got[0][i] != 500 + rank;
		CHECK(!bad, "G2: 200 strided rgets in flight, waitall and test");
		free(got);
	}
	/* H: errors, none of which moves anything */
	{
		int32_t i4[4] = { 9, 9, 9, 9 };

		CHECK(rmad_put(i4, 4, RMAD_INT32, nxt, 0, 2, RMAD_INT64, w) ==
		      RMAD_ERR_TYPE, "INT32 x4 into INT64 x2: RMAD_ERR_TYPE");
		CHECK(rmad_put(src, 7, RMAD_INT64, nxt, 0, 1, vec, w) ==
		      RMAD_ERR_TYPE, "7 elements into a type of 8");
		CHECK(rmad_put(src, 2, RMAD_INT64, nxt, 0, 1, unc, w) ==
		      RMAD_ERR_TYPE, "an uncommitted type: RMAD_ERR_TYPE");
		CHECK(rmad_put(src, 2, RMAD_INT64, nxt, 0, 1, freed, w) ==
		      RMAD_ERR_TYPE, "a freed type: RMAD_ERR_TYPE");
		CHECK(rmad_put(src, 8, RMAD_INT64, nxt, SLOTS - 8, 1, vec, w) ==
		      RMAD_ERR_DISP, "a footprint past the window's end");
		CHECK(rmad_accumulate(src, 4, RMAD_INT64, nxt, 64, 1, iblk,
				      (rmad_op_t)99, w) != 0,
		      "a bad op: refused");
	}
	OK(rmad_win_unlock_all(w));
	rmad_barrier();

	for (int i = 0; i < 8; i++)
		if (base[2 * i] != 100 * prv + i || base[2 * i + 1] != 0) {
			CHECK(0, "A: slot %d holds %lld, %d holds %lld", 2 * i,
			      (long long)base[2 * i], 2 * i + 1,
			      (long long)base[2 * i + 1]);
			break;
		}
	CHECK(base[150] == 2 + prv && base[151] == 1 + prv &&
	      base[152] == 4 + prv && base[153] == 3 + prv,
	      "F2: reversed blocks: %lld %lld %lld %lld, want %d %d %d %d",
	      (long long)base[150], (long long)base[151],
	      (long long)base[152], (long long)base[153], 2 + prv, 1 + prv,
	      4 + prv, 3 + prv);
	for (int i = 0; i < 4; i++)
		CHECK(base[64 + disp4[i]] == (int64_t)size * (size + 1) / 2,
		      "C: slot %d holds %lld", 64 + disp4[i],
		      (long long)base[64 + disp4[i]]);
	CHECK(base[65] == 0 && base[70] == 0, "C: between the blocks");
	for (int r = 0, k = 0; r < 2; r++)
		for (int c = 0; c < 3; c++, k++)
			CHECK(base[100 + (1 + r) * 6 + 2 + c] ==
			      7000 + 10 * prv + k, "D: (%d,%d) holds %lld",
			      1 + r, 2 + c,
			      (long long)base[100 + (1 + r) * 6 + 2 + c]);
	CHECK(base[100 + 6 + 1] == 0 && base[100 + 6 + 5] == 0,
	      "D: outside the subarray");
	CHECK(base[40] == 10 * rank + 1 && base[43] == 10 * rank + 4 &&
	      base[41] == 10 * rank + 1, "E: the target after get_acc: "
	      "%lld %lld %lld", (long long)base[40], (long long)base[43],
	      (long long)base[41]);
	{
		const int32_t *a = (const int32_t *)&base[200];

		CHECK(a[0] == 11 + prv && a[2] == 22 + prv && a[4] == 33 + prv &&
		      a[6] == 44 + prv, "F: mixed struct: %d %d %d %d",
		      a[0], a[2], a[4], a[6]);
	}
	CHECK(base[16] == 500 + prv && base[30] == 500 + prv &&
	      base[17] == 0, "G: rput with a vector: %lld %lld %lld",
	      (long long)base[16], (long long)base[30], (long long)base[17]);
	{
		const int32_t *m = (const int32_t *)&base[240];

		CHECK(m[0] == 100 - (size - 1) && m[1] == size - 1 &&
		      m[2] == (size > 1) && m[3] == (size > 1 ? 1 : 0),
		      "I: MINLOC {%d, %d}, MAXLOC {%d, %d}", m[0], m[1],
		      m[2], m[3]);
	}
	rmad_type_free(&vec);
	rmad_type_free(&vget);
	rmad_type_free(&iblk);
	rmad_type_free(&sub);
	rmad_type_free(&gvec);
	rmad_type_free(&sres);
	rmad_type_free(&mixed);
	rmad_type_free(&unc);
	rmad_barrier();
	OK(rmad_win_free(&w));
out:
	wide();
	OK(rmad_finalize());
	if (!fails)
		printf("rank %d: ok\n", rank);
	return fails != 0;
}
