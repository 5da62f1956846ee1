/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_type_apply.c - the target side of ops whose target layout is a
 * derived datatype (rma_type.c tells the whole design): a TYPED chunk
 * is checked against the type its origin put in our cache and against
 * the window, then applied by walking only its part of the type
 * (dtree_walk): on a mapped window in place (accumulates with the
 * element atomics, or plain in the bulk mode), on a created window
 * through process_vm_readv/writev in batches of runs.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "agent.h"
#include "dynwin.h"
#include "mem.h"
#include "windows.h"
#include "accword.h"
#include "dtree.h"
#include "dtype.h"
#include "log.h"
#include "rmad_abi.h"
#include "rma_internal.h"

/* Is op allowed on every basic type in t? */
int ty_ops_ok(const struct dtree *t, uint32_t op)
{
	if (t->kind == DTREE_BASIC)
		return !rmad_op_check(t->basic, op);
	if (t->kids) {
		for (int64_t i = 0; i < t->count; i++)
			if (t->blens[i] && t->kids[i]->size &&
			    !ty_ops_ok(t->kids[i], op))
				return 0;
		return 1;
	}
	return !t->child || !t->child->size || ty_ops_ok(t->child, op);
}

/* Chunks of an accumulate hold whole basic elements: of the one type,
 * or whole instances of a mixed one. */
uint32_t ty_unit_of(const struct dtree *t, int acc)
{
	if (!acc)
		return 1;
	if (t->homog)
		return (uint32_t)rmad_dtype_size(t->homog);
	return t->size > UINT32_MAX ? 0 : (uint32_t)t->size;
}

struct apply_ctx {
	struct agent *a;
	struct win_local *l;
	const struct rmad_am_hdr *h;
	uint64_t base;
	const uint8_t *src;		/* data in, or NULL */
	uint8_t *res;			/* results out, or NULL */
	uint64_t pos;			/* packed bytes done */
	uint8_t *cur;			/* created: the runs' bytes, packed */
	int bulk;			/* mapped: the bulk mode is on */
};

/* An accumulate's run: on the window's mapped memory (with atomics, or
 * plain in the bulk mode), or on a created window's bytes read into
 * cur, which go back afterwards. */
static void apply_run(void *arg, int64_t off, uint64_t len, uint32_t basic)
{
	struct apply_ctx *x = arg;
	const uint8_t *src = x->src ? x->src + x->pos : NULL;
	uint8_t *res = x->res ? x->res + x->pos : NULL;
	uint64_t cnt = len / rmad_dtype_size(basic);
	uint8_t *dst = x->cur ? x->cur + x->pos :
		       (uint8_t *)x->l->data + x->base + (uint64_t)off;

	x->pos += len;
	if (x->cur || x->bulk)
		rmad_acc_apply_excl(dst, src, res, basic, x->h->op, cnt);
	else
		rmad_acc_apply(dst, src, res, basic, x->h->op, cnt);
}

/* the runs of one chunk of a created window's accumulate (a pulled
 * chunk's at most) */
static uint8_t acc_cur[RMAD_AM_PULL_MAX] __attribute__((aligned(64)));

/* A created window's put or get: the runs of a chunk in batches of
 * iovecs, one system call each */
#define IOV_BATCH	1024

struct iov_ctx {
	struct agent *a;
	struct win_local *l;
	uint64_t base;
	uint8_t *pk;			/* the chunk's packed bytes */
	int write;
	struct iovec iov[IOV_BATCH];
	unsigned long n;
	uint64_t from, pos;		/* the batch's packed bytes */
	int st;
};

static void iov_flush(struct iov_ctx *x)
{
	if (x->n && !x->st)
		x->st = xfer_client_iov(x->a, x->l->client, x->iov, x->n,
				   x->pk + x->from, x->pos - x->from,
				   x->write);
	x->n = 0;
	x->from = x->pos;
}

static void iov_run(void *arg, int64_t off, uint64_t len, uint32_t basic)
{
	struct iov_ctx *x = arg;

	(void)basic;
	if (x->n == IOV_BATCH)
		iov_flush(x);
	x->iov[x->n].iov_base = (void *)(uintptr_t)(x->l->addr + x->base +
						    (uint64_t)off);
	x->iov[x->n].iov_len = len;
	x->n++;
	x->pos += len;
}

/* the extent of a chunk's runs */
struct ext_ctx {
	int64_t lo, hi;
};

static void ext_run(void *arg, int64_t off, uint64_t len, uint32_t basic)
{
	struct ext_ctx *e = arg;

	(void)basic;
	if (off < e->lo)
		e->lo = off;
	if (off + (int64_t)len > e->hi)
		e->hi = off + (int64_t)len;
}

/*
 * A read of a chunk whose runs lie densely (their extent at most
 * SPAN_DENSITY times their bytes) takes their whole extent in one
 * process_vm_readv, the kernel's cost being per iovec far more than
 * per byte, and packs it here; the extent lies in the type's footprint,
 * checked against the window.  Writes must not touch the gaps (other
 * origins' bytes): they keep to the runs.
 */
#define SPAN_DENSITY	4
static uint8_t span_buf[SPAN_DENSITY * RMAD_AM_PULL_MAX];

static int created_copy(struct agent *a, struct win_local *l,
			const struct dtree *t, const struct rmad_am_typed *th,
			uint64_t pk, uint64_t len, int64_t lo, int64_t hi,
			uint8_t *buf, int write)
{
	static struct iov_ctx x;
	struct ext_ctx e = { INT64_MAX, INT64_MIN };
	uint8_t *p = agent_mem_lookup(a, l->client,
				      l->addr + th->base + (uint64_t)lo,
				      (size_t)(hi - lo));

	if (p) {
		/* rmad_alloc_mem memory, mapped here too */
		if (write)
			dtree_unpack(t, th->tcount, pk, pk + len, p - lo, buf);
		else
			dtree_pack(t, th->tcount, pk, pk + len, p - lo, buf);
		return 0;
	}
	if (!write)
		dtree_walk(t, th->tcount, pk, pk + len, ext_run, &e);
	if (!write && e.hi > e.lo &&
	    (uint64_t)(e.hi - e.lo) <= SPAN_DENSITY * len &&
	    (uint64_t)(e.hi - e.lo) <= sizeof(span_buf)) {
		int st = xfer_client_io(a, l->client,
				   l->addr + th->base + (uint64_t)e.lo,
				   span_buf, (size_t)(e.hi - e.lo), 0);

		if (!st)
			dtree_pack(t, th->tcount, pk, pk + len,
				   span_buf - e.lo, buf);
		return st;
	}
	x.a = a;
	x.l = l;
	x.base = th->base;
	x.pk = buf;
	x.write = write;
	x.n = 0;
	x.from = x.pos = 0;
	x.st = 0;
	dtree_walk(t, th->tcount, pk, pk + len, iov_run, &x);
	iov_flush(&x);
	return x.st;
}

/*
 * A typed accumulate chunk (ty_apply checked it).  Every accumulate
 * runs under the accumulate lock (rma_target.c), all of the chunk's
 * runs in one hold: on mapped memory in the bulk mode when the chunk
 * is large (accword.h; the runs' atomics otherwise),
 * on a created window read into acc_cur in batches of iovecs,
 * combined there, and written back the same way.  A type of one
 * basic type is combined in one pass over the packed bytes (on
 * mapped memory in the bulk mode: packed into acc_cur and unpacked
 * back, the copy loops of dtree_pack), not run by run.
 */
static int typed_acc(struct agent *a, struct win_local *l,
		     const struct rmad_am_hdr *h, const struct dtree *t,
		     const struct rmad_am_typed *th, uint64_t pk,
		     uint64_t len, int64_t lo, int64_t hi,
		     struct apply_ctx *x, uint64_t *rlen)
{
	uint64_t thr = (uint64_t)a->p.acc_bulk_threshold;
	int st = len > sizeof(acc_cur) ? RMAD_ERR_ARG : xfer_acc_lock(a, l);
	uint8_t *mem = NULL;

	if (st)
		return st;
	if (l->created) {
		x->cur = acc_cur;
		st = created_copy(a, l, t, th, pk, len, lo, hi,
				  acc_cur, 0);
	} else if (thr && len >= thr) {
		x->bulk = acc_bulk_begin(l->base,
					(uint32_t)a->p.max_clients,
					ACC_SMALL_WAIT_NS);
		if (x->bulk && t->homog) {
			mem = (uint8_t *)l->data + th->base;
			x->cur = acc_cur;
			dtree_pack(t, th->tcount, pk, pk + len, mem,
				   acc_cur);
		}
	}
	if (!st && x->cur && t->homog)
		rmad_acc_apply_excl(acc_cur, x->src, x->res, t->homog,
				    h->op,
				    len / rmad_dtype_size(t->homog));
	else if (!st)
		dtree_walk(t, th->tcount, pk, pk + len, apply_run, x);
	if (!st && x->cur && x->src) {	/* NO_OP only reads */
		if (l->created)
			st = created_copy(a, l, t, th, pk, len, lo,
					  hi, acc_cur, 1);
		else
			dtree_unpack(t, th->tcount, pk, pk + len, mem,
				     acc_cur);
	}
	if (x->bulk) {
		acc_bulk_end(l->base);
		a->st.acc_bulk++;
	}
	xfer_acc_unlock(l);
	if (!st && x->res)
		*rlen = len;
	return st;
}

int ty_apply(struct agent *a, struct win_local *l,
	     const struct rmad_am_hdr *h, const uint8_t *pl, uint8_t *res,
	     uint64_t *rlen, uint64_t max)
{
	struct rma_ctx *R = a->rma;
	uint32_t n = (uint32_t)a->p.type_cache_entries;
	struct rmad_am_typed th;
	struct apply_ctx x = { a, l, h, 0, NULL, NULL, 0, NULL, 0 };
	const struct dtree *t;
	uint64_t len = h->count, dlen, pk, total;
	int64_t lo, hi;
	int acc, in;

	*rlen = 0;
	if (h->payload_len < sizeof(th) || h->dtype != RMAD_BYTE)
		return RMAD_ERR_ARG;
	memcpy(&th, pl, sizeof(th));
	dlen = h->payload_len - sizeof(th);
	if (h->src_node >= (uint32_t)a->nnodes || th.slot >= n ||
	    !R->typ || !R->typ[h->src_node].cache ||
	    !(t = R->typ[h->src_node].cache[th.slot].t) ||
	    R->typ[h->src_node].cache[th.slot].key != th.key) {
		rmad_warn("node %u: type slot %u holds no type %#llx",
			  h->src_node, th.slot, (unsigned long long)th.key);
		return RMAD_ERR_TYPE;
	}
	if (!t->size || !th.tcount || th.tcount > INT32_MAX ||
	    th.tcount > (1ull << 40) / t->size || h->disp < th.base)
		return RMAD_ERR_ARG;
	total = th.tcount * t->size;
	pk = h->disp - th.base;
	if (!len || len > max || pk > total || len > total - pk)
		return RMAD_ERR_ARG;
	/* the whole footprint, in the window */
	if (dtree_footprint(t, th.tcount, &lo, &hi) ||
	    th.base > (1ull << 60) || (int64_t)th.base + lo < 0)
		return RMAD_ERR_DISP;
	if (l->dynamic ? dynwin_check(l, th.base + (uint64_t)lo,
				   (uint64_t)(hi - lo)) != 0 :
	    (uint64_t)((int64_t)th.base + hi) > l->size)
		return RMAD_ERR_DISP;
	acc = h->type == RMAD_AM_RMA_ACC || h->type == RMAD_AM_RMA_GACC;
	in = h->type == RMAD_AM_RMA_PUT || h->type == RMAD_AM_RMA_ACC ||
	     (h->type == RMAD_AM_RMA_GACC && h->op != RMAD_NO_OP);
	if (h->type == RMAD_AM_RMA_CAS || dlen != (in ? len : 0))
		return RMAD_ERR_ARG;
	if (acc) {
		uint32_t u = ty_unit_of(t, 1);

		if (!ty_ops_ok(t, h->op) ||
		    (h->type == RMAD_AM_RMA_ACC && h->op == RMAD_NO_OP))
			return RMAD_ERR_OP;
		if (!u || pk % u || len % u)
			return RMAD_ERR_ARG;	/* splits an element */
	}
	x.base = th.base;
	x.src = in ? pl + sizeof(th) : NULL;
	x.res = h->type == RMAD_AM_RMA_GET || h->type == RMAD_AM_RMA_GACC ?
		res : NULL;
	if (!acc && l->created) {
		int st = created_copy(a, l, t, &th, pk, len, lo, hi,
				      in ? (uint8_t *)x.src : res, in);

		*rlen = !st && !in ? len : 0;
		return st;
	}
	if (!acc && !l->created) {
		/* a put or get on mapped memory: the copy loops */
		if (in)
			dtree_unpack(t, th.tcount, pk, pk + len,
				     (uint8_t *)l->data + th.base, x.src);
		else
			dtree_pack(t, th.tcount, pk, pk + len,
				   (uint8_t *)l->data + th.base, res);
		*rlen = in ? 0 : len;
		return 0;
	}
	return typed_acc(a, l, h, t, &th, pk, len, lo, hi, &x, rlen);
}

/* ------------------------------------------------------------- life */
