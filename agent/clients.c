/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clients.c - the agent's side of the client interface: the shared
 * segment, the Unix socket, attach and detach (the submission rings:
 * rings.c).
 *
 * Clients are untrusted.  Everything read from the segment is copied once
 * and checked before use: op indices against the pool and their private
 * owner record, opcodes against the table, ranks against the job.  A bad
 * submission fails that op (or is dropped and counted) and never reaches
 * the rest of the agent.  A client that scribbles on its own ring or free
 * list only stalls itself.
 *
 * Admission comes before resources: the peer's credentials
 * (SO_PEERCRED, fixed at connect) are checked at accept, so a user who
 * is not permitted (allow_users) holds no slot even for a moment; a
 * permitted user other than ours holds at most max_user_clients slots
 * and its clients belong to at most max_user_jobs jobs, never to
 * another user's; and a connection that has not registered within
 * register_timeout_ms is closed, so slots cannot be held by sockets
 * that never say a word.  Memory a client hands over is mapped only
 * sealed at its size (agent_mem_fd_check, mem.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "pin.h"
#include "ctl.h"
#include "jobs.h"
#include "mem.h"
#include "rma.h"
#include "windows.h"
#include "dynwin.h"
#include "clients.h"
#include "rings.h"
#include "atomics.h"
#include "counter.h"
#include "log.h"
#include "pool.h"
#include "ring.h"
#include "rmad_abi.h"
#include "trace.h"
#include "util.h"

static struct rmad_shm_client *shm_client(struct agent *a, uint32_t c)
{
	return rmad_shm_client_at(a->seg, &a->lay, c);
}

int clients_alloc(struct agent *a)
{
	a->cl = calloc((size_t)a->p.max_clients, sizeof(*a->cl));
	a->live = calloc((size_t)a->p.max_clients, sizeof(*a->live));
	a->nlive = 0;
	if (!a->cl || !a->live) {
		clients_free(a);
		return RMAD_ERR_NOMEM;
	}
	for (int c = 0; c < a->p.max_clients; c++)
		a->cl[c].fd = -1;
	return 0;
}

void clients_free(struct agent *a)
{
	free(a->cl);
	free(a->live);
	a->cl = NULL;
	a->live = NULL;
	a->nlive = 0;
}

/* 1 if a thread of client sc sleeps on a counter */
/* ------------------------------------------------------------ attach */

static int uid_allowed(struct agent *a, uid_t uid)
{
	char list[256], *save = NULL;

	if (uid == geteuid() || uid == 0)
		return 1;
	if (!a->p.allow_users[0])
		return 0;
	snprintf(list, sizeof(list), "%s", a->p.allow_users);
	for (char *t = strtok_r(list, ", ", &save); t;
	     t = strtok_r(NULL, ", ", &save)) {
		char *end;
		unsigned long u;
		struct passwd *pw;

		if (!strcmp(t, "*"))
			return 1;
		u = strtoul(t, &end, 10);
		if (*t && !*end && u == uid)
			return 1;
		pw = getpwnam(t);
		if (pw && pw->pw_uid == uid)
			return 1;
	}
	return 0;
}

/* Users held to the per-user quotas: all but ours and root. */
static int uid_quota(uid_t uid)
{
	return uid != geteuid() && uid != 0;
}

/* Slots that uid holds now (connections, registered or not). */
static long user_slots(struct agent *a, uid_t uid)
{
	long n = 0;

	for (int k = 0; k < a->p.max_clients; k++)
		n += a->cl[k].fd >= 0 && a->cl[k].uid == uid;
	return n;
}

/*
 * May a client of uid join job ns here?  0; RMAD_ERR_PERM when another
 * user's clients are in it; RMAD_ERR_NOMEM when it is a new job for
 * uid, which is at max_user_jobs.
 */
static int user_job_check(struct agent *a, uid_t uid, const char *ns)
{
	uint8_t *seen;
	long njobs = 0;

	for (int k = 0; k < a->p.max_clients; k++) {
		struct agent_client *o = &a->cl[k];

		if (o->registered && o->job && !strcmp(o->job->nspace, ns))
			/* its clients are all of one user, the first's */
			return o->uid == uid ? 0 : RMAD_ERR_PERM;
	}
	if (!uid_quota(uid) || a->p.max_user_jobs <= 0)
		return 0;
	seen = calloc((size_t)a->p.max_jobs, 1);
	if (!seen)
		return RMAD_ERR_NOMEM;
	for (int k = 0; k < a->p.max_clients; k++) {
		struct agent_client *o = &a->cl[k];
		long j = o->job ? (long)(o->job - a->jobs) : -1;

		if (!o->registered || o->uid != uid || j < 0 ||
		    j >= a->p.max_jobs || seen[j])
			continue;
		seen[j] = 1;
		njobs++;
	}
	free(seen);
	return njobs >= a->p.max_user_jobs ? RMAD_ERR_NOMEM : 0;
}

static void client_reset_shm(struct agent *a, uint32_t c)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_shm_client *sc = shm_client(a, c);
	/* the generation is ours: the client could rewind the shared copy */
	uint32_t gen = ++a->cl[c].gen;

	memset(sc, 0, sizeof(*sc));
	sc->gen = gen;
	rmad_ring_init(sc->ring, h->ring_entries, &sc->sq_tail, &sc->sq_head);
	completion_client_reset(a, c);
}

/* Give back everything a client held: called on hang-up or deregister. */
static void client_release(struct agent *a, uint32_t c, int died)
{
	struct agent_client *ac = &a->cl[c];
	struct rmad_shm_client *sc = shm_client(a, c);
	struct agent_job *j = ac->job;
	uint32_t back;

	if (ac->ev)
		event_free(ac->ev);
	ac->ev = NULL;
	if (ac->fd >= 0)
		close(ac->fd);
	ac->fd = -1;
	if (!ac->registered) {
		a->nclients--;
		return;
	}
	ac->registered = 0;
	for (uint32_t k = 0; k < a->nlive; k++)
		if (a->live[k] == c) {
			a->live[k] = a->live[--a->nlive];
			break;
		}
	a->nshare -= ac->shares_core;
	ac->shares_core = 0;
	store_release(&sc->state, died ? RMAD_CLIENT_DEAD : RMAD_CLIENT_FREE);
	agent_mem_release(a, c);
	back = completion_client_gone(a, c);
	/* its locks here are released, its epochs elsewhere ended */
	agent_rma_client_gone(a, c);
	a->nclients--;
	if (died)
		a->st.clients_died++;
	rmad_info("client %u (pid %d, rank %d) %s; %u lent elements back",
		  c, (int)ac->pid, (int)ac->rank, died ? "died" : "detached",
		  back);
	ac->job = NULL;
	if (j) {
		if (died)
			agent_job_client_died(a, j, ac->rank);
		agent_job_put(a, j);
	}
	if (a->nclients == 0)
		a->idle_since_ns = rmad_now_ns();
}

static void reply_error(int fd, int status, const char *why)
{
	struct rmad_ctl_register_reply r = { 0 };

	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_REGISTER_REPLY;
	r.status = status;
	snprintf(r.message, sizeof(r.message), "%s", why);
	rmad_send_msg(fd, &r, sizeof(r), NULL, 0);
}

static void handle_register(struct agent *a, uint32_t c,
			    const struct rmad_ctl_register *m)
{
	struct agent_client *ac = &a->cl[c];
	struct rmad_ctl_register_reply r = { 0 };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct agent_job *j;
	int err, fds[3], sfd;
	char ns[RMAD_NSPACE_MAX];

	if (getsockopt(ac->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		reply_error(ac->fd, RMAD_ERR_INTERNAL, "SO_PEERCRED failed");
		goto drop;
	}
	if (!uid_allowed(a, cred.uid)) {
		rmad_warn("refused client pid %d: uid %u not permitted",
			  (int)cred.pid, (unsigned)cred.uid);
		reply_error(ac->fd, RMAD_ERR_PERM, "user not permitted");
		goto drop;
	}
	memcpy(ns, m->nspace, sizeof(ns));
	if (!memchr(ns, '\0', sizeof(ns)) || m->size < 1 || m->rank < 0 ||
	    m->rank >= m->size || m->local_size < 1 ||
	    m->local_size > m->size || m->local_rank < 0 ||
	    m->local_rank >= m->local_size) {
		reply_error(ac->fd, RMAD_ERR_ARG, "bad register message");
		goto drop;
	}
	err = user_job_check(a, cred.uid, ns);
	if (err) {
		rmad_warn("refused client pid %d (uid %u) of job %s: %s",
			  (int)cred.pid, (unsigned)cred.uid, ns,
			  err == RMAD_ERR_PERM ? "the job is another user's" :
			  "the user is at max_user_jobs");
		a->st.clients_refused++;
		reply_error(ac->fd, err, err == RMAD_ERR_PERM ?
			    "the job is another user's" :
			    "too many jobs of this user (max_user_jobs)");
		goto drop;
	}
	for (int k = 0; k < a->p.max_clients; k++) {
		if (a->cl[k].registered && a->cl[k].job &&
		    a->cl[k].rank == m->rank &&
		    !strcmp(a->cl[k].job->nspace, ns)) {
			reply_error(ac->fd, RMAD_ERR_ARG,
				    "rank already attached");
			goto drop;
		}
	}
	/* a segment of its own, fresh: nothing of the slot's last client */
	sfd = completion_client_segment(a, c);
	if (sfd < 0) {
		rmad_warn("client segment for slot %u: %s", c, strerror(-sfd));
		reply_error(ac->fd, RMAD_ERR_NOMEM, "no memory for a segment");
		goto drop;
	}
	j = agent_job_get(a, ns, m->size, m->local_size, &err);
	if (!j) {
		close(sfd);
		reply_error(ac->fd, err, err == RMAD_ERR_NOMEM ?
			    "agent serves too many jobs (max_jobs)" :
			    "job size or local size disagrees with its peers");
		goto drop;
	}
	client_reset_shm(a, c);
	ac->pid = cred.pid;
	ac->uid = cred.uid;
	ac->rank = m->rank;
	ac->local_rank = m->local_rank;
	ac->job = j;
	ac->head = 0;
	ac->bad_ops = 0;
	ac->moved = 0;
	/* ac->gen was advanced by client_reset_shm */
	{
		struct rmad_shm_client *sc = shm_client(a, c);

		sc->pid = cred.pid;
		sc->rank = m->rank;
		sc->job = (uint32_t)(j - a->jobs);
		/* release: the block is initialized before it reads ACTIVE */
		store_release(&sc->state, RMAD_CLIENT_ACTIVE);
	}
	ac->registered = 1;
	a->live[a->nlive++] = c;
	ac->shares_core = pin_core_shared(a, cred.pid);
	a->nshare += ac->shares_core;
	ac->staged = 0;
	ac->rma_err = 0;
	a->st.clients_attached++;

	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_REGISTER_REPLY;
	r.status = 0;
	r.client = c;
	r.gen = ac->gen;
	r.node = (uint32_t)a->node;
	r.nnodes = (uint32_t)a->nnodes;
	r.agent_pid = getpid();
	r.agent_core = a->core;
	r.seg_size = a->lay.client_seg_size;
	snprintf(r.hostname, sizeof(r.hostname), "%s", a->hostname);
	snprintf(r.provider, sizeof(r.provider), "%s",
		 a->fab ? rmad_fabric_provider(a->fab) : "none");
	snprintf(r.session, sizeof(r.session), "%s", a->session);
	fds[0] = a->memfd;
	fds[1] = sfd;
	fds[2] = a->doorbell;
	err = rmad_send_msg(ac->fd, &r, sizeof(r), fds, 3);
	close(sfd);
	if (err < 0) {
		client_release(a, c, 1);
		return;
	}
	rmad_info("client %u attached: pid %d, rank %d/%d of %s", c,
		  (int)cred.pid, (int)m->rank, (int)m->size, ns);
	agent_job_client_joined(a, j);
	return;
drop:
	client_release(a, c, 0);
}

/* Only the agent's own user (or root) may stop or reload it. */
static int ctl_allowed(int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		return 0;
	return cred.uid == geteuid() || cred.uid == 0;
}

/*
 * rmad_win_stats: our counters for client c on the window it names.  An
 * unknown key (or one whose window c is not a member of) is refused;
 * the reply is sent whatever happens, since the client waits for it.
 */
static void win_stats(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_stats *m)
{
	struct rmad_ctl_win_stats_reply r;
	struct agent_win *w = agent_win_of_client(a, c, m->key);

	memset(&r, 0, sizeof(r));
	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_WIN_STATS_REPLY;
	r.key = m->key;
	r.status = w ? 0 : RMAD_ERR_ARG;
	if (w)
		agent_rma_win_stats(w, c, a->cl[c].gen, &r.stats);
	rmad_send_msg(a->cl[c].fd, &r, sizeof(r), NULL, 0);
}

/* Big enough for a window create naming RMAD_WIN_GROUP_MAX ranks. */
union ctl_msg {
	struct rmad_ctl_hdr h;
	struct rmad_ctl_register reg;
	struct rmad_ctl_win_create wc;
	struct rmad_ctl_win_free wf;
	struct rmad_ctl_win_stats ws;
	struct rmad_ctl_mem mem;
	struct rmad_ctl_win_attach wa;
	char raw[sizeof(struct rmad_ctl_win_create) +
		 RMAD_WIN_GROUP_MAX * sizeof(int32_t)];
};

size_t clients_msg_max(void)
{
	return sizeof(union ctl_msg);
}

static int ensure_msg_buf(struct agent *a)
{
	if (!a->clx.msg)
		a->clx.msg = malloc(sizeof(union ctl_msg));
	return a->clx.msg ? 0 : RMAD_ERR_NOMEM;
}

static void on_client(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	uint32_t c;
	int nfds = 1, rfd = -1;
	long n;

	for (c = 0; c < (uint32_t)a->p.max_clients; c++)
		if (a->cl[c].fd == fd)
			break;
	if (c == (uint32_t)a->p.max_clients || ensure_msg_buf(a))
		return;
	n = rmad_recv_msg(fd, a->clx.msg, sizeof(union ctl_msg), &rfd, &nfds);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return;
	if (n <= 0) {
		if (nfds == 1)
			close(rfd);
		/* hang-up: the client died or left without saying goodbye */
		client_release(a, c, a->cl[c].registered);
		return;
	}
	clients_msg(a, c, a->clx.msg, (size_t)n, nfds == 1 ? rfd : -1);
}

/* STOP and RELOAD (the agent's user only) and STATUS (any permitted
 * user; another user sees only its own clients and jobs). */
static void ctl_request(struct agent *a, uint32_t c,
			const struct rmad_ctl_hdr *h, int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (h->type == RMAD_CTL_STATUS) {
		/* read-only, so any permitted user may ask */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
		    !uid_allowed(a, cred.uid)) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		ctl_status(a, fd, !!(h->flags & RMAD_CTL_FLAG_JSON),
				 cred.uid == geteuid() || cred.uid == 0 ?
				 -1 : (long)cred.uid);
		return;
	}
	if (!ctl_allowed(fd)) {
		rmad_warn("client %u: stop/reload refused: not the agent's "
			  "user", c);
		client_release(a, c, a->cl[c].registered);
		return;
	}
	if (h->type == RMAD_CTL_RELOAD) {
		a->reload = 1;
		return;
	}
	rmad_info("stop requested over the socket");
	a->stopping = 1;
	event_base_loopbreak(a->base);
}

void clients_msg(struct agent *a, uint32_t c, const void *msg, size_t n,
		      int rfd)
{
	union ctl_msg *m;
	int fd;

	if (c >= (uint32_t)a->p.max_clients || ensure_msg_buf(a) ||
	    n > sizeof(union ctl_msg)) {
		if (rfd >= 0)
			close(rfd);
		return;
	}
	m = a->clx.msg;
	if (msg != m)
		memcpy(m, msg, n);
	fd = a->cl[c].fd;
	/* only a window create or a memory registration carries a
	 * descriptor */
	if (rfd >= 0 && (n < sizeof(m->h) ||
			 (m->h.type != RMAD_CTL_WIN_CREATE &&
			  m->h.type != RMAD_CTL_MEM_REG))) {
		close(rfd);
		rfd = -1;
	}
	agent_note_activity(a);
	if (n < sizeof(m->h) || m->h.magic != RMAD_CTL_MAGIC) {
		if (rfd >= 0)
			close(rfd);
		rmad_warn("client %u: garbage on the socket, dropping it", c);
		client_release(a, c, a->cl[c].registered);
		return;
	}
	if (m->h.abi_version != RMAD_ABI_VERSION) {
		if (rfd >= 0)
			close(rfd);
		rmad_warn("client %u: ABI version %u, agent speaks %u", c,
			  m->h.abi_version, RMAD_ABI_VERSION);
		reply_error(fd, RMAD_ERR_VERSION, "ABI version mismatch");
		client_release(a, c, 0);
		return;
	}
	switch (m->h.type) {
	case RMAD_CTL_REGISTER:
		if (a->cl[c].registered || n != sizeof(m->reg)) {
			reply_error(fd, RMAD_ERR_ARG, "bad register");
			client_release(a, c, a->cl[c].registered);
			return;
		}
		handle_register(a, c, &m->reg);
		break;
	case RMAD_CTL_DEREGISTER:
		client_release(a, c, 0);
		break;
	case RMAD_CTL_WIN_CREATE:
		if (n < sizeof(m->wc) || !a->cl[c].registered) {
			if (rfd >= 0)
				close(rfd);
			rmad_warn("client %u: bad window create", c);
			client_release(a, c, a->cl[c].registered);
			return;
		}
		agent_win_create(a, c, &m->wc, n, rfd);
		break;
	case RMAD_CTL_MEM_REG:
	case RMAD_CTL_MEM_DEREG:
	case RMAD_CTL_CMA_PROBE:
		if (n != sizeof(m->mem) || !a->cl[c].registered) {
			if (rfd >= 0)
				close(rfd);
			client_release(a, c, a->cl[c].registered);
			return;
		}
		if (m->h.type == RMAD_CTL_MEM_REG)
			agent_mem_reg(a, c, &m->mem, rfd);
		else if (m->h.type == RMAD_CTL_CMA_PROBE)
			agent_mem_probe(a, c, &m->mem);
		else
			agent_mem_dereg(a, c, &m->mem);
		break;
	case RMAD_CTL_WIN_FREE:
		if (n != sizeof(m->wf) || !a->cl[c].registered) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		agent_win_free(a, c, &m->wf);
		break;
	case RMAD_CTL_WIN_ATTACH:
	case RMAD_CTL_WIN_DETACH:
		if (n != sizeof(m->wa) || !a->cl[c].registered) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		dynwin_request(a, c, &m->wa);
		break;
	case RMAD_CTL_WIN_STATS:
		if (n != sizeof(m->ws) || !a->cl[c].registered) {
			client_release(a, c, a->cl[c].registered);
			return;
		}
		win_stats(a, c, &m->ws);
		break;
	case RMAD_CTL_STOP:
	case RMAD_CTL_RELOAD:
	case RMAD_CTL_STATUS:
		ctl_request(a, c, &m->h, fd);
		break;
	default:
		rmad_warn("client %u: unknown request %u", c, m->h.type);
		break;
	}
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct agent *a = arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
		socklen_t cl = sizeof(cred);
		uint32_t c;

		if (fd < 0)
			return;
		agent_note_activity(a);
		if (a->stopping) {
			close(fd);
			continue;
		}
		/* who it is, before it holds anything */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
		    !uid_allowed(a, cred.uid)) {
			rmad_warn("refused a connection of pid %d: uid %u not "
				  "permitted (allow_users)", (int)cred.pid,
				  (unsigned)cred.uid);
			a->st.clients_refused++;
			reply_error(fd, RMAD_ERR_PERM, "user not permitted");
			close(fd);
			continue;
		}
		if (uid_quota(cred.uid) && a->p.max_user_clients > 0 &&
		    user_slots(a, cred.uid) >= a->p.max_user_clients) {
			rmad_warn("refused a connection of pid %d: uid %u "
				  "holds max_user_clients=%ld slots",
				  (int)cred.pid, (unsigned)cred.uid,
				  a->p.max_user_clients);
			a->st.clients_refused++;
			reply_error(fd, RMAD_ERR_NOMEM, "too many clients of "
				    "this user (max_user_clients)");
			close(fd);
			continue;
		}
		/* a free slot whose last client's ops have all ended */
		for (c = 0; c < (uint32_t)a->p.max_clients; c++)
			if (a->cl[c].fd < 0 && !completion_slot_inflight(a, c))
				break;
		if (c == (uint32_t)a->p.max_clients) {
			rmad_warn("no free client slot (max_clients=%ld; slots "
				  "of dead clients wait for their ops to end)",
				  a->p.max_clients);
			reply_error(fd, RMAD_ERR_NOMEM,
				    "agent is full (max_clients)");
			close(fd);
			continue;
		}
		a->cl[c].fd = fd;
		a->cl[c].registered = 0;
		a->cl[c].uid = cred.uid;
		a->cl[c].pid = cred.pid;
		a->cl[c].accepted_ns = rmad_now_ns();
		a->cl[c].ev = event_new(a->base, fd, EV_READ | EV_PERSIST,
					on_client, a);
		if (!a->cl[c].ev || event_add(a->cl[c].ev, NULL) < 0) {
			if (a->cl[c].ev)
				event_free(a->cl[c].ev);
			a->cl[c].ev = NULL;
			close(fd);
			a->cl[c].fd = -1;
			continue;
		}
		a->nclients++;
	}
}

void clients_tick(struct agent *a, uint64_t now)
{
	uint64_t lim = (uint64_t)a->p.register_timeout_ms * 1000000ull;

	if (!lim || !a->cl)
		return;
	for (uint32_t c = 0; c < (uint32_t)a->p.max_clients; c++) {
		struct agent_client *ac = &a->cl[c];

		if (ac->fd < 0 || ac->registered || ac->accepted_ns > now ||
		    now - ac->accepted_ns < lim)
			continue;
		rmad_warn("client %u (pid %d, uid %u) did not register within "
			  "register_timeout_ms=%ld: closed", c, (int)ac->pid,
			  (unsigned)ac->uid, a->p.register_timeout_ms);
		a->st.clients_refused++;
		reply_error(ac->fd, RMAD_ERR_ARG, "no registration in time "
			    "(register_timeout_ms)");
		client_release(a, c, 0);
	}
}

void clients_accept_pending(struct agent *a)
{
	if (a->listen_fd >= 0)
		on_accept(a->listen_fd, EV_READ, a);
}

/*
 * Bind to a temporary name and rename it into place once listening, so
 * a client that sees the socket can always connect to it.
 */
int clients_listen(struct agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char tmp[sizeof(sa.sun_path)];
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.%d", a->sock_path, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		rmad_err("socket path too long: %s", a->sock_path);
		return RMAD_ERR_ARG;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RMAD_ERR_INTERNAL;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tmp);
	unlink(tmp);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0 && errno == ENOENT && rmad_mkdir_p(a->sdir) == 0)
		/* a sweep took the directory while it was empty: again */
		rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0 || listen(fd, 128) < 0 || rename(tmp, a->sock_path) < 0) {
		rmad_err("listen on %s: %s", a->sock_path, strerror(errno));
		unlink(tmp);
		close(fd);
		return RMAD_ERR_INTERNAL;
	}
	if (a->p.allow_users[0]) {
		/* other users reach the socket; SO_PEERCRED decides */
		chmod(a->sdir, 0755);
		chmod(a->sock_path, 0666);
	}
	a->listen_fd = fd;
	a->listen_ev = event_new(a->base, fd, EV_READ | EV_PERSIST, on_accept,
				 a);
	if (!a->listen_ev || event_add(a->listen_ev, NULL) < 0) {
		clients_unlisten(a);
		return RMAD_ERR_INTERNAL;
	}
	rmad_info("listening on %s", a->sock_path);
	return 0;
}

void clients_unlisten(struct agent *a)
{
	if (a->listen_ev)
		event_free(a->listen_ev);
	a->listen_ev = NULL;
	if (a->listen_fd >= 0) {
		unlink(a->sock_path);
		close(a->listen_fd);
	}
	a->listen_fd = -1;
	free(a->clx.msg);
	a->clx.msg = NULL;
}

void clients_drop_all(struct agent *a)
{
	if (!a->cl)
		return;
	for (uint32_t c = 0; c < (uint32_t)a->p.max_clients; c++)
		if (a->cl[c].fd >= 0)
			client_release(a, c, 0);
}
