/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_type.c - ops whose target layout is a derived datatype, and the
 * agents' cache of those types (rmad(7), "Datatypes").
 *
 * The client packs the origin data (or takes it in place when it is
 * contiguous) and posts one element that names the target type's wire
 * form (shared/dtree.h) in its memory: RMAD_OPF_TTYPE.  The origin agent
 * reads and parses it, checks the op against the whole footprint of the
 * type in the window, and sends the packed stream in chunks, several in
 * flight (the pipeline of rma_origin.c), each chunk naming a slot of the
 * target agent's cache of this node's types and the packed offset it
 * starts at.  The target agent walks only that chunk's part of the type
 * (dtree_walk) and applies it, checking the footprint again
 * (rma_type_apply.c).  This file is the origin side and the cache.
 *
 * The cache.  Each agent keeps, per origin node, type_cache_entries
 * slots of parsed types; the origin agent keeps a mirror of what each
 * target node's slots hold (their keys) and decides what goes where: a
 * type already in a slot costs nothing, another one takes the least
 * recently used slot and is sent there first (TYPE_DEF).  The channel
 * between two agents keeps send-after-send order (fabric.c), so the
 * definition is there before the first chunk that uses it, and a chunk
 * is applied when it arrives (typed ops never ride on a lock request,
 * so none waits in a lock queue): a slot may be given to another type
 * as soon as the chunks that name it were sent.  A slot is pinned while
 * an op still has chunks to send; an op that finds every slot pinned
 * waits for one.  The target checks each chunk's key against its slot,
 * so a mirror that went wrong (an unordered fabric, a restarted agent)
 * fails ops with RMAD_ERR_TYPE instead of applying them with another
 * type.  Memory: type_cache_entries parsed types of at most
 * type_blob_max bytes per peer node, and the mirror's keys.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "jobs.h"
#include "windows.h"
#include "dtree.h"
#include "dtype.h"
#include "log.h"
#include "rmad_abi.h"
#include "rma_internal.h"

struct ty_slot {			/* the origin's mirror */
	uint64_t key;
	uint64_t stamp;			/* last use, for LRU */
	uint32_t pins;			/* ops with chunks left to send */
	uint32_t len;			/* bytes of its wire form */
	uint8_t used;
};

struct rma_typed {
	uint64_t key;
	int64_t lo, hi;			/* its footprint, from tdisp */
	uint32_t tcount;
	uint32_t unit;			/* chunks are multiples of it */
	int32_t node, slot;		/* slot -1 until its first chunk */
	uint8_t pinned;
	uint32_t blob_len;
	uint8_t blob[];
};

void ty_span(const struct rma_op *op, uint64_t *lo, uint64_t *hi)
{
	*lo = op->tdisp + (uint64_t)op->ty->lo;
	*hi = op->tdisp + (uint64_t)op->ty->hi;
}

uint32_t ty_blob_max(struct agent *a)
{
	uint64_t b = (uint64_t)a->p.type_cache_bytes;

	if (!a->fab || !rmad_fabric_ordered(a->fab) ||
	    !a->p.type_cache_entries)
		return 0;
	return (uint32_t)(b < DTREE_TRAVEL_BYTES ? b : DTREE_TRAVEL_BYTES);
}

/* Bytes of packed data one typed chunk carries, a multiple of unit. */
size_t ty_room(struct agent *a, uint32_t unit)
{
	size_t room = a->p.am_buf_size - sizeof(struct rmad_am_hdr);

	if (room > RMAD_AM_MAX_PAYLOAD / 2)
		room = RMAD_AM_MAX_PAYLOAD / 2;
	room -= sizeof(struct rmad_am_typed);
	return unit ? room / unit * unit : room;
}

uint32_t ty_chunk_max(struct agent *a)
{
	return (uint32_t)ty_room(a, 1);
}

int32_t ty_check_op(struct agent *a, struct agent_win *w, struct rma_op *op,
		    const struct rmad_op_ttype *d, uint64_t tdisp_units,
		    uint64_t count)
{
	uint32_t max = ty_blob_max(a);
	struct rma_typed *ty;
	struct dtree *t = NULL;
	uint64_t size, base;
	int64_t lo, hi;
	int32_t du, st;
	int node, acc = rmad_op_desc(op->opcode)->acc;

	if (agent_win_target(w, op->target, &size, &du))
		return RMAD_ERR_RANK;
	node = agent_job_rank_node(w->job, op->target);
	if (node < 0 || node == a->node)
		return RMAD_ERR_RANK;
	if (agent_job_rank_dead(a, w->job, op->target))
		return RMAD_ERR_PROC_FAILED;	/* its process or its node */
	if (!rmad_op_desc(op->opcode)->rma || op->opcode == RMAD_OPC_CAS ||
	    op->staged || !d->blob_len || d->blob_len > max)
		return RMAD_ERR_TYPE;
	if (count == 0 || count > INT32_MAX)
		return RMAD_ERR_ARG;
	ty = malloc(sizeof(*ty) + d->blob_len);
	if (!ty)
		return RMAD_ERR_NOMEM;
	st = xfer_client_io(a, op->client, d->blob_addr, ty->blob, d->blob_len, 0);
	if (!st)
		st = dtree_parse(ty->blob, d->blob_len, DTREE_TRAVEL_NODES,
				 &t);
	if (st)
		goto bad;
	st = RMAD_ERR_ARG;
	if (!t->size || count > (1ull << 40) / t->size)
		goto bad;
	op->len = count * t->size;
	st = RMAD_ERR_TYPE;
	ty->unit = ty_unit_of(t, acc);
	if (!ty->unit || ty->unit > ty_room(a, 1))
		goto bad;
	if (acc && (op->op == 0 || !ty_ops_ok(t, op->op) ||
		    (op->opcode == RMAD_OPC_ACC && op->op == RMAD_NO_OP))) {
		st = RMAD_ERR_OP;
		goto bad;
	}
	if (w->dynamic)
		du = 1;
	if (tdisp_units > (w->dynamic ? 1ull << 57 : 1ull << 40) /
			  (uint64_t)du) {
		st = RMAD_ERR_DISP;
		goto bad;
	}
	base = tdisp_units * (uint64_t)du;
	/* the whole footprint, here and again at the target */
	if (dtree_footprint(t, count, &lo, &hi))
		goto bad;
	if (!w->dynamic && ((int64_t)base + lo < 0 ||
			    (int64_t)base + hi > (int64_t)size)) {
		st = RMAD_ERR_DISP;
		goto bad;
	}
	op->tdisp = base;
	ty->lo = lo;
	ty->hi = hi;
	op->dtype = (uint8_t)RMAD_BYTE;	/* chunks count bytes */
	ty->key = dtree_key(ty->blob, d->blob_len);
	ty->blob_len = d->blob_len;
	ty->tcount = (uint32_t)count;
	ty->node = node;
	ty->slot = -1;
	ty->pinned = 0;
	op->ty = ty;
	a->rma->nty++;
	dtree_free(t);
	a->st.typed_ops++;
	/* large puts, accumulates, gets and get-accumulates: chunks of
	 * the packed stream that the target's agent reads, or writes for a
	 * get (both for a get-accumulate: rma_pull.c);
	 * their slot stays pinned until the op ends, for the target
	 * applies each one only once it has read it */
	if ((op->opcode == RMAD_OPC_PUT || op->opcode == RMAD_OPC_ACC ||
	     op->opcode == RMAD_OPC_GET || op->opcode == RMAD_OPC_GACC) &&
	    a->fab &&
	    a->p.rdma_threshold && op->len >= a->p.rdma_threshold &&
	    rmad_fabric_has_rma(a->fab)) {
		op->rdma = 1;
		op->pull = 1;
	}
	return 0;
bad:
	dtree_free(t);
	free(ty);
	return st;
}

static struct ty_peer *peer(struct agent *a, int node)
{
	struct rma_ctx *R = a->rma;

	if (node < 0 || node >= a->nnodes)
		return NULL;
	if (!R->typ)
		R->typ = calloc((size_t)a->nnodes, sizeof(*R->typ));
	return R->typ ? &R->typ[node] : NULL;
}

static struct ty_slot *mirror(struct agent *a, int node)
{
	struct ty_peer *p = peer(a, node);

	if (p && !p->mir)
		p->mir = calloc((size_t)a->p.type_cache_entries,
				sizeof(struct ty_slot));
	return p ? p->mir : NULL;
}

static void unpin(struct agent *a, struct rma_typed *ty)
{
	struct ty_slot *m;

	if (!ty->pinned)
		return;
	ty->pinned = 0;
	m = a->rma->typ ? a->rma->typ[ty->node].mir : NULL;
	if (m && m[ty->slot].pins && !--m[ty->slot].pins &&
	    a->rma->ty_wait) {
		a->rma->ty_wait = 0;
		a->rma->retry_pending = 1;	/* a waiting op may go */
	}
}

/* TYPE_DEF of slot k: the wire form in messages of what a buffer holds,
 * or with no blob, "forget slot k" */
static int send_def(struct agent *a, struct rma_origin *o, int node,
		    uint32_t k, uint64_t key, const uint8_t *blob,
		    uint32_t len)
{
	struct rmad_am_type_def td = { .key = key, .slot = k,
				       .form_len = len };
	size_t fr = a->p.am_buf_size - sizeof(struct rmad_am_hdr);
	uint8_t buf[RMAD_AM_MAX_PAYLOAD];
	uint32_t off = 0;

	if (fr > sizeof(buf))
		fr = sizeof(buf);
	fr -= sizeof(td);
	do {
		uint32_t n = len - off < fr ? len - off : (uint32_t)fr;
		struct rmad_am_hdr h = {
			.type = RMAD_AM_TYPE_DEF,
			.job = o->w->job->key,
		};

		td.piece_off = off;
		memcpy(buf, &td, sizeof(td));
		if (n)
			memcpy(buf + sizeof(td), blob + off, n);
		if (am_send_st(a, node, &h, buf, sizeof(td) + n, &o->st))
			return am_node_dead(a, node) ? RMAD_ERR_PROC_FAILED :
						       RMAD_ERR_FABRIC;
		off += n;
	} while (off < len);
	return 0;
}

int ty_issue(struct agent *a, struct rma_origin *o, struct rma_op *op)
{
	struct rma_ctx *R = a->rma;
	struct rma_typed *ty = op->ty;
	uint32_t n = (uint32_t)a->p.type_cache_entries;
	uint64_t budget = (uint64_t)a->p.type_cache_bytes;
	struct ty_slot *m = mirror(a, ty->node);
	int32_t k;
	int err;

	if (ty->slot >= 0)
		return 0;
	if (!m)
		return RMAD_ERR_NOMEM;
	for (k = 0; k < (int32_t)n; k++)
		if (m[k].used && m[k].key == ty->key)
			break;
	while (k == (int32_t)n) {
		/* a slot, and room for its bytes: least recently used
		 * types go (none whose chunks are still to be sent) */
		uint64_t total = 0;
		int32_t fr = -1, lru = -1;

		for (int32_t j = 0; j < (int32_t)n; j++) {
			if (m[j].used)
				total += m[j].len;
			if (m[j].pins)
				continue;
			if (!m[j].used) {
				if (fr < 0)
					fr = j;
			} else if (lru < 0 || m[j].stamp < m[lru].stamp) {
				lru = j;
			}
		}
		if (fr >= 0 && total + ty->blob_len <= budget) {
			k = fr;
		} else if (lru < 0) {
			R->ty_wait = 1;	/* every slot has chunks to send */
			return 1;
		} else if (total - m[lru].len + ty->blob_len <= budget) {
			k = lru;	/* its definition replaces it */
		} else {
			/* not enough room even then: it goes, and more */
			err = send_def(a, o, ty->node, (uint32_t)lru, 0, NULL,
				       0);
			if (err)
				return err;
			m[lru].used = 0;
			continue;
		}
		err = send_def(a, o, ty->node, (uint32_t)k, ty->key, ty->blob,
			       ty->blob_len);
		if (err)
			return err;
		m[k].key = ty->key;
		m[k].len = ty->blob_len;
		m[k].used = 1;
		a->st.type_defs_sent++;
		o->st.type_defs++;
	}
	m[k].stamp = ++R->tyclock;
	m[k].pins++;
	ty->slot = k;
	ty->pinned = 1;
	return 0;
}

size_t ty_chunk_head(struct rma_op *op, uint8_t *buf)
{
	struct rma_typed *ty = op->ty;
	struct rmad_am_typed th = {
		.slot = (uint32_t)ty->slot,
		.tcount = ty->tcount,
		.key = ty->key,
		.base = op->tdisp,
	};

	memcpy(buf, &th, sizeof(th));
	return sizeof(th);
}

uint32_t ty_unit(const struct rma_op *op)
{
	return op->ty->unit;
}

void ty_sent(struct agent *a, struct rma_op *op)
{
	if (op->ty && op->sent >= op->len)
		unpin(a, op->ty);
}

void ty_op_free(struct agent *a, struct rma_op *op)
{
	if (!op->ty)
		return;
	unpin(a, op->ty);
	free(op->ty);
	op->ty = NULL;
	a->rma->nty--;
}

/* ------------------------------------------------------------ target */

static void ent_clear(struct ty_peer *p, struct ty_ent *c)
{
	dtree_free(c->t);
	p->bytes -= c->len;
	c->t = NULL;
	c->key = 0;
	c->len = 0;
}

static void part_reset(struct ty_peer *p)
{
	free(p->part);
	p->part = NULL;
	p->part_total = p->part_got = 0;
}

/*
 * A definition (or a piece of one, in order: piece_off its offset,
 * form_len the whole length), or with form_len 0 and no bytes at all
 * the order to forget a slot.  The cache keeps to type_cache_bytes per
 * origin node whatever the origin says; what does not fit is refused,
 * and the ops that name it fail with RMAD_ERR_TYPE.
 */
static void on_type_def(struct agent *a, const struct rmad_am_hdr *h,
			const void *payload)
{
	uint32_t n = (uint32_t)a->p.type_cache_entries;
	uint32_t node = h->src_node, len;
	struct ty_peer *p = peer(a, (int)node);
	struct rmad_am_type_def td;
	const uint8_t *pl = (const uint8_t *)payload + sizeof(td);
	struct dtree *t = NULL;
	struct ty_ent *c;
	uint8_t *blob;
	int err;

	if (am_payload(a, h, payload, &td, sizeof(td), 0))
		return;
	len = h->payload_len - (uint32_t)sizeof(td);
	if (!p || td.slot >= n) {
		a->st.pkts_dropped++;
		rmad_warn("dropped a type definition from node %u (slot %u "
			  "of %u)", node, td.slot, n);
		return;
	}
	if (!p->cache)
		p->cache = calloc(n, sizeof(struct ty_ent));
	if (!p->cache) {
		rmad_warn("no memory for node %u's types", node);
		return;
	}
	c = &p->cache[td.slot];
	if (!td.form_len && !len) {
		ent_clear(p, c);	/* evicted by its origin */
		return;
	}
	if (!td.piece_off) {
		part_reset(p);
		if (!len || td.form_len > DTREE_TRAVEL_BYTES ||
		    len > td.form_len || !(p->part = malloc(td.form_len)))
			goto bad;
		p->part_total = td.form_len;
		p->part_slot = td.slot;
		p->part_key = td.key;
	} else if (!p->part || td.piece_off != p->part_got ||
		   td.form_len != p->part_total || td.slot != p->part_slot ||
		   td.key != p->part_key || !len ||
		   len > p->part_total - p->part_got) {
		part_reset(p);
		goto bad;
	}
	memcpy(p->part + p->part_got, pl, len);
	p->part_got += len;
	if (p->part_got < p->part_total)
		return;
	/* whole: checked, parsed, and in its slot if it fits */
	blob = p->part;
	len = p->part_total;
	p->part = NULL;
	part_reset(p);
	err = dtree_key(blob, len) != td.key ? RMAD_ERR_TYPE :
	      dtree_parse(blob, len, DTREE_TRAVEL_NODES, &t);
	free(blob);
	ent_clear(p, c);
	if (!err && p->bytes + len > (uint64_t)a->p.type_cache_bytes) {
		rmad_warn("node %u's types exceed type_cache_bytes here "
			  "(the same on every node?)", node);
		dtree_free(t);
		return;
	}
	if (err) {
		a->st.pkts_dropped++;
		rmad_warn("node %u sent a bad type (%d)", node, err);
		return;
	}
	c->t = t;
	c->key = td.key;
	c->len = len;
	p->bytes += len;
	a->st.type_defs_recv++;
	return;
bad:
	a->st.pkts_dropped++;
	rmad_warn("dropped a piece of a type definition from node %u", node);
}

void ty_node_dead(struct agent *a, int node)
{
	struct rma_ctx *R = a->rma;
	uint32_t n = (uint32_t)a->p.type_cache_entries;
	struct ty_peer *p;

	if (node < 0 || node >= a->nnodes || !R->typ)
		return;
	p = &R->typ[node];
	for (uint32_t k = 0; p->mir && k < n; k++)
		p->mir[k].used = 0;
	for (uint32_t k = 0; p->cache && k < n; k++)
		ent_clear(p, &p->cache[k]);
	part_reset(p);
}

void ty_init(struct agent *a)
{
	am_register(a, RMAD_AM_TYPE_DEF, on_type_def);
}

void ty_fini(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	/* only while typed ops are left: the op array is large and
	 * mostly never touched (a read of each page took 150 ms) */
	for (uint32_t k = 0; R->sh && R->nty && k < R->nsh; k++)
		ty_op_free(a, &R->sh[k]);
	for (int i = 0; R->typ && i < a->nnodes; i++) {
		ty_node_dead(a, i);
		free(R->typ[i].mir);
		free(R->typ[i].cache);
	}
	free(R->typ);
	R->typ = NULL;
}
