/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_impl.h - the transport's own state, shared by fabric.c
 * (messages, progress), fabric_open.c (setup and teardown),
 * fabric_probe.c and fabric_rma.c (registrations and one-sided
 * transfers).  Nothing else includes it.
 */
#ifndef RMAD_FABRIC_IMPL_H
#define RMAD_FABRIC_IMPL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "fabric.h"
#include "fi_load.h"
#include "fabric_tag.h"

#define FAB_API_VERSION	FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* Direction bits must be spelled out: naming FI_READ etc. alone would
 * leave FI_SEND/FI_RECV off. */
#define FAB_CAPS_MSG	(FI_MSG | FI_SEND | FI_RECV)
#define FAB_CAPS_FULL	(FAB_CAPS_MSG | FI_RMA | FI_ATOMIC | FI_READ | \
			 FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

/* The memory registration modes this code copes with: verbs needs them. */
#define FAB_MR_MODE	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			 FI_MR_PROV_KEY)

#define FAB_CQ_BATCH	16	/* entries per fi_cq_read */
#define FAB_POLL_MAX	64	/* completions per progress call */
#define FAB_NAME_MAX	1024	/* largest endpoint name we accept */
/* String names (fi_shm://pid...) differ in length from agent to agent;
 * padding them to a multiple of this keeps one length per mesh. */
#define FAB_STR_PAD	64


/*
 * One posted operation.  The provider owns the fi_context2 while the
 * operation is outstanding (FI_CONTEXT2 mode), so it must come first:
 * the completion's op_context is the address of the op itself.
 */
struct fab_op {
	struct fi_context2 ctx;
	uint32_t kind;		/* FAB_KIND_MSG; see rmad_fabric_xfer */
	struct fab_op *next;	/* free, re-post or posted list */
	char *buf;
	size_t len;		/* received bytes, once done */
	bool recv;
	int node;		/* a send's destination */
	fi_addr_t src;		/* a receive's source, with FI_SOURCE */
	bool done;		/* receive completed, not yet delivered */
	bool failed;		/* ... with an error: nothing to deliver */
};

/* What a completion's context is: ours, or a caller's transfer. */
#define FAB_KIND_MSG	0x4d534731u
#define FAB_KIND_XFER	0x58464552u
static_assert(sizeof(struct fi_context2) ==
	      sizeof(((struct rmad_fabric_xfer *)0)->prov), "xfer ctx");
static_assert(offsetof(struct fab_op, kind) ==
	      offsetof(struct rmad_fabric_xfer, kind), "xfer kind");

struct rmad_fabric_mr {
	struct fid_mr *mr;
};

/* A send waiting for a buffer or for the provider to take it. */
struct fab_qmsg {
	struct fab_qmsg *next;
	size_t len;
	bool urgent;		/* rmad_fabric_send_urgent: first in line,
				 * and may take the reserved buffers */
	char data[];
};

struct fab_peer {
	fi_addr_t fi_addr;
	uint32_t send_errors;	/* sends to it that failed */
	struct fab_qmsg *qhead, *qtail;
	int next_backlog;	/* next node with queued sends, -1 = end */
	bool in_backlog;
	bool ring_due;		/* posted transfers: tell it if still open */
	bool down;		/* not up (rmad_fabric_set_down) */
	bool knock;		/* ... but its queue may be tried once */
	uint32_t xfers;		/* transfers to it not yet complete */
	int probe_fd;		/* a connection tried to its listener
				 * (rmad_fabric_probe), or -1 */
	int probe_turns;	/* looks at it so far */
};

struct rmad_fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_mr *mr;
	struct fid_ep *ep;
	struct fid_cntr *rcntr;	/* one-sided transfers that targeted us */
	uint64_t rcount;	/* its value at the last look */
	void *desc;		/* MR descriptor when FI_MR_LOCAL, else NULL */
	int wait_fd;
	bool has_rma;
	bool has_source;	/* FI_SOURCE: receives name their sender */
	bool str_addr;		/* FI_ADDR_STR: names are C strings */
	uint64_t mr_mode;	/* what the provider asks of registrations */
	/* requested keys, without FI_MR_PROV_KEY: the keyed hash of a
	 * count (fabric_rma.c, mr_key) */
	uint64_t next_key;
	uint64_t key_secret[2];
	int key_ready;		/* 1: secret drawn; -1: no randomness */
	bool ring_due;		/* some peer's ring_due is set */
	size_t placed_min;	/* writes above it complete once placed */
	bool in_progress;

	rmad_fabric_recv_cb cb;
	void *cb_arg;
	void (*posted)(void *, int);	/* rmad_fabric_on_post */
	void *posted_arg;

	size_t buf_size;	/* the largest message of the am layer */
	size_t slot;		/* a buffer: buf_size and room for a tag */
	int nrecv, nsend;
	char *bufs;		/* nrecv receive then nsend send buffers */
	struct fab_op *ops;
	struct fab_op *free_send;
	int nfree;		/* buffers on free_send */
	int reserve;		/* ... of which only urgent sends take the
				 * last ones (rmad_fabric_send_urgent) */
	struct fab_op *repost;	/* receives the provider refused to take */
	struct fab_op *posted_head, *posted_tail;	/* in posting order */

	struct fab_peer *peers;
	int self, n;
	struct fab_tags tags;	/* keys once rmad_fabric_set_auth ran */
	int backlog_head, backlog_tail;	/* nodes with queued sends */
	int pending;			/* queued messages, all nodes */

	struct rmad_fabric_stats st;
};

/* Tags on (rmad_fabric_set_auth)? */
/* The shm provider (alone, or first of a stack). */
static inline bool fab_is_shm(const char *prov)
{
	return prov && !strncmp(prov, "shm", 3) &&
	       (prov[3] == '\0' || prov[3] == ';');
}

/* fabric.c, for fabric_open.c: post a receive buffer (0, or
 * RMAD_ERR_FABRIC); put a send buffer on the free list. */
int fab_post_recv(struct rmad_fabric *f, struct fab_op *op);
void fab_put_send(struct rmad_fabric *f, struct fab_op *op);

static inline bool fab_tagged(const struct rmad_fabric *f)
{
	return f->tags.key != NULL;
}

#endif
