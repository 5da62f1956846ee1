/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * schedule.c - how the agent holds its core: its scheduling class
 * (SCHED_FIFO while event-driven, nice -20 where that is unsafe,
 * SCHED_OTHER while spinning or busy), the spin phase's turns, and the
 * sleeps that poll in SCHED_IDLE while its clients all sleep
 * (wait_spin_us).  rmad(8), Shared cores; doc/design.md.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "agent.h"
#include "bell.h"
#include "clients.h"
#include "fabric.h"
#include "guard.h"
#include "pin.h"
#include "schedule.h"
#include "atomics.h"
#include "log.h"
#include "util.h"

/* an agent under SCHED_FIFO that has not slept for this long returns
 * to SCHED_OTHER until its next sleep (sched_busy) */
#define RT_BUSY_NS 10000000ull
/* the raise where SCHED_FIFO is unsafe (sched_check_peer) */
#define RT_NICE -20
#define RT_NICE_STR "-20"

/*
 * Raise the agent (on) or put it back (off): SCHED_FIFO at rt_priority,
 * or, where that is unsafe (sched_check_peer), nice RT_NICE in the normal
 * class, whose wakeups still preempt a process computing at nice 0.
 */
static int sched_raise(struct agent *a, int on)
{
	struct sched_param sp = { .sched_priority = on ? a->p.rt_priority :
							 0 };

	/* our class is ours again, not the guard's (agent_yield) */
	__atomic_store_n(&a->raised, 0, __ATOMIC_RELAXED);
	if (a->rt_unsafe)
		return setpriority(PRIO_PROCESS, 0, on ? RT_NICE : 0);
	return sched_setscheduler(0, (on ? SCHED_FIFO : SCHED_OTHER) |
				  SCHED_RESET_ON_FORK, &sp);
}

/*
 * SCHED_FIFO is for the wakeups: a sleeping agent woken for work
 * preempts the rank computing on its core.  An agent that stays busy
 * (a stream of operations, transfers it waits for) gains nothing from
 * it, and one that ran 95 % of a second would be throttled by the
 * kernel (sched_rt_runtime_us) for the rest of it.  So after RT_BUSY_NS
 * without a sleep it lends the core back to the normal class, and takes
 * SCHED_FIFO again just before its next sleep.
 */
static int rt_lend(struct agent *a)
{
	if (!a->rt || sched_raise(a, 0) != 0)
		return 0;
	a->rt = 0;
	a->rt_lent = 1;
	return 1;
}

void sched_busy(struct agent *a, uint64_t now)
{
	if (a->rt && now - a->awake_since >= RT_BUSY_NS && rt_lend(a))
		a->st.rt_lent++;
}

/* the class of the mode again, if sched_busy lent the core (quietly) */
void sched_restore(struct agent *a)
{
	if (a->rt_lent)
		sched_set(a, a->event_mode);
	a->rt_lent = 0;
}

/*
 * The scheduling class that goes with the mode: SCHED_FIFO at
 * rt_priority while event-driven (a wakeup preempts the process that
 * computes on our core; nice -20 where that is unsafe, sched_raise),
 * SCHED_OTHER while spinning.  Children (none today) start in
 * SCHED_OTHER.
 */
void sched_set(struct agent *a, int ev)
{
	int rt = ev && a->p.rt_priority > 0;
	const char *up = a->rt_unsafe ? "nice " RT_NICE_STR : "SCHED_FIFO";

	if (a->ws_idle) {
		int err;

		/* out of SCHED_IDLE (sched_idle_poll), into the mode's class */
		a->ws_idle = 0;
		guard_idle_end(a);
		a->rt_lent = 0;
		if (rt && sched_raise(a, 1) == 0) {
			a->rt = 1;
			a->awake_since = rmad_now_ns();
			return;
		}
		err = errno;
		a->rt = 0;
		sched_raise(a, 0);
		if (rt) {
			a->rt_refused = 1;
			rmad_warn("SCHED_FIFO not taken back after "
				  "wait_spin_us (%s): SCHED_OTHER from now on",
				  strerror(err));
		}
		return;
	}
	if (rt == a->rt || (rt && a->rt_refused))
		return;
	if (sched_raise(a, rt) == 0) {
		a->rt = rt;
		/* sched_busy counts from here, not from the agent's start */
		a->awake_since = rmad_now_ns();
		if (!a->rt_lent)	/* taking back a lent core is no news */
			rmad_info("scheduling: %s", rt ? up :
				  a->rt_unsafe ? "nice 0" : "SCHED_OTHER");
		a->rt_lent = 0;
	} else if (rt) {
		a->rt_refused = 1;
		rmad_info("rt_priority %ld: %s refused (%s); the agent keeps "
			  "SCHED_OTHER at nice 0, and its wakeups may wait for "
			  "a computing process's time slice",
			  a->p.rt_priority, up, strerror(errno));
	}
}

/*
 * shm's senders take a spinlock in the receiving agent's region.  An
 * agent of the normal class preempted while it holds one by a SCHED_FIFO
 * agent on its core, which then spins on that lock, gets the core back
 * only when the kernel throttles real-time tasks (sched_rt_runtime_us):
 * about a second with every agent that sends to it stalled, long enough
 * for heartbeats to call nodes dead.  So with shm, SCHED_FIFO only for an
 * agent with no peer agent on its core (a client holds none of the
 * provider's locks); the others raise themselves by nice RT_NICE instead
 * (sched_raise): agents on one core then share it fairly, and their
 * wakeups still preempt a rank that computes at nice 0.
 */
void sched_check_peer(struct agent *a)
{
	int peer;

	if (a->p.rt_priority <= 0 || !rmad_fabric_shared_locks(a->fab))
		return;
	peer = pin_core_peer(a);
	if (peer < 0)
		return;
	a->rt_unsafe = 1;
	rmad_info("rt_priority %ld: SCHED_FIFO not used: the agent of node "
		  "%d may run on our core, and a FIFO agent would spin on "
		  "shm's locks it holds; nice " RT_NICE_STR " instead",
		  a->p.rt_priority, peer);
}

/*
 * One turn of the spin phase.  On a core of our own, sched_yield()
 * returns at once, but it is a system call, and a turn that makes one
 * finds new work later: so a turn pauses and looks again, and one turn
 * in SPIN_YIELD_TURNS yields, to notice a process that wants our core.
 * When that yield took long, something else computes on our core (an
 * oversubscribed node: tests, vnodes): yielding would hand it a whole
 * time slice per turn, so for a while we spin by short sleeps instead,
 * which the scheduler ends with a wakeup preemption, keeping answers to
 * other nodes in microseconds.
 */
#define SPIN_YIELD_TURNS 32

void sched_spin_once(struct agent *a, uint64_t now)
{
	if (now < a->shared_core_until) {
		struct timespec ts = { 0, 20000 };

		nanosleep(&ts, NULL);
		return;
	}
	if (++a->spin_turns % SPIN_YIELD_TURNS) {
		caa_cpu_relax();
		return;
	}
	sched_yield();
	if (rmad_now_ns() - now > 500000)
		a->shared_core_until = rmad_now_ns() + 100000000ull;
}

/*
 * Sleeps that poll (wait_spin_us).  While every client of ours sleeps on
 * a completion counter, none of them wants the core: rather than block,
 * we poll in SCHED_IDLE, in which any other process of the core
 * preempts us at once and the kernel still sees the core as idle when
 * it places a woken process.  So the next packet or operation finds us
 * awake (no wakeup here, no wakeup IPI for its sender, no doorbell for
 * the client) at no cost to anyone.
 *
 * The loop goes on as usual in SCHED_IDLE (a->ws_idle; sched_idle_keep
 * decides each idle pass) until it is time to sleep.  Over shm, a
 * SCHED_IDLE agent preempted while it holds a lock in a peer's region
 * keeps the peer spinning until it runs again: with the guard that is
 * two of its turns at most, once, since the raise also stops the
 * polling for a while.  Without a guard it could be for as long as a
 * process computes: there we only watch what would wake us (the
 * clients' rings, our bell) without calling the provider, and take
 * SCHED_FIFO back before the pass that follows (sched_idle_poll).  The
 * watch cost two class changes per message, 3 us on the VM (a vnode
 * put+flush over shm took 12.5 us with it, 6.3-7.9 without).
 *
 * Only while we may take SCHED_FIFO back (a->rt), and not where another
 * agent may share our core (rt_unsafe).  A process that computes on our
 * core takes it from us.  The guard thread (guard.c) sees that within
 * two of its turns (100 us each while the core is shared, up to 800
 * while we had it) and raises us to SCHED_FIFO; we see its flag
 * (ws_lost in the shm watch, sched_idle_check after a pass) and stop
 * polling for a while (WS_GUARD_OFF_MIN_NS, doubled up to WS_OFF_MAX_NS
 * while each loss comes within WS_GUARD_RELAPSE_NS of the end of the
 * last pause: sched_idle_lost), and our
 * wakeups preempt such a process again.  Without a guard (no thread
 * could start) we find out ourselves, later: a turn that comes more
 * than WS_LOST_NS after the last, or more than WS_LATE_NS after it with
 * a peer's message waiting (it waited for our core), stops the polling
 * for WS_OFF_MIN_NS and more.  (Our own client's next operation after a
 * run of its own is no such loss.)  After a client's wake, or ops taken
 * from a client that runs on (rings_poll), for a quarter of
 * wait_spin_us, we poll even though it runs: its next operation
 * usually comes then.  rmad(8), Shared cores, and
 * doc/measurements.md have the figures.
 */
#define WS_LOST_NS 500000ull
#define WS_LATE_NS 60000ull
#define WS_OFF_MIN_NS 100000000ull
#define WS_GUARD_OFF_MIN_NS 1000000ull
#define WS_OFF_MAX_NS 1600000000ull
#define WS_GUARD_RELAPSE_NS 10000000ull

/* sched_idle_poll may run: then it, not answer_spin_us, waits for answers */
int sched_idle_ok(const struct agent *a, uint64_t now)
{
	return a->p.wait_spin_us && a->rt == 1 && !a->rt_unsafe &&
	       now >= a->ws_off_until;
}

static int ws_polling(struct agent *a, uint64_t now, uint64_t span)
{
	if (a->woke) {
		a->woke = 0;
		a->woke_at = now;
	}
	return now - a->last_activity_ns < span &&
	       (now - a->woke_at < span / 4 || rings_clients_waiting(a));
}

/*
 * A kick on the doorbell while we poll (a same-node lock released with
 * remote requests queued, a client's pool run dry; the rings we watch
 * ourselves), drained here as on_doorbell would (the eventfd does not
 * block).  Such kicks are rare and none is urgent, and the read is a
 * system call, as long as the rest of a polling turn on a VM (1 us
 * here): we look every BELL_POLL_NS, not on every turn.
 */
#define BELL_POLL_NS 20000ull

static int doorbell_rung(struct agent *a, uint64_t now)
{
	uint64_t v;

	if (a->doorbell < 0 || now < a->bell_next)
		return 0;
	a->bell_next = now + BELL_POLL_NS;
	if (read(a->doorbell, &v, sizeof(v)) != sizeof(v))
		return 0;
	a->st.wakeups++;
	return 1;
}

/*
 * Polling off for a while: a process computes on our core.  A loss
 * soon after the last off period ended (the process computes on) makes
 * a longer one.  With the guard, soon is WS_GUARD_RELAPSE_NS: a process
 * that computes on starves us again within two guard turns of the
 * polling's return, while an isolated loss (another process of the
 * host running for a moment on our core: an MPI daemon, a timer) is
 * followed by none for much longer.  Counting those as relapses too
 * (within WS_OFF_MAX_NS, as before) took an agent of a 2-vnode job on 2
 * cores to 1.6 s without polling after about ten of them in a few
 * seconds, and every packet for it then paid a wakeup across CPUs
 * (45-55 us on the test VM): a vnode put+flush took 95-115 us instead
 * of 16.  Without the guard a loss is only seen when the process that
 * took the core gives it back, which can be long after: there the old
 * window stays.
 */
static void sched_idle_lost(struct agent *a, uint64_t now)
{
	/* with the guard, a loss cost a packet two guard turns at most */
	uint64_t off = a->guard ? WS_GUARD_OFF_MIN_NS : WS_OFF_MIN_NS;
	uint64_t relapse = a->guard ? WS_GUARD_RELAPSE_NS : WS_OFF_MAX_NS;

	if (a->ws_off_until && now - a->ws_off_until < relapse)
		off = a->ws_off_ns * 2 < WS_OFF_MAX_NS ? a->ws_off_ns * 2 :
							 WS_OFF_MAX_NS;
	a->ws_off_ns = off;
	a->ws_off_until = now + off;
	a->st.wait_spins_lost++;
}

/* 1 if the guard raised us (the core was taken): the polling is lost */
static int ws_raised(struct agent *a, uint64_t now)
{
	if (!guard_boosted(a))
		return 0;
	a->st.wait_spins_raised++;
	sched_idle_lost(a, now);
	return 1;
}

/* 1 if the turn that began at now came too late: the core was taken */
static int ws_lost(struct agent *a, uint64_t now, uint64_t prev)
{
	if (ws_raised(a, now))
		return 1;
	if (now - prev <= WS_LOST_NS)
		return 0;
	sched_idle_lost(a, now);
	return 1;
}

/*
 * The pass that began at t0 found messages from other nodes: late, or
 * very long (preempted in it; or long work, which costs only the
 * pause), so they may have waited for our core.
 */
void sched_idle_fab(struct agent *a, uint64_t t0, uint64_t now)
{
	if ((!a->guard && t0 - a->ws_prev > WS_LATE_NS) ||
	    now - t0 > WS_LOST_NS)
		sched_idle_lost(a, now);
}

/*
 * After each pass while a->ws_idle: if the guard raised us, the polling
 * is lost, and the class is ours again (sched_busy can lend it back to
 * a stream of work; the next sleep takes SCHED_FIFO as usual).
 */
void sched_idle_check(struct agent *a, uint64_t now)
{
	if (ws_raised(a, now))
		sched_set(a, a->event_mode);
}

/*
 * An idle pass in SCHED_IDLE (no shared locks): 1 to poll on.  The loop
 * keeps a->ws_prev, and sched_idle_fab says when the core was lost.
 */
int sched_idle_keep(struct agent *a, uint64_t now)
{
	return now >= a->ws_off_until && !doorbell_rung(a, now) &&
	       ws_polling(a, now, (uint64_t)a->p.wait_spin_us * 1000);
}

/* 1 if something came, or the loop polls on (a->ws_idle) */
int sched_idle_poll(struct agent *a)
{
	uint64_t span = (uint64_t)a->p.wait_spin_us * 1000;
	uint64_t now = rmad_now_ns(), prev = now;
	struct sched_param sp = { 0 };
	int came = 0;

	/* (a 0 makes agent_sleep block, and park the guard first) */
	if (!sched_idle_ok(a, now) || !ws_polling(a, now, span))
		return 0;
	guard_arm(a);
	if (sched_setscheduler(0, SCHED_IDLE | SCHED_RESET_ON_FORK, &sp))
		return 0;
	a->st.wait_spins++;
	a->ws_idle = 1;		/* sched_set takes the mode's class back */
	a->rt = 0;
	a->rt_lent = 1;
	if (a->guard || !rmad_fabric_shared_locks(a->fab)) {
		/* the loop polls on in SCHED_IDLE (sched_idle_keep) */
		a->ws_prev = now;
		return 1;
	}
	/* we watch the rings ourselves: no kicks meanwhile */
	uatomic_and(&a->hdr->agent_flags, ~RMAD_AGENT_NEED_WAKEUP);
	for (;;) {
		/* the core taken first: what came meanwhile waited */
		now = rmad_now_ns();
		if (ws_lost(a, now, prev))
			break;
		if (bell_rung(a)) {
			/* a peer's message, which waited if we did (the
			 * guard, if any, raised us in time) */
			if (!a->guard && now - prev > WS_LATE_NS)
				sched_idle_lost(a, now);
			came = 1;
			break;
		}
		prev = now;
		if (!rings_empty(a) || doorbell_rung(a, now)) {
			came = 1;
			break;
		}
		if (!ws_polling(a, now, span))
			break;
		caa_cpu_relax();
	}
	if (!came) {
		/* the flag again before our last look, as agent_sleep
		 * does: a push after it finds the flag and kicks */
		uatomic_or(&a->hdr->agent_flags, RMAD_AGENT_NEED_WAKEUP);
		rmad_smp_mb();
		came = !rings_empty(a);
	}
	/* SCHED_FIFO again before anything calls the provider */
	sched_set(a, a->event_mode);
	return came;
}

