/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_pull_origin.c - the origin side of pulled chunks (rma_pull.c
 * tells the whole design): a large accumulate, get-accumulate, put or
 * get to another node goes out as chunks that its target's agent reads
 * (or writes) with fi_read/fi_write, each chunk in a transfer slot's
 * bounce buffer (or the client's rmad_alloc_mem memory, held in place)
 * registered for the target alone, until its answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "am.h"
#include "mem.h"
#include "dtype.h"
#include "log.h"
#include "rmad_abi.h"
#include "rma_internal.h"

/* Bytes of one pulled chunk of elements (or, typed, units) of size es. */
static uint64_t pull_room(struct agent *a, size_t es)
{
	uint64_t n = (uint64_t)a->p.rdma_chunk;

	if (n > RMAD_AM_PULL_MAX)
		n = RMAD_AM_PULL_MAX;
	return n / es * es;
}

static void slot_release(struct rma_ctx *R, struct rma_xfer *x)
{
	rmad_fabric_mr_close(x->mr);
	x->mr = NULL;
	agent_mem_drop(x->a, x->held);
	x->held = NULL;
	x->pull = 0;
	R->npull_slots--;
	x->next = R->xfree;
	R->xfree = x;
	R->retry_pending = 1;	/* an op may wait for a slot */
}

int pull_issue(struct agent *a, struct rma_origin *o, struct rma_target *t,
	       uint32_t i)
{
	struct rma_ctx *R = a->rma;
	struct rma_op *op = &R->sh[i];
	size_t es = rmad_dtype_size(op->dtype);
	int err = es ? xfer_bounce_init(a) : RMAD_ERR_TYPE;
	uint64_t room = es ? pull_room(a, op->ty ? ty_unit(op) : es) : 0;
	int get = op->opcode == RMAD_OPC_GET;
	int fetch = op->opcode == RMAD_OPC_GACC;
	int in = rmad_op_data_in(op->opcode, op->op);

	while (!err && op->sent < op->len) {
		struct rma_xfer *x = R->xfree;
		uint64_t n = op->len - op->sent;
		struct rmad_am_pull pl;
		/* typed: the cached type's head, then the chunk's name */
		uint8_t body[sizeof(struct rmad_am_typed) + sizeof(pl)];
		size_t head = op->ty ? ty_chunk_head(op, body) : 0;
		void *src;
		struct rmad_am_hdr h = {
			.type = rmad_op_desc(op->opcode)->am_type,
			.flags = RMAD_AMF_PULL | RMAD_AMF_ACK_REQ |
				 (op->ty ? RMAD_AMF_TYPED : 0),
			.job = o->w->job->key,
			.origin = o->rank,
			.target = op->target,
			.dtype = op->dtype,
			.op = op->op,
			.wkey = o->w->key,
		};

		if (op->nx >= XFER_PER_OP)
			return 0;
		if (!x) {
			R->retry_pending = 1;	/* a chunk of another op ends */
			return 0;
		}
		if (n > room)
			n = room;
		/* in place in rmad_alloc_mem memory, held until the
		 * answer; else through the slot's bounce buffer (a get's
		 * bytes are copied out of it at the answer, and a
		 * get-accumulate's results, written over its operands) */
		src = op->staged || fetch ? NULL :
		      agent_mem_hold(a, op->client, op->origin + op->sent, n,
				     &x->held);
		if (!src) {
			src = x->buf;
			if (in)
				err = xfer_op_io(a, op, op->origin + op->sent,
					    x->buf, (size_t)n, 0);
		}
		/* the target reads the operands, or writes a get's bytes,
		 * or both */
		if (!err)
			err = rmad_fabric_mr_reg(a->fab, src, (size_t)n,
						 fetch && in ? 1 :
						 get || fetch ? 3 : 2,
						 &x->mr, &pl.key, &pl.raddr,
						 NULL);
		if (err) {
			agent_mem_drop(a, x->held);
			x->held = NULL;
			break;
		}
		h.disp = op->tdisp + op->sent;
		h.count = n / es;
		h.seq = ((uint64_t)op->serial << 32) | i;
		memcpy(body + head, &pl, sizeof(pl));
		if (xfer_osend(a, o, t->node, &h, body, head + sizeof(pl))) {
			rmad_fabric_mr_close(x->mr);
			x->mr = NULL;
			agent_mem_drop(a, x->held);
			x->held = NULL;
			err = am_node_dead(a, t->node) ? RMAD_ERR_PROC_FAILED :
							 RMAD_ERR_FABRIC;
			break;
		}
		R->xfree = x->next;
		R->npull_slots++;
		if (x->held) {
			a->st.xfer_inplace++;
			note_inplace(t, op);	/* a flush_local waits */
		}
		x->pull = 1;
		x->node = t->node;
		x->disp = h.disp;
		x->count = h.count;
		x->op = i;
		x->serial = op->serial;
		x->off = op->sent;
		x->len = n;
		op->nx++;
		op->sent += n;
		/* the target's, on our behalf */
		if (get || fetch)
			o->st.rdma_writes++;
		if (in)
			o->st.rdma_reads++;
	}
	if (err) {
		/* nothing more goes out; the op ends once what went out is
		 * answered */
		op->status = err;
		op->len = op->sent;
	}
	return 1;
}

int pull_answered(struct agent *a, uint32_t i, uint64_t off, uint64_t len,
		  int32_t status)
{
	struct rma_ctx *R = a->rma;
	struct rma_op *op = &R->sh[i];

	if (!R->bounce)
		return -1;
	for (int k = 0; k < XFER_MAX; k++) {
		struct rma_xfer *x = &R->xfers[k];

		if (x->pull != 1 || x->op != i || x->serial != op->serial ||
		    x->off != off || x->len != len)
			continue;
		/* a get's bytes (a get-accumulate's results), placed in
		 * the bounce buffer before the answer left (delivery
		 * complete), go to the client */
		if ((op->opcode == RMAD_OPC_GET ||
		     op->opcode == RMAD_OPC_GACC) && !status && !op->status &&
		    !x->held) {
			int err = xfer_op_io(a, op, (op->opcode == RMAD_OPC_GET ?
						op->origin : op->result) + off,
					x->buf, (size_t)len, 1);

			if (err)
				op->status = err;
		}
		slot_release(R, x);
		op->nx--;
		return 0;
	}
	return -1;
}

void pull_op_end(struct agent *a, uint32_t i)
{
	struct rma_ctx *R = a->rma;
	struct rma_op *op = &R->sh[i];

	if (!R->bounce)
		return;
	/*
	 * A chunk whose target lives keeps its slot until the answer
	 * comes: a provider that reads without checking the key (shm's
	 * process_vm_readv path) must never find another op's bytes there.
	 * Its key stays open with it, but for a get's chunk in the client's
	 * own memory, which the target would write after the op ended: a
	 * read or write that names a closed key costs tcp;ofi_rxm the
	 * connection it came on, and every message queued there (windows.c,
	 * keep_mapping), while the slot's bounce buffer or a held region
	 * the target only reads is still ours.
	 */
	for (int k = 0; k < XFER_MAX; k++) {
		struct rma_xfer *x = &R->xfers[k];

		if (x->pull != 1 || x->op != i || x->serial != op->serial)
			continue;
		if (op->nx)
			op->nx--;
		if (am_node_dead(a, x->node)) {
			slot_release(R, x);
			continue;
		}
		if (x->held && op->opcode == RMAD_OPC_GET) {
			rmad_fabric_mr_close(x->mr);
			x->mr = NULL;
		}
		x->pull = 2;
	}
}

int pull_stale(struct agent *a, const struct rmad_am_hdr *h)
{
	struct rma_ctx *R = a->rma;

	if (!R->bounce || !R->npull_slots ||
	    (h->type != RMAD_AM_RMA_ACK && h->type != RMAD_AM_RMA_RESP))
		return 0;
	for (int k = 0; k < XFER_MAX; k++) {
		struct rma_xfer *x = &R->xfers[k];

		if (x->pull == 2 && x->op == (uint32_t)h->seq &&
		    x->serial == (uint32_t)(h->seq >> 32) &&
		    x->node == (int)h->src_node && x->disp == h->disp &&
		    x->count == h->count) {
			slot_release(R, x);
			return 1;
		}
	}
	return 0;
}

void pull_origin_node_dead(struct agent *a, int node)
{
	struct rma_ctx *R = a->rma;

	for (int k = 0; R->bounce && k < XFER_MAX; k++)
		if (R->xfers[k].pull == 2 && R->xfers[k].node == node)
			slot_release(R, &R->xfers[k]);
}
