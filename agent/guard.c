/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard.c - the thread that keeps a polling agent's wakeups.
 *
 * While its clients all sleep, an agent may poll in SCHED_IDLE instead
 * of blocking (wait_spin_us, schedule.c): the next packet then finds it
 * awake.  But a process computing on its core starves it, and a packet
 * that comes meanwhile waits for that process to block, where a
 * blocked SCHED_FIFO agent would have preempted it at once.
 *
 * The guard is a second thread of the agent, SCHED_FIFO at rt_priority
 * on the agent's core, that wakes every turn while the agent polls, and
 * reads the agent thread's CPU clock: an agent in SCHED_IDLE for a whole
 * turn that ran for less than a fifth of it is starved, and the guard
 * raises it to SCHED_FIFO, which preempts the process at once.  The
 * agent sees the raise (guard_boosted), counts the core lost, and
 * blocks as before for a while (schedule.c); a packet waited one or two
 * turns at most.  A turn is GUARD_TICK_NS (100 us) while something
 * else takes the core from the agent, and grows to GUARD_TICK_MAX_NS
 * (800 us) while the agent gets most of it: on a virtual machine every
 * turn (a timer, two context switches, two system calls; programming a
 * timer alone is 7 us there) takes the core for 10-15 us, and a packet
 * that comes meanwhile waits; with a fixed 100 us turn one vnode
 * put+flush in three did (p90 twice the p50).  A process that begins to
 * compute on a core whose agent had it to itself is seen within 900 us.
 *
 * Not woken by the fabric's wait fd or the bell: a wakeup per packet on
 * the core that polls for it cost more than the polling saves
 * (tcp;ofi_rxm's wait fd also stays ready until fi_trywait), where a
 * turn of the guard costs a timer interrupt and a system call.
 *
 * The guard only reads the agent's clock and a few words of its own: it
 * calls no provider, touches no client memory and takes no lock.  It is
 * parked on a futex while the agent does not poll (a blocked agent is
 * woken by the kernel as before), and started at the first poll.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "agent.h"
#include "guard.h"
#include "log.h"

/*
 * A turn of the guard: GUARD_TICK_NS while others want the core, doubled
 * up to GUARD_TICK_MAX_NS while the agent gets more than half of each
 * turn (each turn costs the core a timer, two context switches and two
 * system calls: 10-15 us on a virtual machine).  An agent that got less
 * than a fifth of a turn is starved.
 */
#define GUARD_TICK_NS 100000L
#define GUARD_TICK_MAX_NS 800000L

struct guard {
	pthread_t th;
	pid_t agent_tid;
	clockid_t agent_cpu;		/* the agent thread's CPU clock */
	int prio;
	uint32_t armed;			/* futex: 1 while the agent polls */
	uint32_t idle;			/* the agent is in SCHED_IDLE now */
	uint32_t epoch;			/* + 1 each time it enters it */
	uint32_t boosted;		/* the guard raised it: guard_boosted */
	uint32_t *raised;		/* ... and agent_yield knows it */
	uint32_t stop;
};

static long futex(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void pause_ns(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static int64_t agent_cpu_ns(struct guard *g)
{
	struct timespec t;

	return clock_gettime(g->agent_cpu, &t) ? -1 : ts_ns(&t);
}

static void boost(struct guard *g)
{
	struct sched_param sp = { .sched_priority = g->prio };

	/* the flags first: the agent that runs on sees them; under
	 * SCHED_FIFO a wait of its for a process (a lock a rank holds)
	 * must sleep, not sched_yield(), or that process never runs */
	__atomic_store_n(g->raised, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->boosted, 1, __ATOMIC_RELEASE);
	if (sched_setscheduler(g->agent_tid, SCHED_FIFO | SCHED_RESET_ON_FORK,
			       &sp) != 0)
		__atomic_store_n(&g->boosted, 0, __ATOMIC_RELAXED);
}

/*
 * Each turn: did the agent, in SCHED_IDLE since the last turn, get less
 * than a fifth of it?  More than half: the next turn is longer.
 */
static void *guard_main(void *arg)
{
	struct guard *g = arg;
	uint32_t last_epoch = 0;
	uint32_t last_idle = 0;
	int64_t last_cpu = -1;
	long tick = GUARD_TICK_NS;

	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		uint32_t e, idle;
		int64_t c, ran;

		if (!__atomic_load_n(&g->armed, __ATOMIC_ACQUIRE)) {
			futex(&g->armed, FUTEX_WAIT_PRIVATE, 0);
			last_cpu = -1;
			tick = GUARD_TICK_NS;
			continue;
		}
		/* every turn blocks: a SCHED_FIFO thread that spun would
		 * take the core from the agent it guards */
		pause_ns(tick);
		e = __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE);
		idle = __atomic_load_n(&g->idle, __ATOMIC_ACQUIRE);
		c = agent_cpu_ns(g);
		ran = c - last_cpu;
		if (c < 0 || last_cpu < 0) {
			tick = GUARD_TICK_NS;
		} else if (idle && last_idle && e == last_epoch &&
			   ran < tick / 5 &&
			   __atomic_load_n(&g->idle, __ATOMIC_ACQUIRE) &&
			   __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE) == e) {
			/* in SCHED_IDLE the whole turn, and starved */
			boost(g);
			tick = GUARD_TICK_NS;
		} else if (ran > tick / 2) {
			tick = tick * 2 < GUARD_TICK_MAX_NS ? tick * 2 :
							     GUARD_TICK_MAX_NS;
		} else {
			tick = GUARD_TICK_NS;
		}
		last_cpu = c;
		last_epoch = e;
		last_idle = idle;
	}
	return NULL;
}

static int guard_start(struct agent *a)
{
	struct guard *g;
	pthread_attr_t at;
	struct sched_param sp = { .sched_priority = (int)a->p.rt_priority };
	sigset_t all, old;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return RMAD_ERR_NOMEM;
	g->agent_tid = (pid_t)syscall(SYS_gettid);
	g->prio = sp.sched_priority;
	g->raised = &a->raised;
	err = pthread_getcpuclockid(pthread_self(), &g->agent_cpu);
	if (!err)
		err = pthread_attr_init(&at);
	if (err) {
		free(g);
		return err;
	}
	/* SCHED_FIFO from its first instruction; the agent's core (the
	 * affinity is inherited); no signals (the loop takes them) */
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_FIFO);
	pthread_attr_setschedparam(&at, &sp);
	pthread_attr_setstacksize(&at, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&g->th, &at, guard_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (err) {
		free(g);
		return err;
	}
	a->guard = g;
	rmad_info("guard: a SCHED_FIFO thread watches the polling agent "
		  "(wait_spin_us) every %ld to %ld us", GUARD_TICK_NS / 1000,
		  GUARD_TICK_MAX_NS / 1000);
	return 0;
}

void guard_arm(struct agent *a)
{
	struct guard *g = a->guard;

	if (!g) {
		int err;

		if (a->guard_failed)
			return;
		err = guard_start(a);
		if (err) {
			a->guard_failed = 1;
			rmad_info("guard: no thread (%s): a polling agent "
				  "finds out itself that it lost its core",
				  strerror(err > 0 ? err : ENOMEM));
			return;
		}
		g = a->guard;
	}
	/* a raise of an earlier poll is over: our class is ours again */
	__atomic_store_n(&g->boosted, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->raised, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g->epoch, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g->idle, 1, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&g->armed, __ATOMIC_RELAXED)) {
		__atomic_store_n(&g->armed, 1, __ATOMIC_SEQ_CST);
		futex(&g->armed, FUTEX_WAKE_PRIVATE, 1);
	}
}

void guard_idle_end(struct agent *a)
{
	if (a->guard)
		__atomic_store_n(&a->guard->idle, 0, __ATOMIC_RELEASE);
}

void guard_disarm(struct agent *a)
{
	struct guard *g = a->guard;

	if (!g)
		return;
	__atomic_store_n(&g->idle, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g->armed, 0, __ATOMIC_RELEASE);
}

int guard_boosted(struct agent *a)
{
	struct guard *g = a->guard;

	return g && __atomic_load_n(&g->boosted, __ATOMIC_ACQUIRE) &&
	       __atomic_exchange_n(&g->boosted, 0, __ATOMIC_ACQ_REL);
}

void guard_stop(struct agent *a)
{
	struct guard *g = a->guard;

	if (!g)
		return;
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g->armed, 1, __ATOMIC_SEQ_CST);
	futex(&g->armed, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(g->th, NULL);
	free(g);
	a->guard = NULL;
}
