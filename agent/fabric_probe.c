/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_probe.c - evidence that a peer's endpoint is gone, beside what
 * the provider reports (rmad_fabric_probe; liveness.c, suspects).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "fabric.h"
#include "fabric_impl.h"

/*
 * Is node's endpoint gone?  Over tcp (tcp;ofi_rxm) every endpoint
 * listens on the address it is named by, and a connection to it that
 * the peer's host refuses (ECONNREFUSED: the host answers, nobody
 * listens there) is definite: its agent's process is gone, whatever
 * the provider says (it reports nothing of a killed peer while nothing
 * is in flight).  A stopped agent's kernel still accepts, a cut network
 * answers nothing (the connection times out): neither is evidence.  The
 * connection is non-blocking: each call looks at the one begun before,
 * or begins one; -1 while it has no answer, and after FAB_PROBE_TURNS
 * looks without one it is dropped (0).  So a probe costs a connection, which the live peer's
 * provider sees close before any handshake.
 */
#define FAB_PROBE_TURNS 8

static int fab_probe_addr(struct rmad_fabric *f, int node,
			  struct sockaddr_storage *ss, socklen_t *len)
{
	const char *prov = f->info->fabric_attr->prov_name;
	size_t l = sizeof(*ss);

	if (!prov || strncmp(prov, "tcp", 3) ||
	    (f->info->addr_format != FI_SOCKADDR_IN &&
	     f->info->addr_format != FI_SOCKADDR_IN6 &&
	     f->info->addr_format != FI_SOCKADDR))
		return 0;
	memset(ss, 0, sizeof(*ss));
	if (fi_av_lookup(f->av, f->peers[node].fi_addr, ss, &l) ||
	    l > sizeof(*ss) ||
	    (ss->ss_family != AF_INET && ss->ss_family != AF_INET6))
		return 0;
	*len = (socklen_t)l;
	return 1;
}

static void fab_probe_drop(struct fab_peer *p)
{
	if (p->probe_fd >= 0)
		close(p->probe_fd);
	p->probe_fd = -1;
	p->probe_turns = 0;
}

int rmad_fabric_probe(struct rmad_fabric *f, int node)
{
	struct sockaddr_storage ss;
	struct fab_peer *p;
	socklen_t len, elen;
	struct pollfd pf;
	int fd, err = 0;

	if (!f || !f->peers || node < 0 || node >= f->n || node == f->self)
		return 0;
	p = &f->peers[node];
	if (p->probe_fd < 0) {
		if (!fab_probe_addr(f, node, &ss, &len))
			return 0;
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
		if (fd < 0)
			return 0;
		if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
			close(fd);
			return 0;
		}
		err = errno;
		if (err != EINPROGRESS) {
			close(fd);
			return err == ECONNREFUSED;
		}
		p->probe_fd = fd;
		p->probe_turns = 0;
	}
	/* (at once too: a refusal over loopback is already there) */
	pf.fd = p->probe_fd;
	pf.events = POLLOUT;
	pf.revents = 0;
	if (poll(&pf, 1, 0) <= 0) {
		if (++p->probe_turns < FAB_PROBE_TURNS)
			return -1;
		fab_probe_drop(p);
		return 0;
	}
	elen = sizeof(err);
	if (getsockopt(p->probe_fd, SOL_SOCKET, SO_ERROR, &err, &elen))
		err = 0;
	fab_probe_drop(p);
	return err == ECONNREFUSED;
}

void rmad_fabric_probe_end(struct rmad_fabric *f, int node)
{
	if (f && f->peers && node >= 0 && node < f->n)
		fab_probe_drop(&f->peers[node]);
}
