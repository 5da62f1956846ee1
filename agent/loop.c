/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loop.c - the agent's progress loop, its events and its tick.
 *
 * The loop follows io_uring's SQPOLL model.  While there is work, or for
 * spin_us after the last of it, the agent polls the client rings and the
 * fabric without sleeping.  Then it sets NEED_WAKEUP in the segment
 * header, looks once more, and sleeps in libevent until a client kicks
 * the doorbell eventfd, the fabric's wait fd fires, a socket or signal
 * arrives, or (for fabrics without a wait object) idle_poll_us passes.
 *
 * One thread owns all agent state.  Signals arrive as libevent events on
 * that thread; nothing blocking runs on it.  The tick (every 100 ms)
 * runs heartbeats, timeouts, idle exit, reload and stats.
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
#include "options.h"
#include "loop.h"
#include "crash.h"
#include "jobs.h"
#include "jobs_events.h"
#include "jobs_ping.h"
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

/*
 * Look at sockets, signals and timers at least this often (ns), even
 * while the rings keep the agent busy: attaches, hang-ups and SIGTERM
 * must not wait for a quiet moment.
 */
#define EVENT_POLL_NS 200000

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

void loop_log_stats(struct agent *a)
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
	clients_accept_pending(a);
	if (a->nclients > 0)
		return;
	rmad_info("idle for %ld ms with no clients: exiting",
		  a->p.idle_exit_ms);
	a->stopping = 1;
}

/* The start time of process pid (/proc/PID/stat, field 22) in *start;
 * 0 when there is no such process. */
static void check_owner(struct agent *a)
{
	unsigned long long st;

	if (!a->m.owner_pid || a->stopping)
		return;
	if (options_proc_start(&st, a->m.owner_pid) && st == a->m.owner_start)
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
		options_reload(a);
	liveness_tick(a, now);
	jobs_events_tick(a);
	jobs_ping_tick(a);
	clients_tick(a, now);
	agent_win_tick(a, now);
	check_idle_exit(a);
	check_owner(a);
	if (a->p.stats_interval_ms > 0 &&
	    now - a->m.last_stats >=
	    (uint64_t)a->p.stats_interval_ms * 1000000ull) {
		a->m.last_stats = now;
		loop_log_stats(a);
	}
}

int loop_setup_events(struct agent *a)
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
	if (!rings_empty(a) || rmad_fabric_busy(a->fab) ||
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

void loop_run(struct agent *a)
{
	uint64_t last_events = 0;
	unsigned int held_naps = 0;	/* naps since packets were held */

	a->last_activity_ns = rmad_now_ns();
	/* short sleeps in sched_spin_once() should be short */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	while (!a->stopping) {
		uint64_t t0 = a->ws_idle ? rmad_now_ns() : 0, now;
		int n = rings_poll(a), f = 0;

		if (a->fab) {
			f = rmad_fabric_progress(a->fab);
			if (f > 0)
				n += f;
		}
		n += make_rma_progress_global(a);
		/* packets and read chunks kept behind a busy accumulate
		 * lock (am_held.c, rma_pull.c) */
		if (am_held(a))
			am_retry(a);
		if (agent_rma_waiting(a))
			agent_rma_retry(a);
		/* what the pass produced leaves now, not at the pass's end:
		 * under SCHED_IDLE a process of our core may preempt us in
		 * between, and an answer would wait for our next turn.  (And
		 * sends before wakes: completion_flush_wakeups.) */
		am_flush(a);
		completion_flush_wakeups(a);
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
		completion_flush_wakeups(a);
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

