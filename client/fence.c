/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fence.c - active-target synchronization by fence (rmad_win_fence).
 *
 * A fence closes the epoch before it and opens the next: every member's
 * operations of the closed epoch are complete at their targets when any
 * member returns, and none of the next epoch's operations reaches a
 * target before that target has entered the fence.
 *
 *  - A window whose members are all on this node needs no agent: the
 *    operations were done in place, so a memory barrier and a barrier in
 *    shared memory (the control page of the lowest-ranked member) are
 *    the whole fence.  A waiter spins for client_spin_us (giving the
 *    core away every 16 pauses while clients may share cores:
 *    rmad_peer_spin),
 *    then sleeps on the barrier's generation word; the agent wakes it
 *    with bar_failed set when a member dies.
 *
 *  - Otherwise the fence is a FENCE element for the agent, which
 *    completes this process's operations of the epoch at their targets
 *    (no lock was taken, so no lock message goes), then joins the
 *    window's barrier: its node's members first, then one ARRIVE per
 *    node to the window's root and one RELEASE back (windows.c).
 *
 * A fence with nothing to close (RMAD_MODE_NOPRECEDE, or the first of a
 * sequence) does not wait for the window's barrier when members are on
 * other nodes: the node's members meet in shared memory, the FENCE goes
 * to the agent, and the agent holds the operations to other nodes until
 * the barrier releases (FENCE_ISSUED, then FENCE_GRANTED).
 *
 * Between fences the window is open for operations to every member, as
 * in a lock_all epoch with MODE_NOCHECK.  A fence sequence in which no
 * operation was issued since the last fence may be left for a lock
 * epoch or freed without a closing NOSUCCEED fence, as MPICH allows.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "atomics.h"
#include "counter.h"
#include "internal.h"
#include "log.h"
#include "util.h"

#define FENCE_MODES (RMAD_MODE_NOCHECK | RMAD_MODE_NOSTORE | RMAD_MODE_NOPUT | \
		     RMAD_MODE_NOPRECEDE | RMAD_MODE_NOSUCCEED)

/* The barrier's page: the control page of the lowest-ranked member. */
static struct rmad_win_ctl *bar_page(rmad_win_t w)
{
	struct win_peer *lo = NULL;

	for (int i = 0; i < w->npeers; i++)
		if (!lo || w->peers[i].rank < lo->rank)
			lo = &w->peers[i];
	return lo ? lo->ctl : NULL;
}

/* The fence of a window whose members are all here. */
static int shm_barrier(struct rmad_client *c, rmad_win_t w)
{
	struct rmad_win_ctl *ctl = bar_page(w);
	uint64_t t0;
	uint32_t g;

	if (!ctl)
		return RMAD_ERR_INTERNAL;
	/* a member died (here or elsewhere: the agent sets it for every
	 * window of the job), even if we are the node's only one: the
	 * fence that opens an epoch would find out only at its end */
	if (__atomic_load_n(&ctl->bar_failed, __ATOMIC_ACQUIRE))
		return RMAD_ERR_PROC_FAILED;
	if (w->npeers == 1)
		return 0;
	/* the generation before our arrival: the last one bumps it */
	g = __atomic_load_n(&ctl->bar_gen, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&ctl->bar_failed, __ATOMIC_ACQUIRE))
		return RMAD_ERR_PROC_FAILED;
	if (__atomic_add_fetch(&ctl->bar_count, 1, __ATOMIC_SEQ_CST) ==
	    (uint32_t)w->npeers) {
		__atomic_store_n(&ctl->bar_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ctl->bar_gen, g + 1, __ATOMIC_SEQ_CST);
		/* seq_cst both sides: a waiter that counted itself in
		 * bar_sleepers before its last look at bar_gen is seen */
		if (__atomic_load_n(&ctl->bar_sleepers, __ATOMIC_SEQ_CST))
			rmad_futex_wake(&ctl->bar_gen, INT_MAX);
		return 0;
	}
	t0 = rmad_now_ns();
	for (unsigned int n = 1;
	     __atomic_load_n(&ctl->bar_gen, __ATOMIC_ACQUIRE) == g; n++) {
		int err;

		if (__atomic_load_n(&ctl->bar_failed, __ATOMIC_ACQUIRE))
			return RMAD_ERR_PROC_FAILED;
		if (rmad_peer_spin(c, t0, n))
			continue;
		/* asleep; every 100 ms a look at the agent, which sets
		 * bar_failed (and wakes us) when a member dies */
		__atomic_add_fetch(&ctl->bar_sleepers, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&ctl->bar_gen, __ATOMIC_SEQ_CST) == g)
			rmad_futex_wait(&ctl->bar_gen, g, 100 * 1000 * 1000);
		__atomic_sub_fetch(&ctl->bar_sleepers, 1, __ATOMIC_SEQ_CST);
		err = rmad_agent_gone(c);
		if (err)
			return err;
	}
	return 0;
}

static void fence_elem(rmad_win_t w, int assert, struct rmad_op_elem *t)
{
	t->opcode = RMAD_OPC_FENCE;
	t->win = w->block;
	t->ticket = w->key;
	t->target = -1;
	rmad_lock_fields(w, 0, assert, &t->lock);
}

/* The fence of a window with members on other nodes: the agent's. */
static int agent_fence(struct rmad_client *c, rmad_win_t w, int assert)
{
	struct rmad_op_elem t = { 0 };
	uint64_t t0 = rmad_now_ns();
	int err;

	if (c->dead)
		return RMAD_ERR_AGENT;
	fence_elem(w, assert, &t);
	err = rmad_sync_elem(c, w, &t);
	rmad_win_count(&w->st_sync_wait_ns, rmad_now_ns() - t0);
	return err;
}

/*
 * A fence that only opens an epoch (FENCE_ISSUED in the seeds): the
 * same-node members meet in shared memory, so that operations on them
 * may go in place at once; the FENCE goes to the agent without waiting,
 * and the agent holds this process's operations to other nodes until
 * the window's barrier releases.  An error of that barrier is reported
 * by the next synchronization.
 */
static int agent_fence_open(struct rmad_client *c, rmad_win_t w, int assert)
{
	struct rmad_op_elem t = { 0 };
	int err;

	if (c->dead)
		return RMAD_ERR_AGENT;
	err = shm_barrier(c, w);
	if (err)
		return err;
	fence_elem(w, assert, &t);
	return rmad_async_elem(c, w, &t);
}

static int win_fence(int assert, rmad_win_t w)
{
	struct rmad_client *c = &rmad_cl;
	int err;

	if (!rmad_win_ok(w))
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if (assert & ~FENCE_MODES)
		return RMAD_ERR_ARG;
	if ((w->epoch != EPOCH_NONE && w->epoch != EPOCH_FENCE) ||
	    w->exposed)
		return RMAD_ERR_SYNC;	/* inside a lock or PSCW epoch */
	/* our stores and in-place operations before everyone's arrival */
	rmad_smp_mb();
	/* open or close: decided alike on every member (a member that
	 * took a lock epoch since the last fence is still in its
	 * sequence, as the others are) */
	if (w->remote_members && !(assert & RMAD_MODE_NOSUCCEED) &&
	    ((assert & RMAD_MODE_NOPRECEDE) || !w->fence_seq)) {
		/* nothing to close: open without waiting */
		err = agent_fence_open(c, w, assert);
	} else if (w->remote_members) {
		err = agent_fence(c, w, assert);
		flushed_upto_all(w);
	} else {
		err = shm_barrier(c, w);
	}
	/* and everyone's before our next access */
	rmad_smp_mb();
	__atomic_store_n(&w->fence_moved, 0, __ATOMIC_RELAXED);
	/* an error ends the fence sequence: no epoch stays open */
	w->epoch = err || (assert & RMAD_MODE_NOSUCCEED) ? EPOCH_NONE :
							 EPOCH_FENCE;
	w->fence_seq = w->epoch == EPOCH_FENCE;
	return err;
}

int rmad_win_fence(int assert, rmad_win_t handle)
{
	rmad_win_t w = rmad_win_get(handle);
	int err = win_fence(assert, w);

	if (rmad_win_ok(w))
		rmad_win_count(&w->st_sync_calls, 1);
	return err;
}
