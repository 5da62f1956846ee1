/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_nodekill.c - a node's agent stops answering (SIGSTOP, then
 * SIGKILL) in the middle of a job of 3 ranks on 3 vnodes (rank r on
 * node r).
 *
 * usage: prog_nodekill DIR
 *
 * Rank 1 locks rank 2's window exclusively and keeps it.  After a
 * barrier rank 0 locks rank 1, writes DIR/ready and waits for
 * DIR/stopped: the shell has stopped node 1's agent.  Then rank 0
 *   - puts to rank 1 and flushes: the flush waits on the silent node and
 *     must return RMAD_ERR_PROC_FAILED once the heartbeats time out;
 *   - unlocks rank 1: RMAD_ERR_PROC_FAILED, at once;
 *   - locks rank 2 exclusively, which the dead node's rank 1 held: node
 *     2's agent must have released it; puts, gets and unlocks: an epoch
 *     among live nodes works;
 *   - locks rank 1 again, pings rank 1 and rank 2, joins a barrier:
 *     RMAD_ERR_PROC_FAILED, 0 for the live rank, RMAD_ERR_PROC_FAILED;
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

int main(int argc, char **argv)
{
	int64_t *base, v = 42, got = -1;
	rmad_win_t w;
	double t0, dt;
	int e, size;

	if (argc < 2 || rmad_init(&argc, &argv))
		return 1;
	dir = argv[1];
	rmad_rank(&rank);
	rmad_size(&size);
	alarm(90);
	if (size != 3 ||
	    rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w)) {
		printf("rank %d: FAIL setup (size %d)\n", rank, size);
		return 1;
	}
	memset(base, 0, 64);
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
	e = rmad_put(&v, 1, RMAD_INT64, 1, 0, 1, RMAD_INT64, w);
	TIMED(e, e ? e : rmad_win_flush(1, w));
	check(e == RMAD_ERR_PROC_FAILED && dt < 20,
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
	mark("done");
	/* the window and the job end with errors: the job lost a rank */
	rmad_finalize();
	return fails != 0;
}
