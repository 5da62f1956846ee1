/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_tcache.c - strided ops to another node through the agents' type
 * cache (agent/rma_type.c), checked against the same ops done in place.
 *
 * Rank 0 does every op twice: on rank 1 (another node: one op whose
 * target type travels to rank 1's agent and is cached there) and on its
 * own window (same node: done in place by the client, the reference).
 * Six target types (vector with a different origin type of the same
 * signature, indexed, subarray, resized vector with 3 instances, hvector
 * with a negative stride, a struct of ints and doubles), in R rounds of put, accumulate,
 * get_accumulate and get; then both windows must be equal, byte for
 * byte, and so must every result.
 *
 * argv[1] says what rmad_win_stats' type_defs must be: "cached" (the
 * default cache: each type sent once, 6) or "evict" (a cache of 2 slots
 * cycled through by 6 types: every first use in a round sends it again,
 * 6 * R).
 */
#include "prog.h"

#define N	8192		/* doubles per window */
#define R	4		/* rounds */
#define NT	6

static int rank, fails;

/*
 * "big" and "bigevict": two indexed types of 3000 and 2500 blocks (wire
 * forms of 48 and 40 KB, several messages each), put and read back in
 * R rounds, checked against the same ops in place.  Sent once each with
 * the default type_cache_bytes; with 64k, each evicts the other, so
 * every use in every round sends its type again (2 * R).
 */
static void big(rmad_win_t win, double *w, int evict)
{
	static double src[3000], r1[3000], r2[3000], whole[N];
	static int d1[3000], d2[2500];
	int b1[3000], b2[2500];
	rmad_datatype_t t[2];
	int cnt[2] = { 3000, 2500 };
	struct rmad_stats st;

	for (int i = 0; i < 3000; i++) {
		d1[i] = 2 * i;
		b1[i] = 1;
	}
	for (int i = 0; i < 2500; i++) {
		d2[i] = 3 * i + 1;
		b2[i] = 1;
	}
	OK(rmad_type_indexed(3000, b1, d1, RMAD_DOUBLE, &t[0]));
	OK(rmad_type_indexed(2500, b2, d2, RMAD_DOUBLE, &t[1]));
	OK(rmad_type_commit(&t[0]));
	OK(rmad_type_commit(&t[1]));
	for (int r = 0; r < R; r++)
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < cnt[k]; i++)
				src[i] = r * 10000 + k * 5000 + i;
			for (int tg = 1; tg >= 0; tg--) {
				OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, tg, 0, win));
				OK(rmad_put(src, cnt[k], RMAD_DOUBLE, tg,
					    T_D(win, tg, 0), 1, t[k], win));
				OK(rmad_win_unlock(tg, win));
				OK(rmad_win_lock(RMAD_LOCK_SHARED, tg, 0, win));
				OK(rmad_get(tg ? r1 : r2, cnt[k], RMAD_DOUBLE,
					    tg, T_D(win, tg, 0), 1, t[k], win));
				OK(rmad_win_unlock(tg, win));
			}
			CHECK(!memcmp(r1, r2, sizeof(double) * cnt[k]) &&
			      !memcmp(r1, src, sizeof(double) * cnt[k]),
			      "round %d, type of %d blocks: read back differs",
			      r, cnt[k]);
		}
	OK(rmad_win_lock(RMAD_LOCK_SHARED, 1, 0, win));
	OK(rmad_get(whole, N, RMAD_DOUBLE, 1, T_D(win, 1, 0), N, RMAD_DOUBLE,
		    win));
	OK(rmad_win_unlock(1, win));
	CHECK(!memcmp(whole, w, sizeof(whole)),
	      "rank 1's window differs from the one written in place");
	OK(rmad_win_stats(win, &st));
	CHECK(st.type_defs == (evict ? 2u * R : 2u), "type_defs %llu, want %d",
	      (unsigned long long)st.type_defs, evict ? 2 * R : 2);
	printf("rank 0: types sent %llu\n", (unsigned long long)st.type_defs);
	OK(rmad_type_free(&t[0]));
	OK(rmad_type_free(&t[1]));
}

int main(int argc, char **argv)
{
	rmad_datatype_t tt[NT], ot[NT];
	int tc[NT], oc[NT];
	size_t td[NT];
	double *w, src[4096], r1[4096], r2[4096];
	rmad_win_t win;
	struct rmad_stats st;
	int size, evict = argc > 1 && !strcmp(argv[1], "evict");

	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	OK(t_win_allocate(N * 8, 8, NULL, RMAD_GROUP_ALL, &w, &win));
	if (!win)
		return 1;
	memset(w, 0, N * 8);
	if (argc > 1 && !strncmp(argv[1], "big", 3)) {
		rmad_barrier();
		if (rank == 0 && size > 1)
			big(win, w, !strcmp(argv[1], "bigevict"));
		rmad_barrier();
		OK(rmad_win_free(&win));
		if (!fails)
			printf("rank %d: ok\n", rank);
		rmad_finalize();
		return fails != 0;
	}
	/* the types, all of doubles */
	OK(rmad_type_vector(40, 2, 5, RMAD_DOUBLE, &tt[0]));
	OK(rmad_type_vector(80, 1, 2, RMAD_DOUBLE, &ot[0]));
	tc[0] = 1;
	oc[0] = 1;
	td[0] = 10;
	{
		int bl[5] = { 3, 1, 4, 1, 5 }, ds[5] = { 0, 7, 12, 30, 50 };

		OK(rmad_type_indexed(5, bl, ds, RMAD_DOUBLE, &tt[1]));
		tc[1] = 2;
		td[1] = 700;
	}
	{
		int sz[2] = { 20, 30 }, sub[2] = { 6, 7 }, at[2] = { 3, 4 };

		OK(rmad_type_create_subarray(2, sz, sub, at, RMAD_ORDER_C,
					     RMAD_DOUBLE, &tt[2]));
		tc[2] = 1;
		td[2] = 1000;
	}
	{
		rmad_datatype_t v;

		OK(rmad_type_vector(8, 1, 3, RMAD_DOUBLE, &v));
		OK(rmad_type_create_resized(v, 0, 24 * 8, &tt[3]));
		OK(rmad_type_free(&v));
		tc[3] = 3;
		td[3] = 2000;
	}
	{
		rmad_datatype_t c3;

		OK(rmad_type_contiguous(3, RMAD_DOUBLE, &c3));
		OK(rmad_type_create_hvector(10, 1, -48, c3, &tt[4]));
		OK(rmad_type_free(&c3));
		tc[4] = 2;
		td[4] = 4000;
	}
	{
		/* { int a[3]; double d[2]; }, extent 32: mixed basic types */
		int bl[2] = { 3, 2 };
		ptrdiff_t ds[2] = { 0, 16 };
		rmad_datatype_t ty[2] = { RMAD_INT, RMAD_DOUBLE };

		OK(rmad_type_create_struct(2, bl, ds, ty, &tt[5]));
		tc[5] = 3;
		td[5] = 6000;
	}
	for (int k = 0; k < NT; k++) {
		OK(rmad_type_commit(&tt[k]));
		if (k == 0) {
			OK(rmad_type_commit(&ot[0]));
		} else if (k == 5) {
			ot[5] = tt[5];	/* the same struct at both ends */
			oc[5] = tc[5];
		} else {
			size_t b = 0;

			OK(rmad_type_size(tt[k], &b));
			ot[k] = RMAD_DOUBLE;
			oc[k] = (int)(b / 8) * tc[k];
		}
	}
	rmad_barrier();
	if (rank == 0 && size > 1) {
		for (int r = 0; r < R; r++) {
			for (int k = 0; k < NT; k++) {
				int what = (r + k) % 4;

				for (int i = 0; i < 4096; i++)
					src[i] = (double)(r * 7 + k * 3 + i % 11);
				for (int j = 0; k == 5 && j < 3; j++) {
					int iv[3] = { r + j, 2 * j, r - j };
					double dv[2] = { r * 0.5 + j, -j };

					memcpy((char *)src + 32 * j, iv, 12);
					memcpy((char *)src + 32 * j + 16, dv, 16);
				}
				memset(r1, 0, sizeof(r1));
				memset(r2, 0, sizeof(r2));
				OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 1, 0, win));
				OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, win));
				for (int tg = 1; tg >= 0; tg--) {
					double *res = tg ? r1 : r2;

					switch (what) {
					case 0:
						OK(rmad_put(src, oc[k], ot[k], tg,
							    T_D(win, tg, td[k]),
							    tc[k], tt[k], win));
						break;
					case 1:
						OK(rmad_accumulate(src, oc[k], ot[k],
							tg, T_D(win, tg, td[k]),
							tc[k], tt[k], RMAD_SUM,
							win));
						break;
					case 2:
						OK(rmad_get_accumulate(src, oc[k],
							ot[k], res, oc[k], ot[k],
							tg, T_D(win, tg, td[k]),
							tc[k], tt[k], RMAD_SUM,
							win));
						break;
					case 3:
						OK(rmad_get(res, oc[k], ot[k], tg,
							    T_D(win, tg, td[k]),
							    tc[k], tt[k], win));
						break;
					}
				}
				OK(rmad_win_unlock(0, win));
				OK(rmad_win_unlock(1, win));
				CHECK(!memcmp(r1, r2, sizeof(r1)),
				      "round %d type %d op %d: the results from "
				      "rank 1 and in place differ", r, k, what);
				/* the same type again, read back: a cache hit */
				memset(r1, 0, sizeof(r1));
				memset(r2, 0, sizeof(r2));
				OK(rmad_win_lock(RMAD_LOCK_SHARED, 1, 0, win));
				OK(rmad_get(r1, oc[k], ot[k], 1,
					    T_D(win, 1, td[k]), tc[k], tt[k],
					    win));
				OK(rmad_win_unlock(1, win));
				OK(rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, win));
				OK(rmad_get(r2, oc[k], ot[k], 0,
					    T_D(win, 0, td[k]), tc[k], tt[k],
					    win));
				OK(rmad_win_unlock(0, win));
				CHECK(!memcmp(r1, r2, sizeof(r1)),
				      "round %d type %d: read back differs", r,
				      k);
			}
		}
		/* the windows, whole */
		{
			static double whole[N];

			OK(rmad_win_lock(RMAD_LOCK_SHARED, 1, 0, win));
			OK(rmad_get(whole, N, RMAD_DOUBLE, 1, T_D(win, 1, 0), N,
				    RMAD_DOUBLE, win));
			OK(rmad_win_unlock(1, win));
			for (int i = 0; i < N; i++)
				if (whole[i] != w[i]) {
					CHECK(0, "rank 1's window at %d is %g, "
					      "in place %g", i, whole[i], w[i]);
					break;
				}
		}
		OK(rmad_win_stats(win, &st));
		CHECK(st.type_defs == (evict ? NT * R : NT),
		      "type_defs %llu, want %d", (unsigned long long)st.type_defs,
		      evict ? NT * R : NT);
		printf("rank 0: types sent %llu\n",
		       (unsigned long long)st.type_defs);
	}
	rmad_barrier();
	for (int k = 0; k < NT; k++)
		OK(rmad_type_free(&tt[k]));
	OK(rmad_type_free(&ot[0]));
	OK(rmad_win_free(&win));
	if (!fails)
		printf("rank %d: ok\n", rank);
	rmad_finalize();
	return fails != 0;
}
