/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attach.c - finding, starting and attaching to the node's agent, and
 * the client half of the submission path.
 *
 * Finding the agent: rmad-run names the session (RMAD_SESSION) and, for
 * virtual nodes, which agent serves each rank.  Without it, a system
 * agent (session "default", as systemd runs it) serves the node.  Without
 * that either, a single-node job starts its own agent ("embedded"): every
 * local rank may try at once; the agent's abstract-socket lock lets one
 * win, and the others' extra agents leave at once.  Clients just keep
 * connecting until the winner listens.
 *
 * Submitting: pop an op element from this client's list, fill it, push
 * its index on the ring, and kick the doorbell only if the agent said it
 * sleeps (NEED_WAKEUP).  Waiting: on the completion counters, with a
 * futex, waking every 50 ms to check that the agent still lives.
 */
#include <errno.h>
#include <stddef.h>
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
#include "counter.h"
#include "internal.h"
#include "log.h"
#include "pool.h"
#include "ring.h"
#include "trace.h"
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

void rmad_win_kick(struct rmad_client *c)
{
	uint64_t one = 1;

	if (write(c->doorbell, &one, sizeof(one)) < 0) {
		/* a full eventfd counter still wakes the agent */
	}
}

static void kick(struct rmad_client *c)
{
	uint64_t one = 1;

	if (write(c->doorbell, &one, sizeof(one)) < 0) {
		/* a full eventfd counter still wakes the agent */
	}
}

static struct rmad_pool_view my_view(struct rmad_client *c)
{
	struct rmad_pool_view v = {
		.base = (char *)c->seg + c->hdr->off_ops,
		.stride = sizeof(struct rmad_op_elem),
		.first = 0,
		.n = rmad_shm_nops_client(c->hdr),
	};
	return v;
}

static int resv_windows(struct rmad_client *c)
{
	return __atomic_load_n(&c->nresv_wins, __ATOMIC_ACQUIRE);
}

/*
 * Window op pools.  The agent returns every element, reserved or not, to
 * our one list, so the elements reserved to a window are sorted out on
 * the way: an element of another window's reserve that we pop goes to
 * that window's stash, and the search goes on.  So a window takes its
 * own reserve first, then the list, and one window's held-back ops
 * cannot use up the elements another window reserved.
 */
static uint32_t pick_op(struct rmad_client *c, rmad_win_t w,
			struct rmad_pool_view *v)
{
	uint32_t nops = rmad_shm_nops_client(c->hdr), i;

	pthread_mutex_lock(&c->pool_lock);
	if (w && w->nstash) {
		i = w->stash[--w->nstash];
		pthread_mutex_unlock(&c->pool_lock);
		return i;
	}
	while ((i = rmad_pool_get(&c->me->op_free, v)) != RMAD_NIL) {
		rmad_win_t h = c->op_home && i < nops ? c->op_home[i] : NULL;

		/* a full stash cannot happen: then use the element */
		if (!h || h == w || h->nstash >= h->nresv)
			break;
		h->stash[h->nstash++] = i;
	}
	pthread_mutex_unlock(&c->pool_lock);
	return i;
}

/*
 * The next free element was last written on the agent's core (it gave
 * it back): ask for its lines, for writing, while this op is filled in
 * and submitted, so the next op's get and fill find them here.  Only a
 * hint: the element may be taken by another thread first.
 */
static void prefetch_next(struct rmad_client *c)
{
	uint32_t i = (uint32_t)load_relaxed(&c->me->op_free.head);

	if (i < rmad_shm_nops_client(c->hdr)) {
		const char *e = (const char *)rmad_shm_op_at(c->seg, c->hdr,
							     i);

		__builtin_prefetch(e, 1);
		__builtin_prefetch(e + 64, 1);
	}
}

int rmad_op_alloc(struct rmad_client *c, rmad_win_t w, uint32_t *idx)
{
	struct rmad_pool_view v = my_view(c);

	for (;;) {
		uint64_t seen = rmad_counter_read(c->me, RMAD_CNT_FREED);
		uint32_t i;
		int err;

		if (resv_windows(c))
			i = pick_op(c, w, &v);
		else
			i = rmad_pool_get(&c->me->op_free, &v);
		if (i != RMAD_NIL) {
			/*
			 * Ours now, but a racing pop in another thread may
			 * still read its link (and fail its CAS): the link
			 * is written atomically, here only, and the callers
			 * fill in the element from its opcode on.
			 */
			struct rmad_op_elem *e = rmad_shm_op_at(c->seg,
								c->hdr, i);

			RMAD_TSAN_ACQUIRE(e);
			__atomic_store_n(&e->next, RMAD_NIL, __ATOMIC_RELAXED);
			*idx = i;
			prefetch_next(c);
			return 0;
		}
		/* our list is dry: ask the agent to lend from the global one */
		store_release(&c->me->want_ops, 1);
		rmad_smp_mb();
		kick(c);
		err = rmad_counter_wait(c->me, RMAD_CNT_FREED, seen + 1,
					rmad_spin_us(c), rmad_agent_gone,
					c);
		if (err)
			return err;
	}
}

void rmad_op_free(struct rmad_client *c, uint32_t idx)
{
	struct rmad_pool_view v = my_view(c);

	RMAD_TSAN_RELEASE(rmad_shm_op_at(c->seg, c->hdr, idx));
	if (resv_windows(c)) {
		rmad_win_t h;

		pthread_mutex_lock(&c->pool_lock);
		h = c->op_home && idx < rmad_shm_nops_client(c->hdr) ?
		    c->op_home[idx] : NULL;
		if (h && h->nstash < h->nresv) {
			h->stash[h->nstash++] = idx;
			pthread_mutex_unlock(&c->pool_lock);
			return;
		}
		pthread_mutex_unlock(&c->pool_lock);
	}
	rmad_pool_put(&c->me->op_free, &v, idx);
}

int rmad_op_submit(struct rmad_client *c, uint32_t idx)
{
	uint32_t mask = c->hdr->ring_entries - 1;

	RMAD_TSAN_RELEASE(rmad_shm_op_at(c->seg, c->hdr, idx));
	while (rmad_ring_push(c->me->ring, mask, &c->me->sq_tail, idx) < 0) {
		int err = rmad_agent_gone(c);

		if (err)
			return err;
		kick(c);
		sched_yield();
	}
	/*
	 * Full fence: our push before the read of NEED_WAKEUP, pairing with
	 * the agent's fence between setting it and its last look at the
	 * rings.  One ring per sleep of the agent (its epoch) and process is
	 * enough: while the flag stays set after it, the agent has not yet
	 * run, and it looks at every ring when it does.
	 */
	rmad_smp_mb();
	if (load_acquire(&c->hdr->agent_flags) & RMAD_AGENT_NEED_WAKEUP) {
		uint32_t e = load_relaxed(&c->hdr->sleep_epoch);

		if (__atomic_exchange_n(&c->rung_epoch, e,
					__ATOMIC_RELAXED) != e)
			kick(c);
	}
	return 0;
}

/*
 * Post t as a KEEP|SYNC element and wait for its answer, one at a time
 * per process (sync_lock): SYNC completions then come in ticket order.
 * A staged op also owns the staging area meanwhile: in (inlen bytes)
 * goes to its start first, and outlen bytes at off come back to out.
 */
static int sync_wait(struct rmad_client *c, rmad_win_t w,
		     const struct rmad_op_elem *t,
		     uint16_t flags, const void *in, size_t inlen, void *out,
		     size_t outlen, uint64_t off)
{
	uint8_t *stage = rmad_shm_staging_at(c->seg, c->hdr, 0);
	struct rmad_op_elem *e;
	uint32_t idx;
	uint64_t want;
	int err, st;

	if (c->dead)
		return RMAD_ERR_AGENT;
	pthread_mutex_lock(&c->sync_lock);
	err = rmad_op_alloc(c, w, &idx);
	if (err)
		goto out;
	if (inlen)
		memcpy(stage, in, inlen);
	e = rmad_shm_op_at(c->seg, c->hdr, idx);
	/* all but the link (see rmad_op_alloc) */
	memcpy(&e->opcode, &t->opcode,
	       sizeof(*e) - offsetof(struct rmad_op_elem, opcode));
	e->flags = (uint16_t)(RMAD_OPF_KEEP | RMAD_OPF_SYNC | flags);
	e->owner = c->slot;
	e->owner_gen = c->reg.gen;
	e->status = RMAD_ERR_INTERNAL;
	want = ++c->sync_issued;
	RMAD_TR(RMAD_TR_SYNC, t->opcode);
	err = rmad_op_submit(c, idx);
	if (err) {
		/* never reached the ring: it is still ours to free */
		c->sync_issued--;
		rmad_op_free(c, idx);
		goto out;
	}
	err = rmad_counter_wait(c->me, RMAD_CNT_SYNC, want,
				rmad_spin_us(c), rmad_agent_gone, c);
	RMAD_TR(RMAD_TR_SYNC_DONE, err);
	if (err)
		goto out;
	st = load_relaxed(&e->status);
	rmad_op_free(c, idx);
	err = st <= 0 && st >= RMAD_ERR_LAST ? st : RMAD_ERR_INTERNAL;
	if (!err && outlen)
		memcpy(out, stage + off, outlen);
out:
	pthread_mutex_unlock(&c->sync_lock);
	return err;
}

int rmad_async_elem(struct rmad_client *c, rmad_win_t w,
		    const struct rmad_op_elem *t)
{
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = rmad_op_alloc(c, w, &idx);

	if (err)
		return err;
	e = rmad_shm_op_at(c->seg, c->hdr, idx);
	/* all but the link (see rmad_op_alloc) */
	memcpy(&e->opcode, &t->opcode,
	       sizeof(*e) - offsetof(struct rmad_op_elem, opcode));
	e->flags &= ~RMAD_OPF_KEEP;
	e->owner = c->slot;
	e->owner_gen = c->reg.gen;
	err = rmad_op_submit(c, idx);
	if (err)
		rmad_op_free(c, idx);
	return err;
}

int rmad_sync_elem(struct rmad_client *c, rmad_win_t w,
		   const struct rmad_op_elem *t)
{
	return sync_wait(c, w, t, 0, NULL, 0, NULL, 0, 0);
}

int rmad_staged_op(struct rmad_client *c, rmad_win_t w,
		   struct rmad_op_elem *t,
		   const void *in, size_t inlen, void *out, size_t outlen,
		   uint64_t off)
{
	if (inlen > c->hdr->staging_size || off > c->hdr->staging_size ||
	    outlen > c->hdr->staging_size - off)
		return RMAD_ERR_ARG;
	return sync_wait(c, w, t,
			 (uint16_t)(RMAD_OPF_STAGED |
				    (t->flags & (RMAD_OPF_INLINE |
						 RMAD_OPF_TBYTES))),
			 in, inlen, out, outlen, off);
}

int rmad_sync_op(struct rmad_client *c, uint16_t opcode, int32_t target,
		 uint64_t ticket)
{
	struct rmad_op_elem t = { 0 };

	t.opcode = opcode;
	t.target = target;
	t.ticket = ticket;
	return rmad_sync_elem(c, NULL, &t);
}

/* How many indices one OPS_RESERVE or OPS_RETURN carries. */
static uint32_t pool_batch(struct rmad_client *c)
{
	return (uint32_t)(c->hdr->staging_size / sizeof(uint32_t)) - 1;
}

int rmad_op_pool_reserve(struct rmad_client *c, rmad_win_t w, long want)
{
	uint32_t nops = rmad_shm_nops_client(c->hdr), batch = pool_batch(c);
	uint32_t *buf;
	int err = 0;

	if (want <= 0 || c->dead)
		return 0;
	if (want > (long)c->hdr->op_pool_size)
		want = (long)c->hdr->op_pool_size;	/* all there is */
	if (!want)
		return 0;
	pthread_mutex_lock(&c->pool_lock);
	if (!c->op_home)
		c->op_home = calloc(nops, sizeof(*c->op_home));
	pthread_mutex_unlock(&c->pool_lock);
	w->stash = calloc((size_t)want, sizeof(*w->stash));
	buf = calloc((size_t)batch + 1, sizeof(*buf));
	if (!c->op_home || !w->stash || !buf) {
		free(buf);
		free(w->stash);
		w->stash = NULL;
		return RMAD_ERR_NOMEM;
	}
	while (w->nresv < (uint32_t)want) {
		struct rmad_op_elem t = { 0 };
		uint32_t ask = (uint32_t)want - w->nresv, n;

		if (ask > batch)
			ask = batch;
		t.opcode = RMAD_OPC_OPS_RESERVE;
		t.count = ask;
		err = rmad_staged_op(c, NULL, &t, NULL, 0, buf,
				     ((size_t)ask + 1) * sizeof(*buf), 0);
		if (err)
			break;
		/* the staging area is in reach of every client: check it */
		n = buf[0] < ask ? buf[0] : ask;
		pthread_mutex_lock(&c->pool_lock);
		for (uint32_t k = 0; k < n; k++) {
			uint32_t g = buf[1 + k];

			if (g >= c->hdr->op_pool_size || c->op_home[g])
				continue;
			c->op_home[g] = w;
			w->stash[w->nstash++] = g;
			w->nresv++;
		}
		pthread_mutex_unlock(&c->pool_lock);
		if (buf[0] < ask)
			break;		/* the agent granted all it would */
	}
	free(buf);
	if (!w->nresv) {
		free(w->stash);
		w->stash = NULL;
	}
	if (w->nresv)
		__atomic_add_fetch(&c->nresv_wins, 1, __ATOMIC_RELEASE);
	rmad_dbg("window %llx: %u of %ld op elements reserved",
		 (unsigned long long)w->key, w->nresv, want);
	return err;
}

#define POOL_DRAIN_MS	2000

/*
 * The window is gone: gather its reserved elements from our list (its
 * operations are over, so they come home soon if not yet) and give them
 * back to the agent.  One that does not turn up in time stays with us as
 * an ordinary element; the agent takes it back when we detach.
 */
void rmad_op_pool_return(struct rmad_client *c, rmad_win_t w)
{
	struct rmad_pool_view v = my_view(c);
	uint32_t nops = rmad_shm_nops_client(c->hdr), batch = pool_batch(c);
	uint64_t t0 = rmad_now_ns();
	uint32_t *other, nother = 0;
	uint32_t done = 0;

	if (!w->nresv)
		return;
	other = calloc(nops, sizeof(*other));
	pthread_mutex_lock(&c->pool_lock);
	while (other && !c->dead && w->nstash < w->nresv) {
		uint32_t i = rmad_pool_get(&c->me->op_free, &v);
		rmad_win_t h = i < nops ? c->op_home[i] : NULL;

		if (i == RMAD_NIL) {
			/* not home yet: let others have the rest meanwhile */
			while (nother)
				rmad_pool_put(&c->me->op_free, &v,
					      other[--nother]);
			pthread_mutex_unlock(&c->pool_lock);
			if (rmad_now_ns() - t0 >
			    (uint64_t)POOL_DRAIN_MS * 1000000ull ||
			    rmad_agent_gone(c)) {
				pthread_mutex_lock(&c->pool_lock);
				break;
			}
			usleep(1000);
			pthread_mutex_lock(&c->pool_lock);
			continue;
		}
		if (h == w)
			w->stash[w->nstash++] = i;
		else if (h && h->nstash < h->nresv)
			h->stash[h->nstash++] = i;
		else
			other[nother++] = i;
	}
	while (nother)
		rmad_pool_put(&c->me->op_free, &v, other[--nother]);
	if (w->nstash < w->nresv)
		rmad_warn("window %llx: %u of %u reserved op elements did not "
			  "come back; kept until detach",
			  (unsigned long long)w->key, w->nresv - w->nstash,
			  w->nresv);
	for (uint32_t i = 0; i < nops; i++)
		if (c->op_home[i] == w)
			c->op_home[i] = NULL;
	w->nresv = 0;
	pthread_mutex_unlock(&c->pool_lock);
	__atomic_sub_fetch(&c->nresv_wins, 1, __ATOMIC_RELEASE);
	free(other);
	while (done < w->nstash && !c->dead) {
		struct rmad_op_elem t = { 0 };
		uint32_t n = w->nstash - done < batch ? w->nstash - done :
			     batch;

		t.opcode = RMAD_OPC_OPS_RETURN;
		t.count = n;
		if (rmad_staged_op(c, NULL, &t, w->stash + done,
				   (size_t)n * sizeof(*w->stash), NULL, 0, 0))
			break;
		done += n;
	}
	free(w->stash);
	w->stash = NULL;
	w->nstash = 0;
}
