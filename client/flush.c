/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.c - completing passive-target operations (rmad_win_flush,
 * _flush_all, _flush_local, _flush_local_all, rmad_win_sync), and what
 * the synchronization calls of lock.c share with them: the sync element
 * waited for, the argument check, the count for rmad_win_stats, and the
 * mark of what is flushed.
 *
 * A same-node operation is done when issued: its flush is a memory
 * barrier.  One that went to the agent is flushed by a sync element the
 * agent completes when its conditions hold.  Each window counts the
 * remote operations posted (remote_posted) and how many of them the
 * last flush_all or epoch end covered (remote_flushed): equal, nothing
 * went to the agent since, and a flush need not ask it.
 */
#include <stdint.h>

#include "atomics.h"
#include "internal.h"
#include "util.h"

/* remote_flushed = max(remote_flushed, posted), against other threads */
void rmad_flushed_upto(rmad_win_t win, uint64_t posted)
{
	uint64_t f = __atomic_load_n(&win->remote_flushed, __ATOMIC_RELAXED);

	while (f < posted &&
	       !__atomic_compare_exchange_n(&win->remote_flushed, &f, posted,
					    0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

/* Everything posted so far is complete (an epoch's end, a fence). */
void flushed_upto_all(rmad_win_t win)
{
	rmad_flushed_upto(win, __atomic_load_n(&win->remote_posted,
					       __ATOMIC_ACQUIRE));
}

/* A sync element for the agent: wait for its answer. */
int rmad_agent_sync(rmad_win_t w, uint16_t opc, int target)
{
	struct rmad_op_elem t = { 0 };
	uint64_t t0 = rmad_now_ns();
	int err;

	t.opcode = opc;
	t.win = w->block;
	t.ticket = w->key;
	t.target = target;
	err = rmad_sync_elem(&rmad_cl, w, &t);
	rmad_win_count(&w->st_sync_wait_ns, rmad_now_ns() - t0);
	return err;
}

int rmad_epoch_args(rmad_win_t win)
{
	if (!rmad_win_ok(win))
		return RMAD_ERR_ARG;
	if (!rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	return 0;
}

/*
 * The public synchronization calls: each is counted for rmad_win_stats
 * whether it succeeded or not, as long as the handle is a live window
 * (the waits inside are timed where they happen).
 */
int rmad_sync_timed(rmad_win_t w, int err)
{
	if (rmad_win_ok(w))
		rmad_win_count(&w->st_sync_calls, 1);
	return err;
}

static int flush(int target, rmad_win_t win, uint16_t opc)
{
	struct rmad_client *c = &rmad_cl;
	int err = rmad_epoch_args(win);
	uint64_t posted;

	if (err)
		return err;
	if (win->epoch == EPOCH_NONE || win->epoch == EPOCH_FENCE ||
	    win->epoch == EPOCH_PSCW)
		return RMAD_ERR_SYNC;	/* passive target only */
	if (target >= 0) {
		struct win_peer *p;
		uint64_t size;
		int du;

		if (target >= c->b.size)
			return RMAD_ERR_RANK;
		err = rmad_win_target(win, target, &p, &size, &du);
		if (err)
			return err;
		if (p && rmad_peer_dead(p))
			return RMAD_ERR_PROC_FAILED;
		if (!rmad_covered(win, target, p))
			return RMAD_ERR_SYNC;
		if (p) {
			/* done when issued: only the barrier is left */
			rmad_smp_mb();
			return 0;
		}
	}
	rmad_smp_mb();
	/* flush_all covers the same-node members too */
	for (int i = 0; target < 0 && i < win->npeers; i++)
		if (rmad_peer_dead(&win->peers[i]))
			err = RMAD_ERR_PROC_FAILED;
	posted = __atomic_load_n(&win->remote_posted, __ATOMIC_ACQUIRE);
	if (posted == __atomic_load_n(&win->remote_flushed, __ATOMIC_ACQUIRE))
		return err;	/* nothing went to the agent since */
	if (err) {
		int e2 = rmad_agent_sync(win, opc, target);

		(void)e2;	/* the death first */
		if (opc == RMAD_OPC_FLUSH)
			rmad_flushed_upto(win, posted);
		return err;
	}
	err = rmad_agent_sync(win, opc, target);
	/* the ops posted before we looked are flushed; another thread's
	 * later ones are not, so only move the mark forward to posted */
	if (target < 0 && opc == RMAD_OPC_FLUSH)
		rmad_flushed_upto(win, posted);
	return err;
}

int rmad_win_flush_w(int target, rmad_win_t win)
{
	if (target == RMAD_PROC_NULL)
		return rmad_proc_null_w(win);
	return rmad_sync_timed(win, target < 0 ? RMAD_ERR_RANK :
				    flush(target, win, RMAD_OPC_FLUSH));
}

int rmad_win_flush(int target, rmad_win_t handle)
{
	return rmad_win_flush_w(target, rmad_win_get(handle));
}

int rmad_win_flush_all(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return rmad_sync_timed(win, flush(-1, win, RMAD_OPC_FLUSH));
}

int rmad_win_flush_local(int target, rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (target == RMAD_PROC_NULL)
		return rmad_proc_null(handle);
	return rmad_sync_timed(win, target < 0 ? RMAD_ERR_RANK :
				    flush(target, win, RMAD_OPC_FLUSH_LOCAL));
}

int rmad_win_flush_local_all(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	return rmad_sync_timed(win, flush(-1, win, RMAD_OPC_FLUSH_LOCAL));
}

int rmad_win_sync(rmad_win_t handle)
{
	rmad_win_t win = rmad_win_get(handle);

	if (!rmad_win_ok(win))
		return RMAD_ERR_ARG;
	/* unified model: public and private copies are one; order them */
	rmad_smp_mb();
	return rmad_sync_timed(win, 0);
}
