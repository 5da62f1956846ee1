/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_open.c - the agent-to-agent transport's setup and teardown
 * (fabric.c moves the messages): the provider's choice, the fabric,
 * domain, CQ, AV, buffers and endpoint, the peers' addresses, the keys
 * and sessions of tagged messages, and the close.
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

static int fab_getinfo(const struct rmad_fabric_cfg *cfg, uint64_t caps,
		       uint64_t order, struct fi_info **out)
{
	const char *node = cfg->node, *service = cfg->service;
	struct fi_info *hints;
	uint64_t flags = 0;
	int ret;

	hints = fi_allocinfo();
	if (!hints)
		return -FI_ENOMEM;
	/* receives that name their sender, where the provider can */
	hints->caps = caps | FI_SOURCE;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->mr_mode = FAB_MR_MODE;
	/* The provider, not us, must absorb messages sent before a receive
	 * is posted. */
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	hints->tx_attr->msg_order = order;
	hints->rx_attr->msg_order = order;
	if (cfg->provider) {
		hints->fabric_attr->prov_name = strdup(cfg->provider);
		if (!hints->fabric_attr->prov_name) {
			fi_freeinfo(hints);
			return -FI_ENOMEM;
		}
	}
	/* shm names itself after the pid; a node name would make every
	 * endpoint of the host claim the same region. */
	if (fab_is_shm(cfg->provider))
		node = service = NULL;
	if (node || service)
		flags = FI_SOURCE;
	ret = fi_getinfo(FAB_API_VERSION, node, service, flags, hints, out);
	if (ret == -FI_ENODATA) {
		hints->caps = caps;
		ret = fi_getinfo(FAB_API_VERSION, node, service, flags, hints,
				 out);
	}
	fi_freeinfo(hints);
	return ret;
}

/* Try the full capability set first, then settle for less, so that a
 * messaging-only provider still carries active messages. */
static int fab_select(struct rmad_fabric *f, const struct rmad_fabric_cfg *cfg)
{
	static const struct {
		uint64_t caps, order;
	} tries[] = {
		{ FAB_CAPS_FULL | FI_RMA_EVENT, FI_ORDER_SAS },
		{ FAB_CAPS_FULL, FI_ORDER_SAS },
		{ FAB_CAPS_FULL, 0 },
		{ FAB_CAPS_MSG, FI_ORDER_SAS },
		{ FAB_CAPS_MSG, 0 },
	};
	const char *prov = cfg->provider ? cfg->provider : "(any)";
	int ret = -FI_ENODATA;

	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		ret = fab_getinfo(cfg, tries[i].caps, tries[i].order, &f->info);
		if (!ret)
			break;
		if (ret == -FI_ENOMEM)
			return RMAD_ERR_NOMEM;
		rmad_dbg("fabric: fi_getinfo(%s, try %zu): %s", prov, i,
			 fi_strerror(-ret));
	}
	if (ret) {
		rmad_err("fabric: no RDM endpoint for provider %s: %s", prov,
			 fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	f->has_rma = (f->info->caps & (FI_RMA | FI_ATOMIC)) ==
		     (FI_RMA | FI_ATOMIC);
	if (!f->has_rma)
		rmad_warn("fabric: %s offers no RMA/atomics, messages only",
			  f->info->fabric_attr->prov_name);
	if (!(f->info->tx_attr->msg_order & FI_ORDER_SAS))
		rmad_warn("fabric: %s does not order send after send",
			  f->info->fabric_attr->prov_name);
	f->str_addr = f->info->addr_format == FI_ADDR_STR;
	f->mr_mode = (uint64_t)f->info->domain_attr->mr_mode;
	f->has_source = (f->info->caps & FI_SOURCE) != 0;
	/*
	 * fi_shm(7): above the inject size a transmit completion is not
	 * generated until the receiving side has processed the message, so
	 * such writes need no FI_DELIVERY_COMPLETE.  Without it shm moves
	 * them in one process_vm_writev of ours ("fast RMA") instead of a
	 * request that the target's agent copies and answers.
	 */
	f->placed_min = fab_is_shm(f->info->fabric_attr->prov_name) ?
				f->info->tx_attr->inject_size :
				SIZE_MAX;
	return 0;
}

/*
 * Ask for an fd to sleep on.  Providers differ: some refuse FI_WAIT_FD at
 * open, others accept it but cannot hand the fd out.  Either way the CQ
 * is reopened without a wait object, since signalling one costs on every
 * completion.
 */
static int fab_open_cq(struct rmad_fabric *f)
{
	struct fi_cq_attr attr = {
		.size = (size_t)f->nrecv + (size_t)f->nsend + FAB_CQ_BATCH,
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_FD,
	};
	const char *prov = f->info->fabric_attr->prov_name;
	int fd = -1, ret;

	ret = fi_cq_open(f->domain, &attr, &f->cq, f);
	if (!ret) {
		ret = fi_control(&f->cq->fid, FI_GETWAIT, &fd);
		if (!ret && fd >= 0) {
			f->wait_fd = fd;
			return 0;
		}
		rmad_info("fabric: %s has no CQ wait fd (%s), polling only",
			  prov, fi_strerror(ret < 0 ? -ret : FI_ENOSYS));
		fi_close(&f->cq->fid);
		f->cq = NULL;
	} else {
		rmad_info("fabric: %s refuses FI_WAIT_FD (%s), polling only",
			  prov, fi_strerror(-ret));
	}
	attr.wait_obj = FI_WAIT_NONE;
	ret = fi_cq_open(f->domain, &attr, &f->cq, f);
	if (ret) {
		f->cq = NULL;
		rmad_err("fabric: fi_cq_open: %s", fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	return 0;
}

/* The fabric, the domain, the CQ, the remote-access counter (if the
 * provider has one) and the AV. */
static int fab_open_domain(struct rmad_fabric *f)
{
	int ret;

	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (ret) {
		f->fabric = NULL;
		rmad_err("fabric: fi_fabric: %s", fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	ret = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (ret) {
		f->domain = NULL;
		rmad_err("fabric: fi_domain: %s", fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	ret = fab_open_cq(f);
	if (ret)
		return ret;
	if (f->info->caps & FI_RMA_EVENT) {
		/*
		 * fi_write/fi_read aimed at us make no completion here, yet
		 * with manual progress they move only while we poll: this
		 * counter lets progress see them, so the loop stays awake.
		 */
		struct fi_cntr_attr ca = {
			.events = FI_CNTR_EVENTS_COMP,
			.wait_obj = FI_WAIT_NONE,
		};

		ret = fi_cntr_open(f->domain, &ca, &f->rcntr, NULL);
		if (ret) {
			rmad_info("fabric: no remote-access counter: %s",
				  fi_strerror(-ret));
			f->rcntr = NULL;
		}
	}
	{
		struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

		ret = fi_av_open(f->domain, &av_attr, &f->av, NULL);
	}
	if (ret) {
		f->av = NULL;
		rmad_err("fabric: fi_av_open: %s", fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	return 0;
}

/* The receive and send buffers, one block (registered if the provider
 * wants local MRs), and their ops. */
static int fab_open_bufs(struct rmad_fabric *f)
{
	size_t total;
	int ret;

	if ((size_t)(f->nrecv + f->nsend) > SIZE_MAX / f->slot)
		return RMAD_ERR_ARG;
	total = (size_t)(f->nrecv + f->nsend) * f->slot;
	if (posix_memalign((void **)&f->bufs, (size_t)sysconf(_SC_PAGESIZE),
			   total)) {
		f->bufs = NULL;
		return RMAD_ERR_NOMEM;
	}
	f->ops = calloc((size_t)(f->nrecv + f->nsend), sizeof(*f->ops));
	if (!f->ops)
		return RMAD_ERR_NOMEM;
	if (f->info->domain_attr->mr_mode & FI_MR_LOCAL) {
		ret = fi_mr_reg(f->domain, f->bufs, total, FI_SEND | FI_RECV,
				0, 0, 0, &f->mr, NULL);
		if (ret) {
			f->mr = NULL;
			rmad_err("fabric: fi_mr_reg: %s", fi_strerror(-ret));
			return RMAD_ERR_FABRIC;
		}
		f->desc = fi_mr_desc(f->mr);
	}
	return 0;
}

/* The endpoint, bound to the CQ, the AV and the counter, enabled. */
static int fab_open_ep(struct rmad_fabric *f)
{
	int ret;

	ret = fi_endpoint(f->domain, f->info, &f->ep, NULL);
	if (ret) {
		f->ep = NULL;
		rmad_err("fabric: fi_endpoint: %s", fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	ret = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(f->ep, &f->av->fid, 0);
	if (!ret && f->rcntr &&
	    fi_ep_bind(f->ep, &f->rcntr->fid,
		       FI_REMOTE_WRITE | FI_REMOTE_READ)) {
		rmad_info("fabric: cannot count remote accesses");
		fi_close(&f->rcntr->fid);
		f->rcntr = NULL;
	}
	if (!ret)
		ret = fi_enable(f->ep);
	if (ret) {
		rmad_err("fabric: enabling the endpoint: %s",
			 fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	return 0;
}

/* Each op its buffer; receives posted, sends on the free list. */
static int fab_open_post(struct rmad_fabric *f)
{
	int i, ret;

	for (i = 0; i < f->nrecv + f->nsend; i++) {
		struct fab_op *op = &f->ops[i];

		op->buf = f->bufs + (size_t)i * f->slot;
		op->kind = FAB_KIND_MSG;
		op->recv = i < f->nrecv;
		if (op->recv) {
			ret = fab_post_recv(f, op);
			if (ret)
				return ret;
		} else {
			fab_put_send(f, op);
		}
	}
	return 0;
}

int rmad_fabric_open(const struct rmad_fabric_cfg *cfg, rmad_fabric_recv_cb cb,
		     void *arg, struct rmad_fabric **out)
{
	struct rmad_fabric *f;
	int ret;

	if (!out)
		return RMAD_ERR_ARG;
	*out = NULL;
	if (!cfg || !cb || !cfg->am_buf_size || cfg->am_recv_bufs <= 0 ||
	    cfg->am_send_bufs <= 0)
		return RMAD_ERR_ARG;

	f = calloc(1, sizeof(*f));
	if (!f)
		return RMAD_ERR_NOMEM;
	f->wait_fd = -1;
	f->self = -1;
	f->backlog_head = f->backlog_tail = -1;
	f->cb = cb;
	f->cb_arg = arg;
	f->buf_size = cfg->am_buf_size;
	f->slot = cfg->am_buf_size + FAB_TAG_LEN;
	f->nrecv = cfg->am_recv_bufs;
	f->nsend = cfg->am_send_bufs;
	f->reserve = f->nsend / 8 < 1 ? 1 : f->nsend / 8 > 8 ? 8 :
		     f->nsend / 8;

	ret = fab_select(f, cfg);
	if (ret)
		goto fail;
	if (f->info->ep_attr->max_msg_size < f->slot) {
		rmad_err("fabric: am_buf_size %zu and a %zu-byte tag exceed "
			 "%s's limit %zu",
			 f->buf_size, FAB_TAG_LEN,
			 f->info->fabric_attr->prov_name,
			 f->info->ep_attr->max_msg_size);
		ret = RMAD_ERR_ARG;
		goto fail;
	}
	if (f->info->rx_attr->size &&
	    (size_t)f->nrecv > f->info->rx_attr->size) {
		rmad_warn("fabric: only %zu receives can be posted, not %d",
			  f->info->rx_attr->size, f->nrecv);
		f->nrecv = (int)f->info->rx_attr->size;
	}

	ret = fab_open_domain(f);
	if (!ret)
		ret = fab_open_bufs(f);
	if (!ret)
		ret = fab_open_ep(f);
	if (!ret)
		ret = fab_open_post(f);
	if (ret)
		goto fail;

	rmad_info("fabric: %s, %d x %zu byte receives, %d send buffers%s%s%s",
		  f->info->fabric_attr->prov_name, f->nrecv, f->buf_size,
		  f->nsend, f->has_rma ? ", rma" : "",
		  f->wait_fd >= 0 ? ", wait fd" : "",
		  f->has_source ? ", senders named" :
				  ", senders not named (packets say)");
	*out = f;
	return 0;

fail:
	rmad_fabric_close(f);
	return ret;
}


int rmad_fabric_getname(struct rmad_fabric *f, void *addr, size_t *len)
{
	char name[FAB_NAME_MAX + 1];
	size_t nlen = FAB_NAME_MAX, copy, need;
	int ret;

	if (!f || !len || (!addr && *len))
		return RMAD_ERR_ARG;
	memset(name, 0, sizeof(name));
	ret = fi_getname(&f->ep->fid, name, &nlen);
	if (ret) {
		rmad_err("fabric: fi_getname: %s", fi_strerror(-ret));
		return RMAD_ERR_FABRIC;
	}
	copy = need = nlen;
	if (f->str_addr) {
		copy = strlen(name) + 1;
		need = (copy + FAB_STR_PAD - 1) / FAB_STR_PAD * FAB_STR_PAD;
	}
	if (*len < need) {
		*len = need;
		return RMAD_ERR_ARG;
	}
	memset(addr, 0, need);
	memcpy(addr, name, copy);
	*len = need;
	return 0;
}

int rmad_fabric_set_peers(struct rmad_fabric *f, int self, int n,
			  const void *addrs, size_t addrlen)
{
	struct fab_peer *peers;
	char *scratch = NULL;
	int i, ret;

	if (!f || n <= 0 || self < 0 || self >= n || !addrs || !addrlen)
		return RMAD_ERR_ARG;
	if (f->peers) {
		rmad_err("fabric: peers are set already");
		return RMAD_ERR_ARG;
	}
	peers = calloc((size_t)n, sizeof(*peers));
	if (!peers)
		return RMAD_ERR_NOMEM;
	/* Some providers read string names with a fixed stride or length,
	 * so each one is handed over alone, NUL-padded. */
	if (f->str_addr) {
		scratch = calloc(1, addrlen + FAB_NAME_MAX + 1);
		if (!scratch) {
			free(peers);
			return RMAD_ERR_NOMEM;
		}
	}
	for (i = 0; i < n; i++) {
		const char *a = (const char *)addrs + (size_t)i * addrlen;

		if (scratch) {
			memcpy(scratch, a, addrlen);
			a = scratch;
		}
		ret = fi_av_insert(f->av, a, 1, &peers[i].fi_addr, 0, NULL);
		if (ret != 1) {
			rmad_err("fabric: inserting the address of node %d: %s",
				 i, ret < 0 ? fi_strerror(-ret) : "refused");
			free(scratch);
			free(peers);
			return RMAD_ERR_FABRIC;
		}
		peers[i].next_backlog = -1;
		peers[i].probe_fd = -1;
		if (rmad_log_get_level() >= RMAD_LOG_DEBUG) {
			char str[128];
			size_t sl = sizeof(str);

			fi_av_straddr(f->av, a, str, &sl);
			rmad_dbg("fabric: node %d is %s", i, str);
		}
	}
	free(scratch);
	f->peers = peers;
	f->n = n;
	f->self = self;
	return 0;
}

int rmad_fabric_set_auth(struct rmad_fabric *f, const uint64_t *keys)
{
	int ret;

	if (!f || !keys || !f->peers || fab_tagged(f))
		return RMAD_ERR_ARG;
	ret = fab_tags_init(&f->tags, f->self, f->n, keys);
	if (ret)
		return ret;
	for (int node = 0; node < f->n; node++)
		f->tags.peer[node].up = !f->peers[node].down;
	return 0;
}

int rmad_fabric_set_session(struct rmad_fabric *f, int node, uint64_t mine,
			    uint64_t theirs)
{
	if (!f || !f->peers || node < 0 || node >= f->n)
		return RMAD_ERR_ARG;
	if (fab_tagged(f))
		fab_tags_session(&f->tags, node, mine, theirs);
	return 0;
}

void rmad_fabric_close(struct rmad_fabric *f)
{
	if (!f)
		return;
	/* The endpoint goes first: it cancels the posted buffers that the
	 * MR and the memory below still back. */
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->mr)
		fi_close(&f->mr->fid);
	if (f->rcntr)
		fi_close(&f->rcntr->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
	for (int i = 0; f->peers && i < f->n; i++) {
		struct fab_qmsg *m = f->peers[i].qhead, *next;

		if (f->peers[i].probe_fd >= 0)
			close(f->peers[i].probe_fd);

		for (; m; m = next) {
			next = m->next;
			free(m);
		}
	}
	free(f->peers);
	if (fab_tagged(f))
		fab_tags_fini(&f->tags);
	free(f->ops);
	free(f->bufs);
	free(f);
}

