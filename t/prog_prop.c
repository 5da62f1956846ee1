/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_prop.c - the property test (t/prop.sh): random sequences of put,
 * get, accumulate, get_accumulate, fetch_and_op and compare_and_swap,
 * checked against a sequential model of the semantics rmad promises.
 *
 * A run is SEQS sequences.  Each one makes a window (allocate, create,
 * dynamic or shared), fills it with known values, and runs EPOCHS
 * epochs, each under one synchronization mode: fence, PSCW (everyone
 * posts to and starts on everyone), per-target locks (shared or
 * exclusive) with flushes inside, or lock_all with flush, flush_local,
 * flush_all, flush_local_all and request ops waited for one by one.  In
 * an epoch each rank issues OPS random operations of one element type
 * (int64, int32, double, uint8), of 8 B to MAXB (4 MiB) bytes,
 * contiguous or through vector and indexed types on the origin, target
 * and result sides independently, with operands in malloc or
 * rmad_alloc_mem memory.
 *
 * The model is deterministic because no two ranks race on the same
 * bytes unless the result is defined: in each epoch every origin owns
 * one region of every target's window (the regions rotate from epoch to
 * epoch, so each reads what others wrote before), and every origin may
 * add to one common region with SUM accumulates and fetch_and_ops only
 * (exact in every order; the fetched values are not checked).  Every
 * rank plans every rank's operations from the seed and applies them to
 * its copy of every window in issue order, origin after origin.  So the
 * checks are:
 *
 *   - what an epoch completes is visible in every later one: after each
 *     epoch each rank compares its own window with the model, byte for
 *     byte (and puts the model's bytes there when they differ, so that
 *     later epochs test afresh);
 *   - each accumulate is applied exactly once and atomically per
 *     element: the common region's totals are exact;
 *   - operations from one origin to one target are applied in the order
 *     they were issued (rmad(7), "Ordering"): every get,
 *     get_accumulate, fetch_and_op and compare_and_swap result is the
 *     model's, after every earlier operation of the same origin to
 *     those bytes, even when only flush_local (or a request's wait)
 *     separated them; results are read only once the op is complete at
 *     the origin, and operand buffers are scribbled over as soon as it
 *     is, which a late read of them would show at the target.
 *
 * Usage: prog_prop [-s SEED] [-n SEQS] [-e EPOCHS] [-k OPS] [-x MAXB]
 *                  [-f FLAVORS] [-m MODES] [-o MEMS] [-v] [-K]
 * FLAVORS: letters of a (allocate), c (create), d (dynamic), s (shared:
 * one node only); MODES: f (fence), p (PSCW), l (lock), a (lock_all);
 * MEMS: operands in m (malloc) or a (rmad_alloc_mem) memory.  -v prints
 * every op as it is issued; -K keeps operands as they were after their
 * op completes (a wrong result is then an order broken, never a late
 * read of the operands).
 * Prints "rank R: FAIL ..." lines (the first few per rank) and
 * "rank R: ok (...)" at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

/* ---- configuration ------------------------------------------------ */

static uint64_t seed = 1;
static int nseq = 4, nepochs = 4, nops = 8;
static size_t maxb = 4u << 20;
static const char *flavors = "acd", *modes = "fpla";
static const char *mems = "ma";		/* m: malloc, a: rmad_alloc_mem */
static int verbose, keep;		/* -K: operands not scribbled over */

#define SHB	(64u << 10)		/* the common region's bytes */
#define MAXFAIL	8			/* FAIL lines printed per rank */

/* ---- random numbers: splitmix64 ------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix(r->s);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* ---- element types and the model's arithmetic ---------------------- */

enum { T64, T32, TD, T8, NTY };
static const struct {
	rmad_datatype_t dt;
	size_t es;
	int isint;
	const char *name;
} ety[NTY] = {
	{ RMAD_INT64, 8, 1, "int64" },
	{ RMAD_INT32, 4, 1, "int32" },
	{ RMAD_DOUBLE, 8, 0, "double" },
	{ RMAD_UINT8, 1, 1, "uint8" },
};

/* an element's value: small integers, exact in every type and sum */
static void el_set(int ty, void *p, uint64_t h)
{
	int64_t v = (int64_t)(h % 101) - 50;

	switch (ty) {
	case T64: { int64_t x = v; memcpy(p, &x, 8); break; }
	case T32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
	case TD: { double x = (double)v; memcpy(p, &x, 8); break; }
	default: { uint8_t x = (uint8_t)h; memcpy(p, &x, 1); break; }
	}
}

static double el_num(int ty, const void *p)
{
	switch (ty) {
	case T64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
	case T32: { int32_t x; memcpy(&x, p, 4); return x; }
	case TD: { double x; memcpy(&x, p, 8); return x; }
	default: return *(const uint8_t *)p;
	}
}

#define EL_OP(T, U)							\
	do {								\
		T a, b;							\
		memcpy(&a, d, sizeof(a));				\
		memcpy(&b, s, sizeof(b));				\
		switch (op) {						\
		case RMAD_SUM: a = (T)((U)a + (U)b); break;		\
		case RMAD_MIN: a = b < a ? b : a; break;		\
		case RMAD_MAX: a = b > a ? b : a; break;		\
		case RMAD_REPLACE: a = b; break;			\
		case RMAD_BXOR: a = (T)((U)a ^ (U)b); break;		\
		case RMAD_BAND: a = (T)((U)a & (U)b); break;		\
		case RMAD_BOR: a = (T)((U)a | (U)b); break;		\
		}							\
		memcpy(d, &a, sizeof(a));				\
	} while (0)

/* d = d op s, one element; NO_OP leaves d */
static void el_apply(int ty, int op, unsigned char *d, const unsigned char *s)
{
	if (op == RMAD_NO_OP)
		return;
	switch (ty) {
	case T64: EL_OP(int64_t, uint64_t); break;
	case T32: EL_OP(int32_t, uint32_t); break;
	case T8: EL_OP(uint8_t, uint8_t); break;
	default: {
		double a, b;

		memcpy(&a, d, 8);
		memcpy(&b, s, 8);
		if (op == RMAD_SUM)
			a += b;
		else if (op == RMAD_MIN)
			a = b < a ? b : a;
		else if (op == RMAD_MAX)
			a = b > a ? b : a;
		else if (op == RMAD_REPLACE)
			a = b;
		memcpy(d, &a, 8);
	}
	}
}

static const char *op_name(int op)
{
	static const char *n[] = { "?", "SUM", "PROD", "MIN", "MAX", "BAND",
				   "BOR", "BXOR", "LAND", "LOR", "LXOR",
				   "REPLACE", "NO_OP" };

	return op >= 0 && op <= RMAD_NO_OP ? n[op] : "?";
}

/* ---- layouts: n elements in nb blocks of bl ------------------------ */

enum { L_CONTIG, L_VECTOR, L_INDEXED };
struct lay {
	int kind, nb, bl;
	int *disp;			/* block b's first element */
	size_t ext;			/* elements spanned */
	rmad_datatype_t dt;		/* derived: the committed type */
};

static size_t lay_off(const struct lay *l, size_t i)
{
	return (size_t)l->disp[i / (size_t)l->bl] + i % (size_t)l->bl;
}

/* a layout of n elements, contiguous when derived is 0 */
static void lay_make(struct rng *r, struct lay *l, size_t n, int derived)
{
	int nb = 1;

	memset(l, 0, sizeof(*l));
	l->kind = derived && n > 1 ? 1 + (int)below(r, 2) : L_CONTIG;
	if (l->kind != L_CONTIG) {
		nb = 1 << below(r, 7);		/* up to 64 blocks */
		while (nb > 1 && n % (size_t)nb)
			nb /= 2;
	}
	l->nb = nb;
	l->bl = (int)(n / (size_t)nb);
	l->disp = calloc((size_t)nb, sizeof(int));
	if (l->kind == L_VECTOR) {
		int stride = l->bl + (int)below(r, 4);

		for (int b = 0; b < nb; b++)
			l->disp[b] = b * stride;
	} else if (l->kind == L_INDEXED) {
		l->disp[0] = (int)below(r, 4);
		for (int b = 1; b < nb; b++)
			l->disp[b] = l->disp[b - 1] + l->bl + (int)below(r, 4);
	}
	l->ext = (size_t)l->disp[nb - 1] + (size_t)l->bl;
}

static int lay_commit(struct lay *l, int ty)
{
	int *bls, e;

	if (l->kind == L_CONTIG)
		return 0;
	if (l->kind == L_VECTOR) {
		e = rmad_type_vector(l->nb, l->bl,
				     l->nb > 1 ? l->disp[1] : l->bl,
				     ety[ty].dt, &l->dt);
		return e ? e : rmad_type_commit(&l->dt);
	}
	bls = malloc((size_t)l->nb * sizeof(int));
	if (!bls)
		return RMAD_ERR_NOMEM;
	for (int b = 0; b < l->nb; b++)
		bls[b] = l->bl;
	e = rmad_type_indexed(l->nb, bls, l->disp, ety[ty].dt, &l->dt);
	free(bls);
	return e ? e : rmad_type_commit(&l->dt);
}

/* the (count, type) pair that describes it */
static int lay_count(const struct lay *l)
{
	return l->kind == L_CONTIG ? l->bl : 1;
}

static rmad_datatype_t lay_type(const struct lay *l, int ty)
{
	return l->kind == L_CONTIG ? ety[ty].dt : l->dt;
}

static void lay_free(struct lay *l)
{
	if (l->kind != L_CONTIG && l->dt != RMAD_DATATYPE_NULL)
		rmad_type_free(&l->dt);
	free(l->disp);
	l->disp = NULL;
}

static const char *lay_name(const struct lay *l)
{
	static char b[4][48];
	static int k;
	char *s = b[k++ & 3];

	if (l->kind == L_CONTIG)
		return "contig";
	snprintf(s, 48, "%s(%dx%d)", l->kind == L_VECTOR ? "vector" : "indexed",
		 l->nb, l->bl);
	return s;
}

/* ---- operations ----------------------------------------------------- */

enum { K_PUT, K_GET, K_ACC, K_GACC, K_FOP, K_CAS };
static const char *kname[] = { "put", "get", "acc", "get_acc", "fop", "cas" };
/* what follows an op in a passive epoch */
enum { S_NONE, S_FLUSH_LOCAL, S_FLUSH, S_FLUSH_LOCAL_ALL, S_FLUSH_ALL,
       S_REQ };
static const char *sname[] = { "", " flush_local", " flush", " flush_local_all",
			       " flush_all", " (request, waited)" };

struct op {
	int kind, target, op, common, sync, done, bad;
	size_t n, off;			/* elements; bytes from the base */
	struct lay tl, ol, rl;		/* target, origin, result layouts */
	uint64_t dseed;			/* operand values */
	unsigned char *want;		/* the result the model gives */
	void *obuf, *rbuf;
	unsigned char cmp[8];
	size_t olen, rlen;		/* buffer bytes */
};

static int has_result(int k)
{
	return k == K_GET || k == K_GACC || k == K_FOP || k == K_CAS;
}

/* the sequence's settings */
static struct seqst {
	int ty, flavor, du, amem;
	size_t es, S, wsize;		/* region bytes, window bytes */
	unsigned char **mod;		/* the model: every rank's window */
	unsigned char *base;		/* my window's memory */
	uint64_t *addr;			/* dynamic: each rank's address */
	rmad_win_t w;
	int q, e;			/* sequence, epoch */
	char mode;
} sq;

/* operand element i of op */
static void operand(const struct op *o, size_t i, unsigned char *el)
{
	el_set(sq.ty, el, mix(o->dseed + i));
}

/* Apply op o (of origin org) to the model, keeping what its result must
 * be. */
static void model_apply(struct op *o, int org)
{
	size_t es = sq.es;
	unsigned char *m = sq.mod[o->target] + o->off, el[8];
	int keep = org == rank && has_result(o->kind) && !o->common;

	if (keep) {
		o->rlen = (o->kind == K_GET ? o->ol.ext : o->rl.ext) * es;
		o->want = malloc(o->rlen);
		memset(o->want, 0x5a, o->rlen);
	}
	for (size_t i = 0; i < o->n; i++) {
		unsigned char *d = m + lay_off(&o->tl, i) * es;

		if (keep)
			memcpy(o->want + lay_off(o->kind == K_GET ? &o->ol :
						 &o->rl, i) * es, d, es);
		operand(o, i, el);
		switch (o->kind) {
		case K_PUT:
			memcpy(d, el, es);
			break;
		case K_ACC:
		case K_GACC:
		case K_FOP:
			el_apply(sq.ty, o->op, d, el);
			break;
		case K_CAS:
			if (!memcmp(d, o->cmp, es))
				memcpy(d, el, es);
			break;
		}
	}
}

/* Does op a touch bytes of op b (same target)? */
static int overlap(const struct op *a, const struct op *b)
{
	return a->target == b->target && !a->common && !b->common &&
	       a->off < b->off + b->tl.ext * sq.es &&
	       b->off < a->off + a->tl.ext * sq.es;
}

static int writes(const struct op *o)
{
	return o->kind != K_GET && !(o->kind == K_GACC && o->op == RMAD_NO_OP);
}

static const int int_ops[] = { RMAD_SUM, RMAD_MIN, RMAD_MAX, RMAD_REPLACE,
			       RMAD_BXOR, RMAD_BAND, RMAD_BOR };

static size_t pick_bytes(struct rng *r)
{
	static const size_t cls[] = { 8, 64, 512, 4096, 32768, 49152, 65536,
				      262144, 1048576, 4194304 };
	static const int wt[] = { 14, 10, 10, 10, 10, 14, 12, 10, 6, 2 };
	int tot = 0, k = 0, x;

	for (size_t i = 0; i < sizeof(wt) / sizeof(wt[0]); i++)
		tot += wt[i];
	x = (int)below(r, (uint64_t)tot);
	while (x >= wt[k])
		x -= wt[k++];
	return cls[k];
}

/* Plan op k of origin org in epoch e: prev is that origin's previous op
 * (NULL for its first), whose bytes it reuses half the time. */
static void plan_op(struct rng *r, struct op *o, int k, int org,
		    int passive)
{
	const struct op *prev = k ? o - 1 : NULL;
	size_t es = sq.es, bytes, n, room;
	int reg = (org + sq.e) % size, reuse;
	uint64_t x = below(r, 100);

	memset(o, 0, sizeof(*o));
	o->kind = x < 25 ? K_PUT : x < 45 ? K_GET : x < 65 ? K_ACC :
		  x < 80 ? K_GACC : x < 90 ? K_FOP : K_CAS;
	if (o->kind == K_CAS && !ety[sq.ty].isint)
		o->kind = K_FOP;
	o->dseed = rnd(r);
	o->op = ety[sq.ty].isint ? int_ops[below(r, 7)] : int_ops[below(r, 4)];
	if (o->kind == K_GACC || o->kind == K_FOP)
		if (!below(r, 6))
			o->op = RMAD_NO_OP;
	/* the bytes of the previous op half the time, three times in four
	 * after a large write (failure 2 of issue 70: a get after a large
	 * accumulate and flush_local saw the old data) */
	reuse = prev && !prev->common &&
		below(r, 4) < (prev->kind != K_GET && prev->n * sq.es >= 32768 ?
			       3u : 2u);
	/* ARMCI-MPI's blocking accumulate in a lock_all epoch is an
	 * accumulate and flush_local: then always a read of its bytes */
	int armci = prev && sq.mode == 'a' && prev->kind == K_ACC &&
		    !prev->common && prev->sync == S_FLUSH_LOCAL;

	if (armci)
		reuse = 1;
	/* after a write, a read of its bytes half the time: the order a
	 * later op must see (rmad(7), "Ordering") */
	if (reuse && prev->kind != K_GET && (armci || below(r, 2))) {
		x = below(r, 100);
		o->kind = x < 50 ? K_GET : x < 80 ? K_GACC : K_FOP;
	}
	o->target = reuse ? prev->target : (int)below(r, (uint64_t)size);
	/* the common region: SUM from everyone, no result looked at */
	if (!reuse && (o->kind == K_ACC || o->kind == K_FOP) && !below(r, 5)) {
		o->common = 1;
		o->op = RMAD_SUM;
	}
	bytes = o->kind == K_FOP || o->kind == K_CAS ? es : pick_bytes(r);
	if (bytes > maxb)
		bytes = maxb;
	if (o->common && bytes > SHB / 2)
		bytes = SHB / 2;
	if (reuse && o->kind != K_FOP && o->kind != K_CAS)
		bytes = prev->n * es;
	n = bytes / es ? bytes / es : 1;
	o->n = n;
	if (reuse && n == prev->n) {
		o->tl = prev->tl;
		o->tl.disp = malloc((size_t)prev->tl.nb * sizeof(int));
		memcpy(o->tl.disp, prev->tl.disp,
		       (size_t)prev->tl.nb * sizeof(int));
		o->tl.dt = RMAD_DATATYPE_NULL;
		o->off = prev->off;
	} else {
		lay_make(r, &o->tl, n, !below(r, 2));
		room = (o->common ? SHB : sq.S) / es - o->tl.ext;
		o->off = (o->common ? (size_t)size * sq.S : (size_t)reg * sq.S) +
			 (reuse ? (prev->off % sq.S) / es % (room + 1) :
				  below(r, room + 1)) * es;
	}
	lay_make(r, &o->ol, n, !below(r, 3));
	lay_make(r, &o->rl, n, !below(r, 3));
	if (o->kind == K_CAS) {
		const unsigned char *cur = sq.mod[o->target] + o->off;

		if (below(r, 2))
			memcpy(o->cmp, cur, es);
		else
			el_set(sq.ty, o->cmp, rnd(r));
	}
	/* a put after a write of ours to its bytes: MPI leaves the two
	 * unordered, and so does rmad (rmad(7), "Ordering"): a get then */
	for (int j = 0; o->kind == K_PUT && j < k; j++)
		if (writes(o - k + j) && overlap(o - k + j, o))
			o->kind = K_GET;
	o->sync = S_NONE;
	if (passive) {
		x = below(r, 100);
		o->sync = x < 30 ? S_FLUSH_LOCAL : x < 40 ? S_FLUSH :
			  x < 45 ? S_FLUSH_LOCAL_ALL : x < 50 ? S_FLUSH_ALL :
			  S_NONE;
		if (x >= 85 && o->kind != K_FOP && o->kind != K_CAS)
			o->sync = S_REQ;
		else if (o->kind != K_GET && n * es >= 32768 && below(r, 2))
			o->sync = S_FLUSH_LOCAL;
	}
}

static void op_free(struct op *o)
{
	lay_free(&o->tl);
	lay_free(&o->ol);
	lay_free(&o->rl);
	free(o->want);
	o->want = NULL;
}

/* ---- buffers -------------------------------------------------------- */

static void *buf_new(size_t len)
{
	void *p = NULL;

	len = len ? len : 1;
	if (sq.amem)
		return rmad_alloc_mem(len, &p) ? NULL : p;
	return malloc(len);
}

static void buf_free(void *p)
{
	if (!p)
		return;
	if (sq.amem)
		rmad_free_mem(p);
	else
		free(p);
}

static void op_head(const struct op *o, int k, const char *what)
{
	printf("rank %d: %s seed %llu seq %d (%s window, %s, disp_unit %d, "
	       "%s operands) epoch %d (%c) op %d: %s%s%s of %zu B to rank %d "
	       "at %zu, target %s, origin %s, result %s%s: ", rank, what,
	       (unsigned long long)seed, sq.q,
	       (const char *[]){ "allocated", "created", "dynamic",
				 "shared" }[sq.flavor],
	       ety[sq.ty].name, sq.du, sq.amem ? "rmad_alloc_mem" : "malloc",
	       sq.e, sq.mode, k, kname[o->kind],
	       o->kind == K_PUT || o->kind == K_GET || o->kind == K_CAS ? "" :
									   " ",
	       o->kind == K_PUT || o->kind == K_GET || o->kind == K_CAS ? "" :
									   op_name(o->op),
	       o->n * sq.es, o->target, o->off, lay_name(&o->tl),
	       lay_name(&o->ol), lay_name(&o->rl), sname[o->sync]);
}

static void fail_head(const struct op *o, int k)
{
	op_head(o, k, "FAIL");
}

static void op_brief(const char *what, const struct op *ops, int j)
{
	int plain = ops[j].kind == K_PUT || ops[j].kind == K_CAS;

	printf("; %s: op %d, %s%s%s of %zu B%s", what, j, kname[ops[j].kind],
	       plain ? "" : " ", plain ? "" : op_name(ops[j].op),
	       ops[j].n * sq.es, sname[ops[j].sync]);
}

/* op k of ops is complete at the origin: its result checked, its
 * operands scribbled over (a late read of them would show at the
 * target).  A wrong result names the last earlier write of ours to its
 * bytes, which it should have seen. */
static void complete(struct op *ops, int k)
{
	struct op *o = &ops[k];

	if (o->done)
		return;
	o->done = 1;
	if (o->want && memcmp(o->rbuf, o->want, o->rlen)) {
		size_t i = 0, es = sq.es, bad = 0;
		unsigned char *g = o->rbuf;
		int j = k - 1;

		for (size_t b = 0; b < o->rlen; b += es)
			if (memcmp(g + b, o->want + b, es) && !bad++)
				i = b;
		while (j >= 0 && (!writes(&ops[j]) || !overlap(&ops[j], o)))
			j--;
		if (fails < MAXFAIL) {
			fail_head(o, k);
			printf("%zu of %zu result elements wrong, the first at "
			       "byte %zu: %g, want %g", bad, o->rlen / es, i,
			       el_num(sq.ty, g + i), el_num(sq.ty, o->want + i));
			if (j >= 0)
				op_brief("the last earlier write to its bytes",
					 ops, j);
			for (j = k + 1; j < nops; j++)
				if (writes(&ops[j]) && overlap(&ops[j], o)) {
					op_brief("a later write to them", ops,
						 j);
					break;
				}
			printf("\n");
			fflush(stdout);
		}
		fails++;
	}
	if (o->obuf && !keep)
		memset(o->obuf, 0xee, o->olen);
	buf_free(o->obuf);
	buf_free(o->rbuf);
	o->obuf = o->rbuf = NULL;
}

/* ---- issuing ---------------------------------------------------------- */

static size_t tdisp_of(const struct op *o)
{
	if (sq.flavor == 2)
		return (size_t)sq.addr[o->target] + o->off;
	return o->off / (size_t)sq.du;
}

/* Before its epoch: op o's types, operands and result buffer, so that
 * the epoch issues one op after another with nothing in between (the
 * tighter, the likelier an op overtakes an earlier one). */
static int prepare(struct op *o)
{
	int ty = sq.ty, e;

	if ((e = lay_commit(&o->tl, ty)) || (e = lay_commit(&o->ol, ty)) ||
	    (e = lay_commit(&o->rl, ty)))
		return e;
	o->olen = o->ol.ext * sq.es;
	o->obuf = buf_new(o->olen);
	if (!o->obuf)
		return RMAD_ERR_NOMEM;
	memset(o->obuf, 0xc3, o->olen);
	for (size_t i = 0; i < o->n; i++)
		operand(o, i, (unsigned char *)o->obuf +
			lay_off(&o->ol, i) * sq.es);
	if (has_result(o->kind)) {
		size_t rl = (o->kind == K_GET ? o->ol.ext : o->rl.ext) * sq.es;

		o->rbuf = o->kind == K_GET ? o->obuf : buf_new(rl);
		if (o->kind == K_GET)
			o->obuf = NULL;
		if (!o->rbuf)
			return RMAD_ERR_NOMEM;
		memset(o->rbuf, 0x5a, rl);
	}
	return 0;
}

static int issue(struct op *o)
{
	int ty = sq.ty, oc = lay_count(&o->ol), tc = lay_count(&o->tl);
	int rc = lay_count(&o->rl), e;
	rmad_datatype_t ot = lay_type(&o->ol, ty), tt = lay_type(&o->tl, ty);
	rmad_datatype_t rt = lay_type(&o->rl, ty);
	rmad_request_t rq = RMAD_REQUEST_NULL;
	size_t td = tdisp_of(o);
	int req = o->sync == S_REQ;
	rmad_win_t w = sq.w;

	switch (o->kind) {
	case K_PUT:
		e = req ? rmad_rput(o->obuf, oc, ot, o->target, td, tc, tt, w,
				    &rq) :
			  rmad_put(o->obuf, oc, ot, o->target, td, tc, tt, w);
		break;
	case K_GET:
		e = req ? rmad_rget(o->rbuf, oc, ot, o->target, td, tc, tt, w,
				    &rq) :
			  rmad_get(o->rbuf, oc, ot, o->target, td, tc, tt, w);
		break;
	case K_ACC:
		e = req ? rmad_raccumulate(o->obuf, oc, ot, o->target, td, tc,
					   tt, o->op, w, &rq) :
			  rmad_accumulate(o->obuf, oc, ot, o->target, td, tc,
					  tt, o->op, w);
		break;
	case K_GACC:
		e = req ? rmad_rget_accumulate(o->obuf, oc, ot, o->rbuf, rc,
					       rt, o->target, td, tc, tt,
					       o->op, w, &rq) :
			  rmad_get_accumulate(o->obuf, oc, ot, o->rbuf, rc, rt,
					      o->target, td, tc, tt, o->op, w);
		break;
	case K_FOP:
		e = rmad_fetch_and_op(o->obuf, o->rbuf, ety[ty].dt, o->target,
				      td, o->op, w);
		break;
	default:
		e = rmad_compare_and_swap(o->obuf, o->cmp, o->rbuf, ety[ty].dt,
					  o->target, td, w);
		break;
	}
	if (!e && req)
		e = rmad_wait(&rq);
	return e;
}

/* the ops to target t (every target when t < 0) are complete at the
 * origin */
static void complete_upto(struct op *ops, int k, int t)
{
	for (int j = 0; j <= k; j++)
		if (t < 0 || ops[j].target == t)
			complete(ops, j);
}

/* ---- one epoch ------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void run_epoch(struct rng *r)
{
	struct op *all = calloc((size_t)size * (size_t)nops, sizeof(*all));
	struct op *mine = all + (size_t)rank * (size_t)nops;
	int passive = sq.mode == 'l' || sq.mode == 'a';
	int *tg = malloc((size_t)nops * sizeof(int)), ntg = 0;
	int asrt = 0;
	/* this rank's own choices (lock types), apart from the plan that
	 * every rank draws alike */
	struct rng lr = { mix(r->s ^ (uint64_t)(rank + 1) << 56) };

	/* every origin's plan, applied to the model in issue order */
	for (int org = 0; org < size; org++)
		for (int k = 0; k < nops; k++) {
			struct op *o = &all[(size_t)org * (size_t)nops + (size_t)k];

			plan_op(r, o, k, org, passive);
			model_apply(o, org);
		}
	for (int k = 0; k < nops; k++)
		tg[ntg++] = mine[k].target;
	qsort(tg, (size_t)ntg, sizeof(int), cmp_int);
	{
		int m = 0;

		for (int k = 0; k < ntg; k++)
			if (!m || tg[m - 1] != tg[k])
				tg[m++] = tg[k];
		ntg = m;
	}
	for (int k = 0; k < nops; k++) {
		int e = prepare(&mine[k]);

		if (e) {
			fail_head(&mine[k], k);
			printf("%s\n", rmad_strerror(e));
			fflush(stdout);
			fails++;
			mine[k].bad = 1;
		}
	}
	switch (sq.mode) {
	case 'f':
		asrt = below(r, 2) ? RMAD_MODE_NOPRECEDE : 0;
		OK(rmad_win_fence(asrt, sq.w));
		break;
	case 'p':
		OK(rmad_win_post(RMAD_GROUP_ALL, 0, sq.w));
		OK(rmad_win_start(RMAD_GROUP_ALL, 0, sq.w));
		break;
	case 'l':
		for (int k = 0; k < ntg; k++)
			OK(rmad_win_lock(below(&lr, 3) ? RMAD_LOCK_SHARED :
					 RMAD_LOCK_EXCLUSIVE, tg[k], 0, sq.w));
		break;
	default:
		OK(rmad_win_lock_all(0, sq.w));
	}
	for (int k = 0; k < nops; k++) {
		struct op *o = &mine[k];
		int e;

		if (o->bad) {
			o->done = 1;	/* its failure is counted */
			continue;
		}
		e = issue(o);

		if (verbose) {
			op_head(o, k, "op");
			printf("issued (%d)\n", e);
		}

		if (e) {
			fail_head(o, k);
			printf("%s\n", rmad_strerror(e));
			fflush(stdout);
			fails++;
			o->done = 1;
			continue;
		}
		switch (o->sync) {
		case S_FLUSH_LOCAL:
			OK(rmad_win_flush_local(o->target, sq.w));
			complete_upto(mine, k, o->target);
			break;
		case S_FLUSH:
			OK(rmad_win_flush(o->target, sq.w));
			complete_upto(mine, k, o->target);
			break;
		case S_FLUSH_LOCAL_ALL:
			OK(rmad_win_flush_local_all(sq.w));
			complete_upto(mine, k, -1);
			break;
		case S_FLUSH_ALL:
			OK(rmad_win_flush_all(sq.w));
			complete_upto(mine, k, -1);
			break;
		case S_REQ:
			complete(mine, k);
			break;
		}
	}
	switch (sq.mode) {
	case 'f':
		OK(rmad_win_fence(below(r, 2) ? RMAD_MODE_NOSUCCEED : 0,
				  sq.w));
		break;
	case 'p':
		OK(rmad_win_complete(sq.w));
		OK(rmad_win_wait(sq.w));
		break;
	case 'l':
		for (int k = 0; k < ntg; k++)
			OK(rmad_win_unlock(tg[k], sq.w));
		break;
	default:
		OK(rmad_win_unlock_all(sq.w));
	}
	complete_upto(mine, nops - 1, -1);
	OK(rmad_barrier());
	/* what the epoch completed is in my window */
	rmad_win_sync(sq.w);
	if (memcmp(sq.base, sq.mod[rank], sq.wsize)) {
		size_t i = 0, bad = 0, es = sq.es;

		for (size_t j = 0; j < sq.wsize; j += es)
			if (memcmp(sq.base + j, sq.mod[rank] + j, es) && !bad++)
				i = j;
		if (fails < MAXFAIL) {
			printf("rank %d: FAIL seed %llu seq %d (%s) epoch %d (%c):"
			       " %zu elements of my window wrong, the first at "
			       "byte %zu (region %zu): %g, want %g\n", rank,
			       (unsigned long long)seed, sq.q, ety[sq.ty].name,
			       sq.e, sq.mode, bad, i, i / sq.S,
			       el_num(sq.ty, sq.base + i),
			       el_num(sq.ty, sq.mod[rank] + i));
			fflush(stdout);
		}
		fails++;
		memcpy(sq.base, sq.mod[rank], sq.wsize);	/* afresh */
		rmad_win_sync(sq.w);
	}
	OK(rmad_barrier());
	for (size_t k = 0; k < (size_t)size * (size_t)nops; k++)
		op_free(&all[k]);
	free(all);
	free(tg);
}

/* ---- one sequence: a window and its epochs --------------------------- */

static int win_make(void)
{
	void *b = NULL;
	int e;

	switch (sq.flavor) {
	case 0:
		e = rmad_win_allocate(sq.wsize, sq.du, NULL, RMAD_GROUP_ALL, &b,
				      &sq.w);
		break;
	case 1:
		b = calloc(1, sq.wsize);
		e = b ? rmad_win_create(b, sq.wsize, sq.du, NULL,
					RMAD_GROUP_ALL, &sq.w) :
			RMAD_ERR_NOMEM;
		break;
	case 2:
		b = calloc(1, sq.wsize);
		sq.addr = calloc((size_t)size, sizeof(uint64_t));
		e = b && sq.addr ? rmad_win_create_dynamic(NULL, RMAD_GROUP_ALL,
							   &sq.w) :
				   RMAD_ERR_NOMEM;
		e = e ? e : rmad_win_attach(sq.w, b, sq.wsize);
		e = e ? e : t_gather(b, sq.addr);
		break;
	default:
		e = rmad_win_allocate_shared(sq.wsize, sq.du, NULL,
					     RMAD_GROUP_ALL, &b, &sq.w);
	}
	sq.base = b;
	return e;
}

static void win_drop(void)
{
	if (sq.flavor == 2 && sq.w != RMAD_WIN_NULL)
		rmad_win_detach(sq.w, sq.base);
	if (sq.w != RMAD_WIN_NULL)
		OK(rmad_win_free(&sq.w));
	if (sq.flavor == 1 || sq.flavor == 2)
		free(sq.base);
	free(sq.addr);
	sq.addr = NULL;
	sq.base = NULL;
}

static void run_seq(int q, uint64_t *nop)
{
	struct rng r = { mix(seed * 0x100000001b3ull + (uint64_t)q) };
	int nf = (int)strlen(flavors), nm = (int)strlen(modes);
	const char *fl = "acds";
	int e;

	memset(&sq, 0, sizeof(sq));
	sq.q = q;
	sq.flavor = (int)(strchr(fl, flavors[(q + (int)below(&r, 2)) % nf]) - fl);
	sq.ty = (int)below(&r, NTY);
	sq.es = ety[sq.ty].es;
	sq.du = sq.flavor != 2 && below(&r, 2) ? (int)sq.es : 1;
	sq.amem = mems[below(&r, strlen(mems))] == 'a';
	sq.S = (maxb + 4096 + sq.es - 1) / sq.es * sq.es;
	sq.wsize = (size_t)size * sq.S + SHB;
	sq.mod = calloc((size_t)size, sizeof(*sq.mod));
	for (int t = 0; t < size; t++) {
		sq.mod[t] = malloc(sq.wsize);
		for (size_t j = 0; j < sq.wsize; j += sq.es)
			el_set(sq.ty, sq.mod[t] + j,
			       mix(seed ^ ((uint64_t)q << 48) ^
				   ((uint64_t)t << 40) ^ j));
	}
	e = win_make();
	if (e) {
		printf("rank %d: FAIL seq %d: window (flavor %c): %s\n", rank,
		       q, fl[sq.flavor], rmad_strerror(e));
		fails++;
		win_drop();
		goto out;
	}
	memcpy(sq.base, sq.mod[rank], sq.wsize);
	rmad_win_sync(sq.w);
	OK(rmad_barrier());
	for (sq.e = 0; sq.e < nepochs; sq.e++) {
		sq.mode = modes[below(&r, (uint64_t)nm)];
		run_epoch(&r);
		*nop += (uint64_t)nops;
	}
	win_drop();
out:
	for (int t = 0; t < size; t++)
		free(sq.mod[t]);
	free(sq.mod);
}

int main(int argc, char **argv)
{
	uint64_t nop = 0;
	double t0;
	int c;

	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	while ((c = getopt(argc, argv, "s:n:e:k:x:f:m:o:vK")) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': nseq = atoi(optarg); break;
		case 'e': nepochs = atoi(optarg); break;
		case 'k': nops = atoi(optarg); break;
		case 'x': maxb = (size_t)strtoull(optarg, NULL, 0); break;
		case 'f': flavors = optarg; break;
		case 'm': modes = optarg; break;
		case 'o': mems = optarg; break;
		case 'v': verbose = 1; break;
		case 'K': keep = 1; break;
		default:
			printf("rank %d: FAIL usage\n", rank);
			return t_finish(rank, 1, " ");
		}
	}
	if (nops < 1 || nseq < 0 || nepochs < 1 || maxb < 8 || !*flavors ||
	    !*modes || strspn(flavors, "acds") != strlen(flavors) ||
	    strspn(modes, "fpla") != strlen(modes) || !*mems ||
	    strspn(mems, "ma") != strlen(mems)) {
		printf("rank %d: FAIL bad arguments\n", rank);
		return t_finish(rank, 1, " ");
	}
	t0 = rmad_wtime();
	for (int q = 0; q < nseq; q++)
		run_seq(q, &nop);
	return t_finish(rank, fails, " (seed %llu, %d sequences, %llu ops, "
			"%.1f s)", (unsigned long long)seed, nseq,
			(unsigned long long)nop, rmad_wtime() - t0);
}
