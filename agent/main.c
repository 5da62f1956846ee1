/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - the rmad agent: configuration, startup, the progress loop and
 * shutdown.
 *
 * The loop follows io_uring's SQPOLL model.  While there is work, or for
 * spin_us after the last of it, the agent polls the client rings and the
 * fabric without sleeping.  Then it sets NEED_WAKEUP in the segment
 * header, looks once more, and sleeps in libevent until a client kicks
 * the doorbell eventfd, the fabric's wait fd fires, a socket or signal
 * arrives, or (for fabrics without a wait object) idle_poll_us passes.
 *
 * One thread owns all agent state.  Signals arrive as libevent events on
 * that thread; nothing blocking runs on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "liveness.h"
#include "bell.h"
#include "clients.h"
#include "completion.h"
#include "crash.h"
#include "jobs.h"
#include "mem.h"
#include "mesh.h"
#include "pin.h"
#include "schedule.h"
#include "guard.h"
#include "rma.h"
#include "stats.h"
#include "sweep.h"
#include "windows.h"
#include "winsync.h"
#include "atomics.h"
#include "log.h"
#include "rmad_abi.h"
#include "trace.h"
#include "util.h"

#ifndef RMAD_SYSCONFDIR
#define RMAD_SYSCONFDIR "/etc"
#endif

/*
 * Look at sockets, signals and timers at least this often (ns), even
 * while the rings keep the agent busy: attaches, hang-ups and SIGTERM
 * must not wait for a quiet moment.
 */
#define EVENT_POLL_NS 200000

static int apply_sets(struct agent *a, struct rmad_params *p, char *err,
		      size_t len)
{
	for (int i = 0; i < a->m.nset_args; i++) {
		char kv[512], *eq;

		snprintf(kv, sizeof(kv), "%s", a->m.set_args[i]);
		eq = strchr(kv, '=');
		if (!eq) {
			snprintf(err, len, "--set wants KEY=VALUE, not '%s'",
				 a->m.set_args[i]);
			return RMAD_ERR_ARG;
		}
		*eq = '\0';
		if (rmad_params_set(p, kv, eq + 1, err, len) < 0)
			return RMAD_ERR_ARG;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: rmad [options]\n"
"  -f, --foreground        stay in the foreground (default: daemonize)\n"
"  -c, --config FILE       configuration file (default "
RMAD_SYSCONFDIR "/rmad/rmad.conf,\n"
"                          or $RMAD_CONF)\n"
"  -s, --session NAME      session to serve (default: \"default\")\n"
"      --vnodes K          one of K agents on this host (virtual nodes);\n"
"                          its index is its PMIx rank\n"
"      --pmix              bootstrap the agent mesh through PMIx\n"
"      --embedded          started by a client: single node, exits idle\n"
"      --set KEY=VALUE     override one parameter (repeatable)\n"
"      --show-config[=FMT] print the configuration and exit; FMT is\n"
"                          text (default), conf, man, json or names\n"
"      --print-run-dir     print the session's run directory and exit\n"
"      --sweep             remove what this user's dead agents left: shm\n"
"                          regions in /dev/shm, sockets and pid files in\n"
"                          the run directory; print the count and exit\n"
"                          (--sweep-shm is the same)\n"
"      --owner-pid PID     stop when process PID (the launcher) is gone\n"
"      --print-rank-cpus K print the CPUs left for ranks when K agents of\n"
"                          this host are pinned (\"\" if none) and exit\n"
"      --print-vnode-cores K  print the cores of each of K virtual nodes\n"
"                          of a host with none to spare and exit\n"
"                          (the --print options combine: one line each,\n"
"                          in the order above)\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              this text\n");
}

/* ------------------------------------------------------------ events */

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;

	if (sig == SIGHUP) {
		a->reload = 1;
		return;
	}
	rmad_info("signal %d: stopping", (int)sig);
	a->stopping = 1;
	event_base_loopbreak(a->base);
}

static void on_doorbell(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	uint64_t v;

	/* drain: the kick only wakes us, the rings carry the work */
	while (read(fd, &v, sizeof(v)) == sizeof(v))
		a->st.wakeups++;
	agent_note_activity(a);
}

static void on_wake_timer(evutil_socket_t fd, short what, void *arg)
{
	/* only ends the sleep: the loop polls the fabric next */
}

/*
 * The fabric's wait fd stays in the loop once added, and is level
 * triggered: ready as long as the provider has something unread, which
 * only our polling consumes.  A loop run with EVLOOP_NONBLOCK ends only
 * when no event is active, so without the break it would never return.
 */
static void on_fab_ready(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	event_base_loopbreak(a->base);
}

static void do_reload(struct agent *a)
{
	struct rmad_params fresh;
	char err[256];
	int r, n;

	a->reload = 0;
	rmad_params_defaults(&fresh);
	r = rmad_params_load_file(&fresh, a->conf_path, err, sizeof(err));
	if (r < 0 || rmad_params_load_env(&fresh, err, sizeof(err)) < 0 ||
	    apply_sets(a, &fresh, err, sizeof(err)) < 0) {
		rmad_err("reload refused: %s", err);
		return;
	}
	n = rmad_params_apply_reload(&a->p, &fresh);
	rmad_log_set_level(a->p.log_level);
	rmad_info("reloaded %s: %d parameters changed", a->conf_path, n);
}

static void log_stats(struct agent *a)
{
	char line[1024];

	agent_stats_format(&a->st, AGENT_STATS_LOG, line, sizeof(line));
	rmad_info("stats: clients %d, %s", a->nclients, line);
}

/* Embedded agents leave when nobody used them for idle_exit_ms. */
static void check_idle_exit(struct agent *a)
{
	uint64_t now = rmad_now_ns();

	if (!a->embedded || a->p.idle_exit_ms <= 0 || a->nclients > 0)
		return;
	if (now - a->idle_since_ns < (uint64_t)a->p.idle_exit_ms * 1000000ull)
		return;
	/* take connections already queued before deciding */
	agent_accept_pending(a);
	if (a->nclients > 0)
		return;
	rmad_info("idle for %ld ms with no clients: exiting",
		  a->p.idle_exit_ms);
	a->stopping = 1;
}

/* The start time of process pid (/proc/PID/stat, field 22) in *start;
 * 0 when there is no such process. */
static int proc_start(unsigned long long *start, int pid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command, which may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* fields 3..21, then the start time */
	for (int k = 0; k < 20 && p; k++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", start) == 1;
}

/* --owner-pid: the launcher is gone (dead, or its pid reused), and with
 * it whoever would stop us: stop. */
static void check_owner(struct agent *a)
{
	unsigned long long st;

	if (!a->m.owner_pid || a->stopping)
		return;
	if (proc_start(&st, a->m.owner_pid) && st == a->m.owner_start)
		return;
	rmad_warn("the launcher (pid %d) is gone: stopping", a->m.owner_pid);
	a->stopping = 1;
	event_base_loopbreak(a->base);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	uint64_t now = rmad_now_ns();

	if (a->reload)
		do_reload(a);
	am_tick(a, now);
	agent_jobs_tick(a);
	agent_clients_tick(a, now);
	agent_win_tick(a, now);
	check_idle_exit(a);
	check_owner(a);
	if (a->p.stats_interval_ms > 0 &&
	    now - a->m.last_stats >=
	    (uint64_t)a->p.stats_interval_ms * 1000000ull) {
		a->m.last_stats = now;
		log_stats(a);
	}
}

/* ------------------------------------------------------ single agent */

/*
 * An abstract-namespace socket named after the session directory and
 * vnode is the "one agent per session and node" lock: binding it is
 * atomic, and the kernel drops it when the agent exits, however it
 * exits.  A second agent started for the same place (two clients that
 * raced to autostart) fails here and leaves quietly.
 */
static int take_agent_lock(struct agent *a)
{
	int err;

	/* a sweep (agent_sweep_rundir) holds it for a moment to tell a
	 * dead agent from a live one: a few tries before giving way */
	for (int i = 0; i < 10; i++) {
		err = agent_lock_take(a->sock_path, &a->m.lock_fd);
		if (err != 1)
			break;
		usleep(10000);
	}
	return err;
}

/*
 * agent[-K].pid beside the socket: rmad-run stops the agents it started
 * by these pids (after checking each one's command line names its
 * session), never by matching command lines.
 */
static void write_pid_file(struct agent *a)
{
	char tmp[PATH_MAX + 16];
	size_t n = strlen(a->sock_path);
	FILE *f;

	if (n < 5 || strcmp(a->sock_path + n - 5, ".sock") ||
	    n + 1 > sizeof(a->m.pid_path))
		return;
	snprintf(a->m.pid_path, sizeof(a->m.pid_path), "%.*s.pid",
		 (int)(n - 5), a->sock_path);
	snprintf(tmp, sizeof(tmp), "%s.%d", a->m.pid_path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) ||
	    rename(tmp, a->m.pid_path)) {
		rmad_warn("pid file %s: %s", a->m.pid_path, strerror(errno));
		if (f)
			unlink(tmp);
		a->m.pid_path[0] = '\0';
	}
}

static void sd_notify_ready(void)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[64];
	socklen_t len;
	int fd;

	if (!ns || (ns[0] != '/' && ns[0] != '@') ||
	    strlen(ns) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, ns, strlen(ns));
	if (ns[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(ns));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%d", (int)getpid());
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/* ------------------------------------------------------------- setup */

/* fabric_auth (rmad.conf(5)) once the fabric is open: 1 tags, 0 none,
 * or an error (logged) for a setting that cannot be met. */
static int auth_wanted(struct agent *a)
{
	const char *m = a->p.fabric_auth;
	int keyed = a->p.mesh_key_file[0] != 0;

	if (strcmp(m, "auto") && strcmp(m, "on") && strcmp(m, "off")) {
		rmad_err("fabric_auth = %s: not auto, on or off", m);
		return RMAD_ERR_ARG;
	}
	if (!strcmp(m, "off"))
		return 0;
	if (a->mesh && !keyed && !strcmp(m, "on")) {
		rmad_err("fabric_auth = on: a static mesh needs mesh_key_file");
		return RMAD_ERR_ARG;
	}
	if (a->mesh && !keyed) {
		rmad_warn("mesh: no mesh_key_file, so packets carry no tags: "
			  "whoever reaches the agents' port and claims a "
			  "node's address speaks for that node");
		return 0;
	}
	return a->mesh || !strcmp(m, "on") ||
	       strcmp(rmad_fabric_provider(a->fab), "shm");
}

static int setup_mesh(struct agent *a, int use_pmix)
{
	struct rmad_fabric_cfg fc = {
		.provider = a->p.provider,
		.node = NULL,
		.service = NULL,
		.am_buf_size = a->p.am_buf_size,
		.am_recv_bufs = (int)a->p.am_recv_bufs,
		.am_send_bufs = (int)a->p.am_send_bufs,
	};
	struct rmad_mesh_cfg mc = {
		.list = a->p.mesh,
		.file = a->p.mesh_file,
		.port = a->p.mesh_port,
		.self = a->p.mesh_self,
	};
	char addr[256], host[64], port[16];
	size_t alen = sizeof(addr);
	int err, tags;

	if (a->embedded) {
		/* one node, no peers: the fabric is not needed */
		a->node = 0;
		a->nnodes = 1;
		return 0;
	}
	if (a->p.fabric_node[0])
		fc.node = a->p.fabric_node;
	if (rmad_mesh_configured(&mc)) {
		/* a static mesh (mesh.c): our own entry is our address */
		err = rmad_mesh_load(&mc, &a->boot, host, sizeof(host), port,
				     sizeof(port));
		if (err) {
			rmad_err("the mesh of the configuration is unusable");
			return err;
		}
		fc.node = host;
		fc.service = port;
		a->mesh = 1;
	}
	err = rmad_fabric_open(&fc, am_recv, a, &a->fab);
	if (err) {
		rmad_err("cannot open libfabric provider '%s'%s%s%s",
			 a->p.provider, a->mesh ? " on " : "",
			 a->mesh ? host : "", a->mesh ? ":" : "");
		return err;
	}
	err = rmad_fabric_getname(a->fab, addr, &alen);
	if (err)
		return err;
	if (a->mesh && !rmad_mesh_check_self(&a->boot, addr, alen)) {
		rmad_err("mesh: provider %s did not bind to %s port %s, its "
			 "entry's socket address; a static mesh needs "
			 "tcp;ofi_rxm",
			 rmad_fabric_provider(a->fab), host, port);
		return RMAD_ERR_FABRIC;
	}
	tags = auth_wanted(a);
	if (tags < 0)
		return tags;
	err = a->mesh ? (tags ? rmad_mesh_keys(a->p.mesh_key_file,
					       &a->boot) : 0) :
	      use_pmix ? rmad_boot_pmix(addr, alen, tags, &a->boot) :
			 rmad_boot_single(addr, alen, &a->boot);
	if (err) {
		rmad_err("bootstrap of the agent mesh failed");
		return err;
	}
	err = rmad_fabric_set_peers(a->fab, a->boot.self, a->boot.n,
				    a->boot.addrs, a->boot.addrlen);
	if (!err && a->boot.keys)
		err = rmad_fabric_set_auth(a->fab, &a->boot.keys[0][0]);
	if (err)
		return err;
	a->node = a->boot.self;
	a->nnodes = a->boot.n;
	/*
	 * The CQ's wait fd (tcp;ofi_rxm has one, shm none) joins the event
	 * loop at the first sleep and stays (fab_watch); the agent sleeps
	 * only after fi_trywait said it may (agent_sleep), and idle_poll_us
	 * still bounds the sleep, for the progress the fd does not signal.
	 */
	rmad_info("mesh: node %d of %d over %s, packets %s%s", a->node,
		  a->nnodes, rmad_fabric_provider(a->fab),
		  a->boot.keys ? "tagged" : "not tagged",
		  a->mesh ? ", static (mesh): the others join as they come up"
			  : "");
	return 0;
}

static int setup_events(struct agent *a)
{
	static const int sigs[3] = { SIGTERM, SIGINT, SIGHUP };
	/* the tick: heartbeats, timeouts, idle exit, reload, stats */
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };

	a->doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->doorbell < 0)
		return RMAD_ERR_INTERNAL;
	a->doorbell_ev = event_new(a->base, a->doorbell, EV_READ | EV_PERSIST,
				   on_doorbell, a);
	if (!a->doorbell_ev || event_add(a->doorbell_ev, NULL) < 0)
		return RMAD_ERR_INTERNAL;
	for (int i = 0; i < 3; i++) {
		a->sig_ev[i] = evsignal_new(a->base, sigs[i], on_signal, a);
		if (!a->sig_ev[i] || event_add(a->sig_ev[i], NULL) < 0)
			return RMAD_ERR_INTERNAL;
	}
	a->tick_ev = event_new(a->base, -1, EV_PERSIST, on_tick, a);
	if (!a->tick_ev || event_add(a->tick_ev, &tv) < 0)
		return RMAD_ERR_INTERNAL;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* --------------------------------------------------------- the loop */

/*
 * The fabric's wait fd (tcp;ofi_rxm) in the event loop, added at the
 * first sleep and kept; and the sleep's timer.  1 if the fd is watched:
 * then the caller must fi_trywait before it sleeps.
 */
static int fab_watch(struct agent *a)
{
	int fd = rmad_fabric_wait_fd(a->fab);

	if (!a->wake_ev)
		a->wake_ev = evtimer_new(a->base, on_wake_timer, a);
	if (fd < 0)
		return 0;
	if (!a->fab_ev) {
		a->fab_ev = event_new(a->base, fd, EV_READ | EV_PERSIST,
				      on_fab_ready, a);
		if (a->fab_ev && event_add(a->fab_ev, NULL) < 0) {
			event_free(a->fab_ev);
			a->fab_ev = NULL;
		}
	}
	return a->fab_ev != NULL;
}

/* 1 if it slept; 0 when there was something to do after all */
static int agent_sleep(struct agent *a)
{
	struct rmad_shm_hdr *h = a->hdr;
	struct timeval tv;

	/* a new epoch before the flag: a client process that rang for the
	 * last sleep rings again for this one (rmad_op_submit) */
	store_relaxed(&h->sleep_epoch, h->sleep_epoch + 1);
	cmm_smp_wmb();
	uatomic_or(&h->agent_flags, RMAD_AGENT_NEED_WAKEUP);
	/*
	 * Full fence: the flag store before we look at the rings, pairing
	 * with the client's fence between its push and its read of the
	 * flag.  Either we see its op, or it sees the flag and kicks us.
	 */
	rmad_smp_mb();
	if (!agent_rings_empty(a) || rmad_fabric_busy(a->fab) ||
	    agent_rma_transfers(a)) {
		uatomic_and(&h->agent_flags, ~RMAD_AGENT_NEED_WAKEUP);
		return 0;
	}
	a->st.sleeps++;
	RMAD_TR(RMAD_TR_SLEEP, 0);
	sched_restore(a);
	if (a->fab) {
		/*
		 * Sleep until the fabric's wait fd fires (tcp;ofi_rxm has
		 * one; fi_trywait first, or a completion that came before
		 * we looked would not wake us) or idle_poll_us passes: not
		 * all of the fabric's progress (connection setup) signals
		 * the fd, and shm has none at all.  The fd and the timer
		 * are made once and stay in the loop (fab_watch): two
		 * epoll_ctl calls and an allocation less per sleep.
		 */
		if (bell_sleep_begin(a) && rmad_fabric_progress(a->fab) > 0) {
			/* it came before the bell was up: no sleep */
			bell_sleep_end(a);
			uatomic_and(&h->agent_flags, ~RMAD_AGENT_NEED_WAKEUP);
			return 0;
		}
		if (fab_watch(a) && rmad_fabric_trywait(a->fab) != 0) {
			/* progress to make: no sleep */
			bell_sleep_end(a);
			uatomic_and(&h->agent_flags, ~RMAD_AGENT_NEED_WAKEUP);
			return 0;
		}
		if (sched_idle_poll(a)) {
			bell_sleep_end(a);
			uatomic_and(&h->agent_flags, ~RMAD_AGENT_NEED_WAKEUP);
			a->awake_since = rmad_now_ns();
			return 1;
		}
		tv.tv_sec = a->p.idle_poll_us / 1000000;
		tv.tv_usec = a->p.idle_poll_us % 1000000;
		guard_disarm(a);	/* the kernel wakes us now */
		if (a->wake_ev && evtimer_add(a->wake_ev, &tv) == 0) {
			event_base_loop(a->base, EVLOOP_ONCE);
			evtimer_del(a->wake_ev);
		}
		bell_sleep_end(a);
	} else {
		guard_disarm(a);
		event_base_loop(a->base, EVLOOP_ONCE);
	}
	uatomic_and(&h->agent_flags, ~RMAD_AGENT_NEED_WAKEUP);
	a->awake_since = rmad_now_ns();
	RMAD_TR(RMAD_TR_AWAKE, 0);
	return 1;
}

/*
 * progress = event, or auto while a client may run on our core: sleep
 * as soon as there is nothing to do.  Spinning on a shared core takes
 * it from the process whose work we wait for; so does a client that
 * spins while it waits for us, so they sleep at once then
 * (RMAD_AGENT_EVENT).  And we run under SCHED_FIFO (rt_priority), so
 * that our wakeups preempt a computing rank on our core instead of
 * waiting for its time slice: measured on 2 shared cores, that keeps a
 * put+flush to a computing target flat in T.
 */
static int event_mode(struct agent *a)
{
	const char *m = a->p.progress;
	int ev = !strcmp(m, "event") ||
		 (strcmp(m, "spin") && a->nshare > 0);
	static const char *warned;

	if (strcmp(m, "auto") && strcmp(m, "event") && strcmp(m, "spin") &&
	    warned != m) {
		warned = m;
		rmad_warn("progress = %s: not auto, spin or event; taken as "
			  "auto", m);
	}

	if (ev != a->event_mode) {
		a->event_mode = ev;
		/* waiting clients sleep at once while we share their core */
		if (ev)
			uatomic_or(&a->hdr->agent_flags, RMAD_AGENT_EVENT);
		else
			uatomic_and(&a->hdr->agent_flags, ~RMAD_AGENT_EVENT);
		sched_set(a, ev);
		rmad_info("progress: %s (progress = %s, %d client(s) on "
			  "our core)", ev ? "event-driven" : "spinning", m,
			  a->nshare);
	}
	return ev;
}

static void agent_run(struct agent *a)
{
	uint64_t last_events = 0;
	unsigned int held_naps = 0;	/* naps since packets were held */

	a->last_activity_ns = rmad_now_ns();
	/* short sleeps in sched_spin_once() should be short */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	while (!a->stopping) {
		uint64_t t0 = a->ws_idle ? rmad_now_ns() : 0, now;
		int n = agent_poll_rings(a), f = 0;

		if (a->fab) {
			f = rmad_fabric_progress(a->fab);
			if (f > 0)
				n += f;
		}
		n += make_rma_progress_global(a);
		/* packets and read chunks kept behind a busy accumulate
		 * lock (am.c, rma_pull.c) */
		if (am_held(a))
			am_retry(a);
		if (agent_rma_waiting(a))
			agent_rma_retry(a);
		/* what the pass produced leaves now, not at the pass's end:
		 * under SCHED_IDLE a process of our core may preempt us in
		 * between, and an answer would wait for our next turn.  (And
		 * sends before wakes: agent_flush_wakeups.) */
		am_flush(a);
		agent_flush_wakeups(a);
		now = rmad_now_ns();
		sched_busy(a, now);
		if (a->ws_idle) {
			/* messages that waited for our core? (from the
			 * start of an idle pass, which is short unless
			 * preempted, or from the end of a busy one) */
			if (f > 0)
				sched_idle_fab(a, t0, now);
			a->ws_prev = n ? now : t0;
			sched_idle_check(a, now);
		}
		if (n)
			a->last_activity_ns = now;
		if (now - last_events >= EVENT_POLL_NS) {
			last_events = now;
			event_base_loop(a->base, EVLOOP_NONBLOCK);
		}
		/* the end of the pass: what the event callbacks or the
		 * sends completed, and what waits in aggregates goes */
		agent_flush_wakeups(a);
		am_flush(a);
		if (n || a->p.busy_poll)
			continue;
		if (am_held(a) || agent_rma_waiting(a)) {
			/* a client holds a lock we wait for, maybe on our
			 * core: a moment for it, then again, the moments
			 * growing from 20 us to 1 ms while it keeps it */
			struct timespec ts = { 0, 20000L << held_naps };

			if (held_naps < 5)
				held_naps++;
			nanosleep(&ts, NULL);
			continue;
		}
		held_naps = 0;
		if (a->ws_idle && sched_idle_keep(a, now)) {
			caa_cpu_relax();
			continue;
		}
		/* with no client, no next op to be quick for: an idle node
		 * service (a static mesh's heartbeats) sleeps at once */
		if (event_mode(a) || !a->nclients ||
		    now - a->last_activity_ns >= (uint64_t)a->p.spin_us * 1000) {
			/* an answer due finds us awake (answer_spin_us),
			 * or sched_idle_poll's watch in agent_sleep, which
			 * leaves the core to the client it wakes */
			if (!(agent_answer_due(a, now) &&
			      !sched_idle_ok(a, now)) &&
			    (agent_sleep(a) || !a->rt)) {
				a->rt_idle = 0;
			} else if (++a->rt_idle % 256 == 0) {
				/* we wait busily (transfers in flight, an
				 * answer due): under SCHED_FIFO a process of
				 * the normal class on our core, maybe the one
				 * we wait for, gets a moment too */
				agent_yield(a);
			} else {
				sched_yield();	/* another agent on our core */
			}
		} else {
			sched_spin_once(a, now);
		}
	}
	am_flush(a);
}

/* ---------------------------------------------------------- startup */

static int parse_args(struct agent *a, int argc, char **argv, int *fg,
		      int *use_pmix, const char **show)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "session", required_argument, NULL, 's' },
		{ "vnodes", required_argument, NULL, 'k' },
		{ "pmix", no_argument, NULL, 'p' },
		{ "embedded", no_argument, NULL, 'e' },
		{ "set", required_argument, NULL, 'S' },
		{ "show-config", optional_argument, NULL, 'C' },
		{ "print-run-dir", no_argument, NULL, 'D' },
		{ "sweep", no_argument, NULL, 'W' },
		{ "sweep-shm", no_argument, NULL, 'W' },
		{ "print-rank-cpus", required_argument, NULL, 'R' },
		{ "print-vnode-cores", required_argument, NULL, 'Y' },
		{ "owner-pid", required_argument, NULL, 'O' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, vnodes = 0;

	while ((c = getopt_long(argc, argv, "fc:s:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			*fg = 1;
			break;
		case 'c':
			snprintf(a->conf_path, sizeof(a->conf_path), "%s",
				 optarg);
			break;
		case 's':
			snprintf(a->session, sizeof(a->session), "%s", optarg);
			break;
		case 'k':
			vnodes = atoi(optarg);
			if (vnodes < 1) {
				fprintf(stderr, "rmad: bad --vnodes '%s'\n",
					optarg);
				return 2;
			}
			a->vnode = 0;	/* real index from the bootstrap */
			*use_pmix = 1;
			break;
		case 'p':
			*use_pmix = 1;
			break;
		case 'e':
			a->embedded = 1;
			break;
		case 'S':
			/* applied after the file and environment */
			if (a->m.set_args)
				a->m.set_args[a->m.nset_args++] = optarg;
			break;
		case 'C':
			*show = optarg ? optarg : "text";
			break;
		case 'D':
			a->m.prints |= PRINT_RUN_DIR;
			*show = "print";
			break;
		case 'W':
			*show = "sweep";
			break;
		case 'R':
			a->m.rank_cpus_agents = atoi(optarg);
			a->m.prints |= PRINT_RANK_CPUS;
			*show = "print";
			break;
		case 'Y':
			a->m.vnode_cores_nodes = atoi(optarg);
			a->m.prints |= PRINT_VNODE_CORES;
			*show = "print";
			break;
		case 'O': {
			char *end;
			long pid = strtol(optarg, &end, 10);

			if (*end || pid < 1 || pid > INT_MAX ||
			    !proc_start(&a->m.owner_start, (int)pid)) {
				fprintf(stderr, "rmad: no process --owner-pid "
					"'%s'\n", optarg);
				return 2;
			}
			a->m.owner_pid = (int)pid;
			break;
		}
		case 'V':
			printf("rmad %s (ABI %d)\n", PACKAGE_VERSION,
			       RMAD_ABI_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rmad: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

/*
 * --print-run-dir, --print-rank-cpus K, --print-vnode-cores K: one line
 * each, in that order, however many of them were given, so that a
 * launcher learns all three in one start of this binary (libfabric's
 * psm provider alone spends 100-200 ms of every start calibrating a
 * clock).  A line that cannot be worked out is printed empty and makes
 * the exit status 2.
 */
static void print_line(char *buf, int failed, int *rc)
{
	if (failed) {
		buf[0] = '\0';
		*rc = 2;
	}
	printf("%s\n", buf);
}

static int print_launch(struct agent *a)
{
	char buf[PATH_MAX > 4096 ? PATH_MAX : 4096];
	int rc = 0;

	if (a->m.prints & PRINT_RUN_DIR)
		print_line(buf, rmad_session_dir(a->p.rundir, a->session, buf,
						 sizeof(buf)) != 0, &rc);
	if (a->m.prints & PRINT_RANK_CPUS)
		print_line(buf, a->m.rank_cpus_agents < 1 ||
			   agent_rank_cpus(&a->p, a->m.rank_cpus_agents, buf,
					   sizeof(buf)), &rc);
	if (a->m.prints & PRINT_VNODE_CORES)
		print_line(buf, a->m.vnode_cores_nodes < 1 ||
			   agent_vnode_cores(&a->p, a->m.vnode_cores_nodes,
					     buf, sizeof(buf)), &rc);
	return rc;
}

static int show_config(struct agent *a, const char *fmt)
{
	static const struct {
		const char *name;
		enum rmad_params_fmt f;
	} fmts[] = {
		{ "text", RMAD_PARAMS_FMT_TEXT },
		{ "conf", RMAD_PARAMS_FMT_CONF },
		{ "man", RMAD_PARAMS_FMT_MAN },
		{ "json", RMAD_PARAMS_FMT_JSON },
	};

	if (!strcmp(fmt, "print") && a->m.prints)
		return print_launch(a);
	if (!strcmp(fmt, "sweep")) {
		char sdir[PATH_MAX], *slash;

		rmad_log_init("rmad", (int)a->p.log_level);
		if (rmad_session_dir(a->p.rundir, a->session, sdir,
				     sizeof(sdir)) || !(slash = strrchr(sdir, '/')))
			return 2;
		*slash = '\0';
		printf("%d\n", agent_sweep_shm("/dev/shm", getuid()) +
		       agent_sweep_rundir(sdir, getuid(), 1));
		return 0;
	}
	if (!strcmp(fmt, "names")) {
		for (int i = 0; i < rmad_params_count(); i++)
			printf("%s\n", rmad_params_name(i));
		return 0;
	}
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (!strcmp(fmt, fmts[i].name)) {
			rmad_params_print(&a->p, stdout, fmts[i].f);
			return 0;
		}
	fprintf(stderr, "rmad: unknown --show-config format '%s'\n", fmt);
	return 2;
}

static int load_config(struct agent *a, int argc, char **argv, int *fg,
		       int *use_pmix, const char **show)
{
	char err[256];
	const char *env = getenv("RMAD_CONF");
	int r;

	rmad_params_defaults(&a->p);
	snprintf(a->conf_path, sizeof(a->conf_path), "%s",
		 env && *env ? env : RMAD_SYSCONFDIR "/rmad/rmad.conf");
	/* a first pass only to learn --config; --set is applied below */
	{
		struct agent tmp = *a;
		int fgx = 0, px = 0;
		const char *sx = NULL;

		opterr = 0;
		r = parse_args(&tmp, argc, argv, &fgx, &px, &sx);
		opterr = 1;
		if (r)
			return r;
		memcpy(a->conf_path, tmp.conf_path, sizeof(a->conf_path));
		optind = 1;
	}
	r = rmad_params_load_file(&a->p, a->conf_path, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "rmad: %s\n", err);
		return 2;
	}
	if (rmad_params_load_env(&a->p, err, sizeof(err)) < 0) {
		fprintf(stderr, "rmad: %s\n", err);
		return 2;
	}
	a->m.set_args = calloc((size_t)argc, sizeof(*a->m.set_args));
	if (!a->m.set_args)
		return 1;
	r = parse_args(a, argc, argv, fg, use_pmix, show);
	if (r)
		return r;
	if (apply_sets(a, &a->p, err, sizeof(err)) < 0) {
		fprintf(stderr, "rmad: %s\n", err);
		return 2;
	}
	return 0;
}

static void daemonize(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (pid > 0)
		_exit(0);
	setsid();
	pid = fork();
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0) {
		/* stay where we are */
	}
	{
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			if (fd > STDERR_FILENO)
				close(fd);
		}
	}
}

static void agent_cleanup(struct agent *a)
{
	if (a->hdr)
		uatomic_or(&a->hdr->agent_flags, RMAD_AGENT_STOPPING);
	agent_unlisten(a);
	agent_drop_all_clients(a);
	agent_rma_fini(a);
	agent_win_fini(a);
	agent_mem_fini(a);
	if (a->fab) {
		struct rmad_fabric_stats fs;

		rmad_fabric_get_stats(a->fab, &fs);
		rmad_info("fabric: sent %llu, received %llu, queued %llu, "
			  "cq errors %llu, rejected %llu, stale %llu, "
			  "fi_write %llu, fi_read %llu",
			  (unsigned long long)fs.sent,
			  (unsigned long long)fs.received,
			  (unsigned long long)fs.queued,
			  (unsigned long long)fs.cq_errors,
			  (unsigned long long)fs.rejected,
			  (unsigned long long)fs.stale,
			  (unsigned long long)fs.rma_writes,
			  (unsigned long long)fs.rma_reads);
	}
	if (a->fab_ev) {
		event_free(a->fab_ev);	/* before its fd goes with the fabric */
		a->fab_ev = NULL;
	}
	if (a->wake_ev) {
		event_free(a->wake_ev);
		a->wake_ev = NULL;
	}
	guard_stop(a);
	bell_close(a);
	rmad_fabric_close(a->fab);
	a->fab = NULL;
	liveness_fini(a);
	am_fini(a);
	rmad_boot_free(&a->boot);
	agent_segment_destroy(a);
	if (a->doorbell_ev)
		event_free(a->doorbell_ev);
	if (a->doorbell >= 0)
		close(a->doorbell);
	for (int i = 0; i < 3; i++)
		if (a->sig_ev[i])
			event_free(a->sig_ev[i]);
	if (a->tick_ev)
		event_free(a->tick_ev);
	if (a->base)
		event_base_free(a->base);
	if (a->m.pid_path[0])
		unlink(a->m.pid_path);
	if (a->sdir[0])
		rmdir(a->sdir);	/* only if empty: other agents may share it */
	if (a->m.lock_fd >= 0)
		close(a->m.lock_fd);
	agent_clients_free(a);
	free(a->jobs);
	free(a->m.set_args);
	a->m.set_args = NULL;
}

int main(int argc, char **argv)
{
	struct agent agent, *a = &agent;
	const char *show = NULL;
	int fg = 0, use_pmix = 0, err;

	memset(a, 0, sizeof(*a));
	a->vnode = -1;
	a->memfd = -1;
	a->doorbell = -1;
	a->listen_fd = -1;
	a->m.lock_fd = -1;
	snprintf(a->session, sizeof(a->session), "default");
	err = load_config(a, argc, argv, &fg, &use_pmix, &show);
	if (err || show) {
		err = err ? err : show_config(a, show);
		free(a->m.set_args);
		return err;
	}
	rmad_log_init("rmad", (int)a->p.log_level);
	if (!fg && !a->embedded)
		daemonize();
	crash_install("rmad");

	a->base = event_base_new();
	if (!a->base) {
		rmad_err("libevent: cannot create the event base");
		return 1;
	}
	gethostname(a->hostname, sizeof(a->hostname) - 1);
	a->jobs = calloc((size_t)a->p.max_jobs, sizeof(*a->jobs));
	if (agent_clients_alloc(a) || !a->jobs) {
		rmad_err("out of memory");
		goto fail;
	}
	if (setup_events(a))
		goto fail;
	am_init(a);
	liveness_init(a);
	agent_jobs_am_init(a);
	/* regions of this user's agents that were killed (SIGKILL) */
	agent_sweep_shm("/dev/shm", getuid());
	if (setup_mesh(a, use_pmix))
		goto fail;
	if (a->vnode >= 0)
		a->vnode = a->node;
	agent_pin(a);
	sched_check_peer(a);
	if (rmad_session_dir(a->p.rundir, a->session, a->sdir,
			     sizeof(a->sdir)) ||
	    rmad_agent_sock_path(a->sdir, a->vnode, a->sock_path,
				 sizeof(a->sock_path))) {
		rmad_err("run directory path too long: %s", a->sdir);
		a->sdir[0] = '\0';
		goto fail;
	}
	{
		char msg[512];

		/* ours, and 0700 unless we serve other users (allow_users) */
		if (rmad_session_dir_check(a->sdir, getuid(),
					   !a->p.allow_users[0], 1, msg,
					   sizeof(msg))) {
			rmad_err("%s", msg);
			a->sdir[0] = '\0';
			goto fail;
		}
	}
	{
		/* sockets and pid files of this user's killed agents */
		char rdir[PATH_MAX], *slash;

		rmad_strlcpy(rdir, a->sdir, sizeof(rdir));
		slash = strrchr(rdir, '/');
		if (slash && slash != rdir) {
			*slash = '\0';
			agent_sweep_rundir(rdir, getuid(), 1);
		}
	}
	err = take_agent_lock(a);
	if (err == 1) {
		rmad_info("an agent already serves %s; leaving", a->sock_path);
		a->sdir[0] = '\0';
		agent_cleanup(a);
		return 0;
	}
	if (err)
		goto fail;
	if (agent_segment_create(a) || agent_win_init(a) || agent_mem_init(a) ||
	    agent_rma_init(a))
		goto fail;
	agent_winsync_init(a);
	/* before any client attaches: what typed ops may carry */
	a->hdr->type_blob_max = agent_type_blob_max(a);
	a->hdr->type_chunk_max = agent_type_chunk_max(a);
	if (a->nnodes > 1 && rmad_boot_fence(&a->boot)) {
		rmad_err("startup fence of the agent mesh failed");
		goto fail;
	}
	/* every agent of the mesh is up: watch them from now on */
	if (am_start(a) || liveness_start(a))
		goto fail;
	if (agent_listen(a))
		goto fail;
	bell_open(a);		/* a mesh of one host with no wait object */
	write_pid_file(a);
	a->idle_since_ns = rmad_now_ns();
	rmad_info("agent ready: session %s, node %d/%d, core %d, pid %d",
		  a->session, a->node, a->nnodes, a->core, (int)getpid());
	sd_notify_ready();
	/* again: a provider loaded since (libpsm2) put its own handler */
	crash_install("rmad");
	agent_run(a);
	rmad_info("stopping");
	if (a->p.stats_interval_ms > 0)
		log_stats(a);	/* what the last interval counted */
	agent_cleanup(a);
	return 0;
fail:
	agent_cleanup(a);
	return 1;
}
