/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am.c - the active-message layer between the fabric and the protocol
 * modules (jobs and barrier, windows, RMA).
 *
 * Packets from other agents are untrusted.  Here the common header is
 * checked once: wire version, a known type with a registered handler, a
 * source node of the mesh, and a payload no longer than
 * RMAD_AM_MAX_PAYLOAD that matches what arrived.  A packet that fails is
 * dropped and counted, never handed on.  The payload is copied to an
 * aligned buffer on the stack, so handlers may read 64-bit fields and a
 * handler that sends to its own node (which comes back here at once)
 * does not overwrite the packet it is still reading.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "fabric.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "secret.h"
#include "sweep.h"

static void on_ping(struct agent *a, const struct rmad_am_hdr *h,
		    const void *payload)
{
	struct rmad_am_hdr r = {
		.type = RMAD_AM_PONG, .job = h->job, .seq = h->seq,
	};

	(void)payload;
	am_send(a, (int)h->src_node, &r, NULL, 0);
}

static void declare_dead(struct agent *a, int node, const char *why);

/* One packet kept (header and payload as they came), and one node's
 * queue of them for one window of one job. */
struct am_kept {
	struct am_kept *next;
	size_t len;
	uint8_t msg[];
};

struct am_held {
	struct am_held *next;
	uint32_t node;
	uint64_t job;
	uint64_t win;			/* the window's key (pkt_win) */
	struct am_kept *head, *tail;
	uint32_t n;
	uint64_t since;			/* its head's first deferral */
};

#define AM_HOLD_MAX	4096		/* packets per node and window */

static void held_drop_node(struct agent *a, int node);
static void held_free(struct am_held *q);
static void mesh_heard(struct agent *a, int node, uint64_t m, uint64_t t);

static void hb_send(struct agent *a, int node, uint16_t flags);

/*
 * Liveness is proven by echoes, not by what merely arrives.  Every
 * heartbeat carries its sender's clock (disp: a stamp, never 0) and the
 * newest stamp it took from the node it goes to (wkey: the echo); one
 * that is not itself an answer (RMAD_AMF_ECHO) is answered at once.  A
 * node is alive as of the newest of our stamps it echoed: it held our
 * heartbeat sent then.  So a packet that was held back on the way and
 * released later, or a stash of a dead node's heartbeats played one by
 * one, proves only what it proved when it was sent, and a node that
 * died is declared dead within heartbeat_timeout_ms of its last echo,
 * whatever arrives after.  Data packets prove nothing.
 */
static void hb_proof(struct agent *a, int node, const struct rmad_am_hdr *h)
{
	struct am_ctx *m = &a->am;
	uint64_t now = rmad_now_ns();

	if (h->wkey && h->wkey <= now && h->wkey > m->last_rx[node]) {
		/* the wait for it (rmadctl stats: hb_gap_max_us) */
		uint64_t gap = (now - m->last_rx[node]) / 1000;

		if (m->proved[node] && gap > a->st.hb_gap_max_us)
			a->st.hb_gap_max_us = gap;
		m->proved[node] = 1;
		m->last_rx[node] = h->wkey;
	}
	if (h->disp)
		m->echo[node] = h->disp;	/* an old one only ages its proof */
	if (h->disp && !(h->flags & RMAD_AMF_ECHO))
		hb_send(a, node, RMAD_AMF_ECHO);
}

/* A heartbeat: in a static mesh it carries the incarnations first
 * (mesh_heard), then, from a node that is up, its proof (hb_proof). */
static void on_heartbeat(struct agent *a, const struct rmad_am_hdr *h,
			 const void *payload)
{
	int node = (int)h->src_node;

	(void)payload;
	if (node == a->node || !a->am.dead)
		return;
	if (a->mesh)
		mesh_heard(a, node, h->seq, h->count);
	if (!a->am.dead[node])
		hb_proof(a, node, h);
}

/* ------------------------------------------------------ static mesh */

/*
 * A static mesh (mesh.c: agents that systemd starts, each on its own
 * schedule) has nodes that come and go.  A node is up, or not (dead[]:
 * never heard, or declared dead); sends to one that is not up fail as
 * to a dead node, and its packets other than heartbeats are dropped.
 * Each agent keeps, per peer, an incarnation of what it holds about
 * that peer (mine: random, new whenever it drops that state) and the
 * one of the peer's it took (theirs); every heartbeat carries both, the
 * sender's mine and, as an echo, its theirs.  A peer is up once its
 * heartbeat echoes our mine: both ends then hold fresh state about each
 * other.  An up peer whose heartbeat brings another incarnation, or an
 * echo that is not our mine, has restarted or dropped us: we drop it too
 * (declare_dead) and shake hands anew, and so does a peer that we
 * declared dead when it fell silent.  Heartbeats go to a node that is
 * not up as well, one queued at most (tcp;ofi_rxm holds them until it
 * can connect), and that node's queue keeps no sleep and no other
 * node's sends waiting (rmad_fabric_set_down).
 */
static uint64_t mesh_inc(void)
{
	uint64_t v = 0;

	if (rmad_random_bytes(&v, sizeof(v)))
		v = rmad_now_ns() ^ ((uint64_t)getpid() << 32);
	return v ? v : 1;
}

/* A heartbeat to node, up or not (flags: RMAD_AMF_ECHO, an answer);
 * to one that is not up, straight to the fabric. */
static void hb_send(struct agent *a, int node, uint16_t flags)
{
	struct am_ctx *m = &a->am;
	struct rmad_am_hdr h = {
		.version = RMAD_WIRE_VERSION,
		.type = RMAD_AM_HEARTBEAT,
		.flags = flags,
		.src_node = (uint32_t)a->node,
		.seq = a->mesh ? m->mine[node] : 0,
		.count = a->mesh ? m->theirs[node] : 0,
		.disp = rmad_now_ns(),
		.wkey = m->echo[node],
	};

	if (!a->mesh || !m->dead[node]) {
		am_send(a, node, &h, NULL, 0);	/* urgent (am_send_st) */
		return;
	}
	if (!a->fab)
		return;
	if (rmad_fabric_queued(a->fab, node)) {
		rmad_fabric_knock(a->fab, node);	/* the one queued */
		return;
	}
	a->st.pkts_sent[RMAD_AM_HEARTBEAT]++;
	rmad_fabric_send(a->fab, node, &h, sizeof(h), NULL, 0);
}

static int mesh_start(struct agent *a)
{
	struct am_ctx *m = &a->am;
	size_t n = (size_t)a->nnodes;

	m->mine = calloc(n, sizeof(*m->mine));
	m->theirs = calloc(n, sizeof(*m->theirs));
	if (!m->mine || !m->theirs)
		return RMAD_ERR_NOMEM;
	for (int i = 0; i < a->nnodes; i++) {
		m->mine[i] = mesh_inc();
		if (i == a->node)
			continue;
		m->dead[i] = 1;		/* up once it answers */
		m->ndead++;
		rmad_fabric_set_session(a->fab, i, m->mine[i], 0);
		m->last_tx[i] = 0;	/* a heartbeat at the first tick */
		rmad_fabric_set_down(a->fab, i, 1);
	}
	return 0;
}

static void mesh_heard(struct agent *a, int node, uint64_t mi, uint64_t t)
{
	struct am_ctx *m = &a->am;

	if (!mi)
		return;		/* not a mesh agent's */
	if (!m->dead[node]) {
		if (mi == m->theirs[node] && t == m->mine[node])
			return;
		declare_dead(a, node, mi != m->theirs[node] ?
			     "it restarted" : "it lost what it held about us");
	}
	if (mi != m->theirs[node]) {
		m->theirs[node] = mi;
		rmad_fabric_set_session(a->fab, node, m->mine[node], mi);
	}
	if (t != m->mine[node]) {
		hb_send(a, node, 0);	/* our echo: it can take us now */
		return;
	}
	m->dead[node] = 0;
	m->ndead--;
	m->last_rx[node] = rmad_now_ns();
	m->echo[node] = 0;		/* its stamps from here on */
	m->errs_seen[node] = rmad_fabric_send_errors(a->fab, node);
	m->suspect[node] = m->proved[node] = 0;
	m->err_until[node] = 0;
	rmad_fabric_set_down(a->fab, node, 0);
	rmad_info("node %d: up", node);
	hb_send(a, node, 0);	/* it may wait for our echo of its own */
}

int am_root(const struct agent *a)
{
	if (!a->mesh)
		return 0;
	for (int node = 0; node < a->nnodes; node++)
		if (!a->am.dead[node])
			return node;
	return a->node;
}

void am_init(struct agent *a)
{
	memset(&a->am, 0, sizeof(a->am));
	am_register(a, RMAD_AM_PING, on_ping);
	am_register(a, RMAD_AM_HEARTBEAT, on_heartbeat);
}

int am_start(struct agent *a)
{
	struct am_ctx *m = &a->am;
	size_t n = a->nnodes > 0 ? (size_t)a->nnodes : 1;
	uint64_t now = rmad_now_ns();

	m->batch = calloc(AM_BATCHES, sizeof(*m->batch));
	if (!m->batch)
		return RMAD_ERR_NOMEM;
	m->nbatch = AM_BATCHES;
	for (int i = 0; i < AM_BATCHES; i++) {
		m->batch[i].node = -1;
		m->batch[i].buf = malloc((size_t)a->p.am_buf_size);
		if (!m->batch[i].buf)
			return RMAD_ERR_NOMEM;
	}

	m->last_rx = calloc(n, sizeof(*m->last_rx));
	m->last_tx = calloc(n, sizeof(*m->last_tx));
	m->dead = calloc(n, 1);
	m->errs_seen = calloc(n, sizeof(*m->errs_seen));
	m->echo = calloc(n, sizeof(*m->echo));
	m->watch_jobs = calloc(n, sizeof(*m->watch_jobs));
	m->watch_until = calloc(n, sizeof(*m->watch_until));
	m->grace_until = calloc(n, sizeof(*m->grace_until));
	m->busy = calloc(n, 1);
	m->used = calloc(n, 1);
	m->suspect = calloc(n, 1);
	m->proved = calloc(n, 1);
	m->err_until = calloc(n, sizeof(*m->err_until));
	m->err_rx = calloc(n, sizeof(*m->err_rx));
	m->probe_next = calloc(n, sizeof(*m->probe_next));
	if (!m->last_rx || !m->last_tx || !m->dead || !m->errs_seen ||
	    !m->echo || !m->watch_jobs || !m->watch_until ||
	    !m->grace_until || !m->busy || !m->used || !m->suspect ||
	    !m->proved || !m->err_until || !m->err_rx || !m->probe_next)
		return RMAD_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		m->last_rx[i] = m->last_tx[i] = now;
		m->busy[i] = 1;
	}
	m->started_ns = now;
	if (a->mesh)
		return mesh_start(a);
	return 0;
}

void am_fini(struct agent *a)
{
	while (a->am.held) {
		struct am_held *q = a->am.held;

		a->am.held = q->next;
		held_free(q);
	}
	for (int i = 0; a->am.batch && i < a->am.nbatch; i++)
		free(a->am.batch[i].buf);
	free(a->am.batch);
	a->am.batch = NULL;
	a->am.nbatch = 0;
	free(a->am.last_rx);
	free(a->am.last_tx);
	free(a->am.dead);
	free(a->am.errs_seen);
	free(a->am.echo);
	free(a->am.watch_jobs);
	free(a->am.watch_until);
	free(a->am.grace_until);
	free(a->am.busy);
	free(a->am.used);
	free(a->am.suspect);
	free(a->am.proved);
	free(a->am.err_until);
	free(a->am.err_rx);
	free(a->am.probe_next);
	a->am.suspect = a->am.proved = NULL;
	a->am.err_until = a->am.err_rx = a->am.probe_next = NULL;
	a->am.watch_jobs = NULL;
	a->am.watch_until = a->am.grace_until = NULL;
	a->am.busy = a->am.used = NULL;
	free(a->am.mine);
	free(a->am.theirs);
	a->am.mine = a->am.theirs = NULL;
	a->am.errs_seen = NULL;
	a->am.echo = NULL;
	a->am.last_rx = a->am.last_tx = NULL;
	a->am.dead = NULL;
}

void am_on_node_dead(struct agent *a, am_node_fn fn)
{
	if (a->am.nnode_dead < AM_NODE_HOOKS)
		a->am.node_dead[a->am.nnode_dead++] = fn;
}

int am_node_dead(const struct agent *a, int node)
{
	return a->am.dead && node >= 0 && node < a->nnodes &&
	       a->am.dead[node];
}

static void declare_dead(struct agent *a, int node, const char *why)
{
	struct am_ctx *m = &a->am;

	m->dead[node] = 1;
	m->ndead++;
	m->suspect[node] = m->proved[node] = 0;
	m->err_until[node] = 0;
	held_drop_node(a, node);
	a->st.nodes_dead++;
	rmad_warn("node %d: declared dead, its ranks failed: %s", node, why);
	if (a->fab) {
		rmad_fabric_drop_node(a->fab, node);
		rmad_fabric_set_down(a->fab, node, a->mesh);
	}
	/* bottom up: jobs first, then the protocols that use them */
	for (int k = 0; k < m->nnode_dead; k++)
		m->node_dead[k](a, node);
	/* a static mesh: what we held about it is gone; it must take our
	 * new incarnation before it is up again (mesh_heard) */
	if (a->mesh) {
		m->mine[node] = mesh_inc();
		m->theirs[node] = 0;
		rmad_fabric_set_session(a->fab, node, m->mine[node], 0);
	}
	m->echo[node] = 0;
}

/*
 * Idle nodes.  All-to-all heartbeats cost every agent 4(N-1) messages
 * a heartbeat, which a static mesh of thousands of nodes cannot pay.
 * So there, a node is watched at heartbeat_ms only while it is busy:
 * one of our jobs has ranks there or waits there for its map
 * (am_watch), or we sent it a packet within heartbeat_timeout_ms.  An
 * idle node gets a heartbeat every heartbeat_idle_ms, and is declared
 * dead after as many missed heartbeats as a busy one.  A node that
 * becomes busy is probed at once and must answer within two
 * heartbeats (grace_until) unless its last echo is recent enough.
 * Nothing that waits is left at the idle rate: whatever waits on a
 * node waits in one of our jobs that has ranks there.
 */
static int am_idle_on(const struct agent *a)
{
	return a->mesh && a->p.heartbeat_idle_ms > a->p.heartbeat_ms;
}

void am_watch(struct agent *a, int node, int on)
{
	struct am_ctx *m = &a->am;

	if (!m->watch_jobs || node < 0 || node >= a->nnodes ||
	    node == a->node)
		return;
	if (on)
		m->watch_jobs[node]++;
	else if (m->watch_jobs[node])
		m->watch_jobs[node]--;
	if (on)
		m->used[node] = 1;	/* probed at the next tick */
}

void am_node_counts(const struct agent *a, int *up, int *busy)
{
	const struct am_ctx *m = &a->am;

	*up = *busy = 0;
	for (int node = 0; m->dead && m->busy && node < a->nnodes; node++) {
		if (node == a->node || m->dead[node])
			continue;
		(*up)++;
		*busy += m->busy[node] != 0;
	}
}

int am_node_fresh(const struct agent *a, int node)
{
	const struct am_ctx *m = &a->am;
	uint64_t limit = (uint64_t)a->p.heartbeat_timeout_ms * 1000000ull;

	if (node == a->node)
		return 1;
	if (!m->last_rx || node < 0 || node >= a->nnodes || m->dead[node])
		return 0;
	return !a->p.heartbeat_ms || rmad_now_ns() - m->last_rx[node] <= limit;
}

/* Busy or idle at now (see above); a node that just became busy is
 * probed now and given two heartbeats to answer. */
static int am_busy(struct agent *a, int node, uint64_t now, uint64_t hb,
		   uint64_t limit)
{
	struct am_ctx *m = &a->am;
	int busy;

	if (m->used[node]) {
		m->used[node] = 0;
		m->watch_until[node] = now + limit;
	}
	busy = !am_idle_on(a) || m->watch_jobs[node] ||
	       now < m->watch_until[node];
	if (busy && !m->busy[node]) {
		m->grace_until[node] = now + 2 * hb;
		m->last_tx[node] = 0;	/* a heartbeat now */
	}
	m->busy[node] = (uint8_t)busy;
	return busy;
}

/*
 * Suspects.  A node whose newest echo is older than heartbeat_timeout_ms
 * (lim; an idle node's: as many heartbeats) is suspect, not dead: a
 * healthy node stalls that long under load (its agent starved of CPU,
 * in reclaim, stopped for a moment; its answers behind a backlog).  It
 * is declared dead on definite evidence only:
 *  - send errors from the provider (a refused or reset connection, where
 *    it reports one: tcp;ofi_rxm was seen to report nothing of a killed
 *    peer) and no echo of a heartbeat sent after them within two
 *    heartbeats;
 *  - between virtual nodes of one host, its agent gone: its agent lock
 *    (sweep.c), which the kernel drops however the agent ends, is free;
 *  - over tcp, its host refusing a connection to the address its
 *    endpoint listens on (rmad_fabric_probe);
 * (both looked for once a heartbeat while it is suspect, so a killed
 * agent is found within a heartbeat of heartbeat_timeout_ms)
 * or after heartbeat_confirm_ms (conf) without an echo, which must
 * outlast any stall of a healthy node (rmad.conf(5)).  An echo ends the
 * suspicion.  Heartbeats and echoes go ahead of the bulk traffic queued
 * for the node (rmad_fabric_send_urgent), so what delays them is the
 * agents' loops and what the provider holds already: rmadctl stats has
 * the longest wait seen for an echo (hb_gap_max_us) and between two
 * runs of the agent's timer (tick_gap_max_us).
 */
static int local_agent_gone(struct agent *a, int node)
{
	char path[PATH_MAX];
	int fd;

	/* only vnodes share our host and network namespace, where the
	 * lock's abstract name lives */
	if (a->vnode < 0 || !a->sdir[0] ||
	    rmad_agent_sock_path(a->sdir, node, path, sizeof(path)) ||
	    agent_lock_take(path, &fd) != 0)
		return 0;
	close(fd);
	return 1;
}

/* 1 if node was declared dead now (hb: its heartbeat period, lim: when
 * it is suspect, conf: when it is dead without evidence) */
static int hb_judge(struct agent *a, int node, uint64_t now, uint64_t hb,
		    uint64_t lim, uint64_t conf)
{
	struct am_ctx *m = &a->am;
	uint64_t age = now > m->last_rx[node] ? now - m->last_rx[node] : 0;
	char why[240];

	if (m->err_until[node] && m->last_rx[node] > m->err_rx[node])
		m->err_until[node] = 0;		/* it answered */
	if (m->err_until[node] && now >= m->err_until[node]) {
		snprintf(why, sizeof(why), "send errors on the fabric, and no "
			 "echo within two heartbeats after them (no sign of "
			 "life for %llu ms)",
			 (unsigned long long)(age / 1000000));
		declare_dead(a, node, why);
		return 1;
	}
	if (age <= lim || now < m->grace_until[node]) {
		if (m->suspect[node] && age <= lim) {
			m->suspect[node] = 0;
			rmad_fabric_probe_end(a->fab, node);
			rmad_info("node %d: echoed again: no longer suspect",
				  node);
		}
		return 0;
	}
	if (!m->suspect[node]) {
		m->suspect[node] = 1;
		a->st.nodes_suspect++;
		rmad_info("node %d: suspect: no echo for %llu ms; dead on "
			  "evidence, or after %llu ms without an echo", node,
			  (unsigned long long)(age / 1000000),
			  (unsigned long long)(conf / 1000000));
		m->probe_next[node] = now;
	}
	/* suspect: look for evidence, once a heartbeat */
	if (now >= m->probe_next[node]) {
		const char *gone = NULL;
		int r = rmad_fabric_probe(a->fab, node);

		m->probe_next[node] = now + hb;
		if (r == 1)
			gone = "its host refused a connection to its address "
			       "(nothing listens there)";
		else if (r == 0 && local_agent_gone(a, node))
			gone = "its agent is gone from this host (its lock is "
			       "free)";
		if (gone) {
			snprintf(why, sizeof(why), "%s, and no sign of life "
				 "for %llu ms (suspect at heartbeat_timeout_ms, "
				 "%llu ms)", gone,
				 (unsigned long long)(age / 1000000),
				 (unsigned long long)(lim / 1000000));
			declare_dead(a, node, why);
			return 1;
		}
	}
	if (age <= conf)
		return 0;
	snprintf(why, sizeof(why), "no sign of life for heartbeat_confirm_ms "
		 "(%llu ms) without evidence, suspect since "
		 "heartbeat_timeout_ms%s (%llu ms) (%llu ms counted)",
		 (unsigned long long)(conf / 1000000),
		 lim == (uint64_t)a->p.heartbeat_timeout_ms * 1000000ull ?
		 "" : " (an idle node's)",
		 (unsigned long long)(lim / 1000000),
		 (unsigned long long)(age / 1000000));
	declare_dead(a, node, why);
	return 1;
}

void am_tick(struct agent *a, uint64_t now)
{
	struct am_ctx *m = &a->am;
	uint64_t hb = (uint64_t)a->p.heartbeat_ms * 1000000ull;
	uint64_t limit = (uint64_t)a->p.heartbeat_timeout_ms * 1000000ull;
	uint64_t ihb = (uint64_t)a->p.heartbeat_idle_ms * 1000000ull;
	/* as many heartbeats as limit has (both at most 600000 ms) */
	uint64_t ilimit = hb ? (uint64_t)a->p.heartbeat_timeout_ms *
			       (uint64_t)a->p.heartbeat_idle_ms /
			       (uint64_t)a->p.heartbeat_ms * 1000000ull : 0;
	uint64_t climit = (uint64_t)a->p.heartbeat_confirm_ms * 1000000ull;
	int idle_on = am_idle_on(a);
	uint32_t errs;

	if (m->last_tick && now > m->last_tick &&
	    (now - m->last_tick) / 1000 > a->st.tick_gap_max_us)
		a->st.tick_gap_max_us = (now - m->last_tick) / 1000;
	m->last_tick = now;
	if (!m->dead || a->nnodes < 2 || !hb)
		return;
	for (int node = 0; node < a->nnodes; node++) {
		uint64_t lim = limit, every = hb;

		if (node == a->node)
			continue;
		if (m->dead[node]) {
			/* a static mesh: knock until it answers (once we
			 * have run for a while, at the idle rate: a node
			 * that starts knocks fast, and is answered) */
			if (idle_on && now - m->started_ns >= limit)
				every = ihb;
			m->used[node] = 0;
			m->busy[node] = 0;
			if (a->mesh && now - m->last_tx[node] >= every) {
				hb_send(a, node, 0);
				m->last_tx[node] = now;
			}
			continue;
		}
		errs = rmad_fabric_send_errors(a->fab, node);
		if (errs != m->errs_seen[node])
			m->used[node] = 1;	/* suspect: watch it closely */
		if (!am_busy(a, node, now, hb, limit)) {
			lim = ilimit;
			every = ihb;
		}
		if (errs != m->errs_seen[node]) {
			/*
			 * The provider failed to deliver to it (a refused or
			 * reset connection): evidence, unless an echo of a
			 * heartbeat sent from now on comes within two
			 * heartbeats.
			 */
			m->errs_seen[node] = errs;
			if (!m->err_until[node]) {
				m->err_until[node] = now + 2 * hb;
				m->err_rx[node] = now;
				m->last_tx[node] = 0;	/* one now */
				rmad_info("node %d: send errors; dead unless it "
					  "answers within %ld ms", node,
					  2 * a->p.heartbeat_ms);
			}
		}
		if (hb_judge(a, node, now, every, lim,
			     climit > lim ? climit : lim))
			continue;
		if (now - m->last_tx[node] >= every) {
			hb_send(a, node, 0);
			m->last_tx[node] = now;
		}
	}
}

void am_register(struct agent *a, int type, am_handler_fn fn)
{
	if (type > 0 && type < RMAD_AM_TYPE_MAX)
		a->am.handler[type] = fn;
}

/* ------------------------------------------------------ aggregation */

/* Send aggregate b: one packet as itself, two or more as a BATCH. */
static void batch_send(struct agent *a, struct am_batch *b)
{
	struct rmad_am_hdr bh = { .type = RMAD_AM_BATCH };
	int node = b->node, err;

	b->node = -1;
	if (!b->npkts || am_node_dead(a, node))
		goto out;
	if (b->npkts == 1) {
		err = rmad_fabric_send(a->fab, node, b->buf,
				       sizeof(struct rmad_am_hdr),
				       b->buf + sizeof(struct rmad_am_hdr),
				       b->len - sizeof(struct rmad_am_hdr));
	} else {
		struct rmad_stats *seen[AM_BATCH_PKTS];
		uint32_t nseen = 0;

		bh.version = RMAD_WIRE_VERSION;
		bh.src_node = (uint32_t)a->node;
		bh.count = b->npkts;
		bh.payload_len = (uint32_t)b->len;
		a->st.pkts_sent[RMAD_AM_BATCH]++;
		a->st.aggr_msgs++;
		a->st.aggr_pkts += b->npkts;
		err = rmad_fabric_send(a->fab, node, &bh, sizeof(bh), b->buf,
				       b->len);
		/* per window: its packets in it, and the message once */
		for (uint32_t i = 0; !err && i < b->npkts; i++) {
			struct rmad_stats *st = b->st[i];
			uint32_t k = 0;

			if (!st)
				continue;
			st->pkts_aggregated++;
			while (k < nseen && seen[k] != st)
				k++;
			if (k == nseen) {
				seen[nseen++] = st;
				st->aggr_msgs++;
			}
		}
	}
	if (err)
		rmad_warn("send of %u packets to node %d failed: %d",
			  b->npkts, node, err);
out:
	b->npkts = 0;
	b->len = 0;
}

void am_flush(struct agent *a)
{
	for (int i = 0; i < a->am.nbatch; i++)
		if (a->am.batch[i].node >= 0)
			batch_send(a, &a->am.batch[i]);
}

void am_forget_stats(struct agent *a, const struct rmad_stats *st)
{
	for (int i = 0; i < a->am.nbatch; i++)
		for (uint32_t k = 0; k < a->am.batch[i].npkts; k++)
			if (a->am.batch[i].st[k] == st)
				a->am.batch[i].st[k] = NULL;
}

static struct am_batch *batch_of(struct agent *a, int node)
{
	for (int i = 0; i < a->am.nbatch; i++)
		if (a->am.batch[i].node == node)
			return &a->am.batch[i];
	return NULL;
}

/* Send what waits for node now (another kind of packet follows). */
static void batch_close(struct agent *a, int node)
{
	struct am_batch *b = batch_of(a, node);

	if (b)
		batch_send(a, b);
}

/* Packets that may wait in an aggregate: operations and answers. */
static int aggregatable(const struct rmad_am_hdr *h)
{
	return h->type >= RMAD_AM_RMA_LOCK && h->type <= RMAD_AM_RMA_FLUSH_ACK;
}

/* Packets after which the aggregate goes at once: the ends of epochs and
 * requests for an answer that someone waits for. */
static int urgent(const struct rmad_am_hdr *h)
{
	return h->type == RMAD_AM_RMA_FLUSH || h->type == RMAD_AM_RMA_UNLOCK ||
	       h->type == RMAD_AM_RMA_LOCK ||
	       (h->flags & (RMAD_AMF_UNLOCK | RMAD_AMF_PSCW_DONE));
}

/* 1: queued in node's aggregate; 0: not for aggregation. */
static int batch_add(struct agent *a, int node, const struct rmad_am_hdr *h,
		     const void *payload, size_t plen, struct rmad_stats *st)
{
	size_t cap = (size_t)a->p.am_buf_size, rec = sizeof(*h) + plen;
	struct am_batch *b;

	if (!a->p.aggregate || !a->am.nbatch || !aggregatable(h) ||
	    rec + sizeof(*h) > cap || rec > RMAD_AM_MAX_PAYLOAD)
		return 0;
	b = batch_of(a, node);
	if (b && (b->len + rec > cap - sizeof(*h) ||
		  b->len + rec > RMAD_AM_MAX_PAYLOAD ||
		  b->npkts == AM_BATCH_PKTS)) {
		batch_send(a, b);
		b = NULL;
	}
	if (!b) {
		b = batch_of(a, -1);
		if (!b) {		/* all open: send the first */
			b = &a->am.batch[0];
			batch_send(a, b);
		}
		b->node = node;
	}
	memcpy(b->buf + b->len, h, sizeof(*h));
	if (plen)
		memcpy(b->buf + b->len + sizeof(*h), payload, plen);
	b->len += rec;
	b->st[b->npkts++] = st;
	if (urgent(h))
		batch_send(a, b);
	return 1;
}

int am_send(struct agent *a, int node, struct rmad_am_hdr *h,
	    const void *payload, size_t plen)
{
	return am_send_st(a, node, h, payload, plen, NULL);
}

int am_send_st(struct agent *a, int node, struct rmad_am_hdr *h,
	       const void *payload, size_t plen, struct rmad_stats *st)
{
	int err;

	h->version = RMAD_WIRE_VERSION;
	h->src_node = (uint32_t)a->node;
	h->payload_len = (uint32_t)plen;
	if (h->type < RMAD_AM_TYPE_MAX)
		a->st.pkts_sent[h->type]++;
	if (am_node_dead(a, node))
		return RMAD_ERR_PROC_FAILED;
	if (a->am.used && node >= 0 && node < a->nnodes &&
	    h->type != RMAD_AM_HEARTBEAT)
		a->am.used[node] = 1;	/* busy for a while (am_busy) */
	if (node == a->node || !a->fab) {
		/* to ourselves: no need to cross the fabric */
		char buf[sizeof(*h) + RMAD_AM_MAX_PAYLOAD];

		if (node != a->node || plen > sizeof(buf) - sizeof(*h))
			return RMAD_ERR_RANK;
		memcpy(buf, h, sizeof(*h));
		if (plen)
			memcpy(buf + sizeof(*h), payload, plen);
		am_recv(a, buf, sizeof(*h) + plen, a->node,
			RMAD_FABRIC_FRESH);
		return 0;
	}
	rmad_dbg("send %u to node %d, %zu bytes", h->type, node, plen);
	if (h->type == RMAD_AM_HEARTBEAT) {
		/* ahead of the bulk traffic that waits for the node
		 * (am.c, suspects): nothing orders it with the rest */
		err = rmad_fabric_send_urgent(a->fab, node, h, sizeof(*h),
					      payload, plen);
		if (err)
			rmad_warn("heartbeat to node %d failed: %d", node,
				  err);
		return err;
	}
	if (batch_add(a, node, h, payload, plen, st))
		return 0;
	/* in order behind what waits for that node */
	batch_close(a, node);
	err = rmad_fabric_send(a->fab, node, h, sizeof(*h), payload, plen);
	if (err)
		rmad_warn("send %u to node %d failed: %d", h->type, node, err);
	return err;
}

static void recv_batch(struct agent *a, const struct rmad_am_hdr *bh,
		       const uint8_t *pl, unsigned flags);

/* ------------------------------------------------------ held packets */


/*
 * The window a packet belongs to, for its place among held packets: a
 * window's RMA (wkey) and its fence, PSCW and life-cycle notices (seq)
 * keep their order; a packet of the job alone (0: barriers, joins, a
 * rank's failure, pings) waits behind no window.
 */
static uint64_t pkt_win(const struct rmad_am_hdr *h)
{
	switch (h->type) {
	case RMAD_AM_WIN_JOIN:
	case RMAD_AM_WIN_READY:
	case RMAD_AM_WIN_FREE_ARRIVE:
	case RMAD_AM_WIN_FREE_DONE:
	case RMAD_AM_WIN_FENCE_ARRIVE:
	case RMAD_AM_WIN_FENCE_RELEASE:
	case RMAD_AM_WIN_POST:
	case RMAD_AM_WIN_COMPLETE:
		return h->seq;
	default:
		return h->type >= RMAD_AM_RMA_LOCK &&
		       h->type <= RMAD_AM_RMA_FLUSH_ACK ? h->wkey : 0;
	}
}

static struct am_held *held_find(struct agent *a, uint32_t node,
				 uint64_t job, uint64_t win)
{
	for (struct am_held *q = a->am.held; q; q = q->next)
		if (q->node == node && q->job == job && q->win == win)
			return q;
	return NULL;
}

/* Keep a copy of packet msg at the tail of its queue (made if need
 * be); 0, or -1 without memory. */
static int held_push(struct agent *a, const struct rmad_am_hdr *h,
		     const void *msg, size_t len)
{
	uint64_t win = pkt_win(h);
	struct am_held *q = held_find(a, h->src_node, h->job, win);
	struct am_kept *k = malloc(sizeof(*k) + len);

	if (!k)
		return -1;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q) {
			free(k);
			return -1;
		}
		q->node = h->src_node;
		q->job = h->job;
		q->win = win;
		q->since = rmad_now_ns();
		q->next = a->am.held;
		a->am.held = q;
	}
	k->next = NULL;
	k->len = len;
	memcpy(k->msg, msg, len);
	if (q->tail)
		q->tail->next = k;
	else
		q->head = k;
	q->tail = k;
	q->n++;
	a->st.pkts_held++;
	return 0;
}

static void held_free(struct am_held *q)
{
	while (q->head) {
		struct am_kept *k = q->head;

		q->head = k->next;
		free(k);
	}
	free(q);
}

/* Node went (declared dead): what it sent us and we kept goes too. */
static void held_drop_node(struct agent *a, int node)
{
	for (struct am_held **pp = &a->am.held; *pp;) {
		struct am_held *q = *pp;

		if (q->node != (uint32_t)node) {
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		held_free(q);
	}
}

int am_defer(struct agent *a)
{
	if (!a->am.in_handler)
		return 0;
	a->am.defer_now = 1;
	return 1;
}

uint64_t am_deferred_since(const struct agent *a)
{
	return a->am.in_handler ? a->am.handling_since : 0;
}

int am_held(const struct agent *a)
{
	return a->am.held != NULL;
}

/* Hand a checked packet (payload in pl) to its handler; 1 if the
 * handler deferred it. */
static int dispatch(struct agent *a, const struct rmad_am_hdr *h,
		    const void *pl, uint64_t since)
{
	int outer = a->am.in_handler, deferred;
	uint64_t osince = a->am.handling_since;

	a->am.in_handler = 1;
	a->am.handling_since = since;
	a->am.defer_now = 0;
	a->am.handler[h->type](a, h, pl);
	deferred = a->am.defer_now;
	a->am.defer_now = 0;
	a->am.in_handler = outer;
	a->am.handling_since = osince;
	return deferred;
}

/* Unlink queue q (empty) and free it. */
static void held_remove(struct agent *a, struct am_held *q)
{
	for (struct am_held **pp = &a->am.held; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			free(q);
			return;
		}
}

/* One queue's packets, in order, until one is deferred again.  The
 * queue is looked up anew after every handler: one may have dropped it
 * (its node declared dead) or queued more behind. */
static void retry_one(struct agent *a, uint32_t node, uint64_t job,
		      uint64_t win)
{
	uint64_t pl[RMAD_AM_MAX_PAYLOAD / 8];
	struct am_held *q;

	while ((q = held_find(a, node, job, win)) && q->head) {
		struct am_kept *k = q->head;
		struct rmad_am_hdr h;
		/* past the bound: its handler must act now */
		uint64_t since = q->n > AM_HOLD_MAX ? 1 : q->since;
		int again;

		q->head = k->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
		memcpy(&h, k->msg, sizeof(h));
		memcpy(pl, k->msg + sizeof(h), h.payload_len);
		again = dispatch(a, &h, pl, since);
		q = held_find(a, node, job, win);
		if (again && q) {
			k->next = q->head;	/* first again */
			q->head = k;
			if (!q->tail)
				q->tail = k;
			q->n++;
			return;
		}
		free(k);
		if (again || !q)
			return;
		q->since = rmad_now_ns();
	}
	if (q)
		held_remove(a, q);
}

void am_retry(struct agent *a)
{
	struct key {
		uint32_t node;
		uint64_t job, win;
	} few[16], *keys = few;
	size_t n = 0, cap = 16;

	/* the queues there are now (one per node and window whose member's
	 * lock a client holds), by key: a handler may add or drop some */
	for (struct am_held *q = a->am.held; q; q = q->next)
		n++;
	if (n > cap) {
		keys = malloc(n * sizeof(*keys));
		if (keys)
			cap = n;
		else
			keys = few;	/* the first ones now, more later */
	}
	n = 0;
	for (struct am_held *q = a->am.held; q && n < cap; q = q->next) {
		keys[n].node = q->node;
		keys[n].win = q->win;
		keys[n++].job = q->job;
	}
	for (size_t i = 0; i < n; i++)
		retry_one(a, keys[i].node, keys[i].job, keys[i].win);
	if (keys != few)
		free(keys);
}

void am_recv(void *arg, const void *msg, size_t len, int src,
	     unsigned flags)
{
	struct agent *a = arg;
	struct rmad_am_hdr h;
	uint64_t pl[RMAD_AM_MAX_PAYLOAD / 8];
	bool handshake;		/* a static mesh's heartbeat */

	if (len < sizeof(h)) {
		a->st.pkts_dropped++;
		rmad_warn("dropped a %zu-byte packet: shorter than a header",
			  len);
		return;
	}
	memcpy(&h, msg, sizeof(h));
	if (h.version != RMAD_WIRE_VERSION || h.type == 0 ||
	    h.type >= RMAD_AM_TYPE_MAX ||
	    (!a->am.handler[h.type] && h.type != RMAD_AM_BATCH) ||
	    h.src_node >= (uint32_t)a->nnodes ||
	    h.payload_len != len - sizeof(h) ||
	    h.payload_len > RMAD_AM_MAX_PAYLOAD) {
		a->st.pkts_dropped++;
		rmad_warn("dropped packet: version %u type %u node %u len %zu",
			  h.version, h.type, h.src_node, len);
		return;
	}
	/* a packet is its sender's, as the provider names it (FI_SOURCE),
	 * not as it says: no endpoint speaks for another node */
	if (src != RMAD_FABRIC_SRC_UNKNOWN && src != (int)h.src_node) {
		a->st.pkts_dropped++;
		if (src < 0)
			rmad_warn("dropped packet: type %u claims node %u but "
				  "came from no node of ours", h.type,
				  h.src_node);
		else
			rmad_warn("dropped packet: type %u claims node %u but "
				  "came from node %d", h.type, h.src_node,
				  src);
		return;
	}
	/*
	 * With tags, a packet that did not come bound to our session with
	 * its node (rmad_fabric_set_session) can only be a static mesh's
	 * heartbeat, as the two shake hands or after one restarted; it is
	 * no sign of life (an old one played again may be).
	 */
	handshake = a->mesh && h.type == RMAD_AM_HEARTBEAT;
	if (!(flags & RMAD_FABRIC_FRESH) && !handshake) {
		a->st.pkts_dropped++;
		rmad_warn("dropped packet: type %u from node %u came outside "
			  "our session with it", h.type, h.src_node);
		return;
	}
	if (a->am.dead && a->am.dead[h.src_node] && !handshake) {
		/* declared dead: stays so (a static mesh: until it is up
		 * again, heartbeats only) */
		a->st.pkts_dropped++;
		return;
	}
	a->st.pkts_recv[h.type]++;
	rmad_dbg("recv %u from node %u, %u bytes", h.type, h.src_node,
		 h.payload_len);
	/* a heartbeat brings no work: an idle agent stays asleep */
	if (h.type != RMAD_AM_HEARTBEAT)
		agent_note_activity(a);
	memcpy(pl, (const char *)msg + sizeof(h), h.payload_len);
	if (h.type == RMAD_AM_BATCH) {
		recv_batch(a, &h, (const uint8_t *)pl, flags);
		return;
	}
	/* behind a packet of its node and window that waits: in order */
	if (a->am.held && h.type != RMAD_AM_HEARTBEAT &&
	    held_find(a, h.src_node, h.job, pkt_win(&h))) {
		if (held_push(a, &h, msg, len) == 0)
			return;
		/* no memory to keep it: handled now, out of order, and
		 * said (its handler acts or fails: nothing is lost) */
		rmad_warn("node %u: no memory to keep a packet behind a held "
			  "one; handled out of order", h.src_node);
	}
	if (dispatch(a, &h, pl, 0) &&
	    held_push(a, &h, msg, len) != 0) {
		rmad_warn("node %u: no memory to keep a deferred packet; "
			  "handled at once", h.src_node);
		dispatch(a, &h, pl, 1);
	}
}

/*
 * An aggregate: its packets, one by one, in order, each checked by
 * am_recv like any other; one from another node, a nested aggregate or
 * a length that does not add up drops the rest.
 */
static void recv_batch(struct agent *a, const struct rmad_am_hdr *bh,
		       const uint8_t *pl, unsigned flags)
{
	size_t off = 0, len = bh->payload_len;
	uint64_t n = 0;

	while (off < len) {
		struct rmad_am_hdr h;

		if (len - off < sizeof(h))
			break;
		memcpy(&h, pl + off, sizeof(h));
		if (h.payload_len > len - off - sizeof(h) ||
		    h.src_node != bh->src_node || h.type == RMAD_AM_BATCH)
			break;
		am_recv(a, pl + off, sizeof(h) + h.payload_len,
			(int)bh->src_node, flags);
		off += sizeof(h) + h.payload_len;
		n++;
	}
	if (off != len || n != bh->count) {
		a->st.pkts_dropped++;
		rmad_warn("aggregate from node %u: %llu of %llu packets, %zu "
			  "of %zu bytes made sense; the rest dropped",
			  bh->src_node, (unsigned long long)n,
			  (unsigned long long)bh->count, off, len);
	}
}
