/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.h - the agent-to-agent transport.
 *
 * Agents on different nodes exchange active messages over a libfabric
 * FI_EP_RDM endpoint.  This unit hides libfabric completely: the agent
 * opens a fabric, publishes its address, inserts the peers' addresses
 * (AV index == node index), sends copies of small messages that never
 * block, and polls for received messages from its single progress
 * thread.  Providers progress manually, so nothing arrives unless
 * rmad_fabric_progress() is called (on either side).
 *
 * Messages to one node sent with rmad_fabric_send() are handed to the
 * provider in the order they were sent; with a provider that orders
 * send-after-send (rmad_fabric_ordered: shm, tcp;ofi_rxm) they are also
 * delivered in that order.  rmad_fabric_send_urgent() (heartbeats and
 * their echoes) is ordered with none of them: it goes ahead of what
 * waits in the node's queue.  The receive callback learns the sender as
 * the provider names it (src, FI_SOURCE; see rmad_fabric_recv_cb), never
 * as the message says, and whether the message came bound to our session
 * with it (flags); the caller's header names the node it claims, which
 * am.c checks against src.
 */
#ifndef RMAD_AGENT_FABRIC_H
#define RMAD_AGENT_FABRIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rmad_fabric;

struct rmad_fabric_cfg {
	/* fi_getinfo prov_name filter: "shm", "tcp;ofi_rxm", "verbs;ofi_rxm" */
	const char *provider;
	/* bind address for tcp-like providers, NULL = provider default */
	const char *node;
	/* port string or NULL (an ephemeral port) */
	const char *service;
	size_t am_buf_size;	/* bytes per active-message buffer */
	int am_recv_bufs;	/* receives kept posted */
	int am_send_bufs;	/* send buffers; more sends are queued */
};

/* Called from rmad_fabric_progress() for every message received. msg is
 * valid only during the call.  The callback may call rmad_fabric_send()
 * but not rmad_fabric_progress() or rmad_fabric_close().  src is the
 * sender's node as the provider names it (FI_SOURCE), never as the
 * message says: -1 when the sender is in no address vector entry of
 * ours, RMAD_FABRIC_SRC_UNKNOWN when the provider does not say. */
#define RMAD_FABRIC_SRC_UNKNOWN	(-2)
/* flags: the message came bound to our session with its sender and was
 * not seen before (rmad_fabric_set_session); always, without tags. */
#define RMAD_FABRIC_FRESH	1u
typedef void (*rmad_fabric_recv_cb)(void *arg, const void *msg, size_t len,
				    int src, unsigned flags);

int rmad_fabric_open(const struct rmad_fabric_cfg *cfg, rmad_fabric_recv_cb cb,
		     void *arg, struct rmad_fabric **out);

/* fn(arg, node) after each send, write or read the provider took for
 * node (a peer to wake: bell.c); NULL fn: none. */
void rmad_fabric_on_post(struct rmad_fabric *f, void (*fn)(void *, int),
			 void *arg);

/* Local endpoint address for exchange; *len in: capacity, out: size.
 * String addresses (shm) are zero-padded to a fixed size so that every
 * agent of a mesh publishes the same length.  A too small buffer gives
 * RMAD_ERR_ARG with the needed size in *len. */
int rmad_fabric_getname(struct rmad_fabric *f, void *addr, size_t *len);

/* Insert the n peer addresses (each addrlen bytes, consecutive); peer i
 * gets node index i.  self is this agent's index (its own address is in
 * the array too).  Call once. */
int rmad_fabric_set_peers(struct rmad_fabric *f, int self, int n,
			  const void *addrs, size_t addrlen);

/*
 * Tag every message from here on, and drop every received one whose tag
 * is wrong (rmad.conf(5), fabric_auth): keys holds 2 words per node, in
 * node order, node i's key being what node i's messages are tagged
 * under (keys[self] is ours).  Call once, after rmad_fabric_set_peers
 * and before any message moves; every agent of the mesh must.  0,
 * RMAD_ERR_ARG or RMAD_ERR_NOMEM.
 */
int rmad_fabric_set_auth(struct rmad_fabric *f, const uint64_t *keys);

/*
 * With tags, our session with node: the incarnation we hold of it
 * (mine) and the one it holds of us (theirs), as a static mesh shakes
 * hands (liveness.c); both 0 (what rmad_fabric_set_auth sets: keys that are
 * new at each launch) is a session too, one of them 0 is none.  Messages
 * to a node that is up (rmad_fabric_set_down) and in session go bound:
 * under a key of the session, numbered, each taken once, and those come
 * with RMAD_FABRIC_FRESH; others go unbound, under the sender's key,
 * with its clock for a number, taken from a node that is up only if
 * newer than the last.  Numbers count anew with each call.  Without
 * tags, nothing.  0 or RMAD_ERR_ARG.
 */
int rmad_fabric_set_session(struct rmad_fabric *f, int node, uint64_t mine,
			    uint64_t theirs);

/* Send hdr+payload as one message (total <= am_buf_size, else
 * RMAD_ERR_ARG) to node.  Copies the data and never blocks: what the
 * provider cannot take now is queued and retried, in order per node, from
 * rmad_fabric_progress().  Returns 0, RMAD_ERR_RANK, RMAD_ERR_NOMEM or
 * RMAD_ERR_FABRIC. */
int rmad_fabric_send(struct rmad_fabric *f, int node, const void *hdr,
		     size_t hlen, const void *payload, size_t plen);
/*
 * The same for a message that nothing orders with the others to node (a
 * heartbeat or its echo): it goes ahead of what waits in node's queue,
 * behind the urgent ones only, and may take the last send buffers,
 * which other sends leave to it.  So what delays it is what the
 * provider already took (at most am_send_bufs messages, and transfers
 * in flight), never our queue of bulk traffic.
 */
int rmad_fabric_send_urgent(struct rmad_fabric *f, int node,
			    const void *hdr, size_t hlen, const void *payload,
			    size_t plen);

/* Poll the CQ (bounded batch), deliver received messages, re-post their
 * buffers, release completed sends, retry queued sends.  Returns the
 * number of completions handled (>= 0) or RMAD_ERR_FABRIC. */
int rmad_fabric_progress(struct rmad_fabric *f);

/* An fd that becomes readable when the CQ may have work, or -1. */
int rmad_fabric_wait_fd(struct rmad_fabric *f);

/* Before sleeping on the fd: 0 = safe to sleep, 1 = poll again first
 * (completions ready, or sends still queued), -1 = there is no wait fd. */
int rmad_fabric_trywait(struct rmad_fabric *f);

/* Sends queued here, not yet handed to the provider. */
int rmad_fabric_pending(struct rmad_fabric *f);
/* 1 if the next progress has work to do without a completion: sends
 * queued for a node that is not down (rmad_fabric_set_down), receives
 * to post again. */
int rmad_fabric_busy(struct rmad_fabric *f);
/* 1 if sends to node wait in our queue (the provider took none of them
 * yet: over tcp;ofi_rxm, while it cannot connect to a node that is not
 * up), else 0. */
int rmad_fabric_queued(struct rmad_fabric *f, int node);
/* Node is down (1) or up again (0): what waits for it is retried only
 * when knocked (rmad_fabric_knock), and keeps neither the others'
 * queued sends nor a sleep (rmad_fabric_trywait) waiting. */
void rmad_fabric_set_down(struct rmad_fabric *f, int node, int down);
/* A node that is down: try its queued sends at the next progress (once;
 * over tcp;ofi_rxm every try is a connection attempt). */
void rmad_fabric_knock(struct rmad_fabric *f, int node);

/* Actual provider name, e.g. "shm" or "tcp;ofi_rxm". */
const char *rmad_fabric_provider(struct rmad_fabric *f);

/* 1 if the provider moves data through memory the agents of this host
 * share, under locks a sending agent spins on (shm). */
int rmad_fabric_shared_locks(struct rmad_fabric *f);

/* 1 if the provider normally moves a write (write = 1) or read of len
 * bytes by itself, with no polling by the target's agent: shm's CMA
 * transfers, made by our own process.  Otherwise, and when shm falls
 * back to a request the target must serve, the target's doorbell rings
 * after the next progress that finds the transfer still open. */
int rmad_fabric_moves_alone(struct rmad_fabric *f, int write, size_t len);

/* 1 if the endpoint was opened with FI_RMA and FI_ATOMIC, 0 if only
 * FI_MSG is available. */
int rmad_fabric_has_rma(struct rmad_fabric *f);

/*
 * One-sided transfers (fi_write/fi_read) straight into a peer's
 * registered memory.  Only with rmad_fabric_has_rma().
 *
 * A registration with remote = 1 exposes [buf, buf+len) to remote reads
 * and writes, with remote = 2 to remote reads only, with remote = 3 to
 * remote writes only; the peer addresses it as *raddr + offset with
 * *key.  Local buffers need no registration unless
 * rmad_fabric_needs_local_mr() says so; then they must lie in memory
 * registered here with remote = 0, and its desc is passed along.
 */
struct rmad_fabric_mr;

int rmad_fabric_mr_reg(struct rmad_fabric *f, void *buf, size_t len,
		       int remote, struct rmad_fabric_mr **out, uint64_t *key,
		       uint64_t *raddr, void **desc);
void rmad_fabric_mr_close(struct rmad_fabric_mr *mr);

/* libfabric, loaded now rather than at the first rmad_fabric_open
 * (fi_load.c): 0, or -FI_ENOSYS, said in the log */
int rmad_fi_load(void);
int rmad_fabric_needs_local_mr(struct rmad_fabric *f);

/* How many sends to node failed (provider errors), ever: a sign that it
 * may be gone, for the heartbeats to confirm. */
uint32_t rmad_fabric_send_errors(const struct rmad_fabric *f, int node);
/*
 * 1 if node's endpoint is definitely gone: over tcp, a connection to
 * the address it listens on was refused by its host.  Never blocks:
 * each call looks at the connection the last one began, or begins one:
 * -1 while that has no answer yet; 0 when it cannot tell (a stopped
 * peer's kernel accepts; a cut network never answers), and for
 * providers it knows nothing of.
 */
int rmad_fabric_probe(struct rmad_fabric *f, int node);
/* The probe of node, if any, is of no more use (it answered). */
void rmad_fabric_probe_end(struct rmad_fabric *f, int node);
/* Node is dead: free the sends queued for it (none go out any more),
 * and end a probe. */
void rmad_fabric_drop_node(struct rmad_fabric *f, int node);

/* 1 if messages to one node are delivered in the order they were sent
 * (FI_ORDER_SAS), so that one answer can stand for every earlier one. */
int rmad_fabric_ordered(struct rmad_fabric *f);

/*
 * A transfer in flight.  The caller owns the memory and fills in done;
 * the fabric owns prov until done(x, status) is called from
 * rmad_fabric_progress(): status 0, or RMAD_ERR_FABRIC.  A write
 * completes only once its data is placed at the target
 * (FI_DELIVERY_COMPLETE), so an answer sent afterwards cannot overtake
 * it.
 */
struct rmad_fabric_xfer {
	void *prov[8];			/* provider context (fi_context2) */
	uint32_t kind;			/* fabric.c's */
	int node;			/* fabric.c's */
	void (*done)(struct rmad_fabric_xfer *x, int status);
};

/* Post a write of len bytes at buf to (raddr, key) on node, or a read
 * from there into buf.  0: posted; 1: the provider is busy, try again
 * after progress; RMAD_ERR_RANK, RMAD_ERR_ARG or RMAD_ERR_FABRIC. */
int rmad_fabric_write(struct rmad_fabric *f, int node, const void *buf,
		      size_t len, void *desc, uint64_t raddr, uint64_t key,
		      struct rmad_fabric_xfer *x);
int rmad_fabric_read(struct rmad_fabric *f, int node, void *buf, size_t len,
		     void *desc, uint64_t raddr, uint64_t key,
		     struct rmad_fabric_xfer *x);

int rmad_fabric_self(struct rmad_fabric *f);
int rmad_fabric_nnodes(struct rmad_fabric *f);

struct rmad_fabric_stats {
	uint64_t sent;		/* messages handed to the provider */
	uint64_t received;	/* messages delivered to the callback */
	uint64_t queued;	/* sends that had to wait in the queue */
	uint64_t cq_errors;	/* error completions read */
	uint64_t rejected;	/* received with a wrong or no tag, or a
				 * number taken before, dropped */
	uint64_t stale;		/* received bound to a session we do not
				 * have (a restart), dropped */
	uint64_t send_bytes;
	uint64_t recv_bytes;
	uint64_t rma_writes;	/* fi_write posted */
	uint64_t rma_reads;	/* fi_read posted */
	uint64_t rma_bytes;
};

void rmad_fabric_get_stats(struct rmad_fabric *f, struct rmad_fabric_stats *st);

/* NULL-safe; frees everything, closes fi objects in reverse order. */
void rmad_fabric_close(struct rmad_fabric *f);

#endif
