/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c - the agent-to-agent transport over a libfabric RDM endpoint:
 * sends, their queue, receives and progress (its setup and teardown:
 * fabric_open.c; its registrations and one-sided transfers:
 * fabric_rma.c).
 *
 * One endpoint, one CQ for both directions, one AV entry per agent.  A
 * fixed set of receive buffers stays posted; a fixed set of send buffers
 * carries copies of outgoing messages.  Whatever cannot be handed to the
 * provider right away (no free send buffer, -FI_EAGAIN) waits in a
 * per-node FIFO on the heap, so rmad_fabric_send() never blocks and never
 * reorders the messages to one node.  Received messages are delivered in
 * the order their buffers were posted, which is the order they were
 * matched in; completion order is not enough, since a provider may finish
 * a large (rendezvous) message after smaller ones that came behind it.
 * Everything is driven from rmad_fabric_progress() on the agent's single
 * progress thread, which is why there are no locks (FI_THREAD_DOMAIN).
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "rmad_abi.h"
#include "log.h"
#include "fabric.h"
#include "fabric_impl.h"
#include "trace.h"

/* A refused receive is parked and tried again from progress; losing the
 * buffer would slowly starve the endpoint. */
int fab_post_recv(struct rmad_fabric *f, struct fab_op *op)
{
	ssize_t ret;

	ret = fi_recv(f->ep, op->buf, f->slot, f->desc, FI_ADDR_UNSPEC,
		      &op->ctx);
	if (!ret) {
		op->done = op->failed = false;
		op->next = NULL;
		if (f->posted_tail)
			f->posted_tail->next = op;
		else
			f->posted_head = op;
		f->posted_tail = op;
		return 0;
	}
	op->next = f->repost;
	f->repost = op;
	if (ret == -FI_EAGAIN)
		return 0;
	rmad_err("fabric: fi_recv: %s", fi_strerror((int)-ret));
	return RMAD_ERR_FABRIC;
}

static int fab_repost(struct rmad_fabric *f)
{
	struct fab_op *list = f->repost, *op;
	int ret = 0;

	f->repost = NULL;
	while (list) {
		op = list;
		list = op->next;
		if (fab_post_recv(f, op))
			ret = RMAD_ERR_FABRIC;
	}
	return ret;
}

/* A send buffer back on the free list. */
void fab_put_send(struct rmad_fabric *f, struct fab_op *op)
{
	op->next = f->free_send;
	f->free_send = op;
	f->nfree++;
}

/*
 * A free send buffer, or NULL.  The last f->reserve of them are for
 * urgent sends (heartbeats and their echoes): bulk traffic that fills
 * every other buffer, and the queue behind them, never keeps a
 * heartbeat from the provider.
 */
static struct fab_op *fab_get_send(struct rmad_fabric *f, bool urgent)
{
	struct fab_op *op = f->free_send;

	if (!op || (!urgent && f->nfree <= f->reserve))
		return NULL;
	f->free_send = op->next;
	f->nfree--;
	return op;
}

/* Hand a filled send buffer to the provider; on failure the buffer goes
 * back to the free list and the caller keeps the message. */
static ssize_t fab_post_send(struct rmad_fabric *f, int node,
			     struct fab_op *op, size_t len)
{
	ssize_t ret;

	op->node = node;
	if (fab_tagged(f))
		len = fab_tags_seal(&f->tags, node, op->buf, len);
	RMAD_TR(RMAD_TR_SEND, len);
	ret = fi_send(f->ep, op->buf, len, f->desc, f->peers[node].fi_addr,
		      &op->ctx);
	RMAD_TR(RMAD_TR_SENT, ret);
	if (!ret) {
		f->st.sent++;
		f->st.send_bytes += len;
		if (f->posted)
			f->posted(f->posted_arg, node);
		return 0;
	}
	fab_put_send(f, op);
	if (ret != -FI_EAGAIN) {
		rmad_err("fabric: fi_send to node %d: %s", node,
			 fi_strerror((int)-ret));
		f->peers[node].send_errors++;
	}
	return ret;
}

static void fab_backlog_add(struct rmad_fabric *f, int node)
{
	struct fab_peer *p = &f->peers[node];

	if (p->in_backlog)
		return;
	p->in_backlog = true;
	p->next_backlog = -1;
	if (f->backlog_tail >= 0)
		f->peers[f->backlog_tail].next_backlog = node;
	else
		f->backlog_head = node;
	f->backlog_tail = node;
}

static int fab_backlog_pop(struct rmad_fabric *f)
{
	int node = f->backlog_head;
	struct fab_peer *p = &f->peers[node];

	f->backlog_head = p->next_backlog;
	if (f->backlog_head < 0)
		f->backlog_tail = -1;
	p->in_backlog = false;
	p->next_backlog = -1;
	return node;
}

static int fab_enqueue(struct rmad_fabric *f, int node, const void *hdr,
		       size_t hlen, const void *payload, size_t plen,
		       bool urgent)
{
	struct fab_peer *p = &f->peers[node];
	struct fab_qmsg *m;

	m = malloc(sizeof(*m) + hlen + plen);
	if (!m)
		return RMAD_ERR_NOMEM;
	m->next = NULL;
	m->len = hlen + plen;
	m->urgent = urgent;
	if (hlen)
		memcpy(m->data, hdr, hlen);
	if (plen)
		memcpy(m->data + hlen, payload, plen);
	if (urgent) {
		/* behind the urgent ones queued before it, ahead of the rest:
		 * nothing orders a heartbeat with the data */
		struct fab_qmsg **pp = &p->qhead;

		while (*pp && (*pp)->urgent)
			pp = &(*pp)->next;
		m->next = *pp;
		*pp = m;
		if (!m->next)
			p->qtail = m;
	} else {
		if (p->qtail)
			p->qtail->next = m;
		else
			p->qhead = m;
		p->qtail = m;
	}
	fab_backlog_add(f, node);
	f->pending++;
	f->st.queued++;
	return 0;
}

/*
 * Retry queued sends, node by node.  A node that runs out of send buffers
 * goes to the back of the line so that one busy peer cannot starve the
 * others; -FI_EAGAIN stops the round because the provider is full,
 * unless the node is down (rmad_fabric_set_down: the provider cannot
 * connect to it), whose turn just ends; each node has one turn a round.
 */
static void fab_flush(struct rmad_fabric *f)
{
	int turns = 0;

	for (int k = f->backlog_head; k >= 0; k = f->peers[k].next_backlog)
		turns++;
	while (turns-- > 0 && f->backlog_head >= 0 && f->free_send) {
		int node = fab_backlog_pop(f);
		struct fab_peer *p = &f->peers[node];
		bool stalled = false;

		if (p->down && !p->knock) {
			/* each post tries to connect: only when knocked */
			fab_backlog_add(f, node);
			continue;
		}
		p->knock = false;

		while (p->qhead) {
			struct fab_qmsg *m = p->qhead;
			struct fab_op *op = fab_get_send(f, m->urgent);
			ssize_t ret;

			if (!op)
				break;
			memcpy(op->buf, m->data, m->len);
			ret = fab_post_send(f, node, op, m->len);
			if (ret == -FI_EAGAIN) {
				stalled = true;
				break;
			}
			/* A hard error would repeat forever: drop the
			 * message (fab_post_send logged it). */
			p->qhead = m->next;
			if (!p->qhead)
				p->qtail = NULL;
			free(m);
			f->pending--;
		}
		if (p->qhead)
			fab_backlog_add(f, node);
		if (stalled && !p->down)
			break;
	}
}

/* The node a receive came from, by the provider's source address. */
static int fab_src_node(const struct rmad_fabric *f, const struct fab_op *op)
{
	if (!f->has_source)
		return RMAD_FABRIC_SRC_UNKNOWN;
	if (op->src == FI_ADDR_NOTAVAIL || !f->peers)
		return -1;
	/* an FI_AV_TABLE hands out 0, 1, ... in insertion order */
	if (op->src < (fi_addr_t)f->n && f->peers[op->src].fi_addr == op->src)
		return (int)op->src;
	for (int i = 0; i < f->n; i++)
		if (f->peers[i].fi_addr == op->src)
			return i;
	return -1;
}

/*
 * Check a received message's tag (fab_tags_open), counting those it
 * drops.  True with *src, *len (without the trailer) and *flags.
 */
static bool fab_unseal(struct rmad_fabric *f, const struct fab_op *op,
		       int *src, size_t *len, unsigned *flags)
{
	switch (fab_tags_open(&f->tags, *src, op->buf, op->len, src, len)) {
	case FAB_TAG_FRESH:
		*flags = RMAD_FABRIC_FRESH;
		return true;
	case FAB_TAG_UNBOUND:
		*flags = 0;
		return true;
	case FAB_TAG_STALE:
		f->st.stale++;
		return false;
	default:
		f->st.rejected++;
		return false;
	}
}

/*
 * Hand completed receives to the callback, oldest posting first, and
 * stop at the first one still in flight: it was matched before the ones
 * behind it, so its message was sent (by its sender) before theirs.
 */
static void fab_deliver(struct rmad_fabric *f)
{
	struct fab_op *op;

	while ((op = f->posted_head) && op->done) {
		f->posted_head = op->next;
		if (!f->posted_head)
			f->posted_tail = NULL;
		if (!op->failed) {
			int src = fab_src_node(f, op);
			size_t len = op->len;
			unsigned flags = RMAD_FABRIC_FRESH;

			if (!fab_tagged(f) ||
			    fab_unseal(f, op, &src, &len, &flags)) {
				f->st.received++;
				f->st.recv_bytes += len;
				f->cb(f->cb_arg, op->buf, len, src, flags);
			}
		}
		fab_post_recv(f, op);
	}
}

static void fab_xfer_end(struct rmad_fabric *f, struct rmad_fabric_xfer *x)
{
	if (x->node >= 0 && x->node < f->n && f->peers[x->node].xfers)
		f->peers[x->node].xfers--;
}

/*
 * Tell the peers (f->posted: the doorbell of a sleeping agent of this
 * host) about the transfers that the provider should have made by
 * itself (rmad_fabric_moves_alone) yet are still open after the next
 * progress: shm without CMA serves them through the target.  Those it
 * did at once completed in that progress and need nothing of the
 * target's agent; ringing for them would wake a sleeping agent on
 * another CPU for nothing.  Other transfers ring when posted.
 */
static void fab_ring_open(struct rmad_fabric *f)
{
	f->ring_due = false;
	for (int n = 0; n < f->n; n++) {
		struct fab_peer *p = &f->peers[n];

		if (!p->ring_due)
			continue;
		p->ring_due = false;
		if (p->xfers && f->posted)
			f->posted(f->posted_arg, n);
	}
}

static void fab_complete(struct rmad_fabric *f,
			 const struct fi_cq_data_entry *e, fi_addr_t src)
{
	struct fab_op *op = e->op_context;

	if (!op) {
		rmad_warn("fabric: completion without context (flags %#llx)",
			  (unsigned long long)e->flags);
		return;
	}
	if (op->kind == FAB_KIND_XFER) {
		struct rmad_fabric_xfer *x = e->op_context;

		fab_xfer_end(f, x);
		x->done(x, 0);
		return;
	}
	if (!op->recv) {
		fab_put_send(f, op);
		return;
	}
	RMAD_TR(RMAD_TR_RECV, e->len);
	op->done = true;
	op->len = e->len;
	op->src = src;
	/* The length is the provider's word, not the sender's. */
	if (e->len > (fab_tagged(f) ? f->slot : f->buf_size)) {
		rmad_warn("fabric: receive of %zu bytes in a %zu byte buffer",
			  e->len, fab_tagged(f) ? f->slot : f->buf_size);
		op->failed = true;
	}
	fab_deliver(f);
}

static void fab_cq_error(struct rmad_fabric *f)
{
	struct fi_cq_err_entry err;
	struct fab_op *op;
	char buf[256];
	ssize_t ret;

	memset(&err, 0, sizeof(err));
	ret = fi_cq_readerr(f->cq, &err, 0);
	if (ret < 0) {
		if (ret != -FI_EAGAIN)
			rmad_err("fabric: fi_cq_readerr: %s",
				 fi_strerror((int)-ret));
		return;
	}
	f->st.cq_errors++;
	op = err.op_context;
	if (op && op->kind == FAB_KIND_XFER) {
		struct rmad_fabric_xfer *x = err.op_context;

		rmad_warn("fabric: one-sided transfer failed: %s (%s)",
			  fi_strerror(err.err),
			  fi_cq_strerror(f->cq, err.prov_errno, err.err_data,
					 buf, sizeof(buf)));
		fab_xfer_end(f, x);
		x->done(x, RMAD_ERR_FABRIC);
		return;
	}
	if (err.err != FI_ECANCELED)
		rmad_warn("fabric: %s failed: %s (%s)",
			  op ? (op->recv ? "receive" : "send") : "operation",
			  fi_strerror(err.err),
			  fi_cq_strerror(f->cq, err.prov_errno, err.err_data,
					 buf, sizeof(buf)));
	if (!op)
		return;
	if (!op->recv && err.err != FI_ECANCELED && op->node >= 0 &&
	    op->node < f->n)
		f->peers[op->node].send_errors++;
	if (op->recv) {
		/* Its place in the posting order must still be given up. */
		op->done = op->failed = true;
		fab_deliver(f);
	} else {
		fab_put_send(f, op);
	}
}

static int fab_send(struct rmad_fabric *f, int node, const void *hdr,
		    size_t hlen, const void *payload, size_t plen, bool urgent)
{
	struct fab_op *op;
	ssize_t ret;

	if (!f)
		return RMAD_ERR_ARG;
	if (node < 0 || node >= f->n)
		return RMAD_ERR_RANK;
	if (hlen > f->buf_size || plen > f->buf_size - hlen ||
	    (hlen && !hdr) || (plen && !payload))
		return RMAD_ERR_ARG;

	/* Anything queued for this node goes first (urgent sends: only
	 * the urgent ones). */
	if (urgent ? (!f->peers[node].qhead || !f->peers[node].qhead->urgent)
		   : !f->peers[node].qhead)
		op = fab_get_send(f, urgent);
	else
		op = NULL;
	if (op) {
		if (hlen)
			memcpy(op->buf, hdr, hlen);
		if (plen)
			memcpy(op->buf + hlen, payload, plen);
		ret = fab_post_send(f, node, op, hlen + plen);
		if (!ret)
			return 0;
		if (ret != -FI_EAGAIN)
			return RMAD_ERR_FABRIC;
	}
	return fab_enqueue(f, node, hdr, hlen, payload, plen, urgent);
}

int rmad_fabric_send(struct rmad_fabric *f, int node, const void *hdr,
		     size_t hlen, const void *payload, size_t plen)
{
	return fab_send(f, node, hdr, hlen, payload, plen, false);
}

int rmad_fabric_send_urgent(struct rmad_fabric *f, int node,
			    const void *hdr, size_t hlen, const void *payload,
			    size_t plen)
{
	return fab_send(f, node, hdr, hlen, payload, plen, true);
}

int rmad_fabric_progress(struct rmad_fabric *f)
{
	struct fi_cq_data_entry ent[FAB_CQ_BATCH];
	fi_addr_t srcs[FAB_CQ_BATCH];
	int handled = 0, ret = 0;
	ssize_t n;

	if (!f)
		return RMAD_ERR_ARG;
	/* A callback that polls would deliver messages out of order. */
	if (f->in_progress)
		return 0;
	f->in_progress = true;
	while (handled < FAB_POLL_MAX) {
		n = f->has_source ?
		    fi_cq_readfrom(f->cq, ent, FAB_CQ_BATCH, srcs) :
		    fi_cq_read(f->cq, ent, FAB_CQ_BATCH);
		if (n == -FI_EAGAIN)
			break;
		if (n == -FI_EAVAIL) {
			fab_cq_error(f);
			handled++;
			continue;
		}
		if (n < 0) {
			rmad_err("fabric: fi_cq_read: %s",
				 fi_strerror((int)-n));
			ret = RMAD_ERR_FABRIC;
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			fab_complete(f, &ent[i], f->has_source ? srcs[i] :
						      FI_ADDR_NOTAVAIL);
		handled += (int)n;
		if (n < FAB_CQ_BATCH)
			break;
	}
	if (f->rcntr) {
		/* transfers that ended here count as work done */
		uint64_t c = fi_cntr_read(f->rcntr);

		if (c != f->rcount) {
			handled += (int)(c - f->rcount > 1024 ? 1024 :
					 c - f->rcount);
			f->rcount = c;
		}
	}
	if (f->repost)
		fab_repost(f);
	if (f->backlog_head >= 0)
		fab_flush(f);
	if (f->ring_due)
		fab_ring_open(f);
	f->in_progress = false;
	return ret ? ret : handled;
}

int rmad_fabric_wait_fd(struct rmad_fabric *f)
{
	return f ? f->wait_fd : -1;
}

int rmad_fabric_trywait(struct rmad_fabric *f)
{
	struct fid *fids[1];
	int ret;

	if (!f || f->wait_fd < 0)
		return -1;
	/* Queued work moves only when we poll; nothing would wake us. */
	if (rmad_fabric_busy(f))
		return 1;
	fids[0] = &f->cq->fid;
	ret = fi_trywait(f->fabric, fids, 1);
	if (!ret)
		return 0;
	if (ret != -FI_EAGAIN)
		rmad_dbg("fabric: fi_trywait: %s", fi_strerror(-ret));
	return 1;
}

int rmad_fabric_pending(struct rmad_fabric *f)
{
	return f ? f->pending : 0;
}

int rmad_fabric_busy(struct rmad_fabric *f)
{
	if (!f)
		return 0;
	if (f->repost)
		return 1;
	/* a node that is down waits for its knock (the agent's tick) */
	for (int k = f->pending ? f->backlog_head : -1; k >= 0;
	     k = f->peers[k].next_backlog)
		if (!f->peers[k].down)
			return 1;
	return 0;
}

int rmad_fabric_queued(struct rmad_fabric *f, int node)
{
	return f && node >= 0 && node < f->n && f->peers &&
	       f->peers[node].qhead != NULL;
}

void rmad_fabric_set_down(struct rmad_fabric *f, int node, int down)
{
	if (!f || node < 0 || node >= f->n || !f->peers)
		return;
	f->peers[node].down = down != 0;
	if (fab_tagged(f))
		f->tags.peer[node].up = !down;
}

void rmad_fabric_knock(struct rmad_fabric *f, int node)
{
	if (f && node >= 0 && node < f->n && f->peers)
		f->peers[node].knock = true;
}

const char *rmad_fabric_provider(struct rmad_fabric *f)
{
	return f ? f->info->fabric_attr->prov_name : NULL;
}

int rmad_fabric_shared_locks(struct rmad_fabric *f)
{
	return f && fab_is_shm(f->info->fabric_attr->prov_name);
}

int rmad_fabric_ordered(struct rmad_fabric *f)
{
	return f && (f->info->tx_attr->msg_order & FI_ORDER_SAS) &&
	       (f->info->rx_attr->msg_order & FI_ORDER_SAS);
}

int rmad_fabric_self(struct rmad_fabric *f)
{
	return f ? f->self : -1;
}

int rmad_fabric_nnodes(struct rmad_fabric *f)
{
	return f ? f->n : 0;
}

void rmad_fabric_get_stats(struct rmad_fabric *f, struct rmad_fabric_stats *st)
{
	if (!st)
		return;
	if (f)
		*st = f->st;
	else
		memset(st, 0, sizeof(*st));
}

uint32_t rmad_fabric_send_errors(const struct rmad_fabric *f, int node)
{
	return f && node >= 0 && node < f->n ? f->peers[node].send_errors : 0;
}

void rmad_fabric_drop_node(struct rmad_fabric *f, int node)
{
	struct fab_peer *p;
	struct fab_qmsg *m, *next;

	if (!f || node < 0 || node >= f->n)
		return;
	p = &f->peers[node];
	for (m = p->qhead; m; m = next) {
		next = m->next;
		free(m);
		f->pending--;
	}
	/* still in the backlog list: popped there with nothing to send */
	p->qhead = p->qtail = NULL;
	if (p->probe_fd >= 0)
		close(p->probe_fd);	/* rmad_fabric_probe's */
	p->probe_fd = -1;
	p->probe_turns = 0;
}
