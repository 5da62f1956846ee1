/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_derived.c - put, get, accumulate and get_accumulate with derived
 * datatypes, and with origin and target types that differ but whose type
 * signatures match.
 *
 * The origin, result and target layouts are walked into runs of one
 * basic type (types.c), and cut where any of them changes run: each
 * piece is then contiguous in every buffer, of one basic type.  Every
 * check is done on all pieces first (signatures, the target footprint
 * against the window, the op on each basic type), so that a bad call
 * changes nothing.  Then each piece is done: in place for a same-node
 * target (the client packs and unpacks directly), or handed to the agent
 * as a contiguous op whose target offset is in bytes
 * (RMAD_OPF_TBYTES).  Accumulates stay atomic per basic element, as the
 * contiguous path's are.
 *
 * A request-based op whose pieces went to the agent completes with a
 * flush_local marker posted after them, without waiting in the call.
 *
 * An op to another node whose types are each of one basic type goes to
 * the agent as one op instead (typed()): the origin data packed (or in
 * place when contiguous), the target type's tree named in the element
 * (RMAD_OPF_TTYPE), the call waiting until the op is complete at the
 * origin, then unpacking a get's result.  The agents cache the type
 * (agent/rma_type.c).  Types that mix basic types, and a client whose
 * agent cannot read its memory or takes no types, use the pieces.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "dtree.h"
#include "dtype.h"
#include "internal.h"

struct piece {
	uint64_t o, r;			/* origin, result byte offsets */
	int64_t t;			/* target offset from the disp */
	uint64_t len;
	uint32_t basic;
};

/* One layout's cursor over its runs. */
struct cur {
	const struct rmad_trun *r;
	size_t n, k;
	uint64_t used;			/* bytes of run k consumed */
};

static int cur_more(const struct cur *c)
{
	return c->k < c->n;
}

/*
 * Cut the layouts (2 or 3) into pieces; RMAD_ERR_TYPE when their
 * signatures differ.  *out is malloc'd.
 */
static int cut(struct cur *cs, int nc, struct piece **out, size_t *np)
{
	struct piece *ps = NULL;
	size_t n = 0, cap = 0;

	for (;;) {
		uint64_t len = UINT64_MAX;
		uint32_t basic = 0;
		int more = 0, done = 0;
		struct piece p = { 0 };

		for (int i = 0; i < nc; i++) {
			more += cur_more(&cs[i]);
			done += !cur_more(&cs[i]);
		}
		if (!more)
			break;
		if (done)
			goto mismatch;	/* one ran out before the others */
		for (int i = 0; i < nc; i++) {
			const struct rmad_trun *r = &cs[i].r[cs[i].k];
			uint64_t left = r->len - cs[i].used;

			if (i && r->basic != basic)
				goto mismatch;
			basic = r->basic;
			len = left < len ? left : len;
		}
		for (int i = 0; i < nc; i++) {
			const struct rmad_trun *r = &cs[i].r[cs[i].k];
			int64_t at = r->off + (int64_t)cs[i].used;

			if (i == 0)
				p.t = at;
			else if (i == 1)
				p.o = (uint64_t)at;
			else
				p.r = (uint64_t)at;
			cs[i].used += len;
			if (cs[i].used == r->len) {
				cs[i].k++;
				cs[i].used = 0;
			}
		}
		p.len = len;
		p.basic = basic;
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			struct piece *q;

			if (c2 > RMAD_TRUNS_MAX) {
				free(ps);
				return RMAD_ERR_NOMEM;
			}
			q = realloc(ps, sizeof(*q) * c2);
			if (!q) {
				free(ps);
				return RMAD_ERR_NOMEM;
			}
			ps = q;
			cap = c2;
		}
		ps[n++] = p;
	}
	*out = ps;
	*np = n;
	return 0;
mismatch:
	free(ps);
	return RMAD_ERR_TYPE;
}

/* ----------------------------------------------------- typed ops */

#define NOT_TYPED	1	/* typed() cannot: the pieces path does */

/* A layout: `count` of a type, in a buffer. */
struct lay {
	struct rmad_type_s *h;		/* held, or NULL for a basic type */
	const struct dtree *t;
	struct dtree *own;		/* a basic type's own tree */
	const uint8_t *bb;		/* ... and its wire form */
	uint64_t count, bytes;
	uint32_t homog;
	/* a type that mixes basic types: one instance's signature, as
	 * (basic type, bytes) runs */
	struct sigrun *sig;
	size_t nsig;
	int sig_err;
};

/* the wire forms of the predefined types: they outlive any op */
#define BASIC_BLOB	6
static uint8_t basic_blobs[RMAD_DTYPE_MAX + 1][BASIC_BLOB];
static pthread_once_t basic_once = PTHREAD_ONCE_INIT;

static void basic_init(void)
{
	uint32_t m = DTREE_MAGIC;

	for (int i = 1; i <= RMAD_DTYPE_MAX; i++) {
		memcpy(basic_blobs[i], &m, 4);
		basic_blobs[i][4] = DTREE_BASIC;
		basic_blobs[i][5] = (uint8_t)i;
	}
}

#define SIG_MAX	256	/* signature runs compared here, else pieces */

struct sigrun {
	uint32_t basic;
	uint64_t bytes;
};

static void sig_run(void *arg, int64_t off, uint64_t len, uint32_t basic)
{
	struct lay *l = arg;

	(void)off;
	if (l->sig_err)
		return;
	if (l->nsig && l->sig[l->nsig - 1].basic == basic) {
		l->sig[l->nsig - 1].bytes += len;
		return;
	}
	if (l->nsig == SIG_MAX) {
		l->sig_err = 1;
		return;
	}
	l->sig[l->nsig++] = (struct sigrun){ basic, len };
}

static int lay_get(struct lay *l, rmad_datatype_t type, int count)
{
	memset(l, 0, sizeof(*l));
	l->count = (uint64_t)count;
	if (type >= 1 && type <= RMAD_DTYPE_MAX) {
		pthread_once(&basic_once, basic_init);
		l->bb = basic_blobs[type];
		if (dtree_parse(l->bb, BASIC_BLOB, 1, &l->own))
			return NOT_TYPED;
		l->t = l->own;
	} else {
		l->h = rmad_type_tree(type);
		if (!l->h)
			return NOT_TYPED;
		l->t = rmad_tree_of(l->h, NULL, NULL);
	}
	if (l->t->mixed) {
		l->sig = malloc(SIG_MAX * sizeof(*l->sig));
		if (!l->sig)
			return RMAD_ERR_NOMEM;
		dtree_walk(l->t, 1, 0, l->t->size, sig_run, l);
		if (l->sig_err)
			return NOT_TYPED;
	}
	l->homog = l->t->homog;
	l->bytes = l->count * l->t->size;
	return 0;
}

static void lay_put(struct lay *l)
{
	if (l->h)
		rmad_type_release(l->h);
	dtree_free(l->own);
	free(l->sig);
}

/*
 * Do a and b have the same type signature?  1 yes, 0 no, NOT_TYPED
 * when it takes more than this cheap test (types that mix basic types
 * with different counts or instance signatures: the pieces decide).
 */
static int sig_same(const struct lay *a, const struct lay *b)
{
	if (a->bytes != b->bytes)
		return 0;
	if (!a->bytes)
		return 1;
	if (!a->t->mixed && !b->t->mixed)
		return a->homog == b->homog;
	if (!a->t->mixed || !b->t->mixed || a->count != b->count ||
	    a->nsig != b->nsig ||
	    memcmp(a->sig, b->sig, a->nsig * sizeof(*a->sig)))
		return NOT_TYPED;
	return 1;
}

/* its data in one run from buf + *off */
static int lay_contig(const struct lay *l, int64_t *off)
{
	const struct dtree *t = l->t;

	if (!t->dense || (l->count > 1 && dtree_extent(t) != (int64_t)t->size))
		return 0;
	*off = t->dlo;
	return 1;
}

/* buf's data packed (or in place): *out, *tmp to free */
static int lay_pack(const struct lay *l, const void *buf, uint8_t **out,
		    uint8_t **tmp)
{
	int64_t off;

	*tmp = NULL;
	if (lay_contig(l, &off)) {
		*out = (uint8_t *)buf + off;
		return 0;
	}
	*tmp = malloc(l->bytes);
	if (!*tmp)
		return RMAD_ERR_NOMEM;
	dtree_pack(l->t, l->count, 0, l->bytes, buf, *tmp);
	*out = *tmp;
	return 0;
}

/* Whether an op of opc moves origin data to the target, and results
 * back (an origin or result buffer may be NULL: MPI's MPI_BOTTOM). */
static int data_in(uint16_t opc, uint32_t op)
{
	return opc == RMAD_OPC_PUT || opc == RMAD_OPC_ACC ||
	       (opc == RMAD_OPC_GACC && op != RMAD_NO_OP);
}

static int data_out(uint16_t opc)
{
	return opc == RMAD_OPC_GET || opc == RMAD_OPC_GACC;
}

/*
 * A NULL buffer (MPI_BOTTOM) with count elements of type: the type's
 * displacements are then absolute addresses (rmad_get_address), as
 * MPI-3.1 4.1.12 defines; one whose data would start in the first page
 * is refused (RMAD_ERR_ARG), not dereferenced.
 */
static int absolute(rmad_datatype_t type, int count)
{
	ptrdiff_t lb = 0, ext = 0;

	if (!count)
		return 1;
	if (rmad_type_get_true_extent(type, &lb, &ext))
		return 0;
	return !ext || lb >= 4096;
}

/*
 * The typed path (see the head of this file): 0 or RMAD_ERR_* once it
 * took the op, NOT_TYPED when the pieces must do it.
 */
static int typed(rmad_win_t w, uint16_t opc, const void *origin, int ocount,
		 rmad_datatype_t otype, void *result, int rcount,
		 rmad_datatype_t rtype, int target, size_t tdisp, int tcount,
		 rmad_datatype_t ttype, uint32_t op, uint64_t base,
		 uint64_t size, struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_request_s *keep = NULL;
	struct lay lt, lo = { 0 }, lr = { 0 };
	uint8_t *src = NULL, *dst = NULL, *stmp = NULL, *rtmp = NULL;
	const uint8_t *blob;
	size_t blen;
	int64_t flo, fhi;
	int in = data_in(opc, op), outb = data_out(opc), err;

	if (c->staged || !c->hdr->type_blob_max || opc == RMAD_OPC_CAS)
		return NOT_TYPED;
	err = lay_get(&lt, ttype, tcount);
	if (!err && in)
		err = lay_get(&lo, otype, ocount);
	if (!err && outb)
		err = lay_get(&lr, rtype, rcount);
	if (err)
		goto out;
	err = NOT_TYPED;
	if (lt.h) {
		rmad_tree_of(lt.h, &blob, &blen);
	} else {
		blob = lt.bb;
		blen = BASIC_BLOB;
	}
	/* what the agents take of a type that travels */
	if (blen > c->hdr->type_blob_max || lt.t->depth > DTREE_MAX_DEPTH ||
	    lt.t->nodes > DTREE_TRAVEL_NODES)
		goto out;
	/* signatures */
	if ((in && (err = sig_same(&lo, &lt)) != 1) ||
	    (outb && (err = sig_same(&lr, &lt)) != 1)) {
		if (!err)
			err = RMAD_ERR_TYPE;
		goto out;
	}
	if (!lt.bytes) {
		err = rmad_counted(w, -1);	/* nothing moves */
		goto out;
	}
	if (opc != RMAD_OPC_PUT && opc != RMAD_OPC_GET) {
		/* a chunk holds whole instances of a mixed type */
		err = NOT_TYPED;
		if (lt.t->mixed && lt.t->size > c->hdr->type_chunk_max)
			goto out;
		err = 0;
		for (size_t k = 0; k < lt.nsig && !err; k++)
			err = rmad_op_check(lt.sig[k].basic, op);
		if (!lt.nsig)
			err = rmad_op_check(lt.homog, op);
		if (!err && opc == RMAD_OPC_ACC && op == RMAD_NO_OP)
			err = RMAD_ERR_OP;
		if (err)
			goto out;
	}
	/* the footprint of the target type, against the window */
	if (dtree_footprint(lt.t, lt.count, &flo, &fhi) ||
	    (w->flavor != RMAD_WIN_FLAVOR_DYNAMIC &&
	     ((int64_t)base + flo < 0 ||
	      (uint64_t)((int64_t)base + fhi) > size))) {
		err = RMAD_ERR_DISP;
		goto out;
	}
	if (in && (err = lay_pack(&lo, origin, &src, &stmp)) != 0)
		goto out;
	if (outb) {
		int64_t off;

		if (lay_contig(&lr, &off)) {
			dst = (uint8_t *)result + off;
		} else {
			dst = rtmp = malloc(lr.bytes);
			if (!dst) {
				err = RMAD_ERR_NOMEM;
				goto out;
			}
		}
	}
	/* only a result to unpack waits in the call; otherwise a request
	 * (the caller's, or one of ours nobody waits for) keeps the packed
	 * origin and the type until the op completes */
	if (!rtmp) {
		keep = rq ? rq : rmad_req_internal();
		if (!keep) {
			err = RMAD_ERR_NOMEM;
			goto out;
		}
		rmad_req_hold(keep, stmp, lt.h, !rq);
	}
	err = rmad_post_typed(w, opc, target, tdisp, tcount, op, src, dst,
			      blob, blen, keep);
	if (keep && err) {
		rmad_req_hold(keep, NULL, NULL, 0);
		if (!rq)
			free(keep);
	} else if (keep) {
		stmp = NULL;		/* the request's now */
		lt.h = NULL;
	}
	if (!err && rtmp)
		dtree_unpack(lr.t, lr.count, 0, lr.bytes, result, rtmp);
	if (!err)
		err = rmad_counted(w, 0);
out:
	free(stmp);
	free(rtmp);
	lay_put(&lt);
	lay_put(&lo);
	lay_put(&lr);
	return err;
}

/*
 * Every check passed: the np pieces of an op, in place on the same-node
 * member p (a created or dynamic window's in batches: one system call,
 * one acc_lock for many) or, p NULL, each to the agent.  in: data goes
 * to the target (from origin); outb: data comes back (to result).
 */
static int move_pieces(rmad_win_t w, uint16_t opc, uint32_t op, int target,
		       struct win_peer *p, uint64_t base,
		       const struct piece *ps, size_t np, int in, int outb,
		       const void *origin, void *result)
{
	int err = 0;

	if (p && p->created) {
		struct rmad_peer_run *pr = malloc(np * sizeof(*pr));

		for (size_t k = 0; pr && k < np; k++) {
			const struct piece *q = &ps[k];

			pr[k] = (struct rmad_peer_run){
				.off = (uint64_t)((int64_t)base + q->t),
				.len = q->len,
				.src = in ? (const uint8_t *)origin + q->o :
					    NULL,
				.dst = outb ? (uint8_t *)result + q->r : NULL,
				.basic = q->basic,
			};
		}
		err = pr ? rmad_peer_runs(p, opc, op, pr, np) : RMAD_ERR_NOMEM;
		free(pr);
		return err;
	}
	for (size_t k = 0; k < np && !err; k++) {
		const struct piece *q = &ps[k];
		const uint8_t *src = in ? (const uint8_t *)origin + q->o : NULL;
		uint8_t *dst = outb ? (uint8_t *)result + q->r : NULL;
		uint64_t toff = (uint64_t)((int64_t)base + q->t);
		uint64_t cnt = q->len / rmad_dtype_size(q->basic);

		if (p) {
			switch (opc) {
			case RMAD_OPC_PUT:
				err = rmad_peer_put(p, toff, src, q->len);
				break;
			case RMAD_OPC_GET:
				err = rmad_peer_get(p, toff, dst, q->len);
				break;
			default:
				err = rmad_peer_acc(p, toff, src, dst, q->basic,
						    op, cnt);
				break;
			}
			continue;
		}
		err = rmad_post_piece(w, opc, target, toff, q->basic, q->len,
				      op, opc == RMAD_OPC_GET ? dst : src,
				      opc == RMAD_OPC_GET ? NULL : dst);
	}
	return err;
}

int rmad_derived_op(rmad_win_t w, uint16_t opc, const void *origin,
		    int ocount, rmad_datatype_t otype, void *result,
		    int rcount, rmad_datatype_t rtype, int target,
		    size_t tdisp, int tcount, rmad_datatype_t ttype,
		    uint32_t op, struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_trun *tr = NULL, *orr = NULL, *rr = NULL;
	size_t nt = 0, no = 0, nr = 0, np = 0;
	struct cur cs[3];
	struct piece *ps = NULL;
	struct win_peer *p;
	uint64_t size, nbytes, base, tb;
	int64_t lo, hi, olo, ohi;
	int du, err, nc = 0;
	int in = data_in(opc, op);	/* data goes to the target */
	int outb = data_out(opc);	/* data comes back */

	if (!rmad_win_ok(w) || tcount < 0 || ocount < 0 || rcount < 0)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if (target < 0 || target >= c->b.size)
		return RMAD_ERR_RANK;
	err = rmad_win_target(w, target, &p, &size, &du);
	if (err)
		return err;
	if (p && rmad_peer_dead(p))
		return RMAD_ERR_PROC_FAILED;
	if (!rmad_covered(w, target, p))
		return RMAD_ERR_SYNC;
	if (rq && w->epoch != EPOCH_LOCK && w->epoch != EPOCH_LOCK_ALL)
		return RMAD_ERR_SYNC;
	if (rmad_type_check(ttype) || (in && rmad_type_check(otype)) ||
	    (outb && rmad_type_check(rtype)))
		return RMAD_ERR_TYPE;
	if ((in && !origin && !absolute(otype, ocount)) ||
	    (outb && !result && !absolute(rtype, rcount)))
		return RMAD_ERR_ARG;
	if (!p && c->dead)
		return RMAD_ERR_AGENT;
	if (tdisp > (w->flavor == RMAD_WIN_FLAVOR_DYNAMIC ? RMAD_DYN_SPAN :
		     1ull << 40) / (uint64_t)du)
		return RMAD_ERR_DISP;
	base = (uint64_t)tdisp * (uint64_t)du;
	if (!p) {
		/* to another node: one op when the types allow */
		err = typed(w, opc, origin, ocount, otype, result, rcount,
			    rtype, target, tdisp, tcount, ttype, op, base,
			    size, rq);
		if (err != NOT_TYPED)
			return err;
		err = 0;
	}
	/* the layouts: target first, then origin, then result */
	err = rmad_type_runs(ttype, tcount, &tr, &nt, &tb, &lo, &hi);
	if (!err && in)
		err = rmad_type_runs(otype, ocount, &orr, &no, &nbytes, &olo,
				     &ohi);
	if (!err && outb)
		err = rmad_type_runs(rtype, rcount, &rr, &nr, &nbytes, &olo,
				     &ohi);
	if (err)
		goto out;
	/* the footprint of the target type, against the window */
	if (nt && ((int64_t)base + lo < 0 || (int64_t)base + hi < 0 ||
		   (uint64_t)((int64_t)base + hi) > size)) {
		err = RMAD_ERR_DISP;
		goto out;
	}
	cs[nc++] = (struct cur){ tr, nt, 0, 0 };
	/* the origin layout second (cut()'s slot 1), the result third */
	cs[nc++] = in ? (struct cur){ orr, no, 0, 0 } :
			(struct cur){ rr, nr, 0, 0 };
	if (in && outb)
		cs[nc++] = (struct cur){ rr, nr, 0, 0 };
	err = cut(cs, nc, &ps, &np);
	if (err)
		goto out;
	if (!in && outb)	/* the result sat in slot 1 */
		for (size_t k = 0; k < np; k++)
			ps[k].r = ps[k].o;
	for (size_t k = 0; k < np && opc != RMAD_OPC_PUT &&
			   opc != RMAD_OPC_GET; k++) {
		err = rmad_op_check(ps[k].basic, op);
		if (err)
			goto out;
	}
	if (!np) {
		err = rmad_counted(w, -1);	/* nothing moves */
		goto out;
	}
	/* every check passed: now the pieces */
	err = move_pieces(w, opc, op, target, p, base, ps, np, in, outb,
			  origin, result);
	if (!err)
		err = rmad_counted(w, p != NULL);
	/* a request whose pieces went to the agent completes with a
	 * flush_local marker posted after them (done in place otherwise) */
	if (!err && rq && !p)
		err = rmad_post_marker(w, target, rq);
out:
	free(tr);
	free(orr);
	free(rr);
	free(ps);
	return err;
}
