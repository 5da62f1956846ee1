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
#include "dtype.h"
#include "lockword.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "rma_internal.h"

static int client_io(struct agent *a, uint32_t c, uint64_t addr, void *buf,
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
		return RMAD_ERR_AGENT;
	if (!a->p.cma || a->cl[c].staged)
		return RMAD_ERR_PERM;	/* it stages what it wants moved */
	n = write ? process_vm_writev(a->cl[c].pid, &l, 1, &r, 1, 0) :
		    process_vm_readv(a->cl[c].pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	rmad_warn("client %u: cannot %s %zu bytes at %#llx: %s", c,
		  write ? "write" : "read", len, (unsigned long long)addr,
		  n < 0 ? strerror(errno) : "short");
	return n < 0 && errno == EPERM ? RMAD_ERR_PERM : RMAD_ERR_ARG;
}

/* Send for origin o, counting the packet in its statistics. */
int osend(struct agent *a, struct rma_origin *o, int node,
		 struct rmad_am_hdr *h, const void *pl, size_t plen)
{
	if (h->type >= RMAD_AM_RMA_LOCK && h->type <= RMAD_AM_RMA_FLUSH_ACK) {
		o->st.pkts_sent[h->type - RMAD_AM_RMA_LOCK]++;
		o->st.pkts_sent_total++;
	}
	return am_send(a, node, h, pl, plen);
}

void orecv(struct rma_origin *o, const struct rmad_am_hdr *h)
{
	if (h->type >= RMAD_AM_RMA_LOCK && h->type <= RMAD_AM_RMA_FLUSH_ACK) {
		o->st.pkts_recv[h->type - RMAD_AM_RMA_LOCK]++;
		o->st.pkts_recv_total++;
	}
}

/* The client's staging area: where staged ops keep their data. */
/* Data of op at its client address (or staging offset) addr. */
int op_io(struct agent *a, const struct rma_op *op, uint64_t addr,
		 void *buf, size_t len, int write)
{
	uint8_t *p;

	if (!op->staged)
		return client_io(a, op->client, addr, buf, len, write);
	/* checked at submission: addr + len lies inside the area */
	p = rmad_shm_staging_at(a->seg, &a->lay, op->client) + addr;
	if (write)
		memcpy(p, buf, len);
	else
		memcpy(buf, p, len);
	return 0;
}
