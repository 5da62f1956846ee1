/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_agent.h - a real agent for the fuzz harnesses: every module but
 * main.c, initialized as main() does, with no fabric and no event loop.
 * Its clients are socketpairs, so the decoders see what a client on the
 * Unix socket and in the segment would give them.  Header-only: each
 * harness includes it once.
 */
#ifndef RMAD_FUZZ_FAKE_AGENT_H
#define RMAD_FUZZ_FAKE_AGENT_H

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "clients.h"
#include "completion.h"
#include "jobs.h"
#include "jobs_events.h"
#include "log.h"
#include "mem.h"
#include "rma.h"
#include "windows.h"
#include "winsync.h"
#include "ring.h"
#include "rmad_ctl.h"

#define FAKE_CLIENTS	2

static struct agent fake;
static int fake_peer[FAKE_CLIENTS] = { -1, -1 };

static struct agent *fake_agent(int nnodes)
{
	struct agent *a = &fake;

	if (a->cl)
		return a;
	rmad_log_init("fuzz", RMAD_LOG_ERROR);
	a->vnode = -1;
	a->memfd = -1;
	a->listen_fd = -1;
	a->m.lock_fd = -1;
	rmad_params_defaults(&a->p);
	/* small tables: the fuzzer reaches their limits */
	a->p.max_clients = 4;
	a->p.max_jobs = 4;
	a->p.max_windows = 8;
	a->p.op_pool = 32;
	a->p.client_op_pool = 4;
	a->p.ring_entries = 16;
	a->p.staging_size = 4096;
	a->p.target_pool = 8;
	a->p.lock_queue = 8;
	snprintf(a->session, sizeof(a->session), "fuzz");
	snprintf(a->hostname, sizeof(a->hostname), "fuzz");
	a->node = 0;
	a->nnodes = nnodes;
	a->doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->jobs = calloc((size_t)a->p.max_jobs, sizeof(*a->jobs));
	if (clients_alloc(a) || !a->jobs)
		abort();
	am_init(a);
	jobs_events_init(a);
	if (completion_segment_create(a) || agent_win_init(a) ||
	    agent_mem_init(a) || agent_rma_init(a))
		abort();
	winsync_init(a);
	return a;
}

/* Read and drop whatever the agent sent to client c. */
static void fake_drain(int c)
{
	char buf[70000];
	int fds[8];

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(fds))];
		} u;
		struct msghdr m = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.b, .msg_controllen = sizeof(u.b),
		};
		ssize_t n = recvmsg(fake_peer[c], &m, MSG_DONTWAIT);

		if (n <= 0)
			return;
		for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h;
		     h = CMSG_NXTHDR(&m, h))
			if (h->cmsg_type == SCM_RIGHTS) {
				int *f = (int *)CMSG_DATA(h);
				size_t k = (h->cmsg_len - CMSG_LEN(0)) /
					   sizeof(int);

				for (size_t x = 0; x < k; x++)
					close(f[x]);
			}
	}
}

/*
 * Client slot c, connected (a socketpair) and, with rank >= 0,
 * registered as that rank of a job of size ranks.  A slot the agent
 * dropped is connected again.
 */
static void fake_client(struct agent *a, int c, int rank, int size)
{
	struct rmad_ctl_register m = { 0 };
	int sv[2];

	if (a->cl[c].fd >= 0 && a->cl[c].registered)
		return;
	if (a->cl[c].fd < 0) {
		if (fake_peer[c] >= 0)
			close(fake_peer[c]);
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
			       SOCK_CLOEXEC, 0, sv) < 0)
			abort();
		a->cl[c].fd = sv[0];
		a->cl[c].registered = 0;
		a->nclients++;
		fake_peer[c] = sv[1];
	}
	if (rank < 0)
		return;
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_REGISTER;
	m.pid = getpid();
	m.rank = rank;
	m.size = size;
	/* the fake clients are this node's ranks; the others, if any,
	 * another node's, which joins them (and so the map can be made) */
	m.local_rank = rank;
	m.local_size = size < FAKE_CLIENTS ? size : FAKE_CLIENTS;
	snprintf(m.nspace, sizeof(m.nspace), "fuzzjob");
	clients_msg(a, (uint32_t)c, &m, sizeof(m), -1);
	fake_drain(c);
}

/* What the loop does between batches. */
static void fake_progress(struct agent *a)
{
	rings_poll(a);
	make_rma_progress_global(a);
	completion_flush_wakeups(a);
	jobs_events_tick(a);
	for (int c = 0; c < FAKE_CLIENTS; c++)
		if (fake_peer[c] >= 0)
			fake_drain(c);
}

#endif
