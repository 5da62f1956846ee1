/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock.c - passive-target lock epochs: rmad_win_lock, _unlock,
 * _lock_all and _unlock_all, the lock fields of an element that opens
 * an epoch, and a fence sequence's end before one.
 *
 * Same node: locks are atomics on the lock word in the target's control
 * page: shared holders count in its low bits, an exclusive holder
 * writes its client slot there.  A waiter spins for client_spin_us,
 * then sleeps on the word (futex).  The agent takes the same word for
 * remote origins; a releaser that sees RMAD_LW_QUEUED kicks it.
 *
 * Other node: a LOCK element goes to the agent, whose operation table
 * takes the lock lazily; unlock is a sync element the agent completes
 * when the epoch's operations are.
 *
 * State kept per window is O(locks held), never O(ranks): the same-node
 * peers (O(local ranks)) and the list of locked remote targets.  As in
 * MPI, one thread at a time may change a window's epoch (lock, unlock,
 * lock_all, unlock_all); operations may come from any thread.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "atomics.h"
#include "counter.h"
#include "lockword.h"
#include "internal.h"
#include "util.h"

#define MODE_ALL (RMAD_MODE_NOCHECK | RMAD_MODE_NOSTORE | RMAD_MODE_NOPUT | \
		  RMAD_MODE_NOPRECEDE | RMAD_MODE_NOSUCCEED)
#define LOCKED_NOCHECK	3		/* win_peer.locked: no word taken */

/* --------------------------------------------------- remote lock list */

static int rlock_add(struct rmad_win_s *w, int rank)
{
	if (w->nrlocks == w->caprlocks) {
		int cap = w->caprlocks ? 2 * w->caprlocks : 8;
		int32_t *p = realloc(w->rlocks, sizeof(*p) * (size_t)cap);

		if (!p)
			return RMAD_ERR_NOMEM;
		w->rlocks = p;
		w->caprlocks = cap;
	}
	w->rlocks[w->nrlocks++] = rank;
	return 0;
}

/* ------------------------------------------------- same-node lock word */

static int lw_acquire(struct rmad_client *c, rmad_win_t w,
		      struct win_peer *p, int excl)
{
	uint32_t *lw = &p->ctl->lock;
	uint32_t me = c->slot + 1;
	uint64_t t0 = 0;

	for (;;) {
		uint32_t v = load_acquire(lw);
		int got;

		if (!excl)	/* so the agent can undo it if we die */
			__atomic_store_n(&p->ctl->shared_by[c->slot],
					 RMAD_SB_INTENT, __ATOMIC_SEQ_CST);
		got = rmad_lw_try(lw, excl, me);
		if (!excl)
			store_relaxed(&p->ctl->shared_by[c->slot],
				      got ? RMAD_SB_HELD : RMAD_SB_NONE);
		if (got) {
			if (t0)
				rmad_win_count(&w->st_sync_wait_ns,
					       rmad_now_ns() - t0);
			return 0;
		}
		/* held: spin a while, then sleep on the word; a target that
		 * died meanwhile fails the wait (the agent may hold its word
		 * for origins elsewhere that will never unlock it) */
		if (rmad_peer_dead(p))
			return RMAD_ERR_PROC_FAILED;
		if (!t0)
			t0 = rmad_now_ns();
		if (rmad_now_ns() - t0 < (uint64_t)rmad_spin_us(c) * 1000) {
			caa_cpu_relax();
			continue;
		}
		if (!(v & RMAD_LW_SLEEPERS) &&
		    !__atomic_compare_exchange_n(lw, &v, v | RMAD_LW_SLEEPERS,
						 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		rmad_futex_wait(lw, v | RMAD_LW_SLEEPERS, 50 * 1000000L);
		if (rmad_agent_gone(c))
			return RMAD_ERR_AGENT;
	}
}

static void lw_release(struct rmad_client *c, struct win_peer *p, int excl)
{
	uint32_t *lw = &p->ctl->lock;
	uint32_t v;

	if (!excl)
		__atomic_store_n(&p->ctl->shared_by[c->slot],
				 RMAD_SB_RELEASING, __ATOMIC_SEQ_CST);
	v = rmad_lw_release(lw, excl);
	if (!excl)
		store_release(&p->ctl->shared_by[c->slot], RMAD_SB_NONE);
	if (v & RMAD_LW_SLEEPERS)
		rmad_futex_wake(lw, INT_MAX);
	if (v & RMAD_LW_QUEUED)
		rmad_win_kick(c);	/* remote requests wait on the agent */
}

/* ------------------------------------------------------------ epochs */

/*
 * A lock epoch after fences: allowed when no operation was issued since
 * the last fence, which then ends the fence sequence (as MPICH does);
 * otherwise that epoch is still open.
 */
int rmad_leave_fence(rmad_win_t w)
{
	if (w->epoch != EPOCH_FENCE)
		return 0;
	if (__atomic_load_n(&w->fence_moved, __ATOMIC_RELAXED))
		return RMAD_ERR_SYNC;
	w->epoch = EPOCH_NONE;
	return 0;
}

void rmad_lock_fields(rmad_win_t w, int type, int assert,
		      struct rmad_op_lock *l)
{
	l->type = (uint32_t)type;
	l->assert = (uint32_t)assert;
	l->target_pool = w->hints.target_pool > 0 ?
			 (uint32_t)w->hints.target_pool : 0;
	l->slots = w->hints.slots > 0 ? (uint32_t)w->hints.slots : 0;
	l->acc_ordering = RMAD_LOCKF_ORDER | (w->hints.acc_ordering & 0xffu);
}

/* The agent's share of a new epoch: pool sizes from the hints. */
static int post_lock(rmad_win_t w, uint16_t opc, int target, int type,
		     int assert)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = c->dead ? RMAD_ERR_AGENT :
			    rmad_elem_new(w, opc, target, &idx, &e);

	if (err)
		return err;
	rmad_lock_fields(w, type, assert, &e->lock);
	err = rmad_op_submit(c, idx);
	if (err)
		rmad_op_free(c, idx);
	return err;
}

static int win_lock(int lock_type, int target, int assert, rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	struct win_peer *p;
	uint64_t size;
	int du, err = rmad_epoch_args(win);

	if (err)
		return err;
	if ((lock_type != RMAD_LOCK_SHARED &&
	     lock_type != RMAD_LOCK_EXCLUSIVE) || (assert & ~MODE_ALL))
		return RMAD_ERR_ARG;
	if (target < 0 || target >= c->b.size)
		return RMAD_ERR_RANK;
	err = rmad_win_target(win, target, &p, &size, &du);
	if (err)
		return err;
	err = rmad_leave_fence(win);
	if (err)
		return err;
	if (win->epoch == EPOCH_LOCK_ALL || win->epoch == EPOCH_PSCW ||
	    win->exposed || (p && p->locked) ||
	    (!p && rmad_rlock_find(win, target) >= 0))
		return RMAD_ERR_SYNC;
	if (p && rmad_peer_dead(p))
		return RMAD_ERR_PROC_FAILED;
	if (p) {
		if (assert & RMAD_MODE_NOCHECK) {
			p->locked = LOCKED_NOCHECK;
		} else {
			/* locks are taken in call order: the remote ones
			 * called before this one first (rmad(7), "Lock
			 * order") */
			if (win->nrlocks) {
				err = rmad_agent_sync(win,
						      RMAD_OPC_LOCK_WAIT, -1);
				if (err)
					return err;
			}
			err = lw_acquire(c, win, p,
					 lock_type == RMAD_LOCK_EXCLUSIVE);
			if (err)
				return err;
			p->locked = (uint8_t)lock_type;
		}
		win->nlocal_locks++;
	} else {
		err = rlock_add(win, target);
		if (!err) {
			err = post_lock(win, RMAD_OPC_LOCK, target, lock_type,
					assert);
			if (err)
				win->nrlocks--;
		}
		if (err)
			return err;
	}
	win->epoch = EPOCH_LOCK;
	return 0;
}

static int win_unlock(int target, rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	struct win_peer *p;
	uint64_t size;
	int du, k, err = rmad_epoch_args(win);

	if (err)
		return err;
	if (target < 0 || target >= c->b.size)
		return RMAD_ERR_RANK;
	err = rmad_win_target(win, target, &p, &size, &du);
	if (err)
		return err;
	if (win->epoch != EPOCH_LOCK)
		return RMAD_ERR_SYNC;
	if (p) {
		if (!p->locked)
			return RMAD_ERR_SYNC;
		if (p->locked != LOCKED_NOCHECK)
			lw_release(c, p, p->locked == RMAD_LOCK_EXCLUSIVE);
		else
			rmad_smp_mb();
		p->locked = 0;
		win->nlocal_locks--;
		/* it died in the epoch: what we did there may be lost */
		if (rmad_peer_dead(p))
			err = RMAD_ERR_PROC_FAILED;
	} else {
		k = rmad_rlock_find(win, target);
		if (k < 0)
			return RMAD_ERR_SYNC;
		err = rmad_agent_sync(win, RMAD_OPC_UNLOCK, target);
		/* the epoch ends even when an op in it failed */
		win->rlocks[k] = win->rlocks[--win->nrlocks];
	}
	if (!win->nlocal_locks && !win->nrlocks) {
		win->epoch = EPOCH_NONE;
		rmad_flushed_upto(win, __atomic_load_n(&win->remote_posted,
						       __ATOMIC_ACQUIRE));
	}
	return err;
}

static int win_lock_all(int assert, rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	int err = rmad_epoch_args(win);

	if (err)
		return err;
	if (assert & ~MODE_ALL)
		return RMAD_ERR_ARG;
	err = rmad_leave_fence(win);
	if (err)
		return err;
	if (win->epoch != EPOCH_NONE || win->exposed)
		return RMAD_ERR_SYNC;
	for (int i = 0; i < win->npeers; i++) {
		struct win_peer *p = &win->peers[i];

		if (assert & RMAD_MODE_NOCHECK) {
			p->locked = LOCKED_NOCHECK;
			continue;
		}
		err = lw_acquire(c, win, p, 0);
		if (err) {
			while (--i >= 0) {
				if (win->peers[i].locked == RMAD_LOCK_SHARED)
					lw_release(c, &win->peers[i], 0);
				win->peers[i].locked = 0;
			}
			return err;
		}
		p->locked = RMAD_LOCK_SHARED;
	}
	if (win->remote_members) {
		err = post_lock(win, RMAD_OPC_LOCK_ALL, -1, RMAD_LOCK_SHARED,
				assert);
		if (err) {
			for (int i = 0; i < win->npeers; i++) {
				if (win->peers[i].locked == RMAD_LOCK_SHARED)
					lw_release(c, &win->peers[i], 0);
				win->peers[i].locked = 0;
			}
			return err;
		}
	}
	win->epoch = EPOCH_LOCK_ALL;
	return 0;
}

static int win_unlock_all(rmad_win_t win)
{
	struct rmad_client *c = &rmad_cl;
	int err = rmad_epoch_args(win);

	if (err)
		return err;
	if (win->epoch != EPOCH_LOCK_ALL)
		return RMAD_ERR_SYNC;
	if (win->remote_members)
		err = rmad_agent_sync(win, RMAD_OPC_UNLOCK_ALL, -1);
	for (int i = 0; i < win->npeers; i++) {
		struct win_peer *p = &win->peers[i];

		if (p->locked == RMAD_LOCK_SHARED)
			lw_release(c, p, 0);
		p->locked = 0;
		if (!err && rmad_peer_dead(p))
			err = RMAD_ERR_PROC_FAILED;
	}
	rmad_smp_mb();
	win->epoch = EPOCH_NONE;
	rmad_flushed_upto(win, __atomic_load_n(&win->remote_posted,
					       __ATOMIC_ACQUIRE));
	return err;
}

int rmad_win_lock(int lock_type, int target, int assert, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (target == RMAD_PROC_NULL)
		return rmad_proc_null(handle);
	return rmad_sync_timed(win, win_lock(lock_type, target, assert, win));
}

int rmad_win_unlock(int target, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (target == RMAD_PROC_NULL)
		return rmad_proc_null(handle);
	return rmad_sync_timed(win, win_unlock(target, win));
}

int rmad_win_lock_all(int assert, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return rmad_sync_timed(win, win_lock_all(assert, win));
}

int rmad_win_unlock_all(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return rmad_sync_timed(win, win_unlock_all(win));
}
