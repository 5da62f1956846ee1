/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bell.c - doorbells between the agents of one host.
 *
 * libfabric's shm provider has no wait object: an agent asleep does not
 * learn that a peer on the same host sent it something until its
 * idle_poll_us timer fires.  So each agent of such a mesh has, in the
 * session's run directory:
 *   agent-bell-N      a page whose first word says "asleep" (mapped by
 *                     its peers), and
 *   agent-wake-N      a datagram socket in its event loop.
 * Going to sleep, the agent sets the word, fences, and polls the fabric
 * once more; a peer, after posting to it, swaps the word back to 0 and
 * sends one byte when it was set.  Either the sleeper sees the message
 * in its last poll or the sender sees the word (both sides fence between
 * their store and their load), so no message waits for the timer, and
 * a busy agent costs its peers one load per message.
 *
 * Only meshes of one host use it (shm); the files go with the agent, and
 * rmad-run removes those of agents that were killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bell.h"
#include "fabric.h"
#include "log.h"
#include "util.h"

#define BELL_PAGE 4096

struct bell_peer {
	uint32_t *word;			/* its "asleep" word, NULL: not yet */
	struct sockaddr_un addr;
	socklen_t alen;
	uint64_t tried_ns;		/* last attempt to map it */
};

struct bell {
	uint32_t *word;			/* ours */
	int sock;
	struct event *ev;
	int npeers;
	struct bell_peer *peers;
	char path_page[256], path_sock[256];
	int fd_out;			/* an unbound socket to send from */
};

static int bell_path(const struct agent *a, const char *what, int node,
		     char *out, size_t len)
{
	int n = snprintf(out, len, "%s/agent-%s-%d", a->sdir, what, node);

	return n > 0 && (size_t)n < len ? 0 : RMAD_ERR_ARG;
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	char buf[64];

	(void)what;
	(void)arg;
	/* the wake only ends the sleep: the loop polls the fabric next */
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int bell_open(struct agent *a)
{
	struct bell *b;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!a->fab || a->nnodes < 2 || rmad_fabric_wait_fd(a->fab) >= 0 ||
	    strcmp(rmad_fabric_provider(a->fab), "shm") != 0)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return RMAD_ERR_NOMEM;
	b->sock = b->fd_out = -1;
	b->npeers = a->nnodes;
	b->peers = calloc((size_t)b->npeers, sizeof(*b->peers));
	if (!b->peers ||
	    bell_path(a, "bell", a->node, b->path_page, sizeof(b->path_page)) ||
	    bell_path(a, "wake", a->node, b->path_sock, sizeof(b->path_sock)) ||
	    strlen(b->path_sock) >= sizeof(sa.sun_path))
		goto fail;
	unlink(b->path_page);
	fd = open(b->path_page, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, BELL_PAGE) < 0) {
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	b->word = mmap(NULL, BELL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	close(fd);
	if (b->word == MAP_FAILED) {
		b->word = NULL;
		goto fail;
	}
	b->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	b->fd_out = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			   0);
	memcpy(sa.sun_path, b->path_sock, strlen(b->path_sock) + 1);
	unlink(b->path_sock);
	if (b->sock < 0 || b->fd_out < 0 ||
	    bind(b->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	b->ev = event_new(a->base, b->sock, EV_READ | EV_PERSIST, on_wake, a);
	if (!b->ev || event_add(b->ev, NULL) < 0)
		goto fail;
	for (int n = 0; n < b->npeers; n++) {
		struct bell_peer *p = &b->peers[n];
		char path[256];

		if (n == a->node || bell_path(a, "wake", n, path, sizeof(path)) ||
		    strlen(path) >= sizeof(p->addr.sun_path))
			continue;
		p->addr.sun_family = AF_UNIX;
		memcpy(p->addr.sun_path, path, strlen(path) + 1);
		p->alen = (socklen_t)sizeof(p->addr);
	}
	a->bell = b;
	rmad_fabric_on_post(a->fab, bell_ring, a);
	rmad_info("bell: peers on this host wake us (%s)", b->path_sock);
	return 0;
fail:
	rmad_warn("bell: cannot set up %s: %s; an idle agent polls every "
		  "idle_poll_us", b->path_sock[0] ? b->path_sock : a->sdir,
		  strerror(errno));
	a->bell = b;
	bell_close(a);
	return 0;			/* the timer still bounds every sleep */
}

void bell_close(struct agent *a)
{
	struct bell *b = a->bell;

	if (!b)
		return;
	if (a->fab)
		rmad_fabric_on_post(a->fab, NULL, NULL);
	if (b->ev)
		event_free(b->ev);
	if (b->sock >= 0)
		close(b->sock);
	if (b->fd_out >= 0)
		close(b->fd_out);
	if (b->word)
		munmap(b->word, BELL_PAGE);
	for (int n = 0; n < b->npeers; n++)
		if (b->peers[n].word)
			munmap(b->peers[n].word, BELL_PAGE);
	if (b->path_page[0])
		unlink(b->path_page);
	if (b->path_sock[0])
		unlink(b->path_sock);
	free(b->peers);
	free(b);
	a->bell = NULL;
}

int bell_sleep_begin(struct agent *a)
{
	struct bell *b = a->bell;

	if (!b)
		return 0;
	/* seq_cst: the store before our last look at the fabric, against
	 * the sender's post before its load of the word */
	__atomic_store_n(b->word, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 1;
}

int bell_rung(struct agent *a)
{
	return a->bell && !__atomic_load_n(a->bell->word, __ATOMIC_ACQUIRE);
}

void bell_sleep_end(struct agent *a)
{
	if (a->bell)
		__atomic_store_n(a->bell->word, 0, __ATOMIC_RELAXED);
}

/* Map peer n's word, at most once every 100 ms until it is there. */
static uint32_t *peer_word(struct agent *a, struct bell_peer *p, int n)
{
	char path[256];
	uint64_t now;
	void *m;
	int fd;

	if (p->word)
		return p->word;
	now = rmad_now_ns();
	if (now - p->tried_ns < 100000000ull && p->tried_ns)
		return NULL;
	p->tried_ns = now;
	if (bell_path(a, "bell", n, path, sizeof(path)))
		return NULL;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	m = mmap(NULL, BELL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	p->word = m;
	return p->word;
}

void bell_ring(void *agent, int node)
{
	struct agent *a = agent;
	struct bell *b = a->bell;
	struct bell_peer *p;
	uint32_t *w;

	if (!b || node < 0 || node >= b->npeers || node == a->node)
		return;
	p = &b->peers[node];
	if (!p->alen)
		return;
	w = peer_word(a, p, node);
	/* the exchange is a full barrier: our post is visible before */
	if (!w || !__atomic_exchange_n(w, 0, __ATOMIC_SEQ_CST))
		return;
	(void)sendto(b->fd_out, "", 1, MSG_DONTWAIT,
		     (struct sockaddr *)&p->addr, p->alen);
}
