/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtree.c - parsing, bounds and walking of a derived datatype's tree
 * (dtree.h).  The bounds follow MPI-3.1 4.1: a block of n copies of a
 * child of extent x at displacement d spans d + lb .. d + ub + (n-1)x
 * (the other way for a negative extent), and a type's lb and ub are the
 * lowest and highest of its blocks'; a resized type takes the bounds it
 * was given.  The data bounds (dlo, dhi) are the same computed over data
 * only: they are what an op's footprint is checked with.
 */
#include <stdlib.h>
#include <string.h>

#include "dtree.h"
#include "dtype.h"
#include "rmad_abi.h"

/* ------------------------------------------------------------ parse */

struct rd {
	const uint8_t *p;
	size_t left;
	unsigned nodes, max_nodes;
	int max_depth;
	int err;
};

static int rd_take(struct rd *r, void *v, size_t n)
{
	if (r->err || r->left < n) {
		r->err = RMAD_ERR_TYPE;
		memset(v, 0, n);
		return -1;
	}
	memcpy(v, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

static int64_t rd_i64(struct rd *r)
{
	int64_t v;

	rd_take(r, &v, sizeof(v));
	return v;
}

static uint8_t rd_u8(struct rd *r)
{
	uint8_t v;

	rd_take(r, &v, 1);
	return v;
}

static int in_disp(int64_t v)
{
	return v >= -DTREE_MAX_DISP && v <= DTREE_MAX_DISP;
}

/* Merge n copies of c, the j-th at off + j * ext(c), into t's bounds and
 * data.  -1 when a bound leaves the range a type may span. */
static int add_block(struct dtree *t, const struct dtree *c, int64_t off,
		     int64_t n)
{
	__int128 ext = c->ub - c->lb, sp, lo, hi, tlo, thi;
	uint64_t add;

	if (n <= 0)
		return 0;
	sp = (__int128)(n - 1) * ext;
	if (!c->empty) {
		lo = (__int128)off + c->lb + (ext < 0 ? sp : 0);
		hi = (__int128)off + c->ub + (ext > 0 ? sp : 0);
		tlo = (__int128)off + c->tlb + (ext < 0 ? sp : 0);
		thi = (__int128)off + c->tub + (ext > 0 ? sp : 0);
		if (lo < -(__int128)DTREE_MAX_BOUND ||
		    hi > (__int128)DTREE_MAX_BOUND ||
		    tlo < -(__int128)DTREE_MAX_BOUND ||
		    thi > (__int128)DTREE_MAX_BOUND)
			return -1;
		if (t->empty) {
			t->lb = (int64_t)lo;
			t->ub = (int64_t)hi;
			t->tlb = (int64_t)tlo;
			t->tub = (int64_t)thi;
			t->empty = 0;
		} else {
			t->lb = lo < t->lb ? (int64_t)lo : t->lb;
			t->ub = hi > t->ub ? (int64_t)hi : t->ub;
			t->tlb = tlo < t->tlb ? (int64_t)tlo : t->tlb;
			t->tub = thi > t->tub ? (int64_t)thi : t->tub;
		}
	}
	if (!c->size)
		return 0;
	if ((uint64_t)n > DTREE_MAX_SIZE / c->size)
		return -1;
	add = (uint64_t)n * c->size;
	lo = (__int128)off + c->dlo + (ext < 0 ? sp : 0);
	hi = (__int128)off + c->dhi + (ext > 0 ? sp : 0);
	if (lo < -(__int128)DTREE_MAX_BOUND ||
	    hi > (__int128)DTREE_MAX_BOUND)
		return -1;
	if (!t->size) {
		t->dlo = (int64_t)lo;
		t->dhi = (int64_t)hi;
		t->homog = c->homog;
		t->mixed = c->mixed;
	} else {
		t->dlo = lo < t->dlo ? (int64_t)lo : t->dlo;
		t->dhi = hi > t->dhi ? (int64_t)hi : t->dhi;
		if (c->mixed || c->homog != t->homog) {
			t->mixed = 1;
			t->homog = 0;
		}
	}
	t->size += add;
	t->nelem += (uint64_t)n * c->nelem;
	return t->size > DTREE_MAX_SIZE ? -1 : 0;
}

/* n copies of c lie end to end, one run in packed order */
static int abuts(const struct dtree *c)
{
	return c->dense && dtree_extent(c) == (int64_t)c->size;
}

static struct dtree *rd_node(struct rd *r, int depth);

/* the blocks of INDEXED and STRUCT */
static int rd_blocks(struct rd *r, struct dtree *t)
{
	int64_t n = rd_i64(r);

	if (r->err || n < 0 || n > DTREE_MAX_COUNT ||
	    (uint64_t)n > r->left / 16)
		return -1;
	t->count = n;
	t->blens = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
	t->displs = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
	t->pfx = malloc(sizeof(uint64_t) * (size_t)(n + 1));
	if (!t->blens || !t->displs || !t->pfx) {
		r->err = RMAD_ERR_NOMEM;
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		t->blens[i] = rd_i64(r);
		t->displs[i] = rd_i64(r);
		if (r->err || t->blens[i] < 0 ||
		    t->blens[i] > DTREE_MAX_COUNT || !in_disp(t->displs[i]))
			return -1;
	}
	return 0;
}

static int finish_blocks(struct dtree *t)
{
	int64_t last = -1;
	int dense = 1;

	t->pfx[0] = 0;
	for (int64_t i = 0; i < t->count; i++) {
		const struct dtree *c = t->kind == DTREE_STRUCT ? t->kids[i] :
					t->child;
		uint64_t bs = (uint64_t)t->blens[i] * c->size;

		if (add_block(t, c, t->displs[i], t->blens[i]))
			return -1;
		t->pfx[i + 1] = t->pfx[i] + bs;
		if (!bs)
			continue;
		if (!abuts(c))
			dense = 0;
		else if (last >= 0) {
			const struct dtree *pc = t->kind == DTREE_STRUCT ?
						 t->kids[last] : t->child;

			if (t->displs[i] + c->dlo !=
			    t->displs[last] + pc->dlo +
			    t->blens[last] * (int64_t)pc->size)
				dense = 0;
		}
		last = i;
	}
	t->dense = dense && t->size && !t->mixed;
	return 0;
}

static struct dtree *rd_node1(struct rd *r, int depth);

/* a node and its subtree, which counts its nodes */
static struct dtree *rd_node(struct rd *r, int depth)
{
	unsigned before = r->nodes;
	struct dtree *t = rd_node1(r, depth);

	if (t)
		t->nodes = r->nodes - before;
	return t;
}

static struct dtree *rd_node1(struct rd *r, int depth)
{
	struct dtree *t;
	uint8_t kind;

	if (depth > r->max_depth || ++r->nodes > r->max_nodes) {
		r->err = RMAD_ERR_TYPE;
		return NULL;
	}
	kind = rd_u8(r);
	if (r->err)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		r->err = RMAD_ERR_NOMEM;
		return NULL;
	}
	t->kind = kind;
	t->empty = 1;
	switch (kind) {
	case DTREE_BASIC:
		t->basic = rd_u8(r);
		if (r->err || !rmad_dtype_size(t->basic))
			goto bad;
		t->homog = t->basic;
		t->size = rmad_dtype_size(t->basic);
		t->nelem = 1;
		t->ub = t->tub = t->dhi = (int64_t)t->size;
		t->empty = 0;
		t->dense = 1;
		t->depth = 1;
		return t;
	case DTREE_VECTOR: {
		__int128 sp;

		t->count = rd_i64(r);
		t->blocklen = rd_i64(r);
		t->stride = rd_i64(r);
		if (r->err || t->count < 0 || t->count > DTREE_MAX_COUNT ||
		    t->blocklen < 0 || t->blocklen > DTREE_MAX_COUNT ||
		    !in_disp(t->stride))
			goto bad;
		t->child = rd_node(r, depth + 1);
		if (!t->child)
			goto bad;
		t->depth = (uint8_t)(t->child->depth + 1);
		if (!t->count || !t->blocklen)
			return t;
		/* the blocks at 0 and at (count-1) * stride bound the rest */
		sp = (__int128)(t->count - 1) * t->stride;
		if (sp > DTREE_MAX_DISP * 4 || sp < -DTREE_MAX_DISP * 4 ||
		    add_block(t, t->child, 0, t->blocklen) ||
		    add_block(t, t->child, (int64_t)sp, t->blocklen))
			goto bad;
		if ((__int128)t->count * t->blocklen * t->child->size >
		    (__int128)DTREE_MAX_SIZE)
			goto bad;
		/* add_block counted two blocks of data: count them all */
		t->size = (uint64_t)t->count * (uint64_t)t->blocklen *
			  t->child->size;
		t->nelem = (uint64_t)t->count * (uint64_t)t->blocklen *
			   t->child->nelem;
		t->dense = t->size && abuts(t->child) &&
			   (t->count == 1 ||
			    t->stride == t->blocklen * dtree_extent(t->child));
		return t;
	}
	case DTREE_INDEXED:
		if (rd_blocks(r, t))
			goto bad;
		t->child = rd_node(r, depth + 1);
		if (!t->child || finish_blocks(t))
			goto bad;
		t->depth = (uint8_t)(t->child->depth + 1);
		return t;
	case DTREE_STRUCT:
		if (rd_blocks(r, t))
			goto bad;
		t->depth = 1;
		t->kids = calloc((size_t)(t->count ? t->count : 1),
				 sizeof(*t->kids));
		if (!t->kids) {
			r->err = RMAD_ERR_NOMEM;
			goto bad;
		}
		for (int64_t i = 0; i < t->count; i++) {
			t->kids[i] = rd_node(r, depth + 1);
			if (!t->kids[i])
				goto bad;
			if (t->kids[i]->depth >= t->depth)
				t->depth = (uint8_t)(t->kids[i]->depth + 1);
		}
		if (finish_blocks(t))
			goto bad;
		return t;
	case DTREE_RESIZED: {
		uint8_t expl = rd_u8(r);
		int64_t lb = rd_i64(r), ub = rd_i64(r);

		if (r->err || expl > 1 || !in_disp(lb) || !in_disp(ub))
			goto bad;
		t->child = rd_node(r, depth + 1);
		if (!t->child || add_block(t, t->child, 0, 1))
			goto bad;
		t->dense = t->child->dense;
		t->depth = (uint8_t)(t->child->depth + 1);
		if (expl) {
			t->empty = 0;
			t->tlb = t->child->empty ? 0 : t->child->tlb;
			t->tub = t->child->empty ? 0 : t->child->tub;
			t->lb = lb;
			t->ub = ub;
		}
		return t;
	}
	}
bad:
	if (!r->err)
		r->err = RMAD_ERR_TYPE;
	dtree_free(t);
	return NULL;
}

static int parse(const void *blob, size_t len, unsigned max_nodes,
		 int max_depth, struct dtree **out)
{
	struct rd r = { blob, len, 0, max_nodes, max_depth, 0 };
	uint32_t magic = 0;
	struct dtree *t;

	*out = NULL;
	if (!blob || rd_take(&r, &magic, sizeof(magic)) ||
	    magic != DTREE_MAGIC)
		return RMAD_ERR_TYPE;
	t = rd_node(&r, 0);
	if (t && r.left) {
		r.err = RMAD_ERR_TYPE;	/* trailing bytes */
		dtree_free(t);
		t = NULL;
	}
	if (!t)
		return r.err ? r.err : RMAD_ERR_TYPE;
	if (t->empty)
		t->lb = t->ub = t->tlb = t->tub = 0;
	*out = t;
	return 0;
}

int dtree_parse(const void *blob, size_t len, unsigned max_nodes,
		struct dtree **out)
{
	return parse(blob, len, max_nodes, DTREE_MAX_DEPTH, out);
}

int dtree_parse_own(const void *blob, size_t len, struct dtree **out)
{
	return parse(blob, len, 1u << 24, DTREE_OWN_DEPTH, out);
}

void dtree_free(struct dtree *t)
{
	if (!t)
		return;
	dtree_free(t->child);
	for (int64_t i = 0; t->kids && i < t->count; i++)
		dtree_free(t->kids[i]);
	free(t->kids);
	free(t->blens);
	free(t->displs);
	free(t->pfx);
	free(t);
}

int dtree_footprint(const struct dtree *t, uint64_t count, int64_t *lo,
		    int64_t *hi)
{
	__int128 sp = (__int128)(count ? count - 1 : 0) * dtree_extent(t);
	__int128 l, h;

	*lo = *hi = 0;
	if (!count || !t->size)
		return 0;
	l = (__int128)t->dlo + (sp < 0 ? sp : 0);
	h = (__int128)t->dhi + (sp > 0 ? sp : 0);
	if (l < -(__int128)(1ll << 62) || h > (__int128)(1ll << 62))
		return RMAD_ERR_TYPE;
	*lo = (int64_t)l;
	*hi = (int64_t)h;
	return 0;
}

/* ------------------------------------------------------------- walk */

struct em {
	dtree_run_fn fn;
	void *arg;
	int64_t off;
	uint64_t len;
	uint32_t basic;
	/* dtree_pack / dtree_unpack: copy in place of calling fn */
	int dir;			/* 0: fn, 1: pack, 2: unpack */
	uint8_t *mem, *pk;
	uint64_t pos;
};

static inline void copy(struct em *e, int64_t off, uint64_t len)
{
	if (e->dir == 1)
		memcpy(e->pk + e->pos, e->mem + off, len);
	else
		memcpy(e->mem + off, e->pk + e->pos, len);
	e->pos += len;
}

static void emit(struct em *e, int64_t off, uint64_t len, uint32_t basic)
{
	if (!len)
		return;
	if (e->dir) {
		copy(e, off, len);
		return;
	}
	if (e->len && e->basic == basic && e->off + (int64_t)e->len == off) {
		e->len += len;
		return;
	}
	if (e->len)
		e->fn(e->arg, e->off, e->len, e->basic);
	e->off = off;
	e->len = len;
	e->basic = basic;
}

static void walk(const struct dtree *t, int64_t disp, uint64_t s,
		 uint64_t e, struct em *m);

/*
 * n whole blocks of bs bytes from block i of a vector at base + k *
 * stride: the common shapes' copy loops, with the usual block sizes
 * spelled out so that each copy is a load and a store.
 */
#define VEC_LOOP(SRC, DST, BS)						\
	for (uint64_t k = 0; k < n; k++) {				\
		memcpy((DST), (SRC), (BS));				\
		p += (BS);						\
		b += stride;						\
	}

static void vec_pack(struct em *m, int64_t base, uint64_t i, uint64_t n,
		     int64_t stride, uint64_t bs)
{
	const uint8_t *b = m->mem + base + (int64_t)i * stride;
	uint8_t *p = m->pk + m->pos;

	switch (bs) {
	case 4: VEC_LOOP(b, p, 4) break;
	case 8: VEC_LOOP(b, p, 8) break;
	case 16: VEC_LOOP(b, p, 16) break;
	case 32: VEC_LOOP(b, p, 32) break;
	default: VEC_LOOP(b, p, bs) break;
	}
	m->pos += n * bs;
}

static void vec_unpack(struct em *m, int64_t base, uint64_t i, uint64_t n,
		       int64_t stride, uint64_t bs)
{
	uint8_t *b = m->mem + base + (int64_t)i * stride;
	const uint8_t *p = m->pk + m->pos;

	switch (bs) {
	case 4: VEC_LOOP(p, b, 4) break;
	case 8: VEC_LOOP(p, b, 8) break;
	case 16: VEC_LOOP(p, b, 16) break;
	case 32: VEC_LOOP(p, b, 32) break;
	default: VEC_LOOP(p, b, bs) break;
	}
	m->pos += n * bs;
}

/* packed bytes [s, e) of n copies of c, the j-th at base + j * ext(c) */
static void walk_block(const struct dtree *c, int64_t base, uint64_t s,
		       uint64_t e, struct em *m)
{
	uint64_t cs = c->size;
	int64_t ext = dtree_extent(c);

	if (abuts(c)) {
		emit(m, base + c->dlo + (int64_t)s, e - s, c->homog);
		return;
	}
	for (uint64_t j = s / cs; j * cs < e; j++) {
		uint64_t a = j * cs, b = a + cs;

		walk(c, base + (int64_t)j * ext, s > a ? s - a : 0,
		     (e < b ? e : b) - a, m);
	}
}

/* the first block i of t whose data ends past packed offset s */
static int64_t find_block(const struct dtree *t, uint64_t s)
{
	int64_t lo = 0, hi = t->count;	/* pfx[lo] <= s < pfx[count] */

	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (t->pfx[mid] <= s)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void walk(const struct dtree *t, int64_t disp, uint64_t s,
		 uint64_t e, struct em *m)
{
	if (t->dense) {
		emit(m, disp + t->dlo + (int64_t)s, e - s, t->homog);
		return;
	}
	switch (t->kind) {
	case DTREE_RESIZED:
		walk(t->child, disp, s, e, m);
		return;
	case DTREE_VECTOR: {
		uint64_t bs = (uint64_t)t->blocklen * t->child->size;
		uint64_t i = s / bs;

		if (m->dir && abuts(t->child) && s % bs == 0) {
			/* whole blocks, each one run: the copy loop alone */
			uint64_t n = (e - s) / bs;

			if (m->dir == 1)
				vec_pack(m, disp + t->child->dlo, i, n,
					 t->stride, bs);
			else
				vec_unpack(m, disp + t->child->dlo, i, n,
					   t->stride, bs);
			i += n;
		}
		for (; i * bs < e; i++) {
			uint64_t a = i * bs, b = a + bs;

			walk_block(t->child, disp + (int64_t)i * t->stride,
				   s > a ? s - a : 0, (e < b ? e : b) - a, m);
		}
		return;
	}
	case DTREE_INDEXED:
	case DTREE_STRUCT:
		for (int64_t i = find_block(t, s);
		     i < t->count && t->pfx[i] < e; i++) {
			const struct dtree *c = t->kind == DTREE_STRUCT ?
						t->kids[i] : t->child;
			uint64_t a = t->pfx[i], b = t->pfx[i + 1];

			if (a == b)
				continue;
			walk_block(c, disp + t->displs[i], s > a ? s - a : 0,
				   (e < b ? e : b) - a, m);
		}
		return;
	}
}

static void walk_all(const struct dtree *t, uint64_t count, uint64_t from,
		     uint64_t to, struct em *m)
{
	uint64_t ts = t->size;
	int64_t ext = dtree_extent(t);

	if (!ts || from >= to || to > count * ts)
		return;
	for (uint64_t i = from / ts; i * ts < to; i++) {
		uint64_t a = i * ts, b = a + ts;

		walk(t, (int64_t)i * ext, from > a ? from - a : 0,
		     (to < b ? to : b) - a, m);
	}
}

void dtree_walk(const struct dtree *t, uint64_t count, uint64_t from,
		uint64_t to, dtree_run_fn fn, void *arg)
{
	struct em m = { .fn = fn, .arg = arg };

	walk_all(t, count, from, to, &m);
	if (m.len)
		fn(arg, m.off, m.len, m.basic);
}

void dtree_pack(const struct dtree *t, uint64_t count, uint64_t from,
		uint64_t to, const void *mem, void *packed)
{
	struct em m = { .dir = 1, .mem = (uint8_t *)mem, .pk = packed };

	walk_all(t, count, from, to, &m);
}

void dtree_unpack(const struct dtree *t, uint64_t count, uint64_t from,
		  uint64_t to, void *mem, const void *packed)
{
	struct em m = { .dir = 2, .mem = mem, .pk = (uint8_t *)packed };

	walk_all(t, count, from, to, &m);
}

/* ------------------------------------------------------------ write */

static void w_bytes(struct dtree_wbuf *b, const void *v, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		uint8_t *p;

		while (cap < b->n + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = RMAD_ERR_NOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

void dtree_w_u8(struct dtree_wbuf *b, uint8_t v)
{
	w_bytes(b, &v, 1);
}

void dtree_w_u32(struct dtree_wbuf *b, uint32_t v)
{
	w_bytes(b, &v, sizeof(v));
}

void dtree_w_i64(struct dtree_wbuf *b, int64_t v)
{
	w_bytes(b, &v, sizeof(v));
}

uint64_t dtree_key(const void *blob, size_t len)
{
	const uint8_t *p = blob;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = 0;

		memcpy(&w, p + i, len - i < 8 ? len - i : 8);
		w *= 0x87c37b91114253d5ull;
		w = (w << 31) | (w >> 33);
		w *= 0x4cf5ad432745937full;
		h ^= w;
		h = ((h << 27) | (h >> 37)) * 5 + 0x52dce729;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}
