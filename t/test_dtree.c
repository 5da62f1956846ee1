/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dtree.c - the travelling type tree (shared/dtree.c): bounds and
 * sizes of each node kind against MPI's rules worked by hand; the
 * walker against a naive reference that lists every basic element, for
 * whole types and for every sub-range cut at random (the chunks a
 * target applies); negative strides and lower bounds; zero counts; the
 * parser's refusals (truncation, bad magic, bad basic ids, depth, huge
 * counts and sizes, trailing bytes); random corruption that must never
 * crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtree.h"
#include "dtype.h"
#include "rmad_abi.h"
#include "tap.h"

#define DBL	14	/* RMAD_DOUBLE */
#define INT	3	/* RMAD_INT */
#define CHR	2	/* RMAD_CHAR */

static void basic(struct dtree_wbuf *b, int id)
{
	dtree_w_u8(b, DTREE_BASIC);
	dtree_w_u8(b, (uint8_t)id);
}

static void vec(struct dtree_wbuf *b, int64_t n, int64_t bl, int64_t st)
{
	dtree_w_u8(b, DTREE_VECTOR);
	dtree_w_i64(b, n);
	dtree_w_i64(b, bl);
	dtree_w_i64(b, st);
}

static void blocks(struct dtree_wbuf *b, int kind, int n, const int64_t *bl,
		   const int64_t *ds)
{
	dtree_w_u8(b, (uint8_t)kind);
	dtree_w_i64(b, n);
	for (int i = 0; i < n; i++) {
		dtree_w_i64(b, bl[i]);
		dtree_w_i64(b, ds[i]);
	}
}

static void resized(struct dtree_wbuf *b, int64_t lb, int64_t ub)
{
	dtree_w_u8(b, DTREE_RESIZED);
	dtree_w_u8(b, 1);
	dtree_w_i64(b, lb);
	dtree_w_i64(b, ub);
}

static struct dtree_wbuf start(void)
{
	struct dtree_wbuf b = { 0 };

	dtree_w_u32(&b, DTREE_MAGIC);
	return b;
}

static struct dtree *parse(struct dtree_wbuf *b)
{
	struct dtree *t = NULL;
	int err = dtree_parse(b->p, b->n, 4096, &t);

	if (err)
		diag("parse: %d", err);
	return t;
}

/* ---------------------------------------------------- the reference */

struct el {
	int64_t off;
	uint32_t basic;
};

struct els {
	struct el *e;
	size_t n, cap;
};

static void add(struct els *l, int64_t off, uint32_t basic)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->e = realloc(l->e, l->cap * sizeof(*l->e));
	}
	l->e[l->n++] = (struct el){ off, basic };
}

static void ref(const struct dtree *t, int64_t d, struct els *l)
{
	int64_t x;

	switch (t->kind) {
	case DTREE_BASIC:
		add(l, d, t->basic);
		return;
	case DTREE_RESIZED:
		ref(t->child, d, l);
		return;
	case DTREE_VECTOR:
		x = dtree_extent(t->child);
		for (int64_t i = 0; i < t->count; i++)
			for (int64_t j = 0; j < t->blocklen; j++)
				ref(t->child, d + i * t->stride + j * x, l);
		return;
	default:
		for (int64_t i = 0; i < t->count; i++) {
			const struct dtree *c = t->kind == DTREE_STRUCT ?
						t->kids[i] : t->child;

			x = dtree_extent(c);
			for (int64_t j = 0; j < t->blens[i]; j++)
				ref(c, d + t->displs[i] + j * x, l);
		}
	}
}

/* the walker's runs, exploded into elements */
static void got(void *arg, int64_t off, uint64_t len, uint32_t basic)
{
	struct els *l = arg;
	size_t es = rmad_dtype_size(basic);

	for (uint64_t k = 0; k < len; k += es)
		add(l, off + (int64_t)k, basic);
}

static int same(const struct els *a, const struct els *b, size_t from,
		size_t n)
{
	if (b->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (a->e[from + i].off != b->e[i].off ||
		    a->e[from + i].basic != b->e[i].basic)
			return 0;
	return 1;
}

/* walk == reference, whole and in random element-aligned chunks */
static void check_walk(const char *name, const struct dtree *t,
		       uint64_t count)
{
	struct els r = { 0 }, w = { 0 };
	size_t es = t->homog ? rmad_dtype_size(t->homog) : 0;
	int good = 1;

	for (uint64_t i = 0; i < count; i++)
		ref(t, (int64_t)i * dtree_extent(t), &r);
	dtree_walk(t, count, 0, count * t->size, got, &w);
	ok(same(&r, &w, 0, r.n), "%s: walk = reference (%zu elements)",
	   name, r.n);
	if (!es) {
		free(r.e);
		free(w.e);
		return;
	}
	for (int k = 0; k < 300 && good && r.n; k++) {
		size_t a = (size_t)rand() % r.n;
		size_t b = a + 1 + (size_t)rand() % (r.n - a);

		w.n = 0;
		dtree_walk(t, count, a * es, b * es, got, &w);
		good = same(&r, &w, a, b - a);
		if (!good)
			diag("%s: elements [%zu, %zu) differ", name, a, b);
	}
	ok(good, "%s: 300 random chunks = reference", name);
	/* pack and unpack of random chunks against the reference's bytes */
	{
		int64_t lo, hi;
		uint8_t *mem, *mem2, *pk;
		size_t span;

		dtree_footprint(t, count, &lo, &hi);
		span = (size_t)(hi - lo);
		mem = malloc(span);
		mem2 = calloc(1, span);
		pk = malloc(count * t->size);
		for (size_t i = 0; i < span; i++)
			mem[i] = (uint8_t)(i * 7 + 1);
		for (int k = 0; k < 100 && good && r.n; k++) {
			size_t a = (size_t)rand() % r.n;
			size_t b = a + 1 + (size_t)rand() % (r.n - a);

			dtree_pack(t, count, a * es, b * es, mem - lo, pk);
			for (size_t j = a; j < b && good; j++)
				good = !memcmp(pk + (j - a) * es,
					       mem - lo + r.e[j].off, es);
			dtree_unpack(t, count, a * es, b * es, mem2 - lo, pk);
			for (size_t j = a; j < b && good; j++)
				good = !memcmp(mem2 - lo + r.e[j].off,
					       pk + (j - a) * es, es);
		}
		ok(good, "%s: pack and unpack of 100 random chunks", name);
		free(mem);
		free(mem2);
		free(pk);
	}
	free(r.e);
	free(w.e);
}

int main(void)
{
	struct dtree_wbuf b;
	struct dtree *t;
	int64_t lo, hi;

	plan(43);
	srand(7);

	/* vector(3, 2, 4) of double: MPI_Type_vector's bounds */
	b = start();
	vec(&b, 3, 2, 32);
	basic(&b, DBL);
	t = parse(&b);
	ok(t && t->size == 48 && t->lb == 0 && t->ub == 80 && !t->dense &&
	   t->homog == DBL, "vector: size 48, extent 80");
	check_walk("vector", t, 3);
	dtree_free(t);
	free(b.p);

	/* a vector whose blocks abut is one run */
	b = start();
	vec(&b, 4, 2, 8);
	basic(&b, INT);
	t = parse(&b);
	ok(t && t->dense && t->size == 32, "abutting vector is dense");
	dtree_free(t);
	free(b.p);

	/* negative stride: blocks at 0, -24, -48 */
	b = start();
	vec(&b, 3, 1, -24);
	basic(&b, DBL);
	t = parse(&b);
	ok(t && t->lb == -48 && t->ub == 8 && t->dlo == -48 && t->dhi == 8,
	   "negative stride: lb -48, ub 8");
	ok(!dtree_footprint(t, 2, &lo, &hi) && lo == -48 && hi == 64,
	   "negative stride: footprint of 2 is [-48, 64)");
	check_walk("negative stride", t, 2);
	dtree_free(t);
	free(b.p);

	/* indexed, reversed blocks: packed order is not address order */
	{
		int64_t bl[3] = { 1, 2, 1 }, ds[3] = { 24, 8, 0 };

		b = start();
		blocks(&b, DTREE_INDEXED, 3, bl, ds);
		basic(&b, DBL);
		t = parse(&b);
		ok(t && !t->dense && t->size == 32 && t->lb == 0 &&
		   t->ub == 32, "reversed indexed: not dense, extent 32");
		check_walk("reversed indexed", t, 3);
		dtree_free(t);
		free(b.p);
	}

	/* indexed of resized: a block of n copies at the resized extent */
	{
		int64_t bl[2] = { 3, 2 }, ds[2] = { 0, 100 };

		b = start();
		blocks(&b, DTREE_INDEXED, 2, bl, ds);
		resized(&b, -4, 12);
		basic(&b, INT);
		t = parse(&b);
		ok(t && t->size == 20 && t->lb == -4 && t->ub == 100 + 28,
		   "indexed of resized: lb -4, ub 128");
		check_walk("indexed of resized", t, 2);
		dtree_free(t);
		free(b.p);
	}

	/* struct of mixed types, with a zero-length block */
	{
		int64_t bl[3] = { 2, 0, 3 }, ds[3] = { 0, 8, 16 };

		b = start();
		blocks(&b, DTREE_STRUCT, 3, bl, ds);
		basic(&b, INT);
		basic(&b, DBL);
		basic(&b, CHR);
		t = parse(&b);
		ok(t && t->mixed && !t->homog && t->size == 11 &&
		   t->ub == 19, "struct: mixed, size 11, ub 19");
		check_walk("struct", t, 2);
		dtree_free(t);
		free(b.p);
	}

	/* vector of struct (nesting) */
	{
		int64_t bl[2] = { 1, 1 }, ds[2] = { 0, 8 };

		b = start();
		vec(&b, 5, 2, 48);
		blocks(&b, DTREE_STRUCT, 2, bl, ds);
		basic(&b, DBL);
		basic(&b, DBL);
		t = parse(&b);
		ok(t && t->homog == DBL && t->size == 160,
		   "vector of struct of doubles: homog, size 160");
		check_walk("vector of struct", t, 3);
		dtree_free(t);
		free(b.p);
	}

	/* subarray as the client builds it: hvectors, struct, resized */
	{
		int64_t one = 1, at = (3 * 30 + 4) * 8;

		b = start();
		resized(&b, 0, 20 * 30 * 8);
		blocks(&b, DTREE_STRUCT, 1, &one, &at);
		vec(&b, 6, 1, 30 * 8);
		vec(&b, 7, 1, 8);
		basic(&b, DBL);
		t = parse(&b);
		ok(t && t->size == 6 * 7 * 8 && t->ub == 4800 &&
		   t->dlo == at, "subarray 6x7 of 20x30: size, extent, start");
		check_walk("subarray", t, 2);
		dtree_free(t);
		free(b.p);
	}

	/* a million blocks: one node, and a chunk costs nothing more */
	b = start();
	vec(&b, 1000000, 1, 16);
	basic(&b, DBL);
	t = parse(&b);
	{
		struct els w = { 0 };

		ok(t && t->size == 8000000 && b.n < 64,
		   "a vector of 1e6 blocks: a blob of %zu bytes", b.n);
		dtree_walk(t, 1, 4000000, 4000016, got, &w);
		ok(w.n == 2 && w.e[0].off == 8000000 && w.e[1].off == 8000016,
		   "its middle chunk: 2 elements at 8000000, 8000016");
		free(w.e);
	}
	dtree_free(t);
	free(b.p);

	/* zero counts and zero-size types */
	b = start();
	vec(&b, 0, 5, 8);
	basic(&b, DBL);
	t = parse(&b);
	ok(t && t->size == 0 && t->lb == 0 && t->ub == 0 &&
	   !dtree_footprint(t, 5, &lo, &hi) && lo == 0 && hi == 0,
	   "zero count: size 0, no bounds, no footprint");
	dtree_free(t);
	free(b.p);
	{
		int64_t bl[2] = { 0, 0 }, ds[2] = { 8, 16 };

		b = start();
		blocks(&b, DTREE_INDEXED, 2, bl, ds);
		basic(&b, INT);
		t = parse(&b);
		ok(t && t->size == 0 && t->empty,
		   "indexed of zero-length blocks: empty");
		dtree_free(t);
		free(b.p);
	}

	/* refusals */
	{
		uint8_t bad[8] = { 1, 2, 3, 4, 1, DBL };

		ok(dtree_parse(bad, 6, 16, &t) == RMAD_ERR_TYPE && !t,
		   "bad magic refused");
	}
	b = start();
	basic(&b, 99);
	ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
	   "basic id 99 refused");
	free(b.p);
	b = start();
	basic(&b, DBL);
	dtree_w_u8(&b, 0);
	ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
	   "trailing bytes refused");
	free(b.p);
	b = start();
	vec(&b, 4, 1, 8);
	ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
	   "truncated (no child) refused");
	free(b.p);
	b = start();
	for (int i = 0; i < DTREE_MAX_DEPTH + 2; i++)
		vec(&b, 1, 1, 8);
	basic(&b, DBL);
	ok(dtree_parse(b.p, b.n, 4096, &t) == RMAD_ERR_TYPE,
	   "deeper than %d refused", DTREE_MAX_DEPTH);
	free(b.p);
	b = start();
	vec(&b, -1, 1, 8);
	basic(&b, DBL);
	ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
	   "negative count refused");
	free(b.p);
	b = start();
	vec(&b, 1ll << 30, 1ll << 30, 8);
	basic(&b, DBL);
	ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
	   "2^63 bytes of data refused");
	free(b.p);
	b = start();
	vec(&b, 2, 1, 1ll << 50);
	basic(&b, DBL);
	ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
	   "a stride of 2^50 refused");
	free(b.p);
	{
		int64_t bl = 1, ds = 0;

		b = start();
		blocks(&b, DTREE_INDEXED, 1, &bl, &ds);
		/* claims 2^40 blocks with 16 bytes left */
		memcpy(b.p + 5, &(int64_t){ 1ll << 40 }, 8);
		basic(&b, DBL);
		ok(dtree_parse(b.p, b.n, 16, &t) == RMAD_ERR_TYPE,
		   "a block count past the blob refused");
		free(b.p);
	}
	b = start();
	vec(&b, 2, 1, 8);
	vec(&b, 2, 1, 8);
	basic(&b, DBL);
	ok(dtree_parse(b.p, b.n, 2, &t) == RMAD_ERR_TYPE,
	   "more nodes than allowed refused");
	free(b.p);

	/* corruption: every byte flipped, and random garbage */
	{
		int64_t bl[3] = { 2, 1, 3 }, ds[3] = { 0, 40, 64 };
		int crashed = 0, parsed = 0;

		b = start();
		blocks(&b, DTREE_STRUCT, 3, bl, ds);
		vec(&b, 3, 1, 16);
		basic(&b, DBL);
		basic(&b, INT);
		resized(&b, 0, 64);
		basic(&b, CHR);
		for (size_t i = 0; i < b.n; i++)
			for (int v = 0; v < 256; v += 17) {
				uint8_t *c = malloc(b.n);

				memcpy(c, b.p, b.n);
				c[i] ^= (uint8_t)v;
				if (!dtree_parse(c, b.n, 64, &t)) {
					struct els w = { 0 };

					parsed++;
					if (t->size < (1u << 20))
						dtree_walk(t, 1, 0, t->size,
							   got, &w);
					free(w.e);
					dtree_free(t);
				}
				free(c);
			}
		for (int k = 0; k < 20000; k++) {
			uint8_t c[64];
			size_t n = 4 + (size_t)rand() % 60;

			memcpy(c, b.p, 4);
			for (size_t i = 4; i < n; i++)
				c[i] = (uint8_t)(rand() % 6 ? rand() % 6 :
						 rand());
			if (!dtree_parse(c, n, 64, &t)) {
				parsed++;
				dtree_free(t);
			}
		}
		ok(!crashed, "corrupted and random blobs: no crash (%d "
		   "parsed)", parsed);
		free(b.p);
	}
	return done_testing();
}
