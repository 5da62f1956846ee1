/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_nodekill.c - a node's agent stops answering (SIGSTOP, then
 * SIGKILL) in the middle of a job of 3 ranks on 3 vnodes (rank r on
 * node r).
 *
 * usage: prog_nodekill DIR [SECS]
 *
 * SECS (20): how soon after the stop the flush that waits on node 1 must
 * fail (t/node-kill.sh: longer for a stopped agent, which no evidence
 * finds: heartbeat_confirm_ms).
 *
 * Rank 1 locks rank 2's window exclusively and keeps it.  After a
 * barrier rank 0 locks rank 1, writes DIR/ready and waits for
 * DIR/stopped: the shell has stopped node 1's agent.  Then rank 0
 *   - opens lock_all epochs on three more windows (each with one
 *     target element, and the agents have one more to share:
 *     node-kill.sh runs them with target_pool=1): w2 puts to rank 2
 *     only; w3 puts to rank 2 and rank 1, so it asks node 1 for rank 1's
 *     lock (the shared element); w4 does the same, finds no element for
 *     rank 1 and falls back to locking every member (the window
 *     protocol); node 1 answers neither;
 *   - puts to rank 1 and flushes: the flush waits on the silent node and
 *     must return RMAD_ERR_PROC_FAILED once the heartbeats time out;
 *   - unlocks rank 1: RMAD_ERR_PROC_FAILED, at once;
 *   - locks rank 2 exclusively, which the dead node's rank 1 held: node
 *     2's agent must have released it; puts, gets and unlocks: an epoch
 *     among live nodes works;
 *   - in w2's epoch, which never reached node 1: flush, flush_all and
 *     unlock_all work;
 *   - in w3's and w4's epochs: a flush of rank 2 works and its get
 *     reads the put; flush_all and unlock_all cover the dead node and
 *     fail; a second lock_all epoch that does not reach node 1 works;
 *     then a lock epoch on rank 2 works;
 *   - locks rank 1 again, pings rank 1 and rank 2, joins a barrier and
 *     fences: RMAD_ERR_PROC_FAILED, 0 for the live rank,
 *     RMAD_ERR_PROC_FAILED twice;
 * and writes DIR/done.  Rank 2 checks that rank 0's value landed.  Each
 * check prints "rank R: ok: ..." or "rank R: FAIL ...".  Rank 1 only
 * waits for DIR/done and DIR/killed, and finalizes: its agent is gone.
 * Every rank finalizes, so the job itself exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

static int rank, fails;
static const char *dir;
static double dead_within = 20;

static void mark(const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
}

static int wait_mark(const char *name, double secs)
{
	char p[4096];
	double t0 = rmad_wtime();

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	while (access(p, F_OK)) {
		if (rmad_wtime() - t0 > secs)
			return -1;
		usleep(10 * 1000);
	}
	return 0;
}

static void check(int cond, const char *what, int e, double dt)
{
	if (cond)
		printf("rank %d: ok: %s (%s, %.3f s)\n", rank, what,
		       rmad_strerror(e), dt);
	else
		printf("rank %d: FAIL %s (%s, %.3f s)\n", rank, what,
		       rmad_strerror(e), dt);
	fflush(stdout);
	fails += !cond;
}

#define TIMED(e, call)				\
	do {					\
		t0 = rmad_wtime();		\
		(e) = (call);			\
		dt = rmad_wtime() - t0;		\
	} while (0)

/* a lock_all epoch on x that asked node 1 for a lock, now dead */
static void lock_all_dead(rmad_win_t x, const char *name)
{
	int64_t v = 43, got = -1;
	char what[128];
	double t0, dt;
	int e;

	e = rmad_get(&got, 1, RMAD_INT64, 2, 0, 1, RMAD_INT64, x);
	TIMED(e, e ? e : rmad_win_flush(2, x));
	snprintf(what, sizeof(what), "%s: flush of the live rank 2 works",
		 name);
	check(!e && got == 42 && dt < 5, what, e, dt);
	TIMED(e, rmad_win_flush_all(x));
	snprintf(what, sizeof(what), "%s: flush_all covers the dead node",
		 name);
	check(e == RMAD_ERR_PROC_FAILED && dt < 5, what, e, dt);
	TIMED(e, rmad_win_unlock_all(x));
	snprintf(what, sizeof(what), "%s: unlock_all covers it too", name);
	check(e == RMAD_ERR_PROC_FAILED && dt < 5, what, e, dt);
	e = rmad_win_lock_all(0, x);
	e = e ? e : rmad_put(&v, 1, RMAD_INT64, 2, 1, 1, RMAD_INT64, x);
	e = e ? e : rmad_win_flush(2, x);
	TIMED(e, e ? e : rmad_win_unlock_all(x));
	snprintf(what, sizeof(what), "%s: a new lock_all on rank 2 works",
		 name);
	check(!e && dt < 5, what, e, dt);
	TIMED(e, rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 2, 0, x));
	if (!e) {
		int e2 = rmad_put(&v, 1, RMAD_INT64, 2, 2, 1, RMAD_INT64, x);

		e = e2 ? e2 : rmad_win_unlock(2, x);
	}
	snprintf(what, sizeof(what), "%s: then a lock epoch on rank 2",
		 name);
	check(!e && dt < 5, what, e, dt);
}

int main(int argc, char **argv)
{
	int64_t *base, *base2, *base3, *base4, v = 42, got = -1;
	rmad_win_t w, w2, w3, w4;
	double t0, dt;
	int e, size;

	if (argc < 2 || rmad_init(&argc, &argv))
		return 1;
	dir = argv[1];
	if (argc > 2)
		dead_within = atof(argv[2]);
	rmad_rank(&rank);
	rmad_size(&size);
	alarm(90);
	if (size != 3 ||
	    rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w) ||
	    rmad_win_allocate(64, 8, "target_pool=1", RMAD_GROUP_ALL, &base2,
			      &w2) ||
	    rmad_win_allocate(64, 8, "target_pool=1", RMAD_GROUP_ALL, &base3,
			      &w3) ||
	    rmad_win_allocate(64, 8, "target_pool=1", RMAD_GROUP_ALL, &base4,
			      &w4)) {
		printf("rank %d: FAIL setup (size %d)\n", rank, size);
		return 1;
	}
	memset(base, 0, 64);
	memset(base2, 0, 64);
	memset(base3, 0, 64);
	memset(base4, 0, 64);
	rmad_barrier();
	if (rank == 1) {
		e = rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 2, 0, w);
		e = e ? e : rmad_put(&v, 1, RMAD_INT64, 2, 1, 1, RMAD_INT64,
				     w);
		e = e ? e : rmad_win_flush(2, w);
		check(!e, "holds rank 2's lock", e, 0);
	}
	rmad_barrier();
	if (rank == 1) {
		/* no rmad call from here: our agent is about to stop */
		wait_mark("done", 80);
		wait_mark("killed", 30);
		rmad_finalize();	/* RMAD_ERR_AGENT: it is gone */
		return 0;
	}
	if (rank == 2) {
		if (wait_mark("done", 80))
			check(0, "rank 0 finished", 0, 0);
		else
			check(*(volatile int64_t *)base == 42,
			      "rank 0's put reached us after node 1 died", 0,
			      0);
		rmad_finalize();
		return fails != 0;
	}
	/* rank 0 */
	e = rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 1, 0, w);
	check(!e, "lock rank 1 while node 1 lives", e, 0);
	mark("ready");
	if (wait_mark("stopped", 60)) {
		check(0, "the shell stopped node 1's agent", 0, 0);
		_exit(1);
	}
	/* node 1 will never answer w3's and w4's lock requests */
	e = rmad_win_lock_all(0, w2);
	e = e ? e : rmad_put(&v, 1, RMAD_INT64, 2, 0, 1, RMAD_INT64, w2);
	for (int k = 0; k < 2 && !e; k++) {
		rmad_win_t x = k ? w4 : w3;

		e = rmad_win_lock_all(0, x);
		e = e ? e : rmad_put(&v, 1, RMAD_INT64, 2, 0, 1, RMAD_INT64,
				     x);
		e = e ? e : rmad_win_flush(2, x);	/* rank 2 first */
		e = e ? e : rmad_put(&v, 1, RMAD_INT64, 1, 0, 1, RMAD_INT64,
				     x);
	}
	check(!e, "lock_all, put to rank 2, while node 1 is silent", e, 0);
	e = rmad_put(&v, 1, RMAD_INT64, 1, 0, 1, RMAD_INT64, w);
	TIMED(e, e ? e : rmad_win_flush(1, w));
	check(e == RMAD_ERR_PROC_FAILED && dt < dead_within,
	      "flush to the silent node 1 fails", e, dt);
	TIMED(e, rmad_win_unlock(1, w));
	check(e == RMAD_ERR_PROC_FAILED && dt < 5,
	      "unlock of the dead node's rank fails", e, dt);
	TIMED(e, rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 2, 0, w));
	check(!e && dt < 20,
	      "lock rank 2, held by the dead node's rank 1", e, dt);
	if (!e) {
		int e2, e3, e4;

		e2 = rmad_put(&v, 1, RMAD_INT64, 2, 0, 1, RMAD_INT64, w);
		e3 = rmad_get(&got, 1, RMAD_INT64, 2, 0, 1, RMAD_INT64, w);
		TIMED(e4, rmad_win_unlock(2, w));
		e = e2 ? e2 : e3 ? e3 : e4;
		check(!e && got == 42 && dt < 5,
		      "an epoch on the live node 2: put, get, unlock", e, dt);
	}
	got = -1;
	e = rmad_get(&got, 1, RMAD_INT64, 2, 0, 1, RMAD_INT64, w2);
	e = e ? e : rmad_win_flush(2, w2);
	e = e ? e : rmad_win_flush_all(w2);
	TIMED(e, e ? e : rmad_win_unlock_all(w2));
	check(!e && got == 42 && dt < 5,
	      "lazy lock_all that never reached node 1: all syncs work", e,
	      dt);
	lock_all_dead(w3, "w3 (lazy locks)");
	lock_all_dead(w4, "w4 (every member)");
	TIMED(e, rmad_win_lock(RMAD_LOCK_SHARED, 1, 0, w));
	if (!e) {
		int e2 = rmad_win_flush(1, w);

		e = e2 ? e2 : rmad_win_unlock(1, w);
	}
	check(e == RMAD_ERR_PROC_FAILED && dt < 5,
	      "a new epoch on the dead node fails", e, dt);
	TIMED(e, rmad_ping(1));
	check(e == RMAD_ERR_PROC_FAILED && dt < 5, "ping rank 1 fails", e,
	      dt);
	TIMED(e, rmad_ping(2));
	check(!e && dt < 5, "ping rank 2 works", e, dt);
	TIMED(e, rmad_barrier());
	check(e == RMAD_ERR_PROC_FAILED && dt < 5, "the job's barrier fails",
	      e, dt);
	/* the opening fence does not wait for the barrier: its error
	 * comes with the next synchronization, the closing fence */
	t0 = rmad_wtime();
	e = rmad_win_fence(0, w);
	if (!e)
		e = rmad_win_fence(RMAD_MODE_NOSUCCEED, w);
	dt = rmad_wtime() - t0;
	check(e == RMAD_ERR_PROC_FAILED && dt < 5,
	      "a fence on a window of the dead node fails", e, dt);
	mark("done");
	/* the window and the job end with errors: the job lost a rank */
	rmad_finalize();
	return fails != 0;
}
