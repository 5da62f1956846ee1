/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_pull.c - large accumulates and get-accumulates to another node,
 * and large puts to a window whose memory the target's agent has not
 * registered (created and dynamic windows: the process's own memory),
 * read by the target; large gets from such windows, written by the
 * target (a get-accumulate's results too).
 *
 * An accumulate of rdma_threshold bytes or more does not cross as
 * active messages of am_buf_size bytes, each copied through both
 * agents.  The origin's agent copies a chunk of the operands (up to
 * RMAD_AM_PULL_MAX bytes, and rdma_chunk) into one of its transfer
 * slots' bounce buffers (or, when they lie in the client's
 * rmad_alloc_mem memory, holds that mapping: no copy), registers that
 * chunk for remote reads only,
 * and sends an ACC packet flagged RMAD_AMF_PULL that names it (struct
 * rmad_am_pull).  The target's agent checks the packet as it would an
 * accumulate with data, reads the chunk with fi_read into a buffer of
 * its own, combines it into the window in bulk (under the accumulate
 * lock, accword.h) with every check made again, and answers.  The
 * answer releases the origin's slot and closes the chunk's
 * registration: its key reads nothing once the chunk is done.
 *
 * A put goes the same way (a PUT packet flagged RMAD_AMF_PULL), and the
 * target's agent writes what it read into the window with one
 * process_vm_writev per chunk, where the active messages it replaces
 * cost two copies through the agents and a message per am_buf_size.
 *
 * A get from such a window is the mirror (a GET packet flagged
 * RMAD_AMF_PULL): the origin's agent registers the chunk's destination
 * (its bounce buffer, or the client's rmad_alloc_mem memory in place)
 * for remote writes only; the target's agent checks the request, reads
 * the window's bytes with one process_vm_readv into a buffer of its
 * own (checking the window again then), writes them there with fi_write
 * and, once they are placed (delivery complete), answers with an empty
 * RESP, after which the origin's agent copies them to the client.
 *
 * A large get-accumulate, on any window flavor, does both in one chunk:
 * the origin's agent copies the operands into a bounce buffer (never in
 * place: its results go elsewhere) registered for remote reads and
 * writes; the target's agent reads them (nothing for NO_OP), combines
 * them in under the accumulate lock, keeping the old values in the
 * buffer's second half, writes those over the operands with fi_write
 * and, once they are placed, answers with an empty RESP; the origin's
 * agent copies them to the result buffer.  Between the apply and the
 * write the request keeps its buffer at the head of the FIFO.
 *
 * An op with a derived target type (rma_type.c) moves its packed
 * stream the same way, on every window flavor: the packet (flagged
 * RMAD_AMF_TYPED too) carries the type's head (struct rmad_am_typed)
 * before the chunk's name, chunks of an accumulate hold whole units,
 * and the target applies what it read through its cached type, or
 * packs a get's chunk through it.  The origin keeps the type's cache
 * slot pinned until the op ends, not only until its chunks left: the
 * target resolves the slot when it applies a chunk, after its read.
 *
 * Order.  The target applies packets in arrival order, but a pulled
 * chunk after the packets that follow it; so, when the window orders
 * accumulates, the origin's agent sends no further accumulate to that
 * target until every pulled op there (puts included, which MPI does not
 * order: conservative) is answered (npull, in rma_origin.c), and
 * unlock, flush and PSCW complete wait for the
 * answers too (pulled ops count among the fi_write/fi_read ops, nrdma).
 *
 * The origin side is rma_pull_origin.c; this file is the target's.
 *
 * The target keeps at most PULL_BUFS reads and writes in flight;
 * further requests wait in a FIFO (an origin agent has at most XFER_MAX
 * chunks out, so PULL_QUEUE_MAX is only reached by a misbehaving peer,
 * whose requests are then refused with RMAD_ERR_NOMEM).  A read or
 * write to a node that dies is abandoned with its buffer (the provider
 * may still own it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "agent.h"
#include "am.h"
#include "jobs.h"
#include "mem.h"
#include "windows.h"
#include "dynwin.h"
#include "dtype.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

#define PULL_BUFS	16
#define PULL_QUEUE_MAX	4096
/* a buffer holds a chunk, after a typed chunk's head (rd_done), then
 * room for a get-accumulate's results (pages only touched by those) */
#define PULL_HEAD	sizeof(struct rmad_am_typed)
#define PULL_RES	(RMAD_AM_PULL_MAX + 4096)
#define PULL_BUF_LEN	(PULL_RES + RMAD_AM_PULL_MAX)

/* ---- target side ---------------------------------------------------- */

struct pull_buf {
	struct pull_buf *next;
	char *buf;
	struct rmad_fabric_mr *mr;	/* local, when the provider wants it */
	void *desc;
};

/* One read: waiting in the FIFO, or in flight. */
struct pull_rd {
	struct rmad_fabric_xfer fx;	/* first: the completion names it */
	struct pull_rd *next;
	struct agent *a;
	struct rmad_am_hdr h;		/* the request, a private copy */
	struct rmad_am_pull p;
	struct rmad_am_typed th;	/* RMAD_AMF_TYPED: the type's head */
	struct pull_buf *b;
	uint64_t rlen;			/* a get-accumulate's result bytes */
	uint64_t since;			/* first found the accumulate lock
					 * held (0: never) */
	uint8_t dead;			/* its node died: forget it */
	uint8_t writing;		/* a get-accumulate applied: its
					 * results wait to go out, or are
					 * going (it keeps b) */
};

static void buf_free(struct pull_buf *b)
{
	rmad_fabric_mr_close(b->mr);
	munmap(b->buf, PULL_BUF_LEN);
	free(b);
}

static struct pull_buf *buf_get(struct agent *a)
{
	struct rma_ctx *R = a->rma;
	struct pull_buf *b = R->pbfree;

	if (b) {
		R->pbfree = b->next;
		return b;
	}
	if (R->npbuf >= PULL_BUFS || !(b = calloc(1, sizeof(*b))))
		return NULL;
	b->buf = mmap(NULL, PULL_BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->buf == MAP_FAILED) {
		free(b);
		return NULL;
	}
	if (rmad_fabric_needs_local_mr(a->fab) &&
	    rmad_fabric_mr_reg(a->fab, b->buf, PULL_BUF_LEN, 0, &b->mr,
			       NULL, NULL, &b->desc)) {
		munmap(b->buf, PULL_BUF_LEN);
		free(b);
		return NULL;
	}
	R->npbuf++;
	return b;
}

static void buf_put(struct rma_ctx *R, struct pull_buf *b)
{
	b->next = R->pbfree;
	R->pbfree = b;
}

static void refuse(struct agent *a, const struct rmad_am_hdr *h, int32_t st)
{
	int ans = rmad_am_answer_of(h->type);

	a->st.pkts_dropped++;
	rmad_warn("%s from node %u (rank %d -> %d): refused (%d)",
		  h->type == RMAD_AM_RMA_GET ? "pushed get" :
		  h->type == RMAD_AM_RMA_PUT ? "pulled put" :
		  h->type == RMAD_AM_RMA_GACC ? "pulled get-accumulate" :
		  "pulled accumulate", h->src_node, h->origin, h->target, st);
	target_answer(a, h, ans ? ans : RMAD_AM_RMA_ACK, st, 0, NULL, 0);
}

/* The window of request h, looked up again (it may have gone while we
 * read), and h as a packet with the data that was read: flags without
 * PULL, payload_len its bytes (after a typed chunk's head, copied in
 * front of them into buf). */
static struct agent_win *pulled_pkt(struct agent *a, struct pull_rd *rd,
				    struct rmad_am_hdr *h)
{
	struct agent_job *j = agent_job_find(a, rd->h.job);

	*h = rd->h;
	h->flags &= (uint16_t)~RMAD_AMF_PULL;
	h->payload_len = h->type == RMAD_AM_RMA_GACC && h->op == RMAD_NO_OP ?
			 0 : (uint32_t)(h->count * rmad_dtype_size(h->dtype));
	if (h->flags & RMAD_AMF_TYPED) {
		memcpy(rd->b->buf, &rd->th, PULL_HEAD);
		h->payload_len += (uint32_t)PULL_HEAD;
	}
	return j ? agent_win_by_key(a, j, h->wkey) : NULL;
}

/*
 * A get-accumulate, its operands read (none for NO_OP): applied, its
 * results left after the chunk for pull_kick to write into the
 * origin's chunk; 0, or RMAD_ERR_* (then refused here).
 */
static int gacc_apply(struct agent *a, struct pull_rd *rd)
{
	struct rmad_am_hdr h;
	struct agent_win *w = pulled_pkt(a, rd, &h);
	int32_t st = w ? target_apply_pulled_res(a, &h, (const uint8_t *)rd->b->buf,
					  w, (uint8_t *)rd->b->buf + PULL_RES,
					  &rd->rlen, rd->since) : RMAD_ERR_ARG;

	if (st == ACC_AGAIN)
		return st;	/* the lock is held: later (lock_wait) */
	if (!st && (!rd->rlen || rd->rlen > RMAD_AM_PULL_MAX))
		st = RMAD_ERR_ARG;
	if (st)
		refuse(a, &rd->h, st);
	else
		rd->writing = 1;
	return st;
}

static void pull_kick(struct agent *a);

/* rd, read, found its member's accumulate lock held by a live client:
 * kept with its buffer until pull_retry finds it free (or its time is
 * out, acc_lock_timeout_ms, and it fails). */
static int lock_wait(struct agent *a, struct pull_rd *rd)
{
	struct rma_ctx *R = a->rma;

	if (!rd->since)
		rd->since = rmad_now_ns() | 2;	/* never 0 nor 1 */
	rd->next = R->plock;
	R->plock = rd;
	return 1;
}

/*
 * A read completed for rd (its buffer held): applied.  0 when rd is
 * done with (answered or refused; the caller frees it), 1 when it waits
 * for the member's accumulate lock (lock_wait), 2 when a
 * get-accumulate's results wait to go out (at the head of the FIFO,
 * ahead of the requests that wait, with its buffer).
 */
static int rd_apply(struct agent *a, struct pull_rd *rd)
{
	struct rma_ctx *R = a->rma;
	struct rmad_am_hdr h;
	struct agent_win *w;
	int st;

	if (rd->h.type == RMAD_AM_RMA_GACC) {
		st = gacc_apply(a, rd);
		if (st == ACC_AGAIN)
			return lock_wait(a, rd);
		if (st)
			return 0;
		rd->next = R->pq_head;
		R->pq_head = rd;
		if (!R->pq_tail)
			R->pq_tail = rd;
		R->npq++;
		return 2;
	}
	w = pulled_pkt(a, rd, &h);
	if (!w) {
		refuse(a, &rd->h, RMAD_ERR_ARG);
		return 0;
	}
	if (target_apply_pulled(a, &h, (const uint8_t *)rd->b->buf, w, rd->since))
		return lock_wait(a, rd);
	if (h.type == RMAD_AM_RMA_PUT)
		a->st.put_pulls++;
	else
		a->st.acc_pulls++;
	return 0;
}

int pull_waiting(struct agent *a)
{
	return a->rma && a->rma->plock;
}

void pull_retry(struct agent *a)
{
	struct rma_ctx *R = a->rma;
	struct pull_rd *list = R->plock;

	R->plock = NULL;
	while (list) {
		struct pull_rd *rd = list;

		list = rd->next;
		if (!rd_apply(a, rd)) {
			buf_put(R, rd->b);
			free(rd);
		}
	}
	pull_kick(a);
}

static void unlink_rd(struct pull_rd **pp, struct pull_rd *rd)
{
	for (; *pp; pp = &(*pp)->next)
		if (*pp == rd) {
			*pp = rd->next;
			return;
		}
}

/* A read of an origin's operands, or a get's write to it, completed. */
static void rd_done(struct rmad_fabric_xfer *fx, int status)
{
	struct pull_rd *rd = (struct pull_rd *)fx;
	struct agent *a = rd->a;
	struct rma_ctx *R = a->rma;

	if (rd->dead) {
		/* abandoned when its node died; its buffer was counted out */
		unlink_rd(&R->pzombie, rd);
		buf_free(rd->b);
		free(rd);
		return;
	}
	unlink_rd(&R->pfly, rd);
	R->npull_fly--;
	if (status) {
		refuse(a, &rd->h, RMAD_ERR_FABRIC);
	} else if (rd->h.type == RMAD_AM_RMA_GET || rd->writing) {
		/* placed at the origin (delivery complete): its answer */
		target_answer(a, &rd->h, RMAD_AM_RMA_RESP, 0, 0, NULL, 0);
		if (rd->writing)
			a->st.acc_pulls++;
		else
			a->st.get_pushes++;
	} else if (rd_apply(a, rd)) {
		/* kept (its buffer with it) */
		pull_kick(a);
		return;
	}
	buf_put(R, rd->b);
	free(rd);
	pull_kick(a);
}

/* Start the reads that buffers allow, in arrival order. */
static void pull_kick(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	while (R->pq_head) {
		struct pull_rd *rd = R->pq_head;
		uint64_t len = rd->h.count * rmad_dtype_size(rd->h.dtype);
		int typed = !!(rd->h.flags & RMAD_AMF_TYPED), err = 0;
		int gacc = rd->h.type == RMAD_AM_RMA_GACC;
		int in = rmad_op_data_in(RMAD_OPC_GACC, rd->h.op);
		int refused = 0;

		if (!rd->b && !(rd->b = buf_get(a)))
			return;		/* a read in flight ends first */
		rd->fx.done = rd_done;
		/* a get-accumulate of NO_OP reads nothing: applied now
		 * (refused and answered there if it fails, kept if the
		 * accumulate lock is held) */
		if (gacc && !in && !rd->writing) {
			int st = gacc_apply(a, rd);

			if (st == ACC_AGAIN) {
				R->pq_head = rd->next;
				if (!R->pq_head)
					R->pq_tail = NULL;
				R->npq--;
				lock_wait(a, rd);
				continue;
			}
			refused = st != 0;
		}
		if (refused) {
			/* nothing goes out */
		} else if (rd->writing) {
			/* a get-accumulate's results, into the origin's
			 * chunk that held its operands */
			err = rmad_fabric_write(a->fab, (int)rd->h.src_node,
						rd->b->buf + PULL_RES,
						(size_t)rd->rlen, rd->b->desc,
						rd->p.raddr, rd->p.key,
						&rd->fx);
		} else if (rd->h.type == RMAD_AM_RMA_GET) {
			/* the window's bytes as they are now (packed through
			 * a typed chunk's type), written into the origin's
			 * chunk */
			err = target_read_pushed(a, &rd->h, typed ? &rd->th : NULL,
					  (uint8_t *)rd->b->buf);
			if (!err)
				err = rmad_fabric_write(a->fab,
							(int)rd->h.src_node,
							rd->b->buf,
							(size_t)len,
							rd->b->desc,
							rd->p.raddr,
							rd->p.key, &rd->fx);
		} else {
			/* after room for a typed chunk's head (rd_done) */
			err = rmad_fabric_read(a->fab, (int)rd->h.src_node,
					       rd->b->buf +
					       (typed ? PULL_HEAD : 0),
					       (size_t)len, rd->b->desc,
					       rd->p.raddr, rd->p.key,
					       &rd->fx);
		}
		if (err == 1) {
			/* the provider is full: after its progress (applied
			 * results stay with their buffer) */
			if (!rd->writing) {
				buf_put(R, rd->b);
				rd->b = NULL;
			}
			R->retry_pending = 1;
			return;
		}
		R->pq_head = rd->next;
		if (!R->pq_head)
			R->pq_tail = NULL;
		R->npq--;
		if (err || refused) {
			if (err)
				refuse(a, &rd->h, err);
			buf_put(R, rd->b);
			free(rd);
			continue;
		}
		rd->next = R->pfly;
		R->pfly = rd;
		R->npull_fly++;
	}
}

void pull_request(struct agent *a, const struct rmad_am_hdr *h,
		  const void *pl, struct agent_win *w)
{
	struct rma_ctx *R = a->rma;
	struct win_local *l = agent_win_local(w, h->target);
	size_t es = rmad_dtype_size(h->dtype);
	uint64_t len = h->count * es;
	int typed = !!(h->flags & RMAD_AMF_TYPED);
	size_t head = typed ? PULL_HEAD : 0;
	int32_t st = 0;
	struct pull_rd *rd;

	if (!a->fab || !rmad_fabric_has_rma(a->fab) ||
	    (h->type != RMAD_AM_RMA_ACC && h->type != RMAD_AM_RMA_PUT &&
	     h->type != RMAD_AM_RMA_GET && h->type != RMAD_AM_RMA_GACC) ||
	    (h->flags & (RMAD_AMF_LOCK_SHARED | RMAD_AMF_LOCK_EXCL |
			 RMAD_AMF_UNLOCK | RMAD_AMF_PSCW_DONE)) ||
	    !(h->flags & RMAD_AMF_ACK_REQ) ||
	    h->payload_len != head + sizeof(struct rmad_am_pull) ||
	    (typed && h->dtype != RMAD_BYTE) ||
	    h->src_node >= (uint32_t)rmad_fabric_nnodes(a->fab) ||
	    h->src_node == (uint32_t)a->node)
		st = RMAD_ERR_ARG;
	else if (!l || (!l->created && !l->data))
		st = RMAD_ERR_RANK;
	else if (!es || !h->count || h->count > RMAD_AM_PULL_MAX ||
		 len > RMAD_AM_PULL_MAX)
		st = RMAD_ERR_TYPE;
	/* a typed chunk's op and footprint are its type's: checked as it
	 * is applied (ty_apply) */
	else if (!typed && (h->type == RMAD_AM_RMA_ACC ||
			    h->type == RMAD_AM_RMA_GACC) &&
		 (st = rmad_op_check(h->dtype, h->op)) == 0 &&
		 h->type == RMAD_AM_RMA_ACC && h->op == RMAD_NO_OP)
		st = RMAD_ERR_OP;
	else if (!st && !typed &&
		 (l->dynamic ? dynwin_check(l, h->disp, len) != 0 :
		  h->disp > l->size || len > l->size - h->disp))
		st = RMAD_ERR_DISP;
	else if (!st && R->npq >= PULL_QUEUE_MAX)
		st = RMAD_ERR_NOMEM;
	if (!st && !(rd = calloc(1, sizeof(*rd))))
		st = RMAD_ERR_NOMEM;
	if (st) {
		refuse(a, h, st);
		return;
	}
	rd->a = a;
	rd->h = *h;
	if (typed)
		memcpy(&rd->th, pl, sizeof(rd->th));
	memcpy(&rd->p, (const uint8_t *)pl + head, sizeof(rd->p));
	if (R->pq_tail)
		R->pq_tail->next = rd;
	else
		R->pq_head = rd;
	R->pq_tail = rd;
	R->npq++;
	pull_kick(a);
}

void pull_node_dead(struct agent *a, int node)
{
	struct rma_ctx *R = a->rma;
	struct pull_rd **pp = &R->pq_head, *last = NULL;

	pull_origin_node_dead(a, node);
	/* read from it, waiting for an accumulate lock: no answer */
	for (pp = &R->plock; *pp;) {
		struct pull_rd *rd = *pp;

		if (rd->h.src_node != (uint32_t)node) {
			pp = &rd->next;
			continue;
		}
		*pp = rd->next;
		buf_put(R, rd->b);
		free(rd);
	}
	pp = &R->pq_head;

	while (*pp) {
		struct pull_rd *rd = *pp;

		if (rd->h.src_node != (uint32_t)node) {
			last = rd;
			pp = &rd->next;
			continue;
		}
		*pp = rd->next;
		R->npq--;
		if (rd->b)	/* a get-accumulate's results */
			buf_put(R, rd->b);
		free(rd);
	}
	R->pq_tail = last;
	/* reads in flight there: each keeps its buffer until the provider
	 * lets go of it (never, if it cannot tell), and a fresh buffer
	 * may take its place */
	for (pp = &R->pfly; *pp;) {
		struct pull_rd *rd = *pp;

		if (rd->h.src_node != (uint32_t)node) {
			pp = &rd->next;
			continue;
		}
		*pp = rd->next;
		rd->dead = 1;
		rd->next = R->pzombie;
		R->pzombie = rd;
		R->npull_fly--;
		R->npbuf--;
	}
}

int pull_busy(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	return R && (R->npull_fly || R->pq_head);
}

void pull_fini(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	while (R->pq_head) {
		struct pull_rd *rd = R->pq_head;

		R->pq_head = rd->next;
		if (rd->b)
			buf_put(R, rd->b);
		free(rd);
	}
	R->pq_tail = NULL;
	R->npq = 0;
	while (R->plock) {
		struct pull_rd *rd = R->plock;

		R->plock = rd->next;
		buf_put(R, rd->b);
		free(rd);
	}
	/* the fabric is not progressed any more: nothing writes there */
	for (int k = 0; k < 2; k++) {
		struct pull_rd **pp = k ? &R->pzombie : &R->pfly;

		while (*pp) {
			struct pull_rd *rd = *pp;

			*pp = rd->next;
			buf_free(rd->b);
			free(rd);
		}
	}
	R->npull_fly = 0;
	while (R->pbfree) {
		struct pull_buf *b = R->pbfree;

		R->pbfree = b->next;
		buf_free(b);
	}
}
