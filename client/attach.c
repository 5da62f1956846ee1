/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attach.c - finding, starting and attaching to the node's agent,
 * registration, detach, and whether the agent is still there.
 *
 * Finding the agent: rmad-run names the session (RMAD_SESSION) and, for
 * virtual nodes, which agent serves each rank.  Without it, a system
 * agent (session "default", as systemd runs it) serves the node.  Without
 * that either, a single-node job starts its own agent ("embedded"): every
 * local rank may try at once; the agent's abstract-socket lock lets one
 * win, and the others' extra agents leave at once.  Clients just keep
 * connecting until the winner listens.
 *
 * What goes to the agent once attached, op elements on the ring, is
 * submit.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "internal.h"
#include "log.h"
#include "util.h"

#ifndef RMAD_BINDIR
#define RMAD_BINDIR "/usr/local/bin"
#endif

#define RESPAWN_EVERY_MS	1000

extern char **environ;

static int try_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* The environment for an embedded agent: none of the launcher's. */
static char **agent_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *e = environ[i];

		if (!strncmp(e, "PMIX_", 5) || !strncmp(e, "OMPI_", 5) ||
		    !strncmp(e, "PMI_", 4) || !strncmp(e, "PRTE_", 5) ||
		    !strncmp(e, "RMAD_VNODES=", 12) ||
		    !strncmp(e, "RMAD_VNODE_BASE=", 16))
			continue;
		env[k++] = (char *)e;
	}
	return env;
}

/*
 * Start an embedded agent, detached from us (double fork + setsid), so it
 * outlives this rank and is reaped by init, not by the application.
 */
static void spawn_agent(const char *session)
{
	const char *path = getenv("RMAD_AGENT_PATH");
	char bin[4096];
	pid_t pid;

	if (!path || !*path) {
		snprintf(bin, sizeof(bin), "%s/rmad", RMAD_BINDIR);
		path = bin;
	}
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		char **env;
		int fd;

		setsid();
		if (fork() != 0)
			_exit(0);
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		for (int k = 3; k < 1024; k++)
			if (k != fd)
				close(k);
		env = agent_env();
		execle(path, "rmad", "--embedded", "--foreground", "--session",
		       session, (char *)NULL, env ? env : environ);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

/*
 * The uid a system-wide agent runs as (agent_user), or our own.  Its
 * run directory and socket are trusted besides our own.
 */
static uid_t agent_uid(struct rmad_client *c)
{
	uid_t u;

	if (c->p.agent_user[0] && !rmad_user_uid(c->p.agent_user, &u))
		return u;
	return getuid();
}

/* Run directories are 0700 unless the node's agent serves other users. */
static int dirs_private(struct rmad_client *c)
{
	return !c->p.agent_user[0] && !c->p.allow_users[0];
}

static int pick_agent(struct rmad_client *c, char *sock, size_t len,
		      int *may_spawn)
{
	struct rmad_bootinfo *b = &c->b;
	char sdir[4096], msg[512];
	int err;

	*may_spawn = 0;
	if (!b->session_given) {
		/* a system agent serves the node? */
		if (!rmad_session_dir(c->p.rundir, "default", sdir,
				      sizeof(sdir)) &&
		    !rmad_agent_sock_path(sdir, -1, sock, len) &&
		    access(sock, F_OK) == 0) {
			err = rmad_session_dir_check(sdir, agent_uid(c),
						     dirs_private(c), 0, msg,
						     sizeof(msg));
			if (err)
				rmad_err("%s", msg);
			return err;
		}
		if (b->local_size < b->size) {
			rmad_err("this job spans nodes but no agent serves "
				 "it: start it with rmad-run");
			return RMAD_ERR_AGENT;
		}
		if (b->singleton)
			snprintf(b->session, sizeof(b->session), "s%d",
				 (int)getpid());
		else {
			char ns[64];

			rmad_sanitize(b->nspace, ns, sizeof(ns) - 4);
			memcpy(b->session, "job-", 4);
			rmad_strlcpy(b->session + 4, ns, sizeof(b->session) - 4);
		}
		*may_spawn = 1;
	}
	if (rmad_session_dir(c->p.rundir, b->session, sdir, sizeof(sdir)) ||
	    rmad_agent_sock_path(sdir, b->vnode, sock, len))
		return RMAD_ERR_ARG;
	err = rmad_session_dir_check(sdir, agent_uid(c), dirs_private(c),
				     *may_spawn, msg, sizeof(msg));
	if (err == RMAD_ERR_AGENT && !*may_spawn)
		return 0;	/* not there yet: rmad-run is starting it */
	if (err)
		rmad_err("%s", msg);
	return err;
}

/*
 * Is the peer of fd our agent?  It must run as our uid or as the
 * configured agent_user.  Its pid, from the kernel, is the one allowed
 * to trace us (for process_vm_readv under Yama).
 */
static int check_agent_cred(struct rmad_client *c, int fd, const char *sock,
			    pid_t *pid)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0) {
		rmad_err("agent at %s: cannot read its credentials: %s", sock,
			 strerror(errno));
		return RMAD_ERR_PERM;
	}
	if (cr.uid != getuid() && cr.uid != agent_uid(c)) {
		rmad_err("agent at %s runs as uid %u, not as uid %u%s: "
			 "refused", sock, (unsigned)cr.uid,
			 (unsigned)getuid(),
			 c->p.agent_user[0] ? " or agent_user" : "");
		return RMAD_ERR_PERM;
	}
	*pid = cr.pid;
	return 0;
}

static int connect_agent(struct rmad_client *c, int *fd_out, pid_t *pid)
{
	char sock[108];
	int may_spawn, err, fd;
	uint64_t t0 = rmad_now_ns(), last_spawn = 0;

	err = pick_agent(c, sock, sizeof(sock), &may_spawn);
	if (err)
		return err;
	for (;;) {
		uint64_t now;

		fd = try_connect(sock);
		if (fd >= 0) {
			err = check_agent_cred(c, fd, sock, pid);
			if (err) {
				close(fd);
				return err;
			}
			*fd_out = fd;
			return 0;
		}
		if (fd == -EACCES || fd == -EPERM) {
			rmad_err("agent at %s: permission denied (run "
				 "directory or socket of another user?)",
				 sock);
			return RMAD_ERR_PERM;
		}
		now = rmad_now_ns();
		if (now - t0 > (uint64_t)c->p.connect_timeout_ms * 1000000ull) {
			rmad_err("no agent at %s", sock);
			return RMAD_ERR_AGENT;
		}
		if (may_spawn && (!last_spawn || now - last_spawn >
				  (uint64_t)RESPAWN_EVERY_MS * 1000000ull)) {
			last_spawn = now;
			spawn_agent(c->b.session);
		}
		usleep(2000);
	}
}

/* Wait for one message with a timeout: the agent may be wedged. */
static long recv_timeout(int fd, void *buf, size_t len, int *fds, int *nfds,
			 int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -ETIMEDOUT;
	return rmad_recv_msg(fd, buf, len, fds, nfds);
}

static int do_register(struct rmad_client *c, int fd)
{
	struct rmad_ctl_register m = { 0 };
	struct rmad_ctl_register_reply *r = &c->reg;
	int fds[3], nfds = 3;
	long n;
	void *seg;
	const struct rmad_shm_hdr *h;

	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_REGISTER;
	m.pid = getpid();
	m.rank = c->b.rank;
	m.size = c->b.size;
	m.local_rank = c->b.local_rank;
	m.local_size = c->b.local_size;
	snprintf(m.nspace, sizeof(m.nspace), "%s", c->b.nspace);
	if (rmad_send_msg(fd, &m, sizeof(m), NULL, 0) < 0)
		return -EAGAIN;
	n = recv_timeout(fd, r, sizeof(*r), fds, &nfds,
			 (int)c->p.connect_timeout_ms);
	if (n == 0 || n == -ECONNRESET)
		return -EAGAIN;	/* the agent was leaving: try again */
	if (n != (long)sizeof(*r) || r->h.magic != RMAD_CTL_MAGIC) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return n < 0 ? RMAD_ERR_AGENT : RMAD_ERR_VERSION;
	}
	if (r->status) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		r->message[sizeof(r->message) - 1] = '\0';
		rmad_err("agent refused us: %s", r->message);
		return r->status < 0 && r->status >= RMAD_ERR_LAST ?
			r->status : RMAD_ERR_AGENT;
	}
	if (r->h.abi_version != RMAD_ABI_VERSION) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return RMAD_ERR_VERSION;
	}
	/* the header (read-only: sealed), our own segment, the doorbell */
	if (nfds != 3 || r->seg_size < RMAD_SHM_ALIGN) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return RMAD_ERR_AGENT;
	}
	h = mmap(NULL, RMAD_SHM_ALIGN, PROT_READ, MAP_SHARED, fds[0], 0);
	close(fds[0]);
	if (h == MAP_FAILED) {
		close(fds[1]);
		close(fds[2]);
		return RMAD_ERR_NOMEM;
	}
	if (h->version != RMAD_SHM_VERSION || h->magic != RMAD_SHM_MAGIC ||
	    h->abi_version != RMAD_ABI_VERSION ||
	    h->client_seg_size != r->seg_size || !h->per_client ||
	    h->off_staging + h->staging_size > r->seg_size ||
	    h->off_ops + (uint64_t)h->per_client *
	    sizeof(struct rmad_op_elem) > h->off_staging) {
		munmap((void *)h, RMAD_SHM_ALIGN);
		close(fds[1]);
		close(fds[2]);
		return RMAD_ERR_VERSION;
	}
	seg = mmap(NULL, r->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fds[1], 0);
	close(fds[1]);
	if (seg == MAP_FAILED) {
		munmap((void *)h, RMAD_SHM_ALIGN);
		close(fds[2]);
		return RMAD_ERR_NOMEM;
	}
	c->seg = seg;
	c->seg_size = r->seg_size;
	c->hdr = h;
	c->slot = r->client;
	c->me = rmad_shm_client_at(seg, h, 0);
	c->doorbell = fds[2];
	/* never the agent's current epoch: the first push rings */
	c->rung_epoch = load_relaxed(&h->sleep_epoch) - 1;
	r->hostname[sizeof(r->hostname) - 1] = '\0';
	r->provider[sizeof(r->provider) - 1] = '\0';
	r->session[sizeof(r->session) - 1] = '\0';
	return 0;
}

int rmad_attach(struct rmad_client *c)
{
	uint64_t t0 = rmad_now_ns();

	for (;;) {
		pid_t apid = 0;
		int fd, err = connect_agent(c, &fd, &apid);

		if (err)
			return err;
		err = do_register(c, fd);
		if (err == 0) {
			c->sock = fd;
			/*
			 * Let the agent read and write our buffers in place
			 * (process_vm_readv/writev) where Yama would refuse
			 * it; without Yama this is a harmless no-op.
			 */
			prctl(PR_SET_PTRACER, (unsigned long)apid, 0, 0, 0);
			return 0;
		}
		close(fd);
		if (err != -EAGAIN)
			return err;
		if (rmad_now_ns() - t0 >
		    (uint64_t)c->p.connect_timeout_ms * 1000000ull)
			return RMAD_ERR_AGENT;
		usleep(5000);
	}
}

void rmad_detach(struct rmad_client *c)
{
	if (c->sock >= 0) {
		struct rmad_ctl_hdr h = {
			.magic = RMAD_CTL_MAGIC,
			.abi_version = RMAD_ABI_VERSION,
			.type = RMAD_CTL_DEREGISTER,
		};

		if (!c->dead)
			rmad_send_msg(c->sock, &h, sizeof(h), NULL, 0);
		close(c->sock);
	}
	c->sock = -1;
	/* the agent took back every reserved element with the slot */
	free(c->op_home);
	c->op_home = NULL;
	__atomic_store_n(&c->nresv_wins, 0, __ATOMIC_RELEASE);
	if (c->seg)
		munmap(c->seg, c->seg_size);
	if (c->hdr)
		munmap((void *)c->hdr, RMAD_SHM_ALIGN);
	c->seg = NULL;
	c->hdr = NULL;
	c->me = NULL;
	if (c->doorbell >= 0)
		close(c->doorbell);
	c->doorbell = -1;
}

int rmad_agent_gone(void *arg)
{
	struct rmad_client *c = arg;
	struct pollfd p = { .fd = c->sock, .events = POLLIN | POLLRDHUP };

	if (c->dead)
		return RMAD_ERR_AGENT;
	if (poll(&p, 1, 0) > 0 &&
	    (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLIN))) {
		char buf[64];
		long n = recv(c->sock, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			rmad_err("the agent is gone");
			c->dead = 1;
			return RMAD_ERR_AGENT;
		}
	}
	/*
	 * Only the socket says the agent is gone: the shared header's flags
	 * could be written by any client of the node.
	 */
	return 0;
}
