/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_post.c - one-sided operations handed to the agent: the op element
 * of a data op on a target of another node (its data inline when small,
 * through the staging area when the agent cannot reach our memory), the
 * cleared element of a synchronization op, and for rma_derived.c a
 * derived type's contiguous pieces, its typed ops (the target type's
 * wire form named in the element) and a request's completion marker.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "dtype.h"
#include "internal.h"
#include "rmad_opdesc.h"
#include "util.h"

/*
 * The agent cannot reach our memory (rmad_stage_probe): the op goes
 * through the staging area in pieces that fit it, each waited for.  A
 * piece is a whole number of elements and of the target's disp_unit, so
 * that each starts at a displacement of its own.
 */
static int post_staged(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
		       const struct tref *r, uint32_t op, const void *origin,
		       const void *cmp, void *result)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem t = { 0 };
	uint64_t area = c->hdr->staging_size, unit, piece, done = 0;
	int in = origin && rmad_op_data_in(opc, op);
	int out = rmad_op_desc(opc)->result;	/* (cas returns below) */
	int err = 0;

	t.opcode = opc;
	t.win = w->block;
	t.ticket = w->key;
	t.target = target;
	t.dtype = r->dt;
	t.op = op;
	if (r->tbytes)
		t.flags = RMAD_OPF_TBYTES;
	if (opc == RMAD_OPC_CAS) {
		t.count = 1;
		t.tdisp = tdisp;
		memcpy(t.data, origin, r->es);
		memcpy(t.data + r->es, cmp, r->es);
		t.inline_len = (uint32_t)(2 * r->es);
		t.flags |= RMAD_OPF_INLINE;
		t.result_addr = 0;
		return rmad_staged_op(c, w, &t, NULL, 0, result, r->es, 0);
	}
	unit = r->es * (uint64_t)r->du;
	/* data in at 0; a get_accumulate's result behind it */
	piece = (in && out ? area / 2 : area) / unit * unit;
	if (!piece)
		return RMAD_ERR_NOMEM;	/* staging_size below one unit */
	while (!err && done < r->len) {
		uint64_t n = r->len - done < piece ? r->len - done : piece;

		t.count = n / r->es;
		t.tdisp = tdisp + done / (uint64_t)r->du;
		t.origin_off = 0;
		t.result_addr = in && out ? piece : 0;
		err = rmad_staged_op(c, w, &t,
				     in ? (const uint8_t *)origin + done : NULL,
				     in ? n : 0,
				     out ? (uint8_t *)(opc == RMAD_OPC_GET ?
						       (void *)origin :
						       result) + done : NULL,
				     out ? n : 0, in && out ? piece : 0);
		done += n;
	}
	return err;
}

/* Does this op make the agent touch our memory where it cannot? */
static int needs_staging(uint16_t opc, const struct tref *r, uint32_t op,
			 const void *origin, const void *result)
{
	/* a cas's two values always travel inline */
	int in = origin && opc != RMAD_OPC_CAS && r->len > RMAD_OP_INLINE &&
		 rmad_op_data_in(opc, op);

	if (rmad_op_desc(opc)->result_in_origin)
		return !rmad_mem_shared(origin, r->len);
	if (in && !rmad_mem_shared(origin, r->len))
		return 1;
	if (rmad_op_result_buf(opc))
		return !rmad_mem_shared(result,
					opc == RMAD_OPC_CAS ? r->es : r->len);
	return 0;
}

/* Hand an operation on a target of another node to the agent. */
int rmad_post(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
	      int count, const struct tref *r, uint32_t op,
	      const void *origin, const void *cmp, void *result,
	      struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	uint32_t idx;
	int err;

	if (c->staged && r && needs_staging(opc, r, op, origin, result)) {
		err = post_staged(w, opc, target, tdisp, r, op, origin, cmp,
				  result);
		if (err)
			return err;
		__atomic_add_fetch(&w->remote_posted, 1, __ATOMIC_RELAXED);
		return rmad_count_op(w, &w->st_ops_remote);
	}
	if (rq) {
		/* room for one more request element first */
		err = rmad_req_room(c);
		if (err)
			return err;
	}
	err = rmad_op_alloc(c, w, &idx);

	if (err)
		return err;
	/* the header from zero (flags, status, inline_len 0); the inline
	 * area only where the data goes in it */
	e = rmad_op_fill(c, idx, NULL, RMAD_OPFILL_HEAD);
	e->opcode = opc;
	e->win = w->block;
	e->target = target;
	e->dtype = r ? r->dt : 0;
	e->op = op;
	e->count = (uint64_t)count;
	e->tdisp = tdisp;
	e->origin_off = (uint64_t)(uintptr_t)origin;
	e->ticket = w->key;
	if (r && r->tbytes)
		e->flags |= RMAD_OPF_TBYTES;
	e->result_addr = (uint64_t)(uintptr_t)result;
	if (opc == RMAD_OPC_CAS) {
		memcpy(e->data, origin, r->es);
		memcpy(e->data + r->es, cmp, r->es);
		e->inline_len = (uint32_t)(2 * r->es);
		e->flags |= RMAD_OPF_INLINE;
	} else if (origin && r && r->len <= RMAD_OP_INLINE &&
		   opc != RMAD_OPC_GET) {
		/* small: copied now, so the buffer is free at once */
		memcpy(e->data, origin, r->len);
		e->inline_len = (uint32_t)r->len;
		e->flags |= RMAD_OPF_INLINE;
	}
	if (rq) {
		/* kept for the request: the agent writes its status there */
		e->flags |= RMAD_OPF_KEEP;
		e->status = RMAD_REQ_PENDING;
	}
	err = rmad_op_submit(c, idx);
	if (err) {
		rmad_op_free(c, idx);
		return err;
	}
	if (rq)
		rmad_req_track(c, rq, idx);
	if (r)
		__atomic_add_fetch(&w->remote_posted, 1, __ATOMIC_RELAXED);
	return rmad_count_op(w, &w->st_ops_remote);
}

/* For rma_derived.c: a contiguous piece of a derived-type op for the
 * agent, its target offset in bytes. */
int rmad_post_piece(rmad_win_t w, uint16_t opc, int target, uint64_t toff,
		    uint32_t dt, uint64_t len, uint32_t op, const void *origin,
		    void *result)
{
	struct tref r = { 0 };

	r.dt = dt;
	r.es = rmad_dtype_size(dt);
	r.len = len;
	r.off = toff;
	r.du = 1;
	r.tbytes = 1;
	return rmad_post(w, opc, target, toff, (int)(len / r.es), &r, op,
			 origin, NULL, result, NULL);
}

/*
 * A cleared element of ours for a synchronization op opc of window w to
 * target (the caller sets the rest, then submits it).
 */
int rmad_elem_new(rmad_win_t w, uint16_t opc, int target, uint32_t *idx,
		  struct rmad_op_elem **out)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	int err = rmad_op_alloc(c, w, idx);

	if (err)
		return err;
	e = rmad_op_fill(c, *idx, NULL, RMAD_OPFILL_WHOLE);
	e->opcode = opc;
	e->win = w->block;
	e->ticket = w->key;
	e->target = target;
	*out = e;
	return 0;
}

int rmad_post_typed(rmad_win_t w, uint16_t opc, int target, size_t tdisp,
		    int tcount, uint32_t op, const void *origin, void *result,
		    const uint8_t *blob, size_t blob_len,
		    struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_request_s *own = NULL;
	struct rmad_op_ttype d = { (uint64_t)(uintptr_t)blob,
				   (uint32_t)blob_len, 0 };
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = c->dead ? RMAD_ERR_AGENT : rmad_req_room(c);

	if (err)
		return err;
	if (!rq) {
		rq = own = rmad_req_internal();
		if (!rq)
			return RMAD_ERR_NOMEM;
	}
	err = rmad_elem_new(w, opc, target, &idx, &e);
	if (err) {
		free(own);
		return err;
	}
	e->flags = RMAD_OPF_KEEP | RMAD_OPF_TTYPE;
	e->op = op;
	e->count = (uint64_t)tcount;
	e->tdisp = tdisp;
	/* a get's data lands where its origin would be */
	e->origin_off = (uint64_t)(uintptr_t)(opc == RMAD_OPC_GET ? result :
					       origin);
	e->result_addr = (uint64_t)(uintptr_t)result;
	memcpy(e->data, &d, sizeof(d));
	e->status = RMAD_REQ_PENDING;
	err = rmad_op_submit(c, idx);
	if (err) {
		rmad_op_free(c, idx);
		free(own);
		return err;
	}
	rmad_req_track(c, rq, idx);
	__atomic_add_fetch(&w->remote_posted, 1, __ATOMIC_RELAXED);
	return own ? rmad_req_wait_internal(own) : 0;
}

/*
 * For rma_derived.c: the completion of a request whose op went to the
 * agent as many pieces.  A flush_local of the target, posted without
 * waiting, completes once every piece before it is complete at the
 * origin; the request keeps its element, as it keeps a data op's, and
 * rmad_wait and rmad_test reap it like any other.
 */
int rmad_post_marker(rmad_win_t w, int target, struct rmad_request_s *rq)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = c->dead ? RMAD_ERR_AGENT : rmad_req_room(c);

	if (!err)
		err = rmad_elem_new(w, RMAD_OPC_FLUSH_LOCAL, target, &idx, &e);
	if (err)
		return err;
	e->flags = RMAD_OPF_KEEP;
	e->status = RMAD_REQ_PENDING;
	err = rmad_op_submit(c, idx);
	if (err) {
		rmad_op_free(c, idx);
		return err;
	}
	rmad_req_track(c, rq, idx);
	return 0;
}
