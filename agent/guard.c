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
 * on the agent's core, that wakes every GUARD_TICK_NS while the agent
 * polls, and reads the agent thread's CPU clock: an agent in SCHED_IDLE
 * for a whole turn that ran for less than a fifth of it is starved, and
 * the guard raises it to SCHED_FIFO, which preempts the process at once.
 * The agent sees the raise (guard_boosted), counts the core lost, and
 * blocks as before for a while (schedule.c); a packet waited one or two
 * turns at most.
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

/* a turn of the guard; an agent that got less than a fifth of one is
 * starved */
#define GUARD_TICK_NS 100000L
#define GUARD_STARVED_NS (GUARD_TICK_NS / 5)

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
 * Each turn, GUARD_TICK_NS apart: did the agent, in SCHED_IDLE since the
 * last turn, get less than GUARD_STARVED_NS of the core meanwhile?
 */
static void *guard_main(void *arg)
{
	struct guard *g = arg;
	uint32_t last_epoch = 0;
	int64_t last_cpu = -1;

	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		uint32_t e;
		int64_t c;

		if (!__atomic_load_n(&g->armed, __ATOMIC_ACQUIRE)) {
			futex(&g->armed, FUTEX_WAIT_PRIVATE, 0);
			last_cpu = -1;
			continue;
		}
		/* every turn blocks: a SCHED_FIFO thread that spun would
		 * take the core from the agent it guards */
		pause_ns(GUARD_TICK_NS);
		e = __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE);
		if (!__atomic_load_n(&g->idle, __ATOMIC_ACQUIRE)) {
			last_cpu = -1;
			continue;
		}
		c = agent_cpu_ns(g);
		if (c >= 0 && last_cpu >= 0 && e == last_epoch &&
		    c - last_cpu < GUARD_STARVED_NS &&
		    __atomic_load_n(&g->idle, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE) == e)
			boost(g);
		last_cpu = c;
		last_epoch = e;
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
		  "(wait_spin_us) every %ld us", GUARD_TICK_NS / 1000);
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
