/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl.c - the control socket to the agent: one request at a time, under
 * rmad_ctl_lock, and its answer (WIN_REPLY, with a descriptor or not),
 * waited for until it comes or the agent is gone.
 *
 * Window creation and freeing (win.c), rmad_win_stats (winquery.c),
 * memory registration (mem.c), groups and dynamic windows' regions
 * (rmad_ctl_request) all go through here.  The op elements on the ring
 * (submit.c) do not.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

pthread_mutex_t rmad_ctl_lock = PTHREAD_MUTEX_INITIALIZER;

/* Wait for the agent's answer; a dead agent ends the wait. */
long rmad_ctl_recv(struct rmad_client *c, void *buf, size_t len, int *fds,
		   int *nfds)
{
	for (;;) {
		struct pollfd p = { .fd = c->sock, .events = POLLIN };
		int r = poll(&p, 1, 100);

		if (r > 0) {
			long n = rmad_recv_msg(c->sock, buf, len, fds, nfds);

			if (n <= 0) {
				c->dead = 1;
				return RMAD_ERR_AGENT;
			}
			return n;
		}
		if (r < 0 && errno != EINTR)
			return RMAD_ERR_AGENT;
		if (c->dead)
			return RMAD_ERR_AGENT;
	}
}

int rmad_ctl_reply_fd(struct rmad_client *c, uint64_t key,
		      struct rmad_ctl_win_reply *r, int *fd)
{
	int fds[1] = { -1 }, nfds = fd ? 1 : 0;
	long n = rmad_ctl_recv(c, r, sizeof(*r), fd ? fds : NULL, &nfds);

	if (fd)
		*fd = nfds == 1 ? fds[0] : -1;
	else
		for (int i = 0; i < nfds; i++)
			close(fds[i]);

	if (n < 0)
		return (int)n;
	if (n != (long)sizeof(*r) || r->h.magic != RMAD_CTL_MAGIC ||
	    r->h.type != RMAD_CTL_WIN_REPLY || r->key != key)
		return RMAD_ERR_AGENT;
	if (r->status > 0 || r->status < RMAD_ERR_LAST)
		return RMAD_ERR_AGENT;
	return r->status;
}

int rmad_ctl_reply(struct rmad_client *c, uint64_t key,
		   struct rmad_ctl_win_reply *r)
{
	return rmad_ctl_reply_fd(c, key, r, NULL);
}

/* One request on the control socket and its WIN_REPLY, under rmad_ctl_lock. */
int rmad_ctl_call(struct rmad_client *c, const void *m, size_t len, int fd,
		  uint64_t key)
{
	struct rmad_ctl_win_reply r;

	if (c->dead)
		return RMAD_ERR_AGENT;
	if (rmad_send_msg(c->sock, m, len, fd >= 0 ? &fd : NULL,
			  fd >= 0) < 0)
		return RMAD_ERR_AGENT;
	return rmad_ctl_reply(c, key, &r);
}

int rmad_ctl_request(const void *m, size_t len, uint64_t key)
{
	int err;

	pthread_mutex_lock(&rmad_ctl_lock);
	err = rmad_ctl_call(&rmad_cl, m, len, -1, key);
	pthread_mutex_unlock(&rmad_ctl_lock);
	return err;
}
