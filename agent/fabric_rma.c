/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_rma.c - memory registrations and one-sided transfers
 * (fi_write/fi_read) of the agent-to-agent transport.  A transfer's
 * completion comes through the transport's CQ like a message's
 * (fabric.c, fab_complete), named by its rmad_fabric_xfer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "rmad_abi.h"
#include "log.h"
#include "fabric.h"
#include "fabric_impl.h"
#include "secret.h"

int rmad_fabric_moves_alone(struct rmad_fabric *f, int write, size_t len)
{
	if (!f || f->placed_min == SIZE_MAX)
		return 0;
	return !write || len > f->placed_min;
}

int rmad_fabric_has_rma(struct rmad_fabric *f)
{
	return f ? f->has_rma : 0;
}

int rmad_fabric_needs_local_mr(struct rmad_fabric *f)
{
	return f && (f->mr_mode & FI_MR_LOCAL);
}

/*
 * Registration keys.  Where the provider lets us choose them (no
 * FI_MR_PROV_KEY: tcp;ofi_rxm, shm), a key is all that a remote read or
 * write needs besides an offset, and anyone who reaches the agent's
 * endpoint can aim one: a process of another user, or another host on
 * the network.  Counting keys 1, 2, 3... handed the first window to the
 * first guess (t/rogue.sh).  So a key is SipHash-2-4, under a 128-bit
 * secret drawn from the kernel when the first one is made, of a count:
 * distinct for every registration in practice, and not to be guessed
 * from the keys a peer was told.  Without randomness no key is made,
 * and large transfers travel as active messages.
 */
/* The next key to ask for, within the domain's key size; -1 when there
 * is no secret to make one with. */
static int mr_key(struct rmad_fabric *f, uint64_t *key)
{
	size_t ks = f->info->domain_attr->mr_key_size;

	if (!f->key_ready) {
		f->key_ready = secret_random_bytes(f->key_secret,
					    sizeof(f->key_secret)) ? -1 : 1;
		if (f->key_ready < 0)
			rmad_err("fabric: no random bytes for registration "
				 "keys (%s): large transfers go as active "
				 "messages", strerror(errno));
	}
	if (f->key_ready < 0)
		return -1;
	*key = secret_siphash(f->key_secret, ++f->next_key, NULL, 0);
	if (ks && ks < 8)
		*key &= ((uint64_t)1 << (8 * ks)) - 1;
	return 0;
}

int rmad_fabric_mr_reg(struct rmad_fabric *f, void *buf, size_t len,
		       int remote, struct rmad_fabric_mr **out, uint64_t *key,
		       uint64_t *raddr, void **desc)
{
	uint64_t access = remote == 2 ? FI_REMOTE_READ :
			  remote == 3 ? FI_REMOTE_WRITE :
			  remote ? FI_REMOTE_READ | FI_REMOTE_WRITE :
				   FI_READ | FI_WRITE;
	struct rmad_fabric_mr *m;
	int ret;

	if (!f || !buf || !len || !out)
		return RMAD_ERR_ARG;
	*out = NULL;
	if (!f->has_rma)
		return RMAD_ERR_FABRIC;
	m = calloc(1, sizeof(*m));
	if (!m)
		return RMAD_ERR_NOMEM;
	/* without FI_MR_PROV_KEY the keys are ours to choose, unique in
	 * the domain (mr_key): one already taken is drawn again */
	for (int tries = 0;; tries++) {
		uint64_t k = 0;

		if (!(f->mr_mode & FI_MR_PROV_KEY) && mr_key(f, &k)) {
			free(m);
			return RMAD_ERR_FABRIC;
		}
		ret = fi_mr_reg(f->domain, buf, len, access, 0, k, 0, &m->mr,
				NULL);
		if (ret != -FI_ENOKEY || (f->mr_mode & FI_MR_PROV_KEY) ||
		    tries == 8)
			break;
	}
	if (ret) {
		rmad_warn("fabric: fi_mr_reg of %zu bytes: %s", len,
			  fi_strerror(-ret));
		free(m);
		return RMAD_ERR_FABRIC;
	}
	if (key)
		*key = fi_mr_key(m->mr);
	/* the peer names bytes by virtual address, or by offset */
	if (raddr)
		*raddr = (f->mr_mode & FI_MR_VIRT_ADDR) ?
			 (uint64_t)(uintptr_t)buf : 0;
	if (desc)
		*desc = fi_mr_desc(m->mr);
	*out = m;
	return 0;
}

void rmad_fabric_mr_close(struct rmad_fabric_mr *mr)
{
	if (!mr)
		return;
	fi_close(&mr->mr->fid);
	free(mr);
}

static int fab_rma(struct rmad_fabric *f, int node, void *buf, size_t len,
		   void *desc, uint64_t raddr, uint64_t key,
		   struct rmad_fabric_xfer *x, int write)
{
	struct iovec iov = { buf, len };
	struct fi_rma_iov rma = { .addr = raddr, .len = len, .key = key };
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.context = x,
	};
	ssize_t ret;

	if (!f || !x || !x->done || !buf || !len)
		return RMAD_ERR_ARG;
	if (!f->has_rma)
		return RMAD_ERR_FABRIC;
	if (node < 0 || node >= f->n)
		return RMAD_ERR_RANK;
	x->kind = FAB_KIND_XFER;
	msg.addr = f->peers[node].fi_addr;
	/* a write counts as done once placed at the target, so the target's
	 * later answers and our unlock cannot overtake its data */
	ret = write ? fi_writemsg(f->ep, &msg,
				  len > f->placed_min ?
					  FI_COMPLETION :
					  FI_COMPLETION | FI_DELIVERY_COMPLETE) :
		      fi_readmsg(f->ep, &msg, FI_COMPLETION);
	if (ret == -FI_EAGAIN)
		return 1;
	if (ret) {
		rmad_warn("fabric: fi_%s of %zu bytes to node %d: %s",
			  write ? "write" : "read", len, node,
			  fi_strerror((int)-ret));
		return RMAD_ERR_FABRIC;
	}
	if (write)
		f->st.rma_writes++;
	else
		f->st.rma_reads++;
	f->st.rma_bytes += len;
	x->node = node;
	f->peers[node].xfers++;
	if (rmad_fabric_moves_alone(f, write, len)) {
		/* most likely complete already: see at the next progress */
		f->peers[node].ring_due = true;
		f->ring_due = true;
	} else if (f->posted) {
		f->posted(f->posted_arg, node);
	}
	return 0;
}

void rmad_fabric_on_post(struct rmad_fabric *f, void (*fn)(void *, int),
			 void *arg)
{
	if (!f)
		return;
	f->posted = fn;
	f->posted_arg = arg;
}

int rmad_fabric_write(struct rmad_fabric *f, int node, const void *buf,
		      size_t len, void *desc, uint64_t raddr, uint64_t key,
		      struct rmad_fabric_xfer *x)
{
	return fab_rma(f, node, (void *)buf, len, desc, raddr, key, x, 1);
}

int rmad_fabric_read(struct rmad_fabric *f, int node, void *buf, size_t len,
		     void *desc, uint64_t raddr, uint64_t key,
		     struct rmad_fabric_xfer *x)
{
	return fab_rma(f, node, buf, len, desc, raddr, key, x, 0);
}
