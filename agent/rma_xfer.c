/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_xfer.c - moving bytes for the RMA layer: reading and writing a
 * client's memory (in place through rmad_alloc_mem mappings, or with
 * process_vm_readv/writev, or through its staging area) and sending
 * an origin's packets with their counts.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs.h"
#include "mem.h"
#include "windows.h"
#include "atomics.h"
#include "counter.h"
#include "accword.h"
#include "dtype.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

int xfer_client_io(struct agent *a, uint32_t c, uint64_t addr, void *buf,
	      size_t len, int write)
{
	void *p = agent_mem_lookup(a, c, addr, len);
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (p) {
		if (write)
			memcpy(p, buf, len);
		else
			memcpy(buf, p, len);
		return 0;
	}
	if (!a->cl[c].registered)
		return RMAD_ERR_PROC_FAILED;	/* its process is gone */
	if (!a->p.cma || a->cl[c].staged)
		return RMAD_ERR_PERM;	/* it stages what it wants moved */
	n = write ? process_vm_writev(a->cl[c].pid, &l, 1, &r, 1, 0) :
		    process_vm_readv(a->cl[c].pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	rmad_warn("client %u: cannot %s %zu bytes at %#llx: %s", c,
		  write ? "write" : "read", len, (unsigned long long)addr,
		  n < 0 ? strerror(errno) : "short");
	/* ESRCH: it died, and its agent has not seen the hang-up yet */
	return n < 0 && errno == EPERM ? RMAD_ERR_PERM :
	       n < 0 && errno == ESRCH ? RMAD_ERR_PROC_FAILED : RMAD_ERR_ARG;
}

int xfer_client_iov(struct agent *a, uint32_t c, const struct iovec *remote,
	       unsigned long n, void *buf, size_t len, int write)
{
	struct iovec l = { buf, len };
	ssize_t got;

	if (!a->cl[c].registered)
		return RMAD_ERR_PROC_FAILED;
	if (!a->p.cma || a->cl[c].staged)
		return RMAD_ERR_PERM;
	got = write ? process_vm_writev(a->cl[c].pid, &l, 1, remote, n, 0) :
		      process_vm_readv(a->cl[c].pid, &l, 1, remote, n, 0);
	if (got == (ssize_t)len)
		return 0;
	rmad_warn("client %u: cannot %s %zu bytes in %lu pieces: %s", c,
		  write ? "write" : "read", len, n,
		  got < 0 ? strerror(errno) : "short");
	return got < 0 && errno == EPERM ? RMAD_ERR_PERM :
	       got < 0 && errno == ESRCH ? RMAD_ERR_PROC_FAILED :
	       RMAD_ERR_ARG;
}

/* Send for origin o, counting the packet in its statistics. */
int xfer_osend(struct agent *a, struct rma_origin *o, int node,
		 struct rmad_am_hdr *h, const void *pl, size_t plen)
{
	if (h->type >= RMAD_AM_RMA_LOCK && h->type <= RMAD_AM_RMA_FLUSH_ACK) {
		o->st.pkts_sent[h->type - RMAD_AM_RMA_LOCK]++;
		o->st.pkts_sent_total++;
	}
	if (am_wants_answer(h))
		agent_expect_answer(a);
	return am_send_st(a, node, h, pl, plen, &o->st);
}

void xfer_orecv(struct rma_origin *o, const struct rmad_am_hdr *h)
{
	if (h->type >= RMAD_AM_RMA_LOCK && h->type <= RMAD_AM_RMA_FLUSH_ACK) {
		o->st.pkts_recv[h->type - RMAD_AM_RMA_LOCK]++;
		o->st.pkts_recv_total++;
	}
}

/* The client's staging area: where staged ops keep their data. */
/* Data of op at its client address (or staging offset) addr. */
int xfer_op_io(struct agent *a, const struct rma_op *op, uint64_t addr,
		 void *buf, size_t len, int write)
{
	uint8_t *p;

	if (!op->staged)
		return xfer_client_io(a, op->client, addr, buf, len, write);
	/* checked at submission: addr + len lies inside the area */
	p = rmad_shm_staging_at(a->seg, &a->lay, op->client) + addr;
	if (write)
		memcpy(p, buf, len);
	else
		memcpy(buf, p, len);
	return 0;
}

/*
 * A member's accumulate lock (acc_lock in its control page), for the
 * accumulates of a created window and those on types wider than 8 bytes
 * on any window: the agent holds it for one operation's read, combine
 * and write back.  A client holds it as briefly; one that died holding it
 * is passed over.  After a short spin the agent sleeps between tries,
 * so that a holder on its core runs.  One that keeps it for ACC_LOCK_NS
 * fails the op rather than stall the agent, and the member is marked
 * (acc_stuck): its next ops fail at once while the word stays held, so a
 * client that keeps the word costs the node's agent ACC_LOCK_NS once,
 * not per op.
 *
 * A packet applied as it came (R->acc_defer: target_apply_direct) does not
 * wait past the short spin: ACC_AGAIN keeps it, and its node's later
 * packets for its job, until am_retry tries again, so that the agent
 * serves everybody else meanwhile; acc_lock_timeout_ms after its first
 * try it fails as above; so do a chunk read from its origin
 * (rma_pull.c, lock_wait) and an op that a lock grant applies
 * (rma_target.c, pend_apply).  (A packet that could not be kept,
 * acc_since 1, waits here.)
 */
#define ACC_LOCK_NS	(100ull * 1000 * 1000)

/* Is lock word value v a holder that lives (not free, not a client
 * slot that is gone)? */
static int holder_lives(const struct agent *a, uint32_t v)
{
	return v && (v == RMAD_ACC_AGENT || v - 1 >= (uint32_t)a->p.max_clients ||
		     a->cl[v - 1].registered);
}

int xfer_acc_lock(struct agent *a, struct win_local *l)
{
	struct rma_ctx *R = a->rma;
	struct rmad_win_ctl *ctl = l->base;
	uint64_t t0 = 0;

	for (unsigned n = 0;; n++) {
		uint32_t v = 0;

		if (__atomic_compare_exchange_n(&ctl->acc_lock, &v,
						RMAD_ACC_AGENT, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			if (n)
				__atomic_store_n(&ctl->acc_want, 0,
						 __ATOMIC_RELAXED);
			l->acc_stuck = 0;
			return 0;
		}
		if (l->acc_stuck && v != RMAD_ACC_AGENT && holder_lives(a, v))
			return RMAD_ERR_SYNC;	/* still held: no wait */
		if (!n)		/* the members let us in next */
			__atomic_store_n(&ctl->acc_want, 1, __ATOMIC_RELEASE);
		if (!holder_lives(a, v)) {
			/* its holder is gone (and its bulk, if it was in
			 * one: accword.h) */
			__atomic_store_n(&ctl->acc_big, 0, __ATOMIC_RELEASE);
			__atomic_compare_exchange_n(&ctl->acc_lock, &v, 0, 0,
						    __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
			continue;
		}
		if (n == 64 && R->acc_defer && R->acc_since != 1) {
			uint64_t lim = (uint64_t)a->p.acc_lock_timeout_ms *
				       1000000;

			/* kept: acc_want stays up, so that a client that
			 * takes the lock batch after batch lets us in */
			if (!R->acc_since || rmad_now_ns() - R->acc_since <= lim)
				return ACC_AGAIN;
			__atomic_store_n(&ctl->acc_want, 0, __ATOMIC_RELAXED);
			rmad_warn("rank %d's window: its accumulate lock is "
				  "held by %#x for over %ld ms; ops refused "
				  "while it stays held", l->rank, v,
				  a->p.acc_lock_timeout_ms);
			l->acc_stuck = 1;
			return RMAD_ERR_SYNC;
		}
		if (n == 64)
			t0 = rmad_now_ns();
		else if (n > 64 && !(n & 63) &&
			 rmad_now_ns() - t0 > ACC_LOCK_NS) {
			rmad_warn("rank %d's window: its accumulate lock is "
				  "held by %#x for over %llu ms; ops refused "
				  "while it stays held", l->rank, v,
				  ACC_LOCK_NS / 1000000);
			__atomic_store_n(&ctl->acc_want, 0, __ATOMIC_RELAXED);
			l->acc_stuck = 1;
			return RMAD_ERR_SYNC;
		}
		/* then a sleep, whatever our class: the holder may be a
		 * client of our core that sched_yield() under nice -20 lets
		 * run for next to nothing (seen: a live client's 64 KiB
		 * batch held past 100 ms on two loaded cores) */
		if (n < 64)
			agent_yield(a);
		else
			agent_nap();
	}
}

void xfer_acc_unlock(struct win_local *l)
{
	struct rmad_win_ctl *ctl = l->base;

	__atomic_store_n(&ctl->acc_lock, 0, __ATOMIC_RELEASE);
}


void xfer_mapped_acc_apply(struct agent *a, struct win_local *l, void *dst,
		      const void *src, void *res, uint32_t dtype, uint32_t op,
		      uint64_t count)
{
	uint64_t thr = (uint64_t)a->p.acc_bulk_threshold;
	int bulk = 0;

	if (thr && !rmad_dtype_wide(dtype) &&
	    count * rmad_dtype_size(dtype) >= thr)
		bulk = acc_bulk_begin(l->base, (uint32_t)a->p.max_clients,
				      ACC_SMALL_WAIT_NS);
	if (bulk) {
		rmad_acc_apply_excl(dst, src, res, dtype, op, count);
		acc_bulk_end(l->base);
		a->st.acc_bulk++;
	} else {
		rmad_acc_apply(dst, src, res, dtype, op, count);
	}
}

int xfer_created_apply(struct agent *a, struct win_local *l,
		  const struct rmad_am_hdr *h, const uint8_t *pl,
		  uint8_t *res, uint64_t len)
{
	/* room for a pulled chunk: one process_vm_readv and one writev per
	 * chunk, where pieces of an active message's size cost 32 pairs
	 * of system calls per 512 KiB (each a few us in a guest) */
	static uint8_t cur[RMAD_AM_PULL_MAX] __attribute__((aligned(64)));
	uint64_t addr = l->addr + h->disp;
	size_t es = rmad_dtype_size(h->dtype);
	int st, wb = 1;

	switch (h->type) {
	case RMAD_AM_RMA_PUT:
		return xfer_client_io(a, l->client, addr, (void *)pl, len, 1);
	case RMAD_AM_RMA_GET:
		return xfer_client_io(a, l->client, addr, res, len, 0);
	}
	if (len > sizeof(cur))
		return RMAD_ERR_TYPE;
	st = xfer_acc_lock(a, l);
	if (st)
		return st;
	st = xfer_client_io(a, l->client, addr, cur, len, 0);
	if (!st) {
		switch (h->type) {
		/* a private copy under acc_lock: plain loops do */
		case RMAD_AM_RMA_ACC:
			rmad_acc_apply_excl(cur, pl, NULL, h->dtype, h->op,
					    h->count);
			break;
		case RMAD_AM_RMA_GACC:
			rmad_acc_apply_excl(cur, h->op == RMAD_NO_OP ? NULL :
					    pl, res, h->dtype, h->op,
					    h->count);
			wb = h->op != RMAD_NO_OP;
			break;
		case RMAD_AM_RMA_CAS:
			rmad_cas_apply(cur, pl, pl + es, res, h->dtype);
			wb = memcmp(cur, res, es) != 0;
			break;
		}
		if (wb)
			st = xfer_client_io(a, l->client, addr, cur, len, 1);
	}
	xfer_acc_unlock(l);
	return st;
}

int xfer_bounce_init(struct agent *a)
{
	struct rma_ctx *R = a->rma;

	size_t len = (size_t)a->p.rdma_chunk * XFER_MAX;
	void *p;

	if (R->bounce)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return RMAD_ERR_NOMEM;
	if (rmad_fabric_needs_local_mr(a->fab) &&
	    rmad_fabric_mr_reg(a->fab, p, len, 0, &R->bounce_mr, NULL, NULL,
			       &R->bounce_desc)) {
		munmap(p, len);
		return RMAD_ERR_FABRIC;
	}
	R->bounce = p;
	R->bounce_len = len;
	for (int k = 0; k < XFER_MAX; k++) {
		R->xfers[k].buf = R->bounce + (size_t)k * (size_t)a->p.rdma_chunk;
		R->xfers[k].a = a;
		R->xfers[k].next = R->xfree;
		R->xfree = &R->xfers[k];
	}
	return 0;
}
