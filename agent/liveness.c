/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * liveness.c - failure detection above the active-message layer (am.c):
 * heartbeats and the echoes that prove a node alive, suspects and the
 * evidence that makes one dead, a static mesh's handshake (mesh.c: nodes
 * that come and go), the idle nodes of a large mesh, and declaring a
 * node dead, which runs the hooks registered with am_on_node_dead().
 * The table of dead nodes it keeps (struct am_ctx, agent.h) is what am
 * and am_batch read to fail sends and drop packets.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "am_held.h"
#include "fabric.h"
#include "liveness.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"
#include "secret.h"
#include "sweep.h"

static void declare_dead(struct agent *a, int node, const char *why);
static void mesh_heard(struct agent *a, int node, uint64_t m, uint64_t t);
static void hb_send(struct agent *a, int node, uint16_t flags);

/*
 * Liveness is proven by echoes, not by what merely arrives.  Every
 * heartbeat (struct rmad_am_heartbeat) carries its sender's clock
 * (stamp, never 0) and the newest stamp it took from the node it goes
 * to (echo); one that is not itself an answer (RMAD_AMF_ECHO) is
 * answered at once.  A
 * node is alive as of the newest of our stamps it echoed: it held our
 * heartbeat sent then.  So a packet that was held back on the way and
 * released later, or a stash of a dead node's heartbeats played one by
 * one, proves only what it proved when it was sent, and a node that
 * died is declared dead within heartbeat_timeout_ms of its last echo,
 * whatever arrives after.  Data packets prove nothing.
 */
static void hb_proof(struct agent *a, int node, const struct rmad_am_hdr *h,
		     const struct rmad_am_heartbeat *hb)
{
	struct am_ctx *m = &a->am;
	uint64_t now = rmad_now_ns();

	if (hb->echo && hb->echo <= now && hb->echo > m->last_rx[node]) {
		/* the wait for it (rmadctl stats: hb_gap_max_us) */
		uint64_t gap = (now - m->last_rx[node]) / 1000;

		if (m->proved[node] && gap > a->st.hb_gap_max_us)
			a->st.hb_gap_max_us = gap;
		m->proved[node] = 1;
		m->last_rx[node] = hb->echo;
	}
	if (hb->stamp)
		m->echo[node] = hb->stamp;	/* an old one only ages its proof */
	if (hb->stamp && !(h->flags & RMAD_AMF_ECHO))
		hb_send(a, node, RMAD_AMF_ECHO);
}

/* A heartbeat: in a static mesh it carries the incarnations first
 * (mesh_heard), then, from a node that is up, its proof (hb_proof). */
static void on_heartbeat(struct agent *a, const struct rmad_am_hdr *h,
			 const void *payload)
{
	int node = (int)h->src_node;
	struct rmad_am_heartbeat hb;

	if (am_payload(a, h, payload, &hb, sizeof(hb), 1))
		return;
	if (node == a->node || !a->am.dead)
		return;
	if (a->mesh)
		mesh_heard(a, node, hb.incarnation, hb.inc_echo);
	if (!a->am.dead[node])
		hb_proof(a, node, h, &hb);
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

	if (secret_random_bytes(&v, sizeof(v)))
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
		.payload_len = sizeof(struct rmad_am_heartbeat),
	};
	struct rmad_am_heartbeat hb = {
		.stamp = rmad_now_ns(),
		.echo = m->echo[node],
		.incarnation = a->mesh ? m->mine[node] : 0,
		.inc_echo = a->mesh ? m->theirs[node] : 0,
	};

	if (!a->mesh || !m->dead[node]) {
		am_send(a, node, &h, &hb, sizeof(hb));	/* urgent (am_send_st) */
		return;
	}
	if (!a->fab)
		return;
	if (rmad_fabric_queued(a->fab, node)) {
		rmad_fabric_knock(a->fab, node);	/* the one queued */
		return;
	}
	a->st.pkts_sent[RMAD_AM_HEARTBEAT]++;
	rmad_fabric_send(a->fab, node, &h, sizeof(h), &hb, sizeof(hb));
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

int liveness_root(const struct agent *a)
{
	if (!a->mesh)
		return 0;
	for (int node = 0; node < a->nnodes; node++)
		if (!a->am.dead[node])
			return node;
	return a->node;
}

void liveness_init(struct agent *a)
{
	am_register(a, RMAD_AM_HEARTBEAT, on_heartbeat);
}

int liveness_start(struct agent *a)
{
	struct am_ctx *m = &a->am;
	size_t n = a->nnodes > 0 ? (size_t)a->nnodes : 1;
	uint64_t now = rmad_now_ns();

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

void liveness_fini(struct agent *a)
{
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

static void declare_dead(struct agent *a, int node, const char *why)
{
	struct am_ctx *m = &a->am;

	m->dead[node] = 1;
	m->ndead++;
	m->suspect[node] = m->proved[node] = 0;
	m->err_until[node] = 0;
	am_held_drop_node(a, node);
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
 * (liveness_watch), or we sent it a packet within heartbeat_timeout_ms.  An
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

void liveness_watch(struct agent *a, int node, int on)
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

void liveness_node_counts(const struct agent *a, int *up, int *busy)
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

int liveness_node_fresh(const struct agent *a, int node)
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
	    sweep_lock_take(path, &fd) != 0)
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

void liveness_tick(struct agent *a, uint64_t now)
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
