/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync.c - MPI's synchronization calls on rmad: fence, post/start/
 * complete/wait/test, lock/unlock, lock_all/unlock_all, the flushes and
 * sync.  Ranks and groups become job ranks; asserts and lock types are
 * translated bit by bit (map.c).  And MPI_Barrier, MPI's own, waited
 * for as rmad waits (below).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rmpi.h"

int MPI_Win_fence(int assert, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	int a;

	if (!m || !m->rw)
		return PMPI_Win_fence(assert, win);
	a = rmpi_assert(assert);
	if (a < 0)
		return rmpi_win_err(m, RMPI_ERR_ASSERT);
	return rmpi_win_err(m, rmad_win_fence(a, m->rw));
}

/*
 * The rmad group of a PSCW group: the last one is kept (by handle and
 * members) so that an epoch repeated with the same group allocates
 * nothing.
 */
static int pscw_group(MPI_Group g, MPI_Group *kg, rmad_group_t *krg,
		      int **kranks, int *kn, rmad_group_t *out)
{
	int *w = NULL, n = 0, err;

	err = rmpi_group_world_ranks(g, &w, &n);
	if (err)
		return err;
	if (*krg && *kg == g && *kn == n &&
	    !memcmp(*kranks, w, sizeof(int) * (size_t)n)) {
		free(w);
		*out = *krg;
		return 0;
	}
	if (*krg)
		rmad_group_free(krg);
	free(*kranks);
	*kranks = NULL;
	*kn = 0;
	err = rmad_group_incl(w, n, krg);
	if (err) {
		free(w);
		return err;
	}
	*kg = g;
	*kranks = w;
	*kn = n;
	*out = *krg;
	return 0;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	rmad_group_t g;
	int a, err;

	if (!m || !m->rw)
		return PMPI_Win_post(group, assert, win);
	a = rmpi_assert(assert);
	if (a < 0)
		return rmpi_win_err(m, RMPI_ERR_ASSERT);
	err = pscw_group(group, &m->pgrp, &m->prg, &m->pranks, &m->pn, &g);
	if (!err)
		err = rmad_win_post(g, a, m->rw);
	return rmpi_win_err(m, err);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	rmad_group_t g;
	int a, err;

	if (!m || !m->rw)
		return PMPI_Win_start(group, assert, win);
	a = rmpi_assert(assert);
	if (a < 0)
		return rmpi_win_err(m, RMPI_ERR_ASSERT);
	err = pscw_group(group, &m->sgrp, &m->srg, &m->sranks, &m->sn, &g);
	if (!err)
		err = rmad_win_start(g, a, m->rw);
	return rmpi_win_err(m, err);
}

int MPI_Win_complete(MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_complete(win);
	return rmpi_win_err(m, rmad_win_complete(m->rw));
}

int MPI_Win_wait(MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_wait(win);
	return rmpi_win_err(m, rmad_win_wait(m->rw));
}

int MPI_Win_test(MPI_Win win, int *flag)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_test(win, flag);
	return rmpi_win_err(m, rmad_win_test(m->rw, flag));
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	int lt, a, err;

	if (!m || !m->rw)
		return PMPI_Win_lock(lock_type, rank, assert, win);
	/* Open MPI's order: the lock type, the rank, the assert */
	a = rmpi_assert(assert);
	err = rmpi_lock_type(lock_type, &lt);
	if (!err && rmpi_target(m, rank) == -1)
		err = RMAD_ERR_RANK;
	if (!err && a < 0)
		err = RMPI_ERR_ASSERT;
	if (!err)
		err = rmad_win_lock(lt, rmpi_target(m, rank), a, m->rw);
	return rmpi_win_err(m, err);
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_unlock(rank, win);
	return rmpi_win_err(m, rmad_win_unlock(rmpi_target(m, rank), m->rw));
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);
	int a;

	if (!m || !m->rw)
		return PMPI_Win_lock_all(assert, win);
	a = rmpi_assert(assert);
	if (a < 0)
		return rmpi_win_err(m, RMPI_ERR_ASSERT);
	return rmpi_win_err(m, rmad_win_lock_all(a, m->rw));
}

int MPI_Win_unlock_all(MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_unlock_all(win);
	return rmpi_win_err(m, rmad_win_unlock_all(m->rw));
}

int MPI_Win_flush(int rank, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_flush(rank, win);
	return rmpi_win_err(m, rmad_win_flush_w(rmpi_target(m, rank), m->wp));
}

int MPI_Win_flush_all(MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_flush_all(win);
	return rmpi_win_err(m, rmad_win_flush_all(m->rw));
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_flush_local(rank, win);
	return rmpi_win_err(m, rmad_win_flush_local(rmpi_target(m, rank),
						    m->rw));
}

int MPI_Win_flush_local_all(MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_flush_local_all(win);
	return rmpi_win_err(m, rmad_win_flush_local_all(m->rw));
}

int MPI_Win_sync(MPI_Win win)
{
	struct mwin *m = rmpi_win(win);

	if (!m || !m->rw)
		return PMPI_Win_sync(win);
	return rmpi_win_err(m, rmad_win_sync(m->rw));
}

/*
 * MPI_Barrier, waited for as rmad's barrier is: Open MPI's spins in its
 * progress loop for as long as it lasts, and a rank that spins so on
 * its agent's core (a virtual node, or more ranks than spare cores)
 * holds the core that the agent needs for the RMA aimed at this rank:
 * the agent, which polls only while all its clients sleep, sleeps then,
 * and every packet pays its wakeup.  An idle MPI target cost a vnode
 * put+flush about twice the native one's (doc/measurements.md,
 * 2026-12-07).  So the barrier is MPI's nonblocking one, tested (which
 * progresses MPI as its blocking wait would) for BAR_SPIN_NS, then
 * between naps of BAR_NAP_MIN_NS doubling to BAR_NAP_MAX_NS, with the
 * rank counted as a sleeping waiter meanwhile (rmad_idle_mark).  A nap
 * can end the barrier up to BAR_NAP_MAX_NS (and the timer's slack)
 * after its last member came.  The spin is long: a shorter one (50 us)
 * took a tight loop of barriers on one node from 1-4 us to 20-90 us
 * each, its ranks napping whenever the agent or another process held
 * one of them off the core for a moment.
 */
#define BAR_SPIN_NS	1000000L
#define BAR_NAP_MIN_NS	10000L
#define BAR_NAP_MAX_NS	300000L

static long bar_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

int MPI_Barrier(MPI_Comm comm)
{
	MPI_Request r;
	long t0, nap = BAR_NAP_MIN_NS;
	int flag = 0, marked = 0, rc;

	if (!rmpi.on)
		return PMPI_Barrier(comm);
	rc = PMPI_Ibarrier(comm, &r);
	if (rc != MPI_SUCCESS)
		return rc;
	t0 = bar_now_ns();
	for (;;) {
		struct timespec ts = { 0, nap };

		rc = PMPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || flag)
			break;
		if (!marked && bar_now_ns() - t0 < BAR_SPIN_NS)
			continue;
		if (!marked) {
			rmad_idle_mark(1);
			marked = 1;
		}
		nanosleep(&ts, NULL);
		nap = nap * 2 < BAR_NAP_MAX_NS ? nap * 2 : BAR_NAP_MAX_NS;
	}
	if (marked)
		rmad_idle_mark(0);
	return rc;
}
