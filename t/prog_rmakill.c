/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_rmakill.c - a process SIGKILLed while it holds an exclusive lock.
 *
 * usage: prog_rmakill HOLDER
 *
 * Rank HOLDER locks rank 0's window exclusively, puts 1 into it, flushes,
 * joins a barrier and kills itself.  Every other rank then locks rank 0
 * exclusively, reads the value and unlocks: each must get the lock (its
 * agent, or rank 0's, released the dead holder's) or RMAD_ERR_PROC_FAILED
 * within 30 s, never hang.  Prints "rank R: ok ..." or "rank R: FAIL ...".
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rmad.h>

int main(int argc, char **argv)
{
	int rank, size, holder = argc > 1 ? atoi(argv[1]) : 1, e1, e2, e3;
	int64_t *base, one = 1, v = -1, add = 10;
	rmad_win_t w;
	double t0;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	alarm(60);
	if (rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base, &w))
		return 1;
	base[0] = 0;
	rmad_barrier();
	if (rank == holder) {
		if (rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w) ||
		    rmad_put(&one, 1, RMAD_INT64, 0, 0, 1, RMAD_INT64, w) ||
		    rmad_win_flush(0, w))
			printf("rank %d: FAIL holder could not lock\n", rank);
		rmad_barrier();
		fflush(stdout);
		raise(SIGKILL);
	}
	rmad_barrier();
	usleep(200 * 1000);
	t0 = rmad_wtime();
	e1 = rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w);
	e2 = e1 ? 0 : rmad_accumulate(&add, 1, RMAD_INT64, 0, 0, 1,
				      RMAD_INT64, RMAD_SUM, w);
	e2 = e2 ? e2 : (e1 ? 0 : rmad_get(&v, 1, RMAD_INT64, 0, 0, 1,
					   RMAD_INT64, w));
	e3 = e1 ? 0 : rmad_win_unlock(0, w);
	if ((e1 && e1 != RMAD_ERR_PROC_FAILED) || e2 ||
	    (e3 && e3 != RMAD_ERR_PROC_FAILED) || (!e1 && !e3 && (v < 11 ||
							       v % 10 != 1)))
		printf("rank %d: FAIL lock %d op %d unlock %d value %lld\n",
		       rank, e1, e2, e3, (long long)v);
	else
		printf("rank %d: ok: lock after the holder died in %.3f s "
		       "(%d, value %lld)\n", rank, rmad_wtime() - t0, e1 ? e1 : e3,
		       (long long)v);
	fflush(stdout);
	if (rank == 0) {
		/* the target stays until every waiter added its 10 (the
		 * barrier cannot tell: the job lost a rank) */
		int64_t want = 1 + 10 * (size - 1);

		t0 = rmad_wtime();
		while (rmad_wtime() - t0 < 30) {
			rmad_win_sync(w);
			if (*(volatile int64_t *)base >= want)
				break;
			usleep(1000);
		}
		usleep(100 * 1000);	/* the last unlock's answer */
	}
	/* collective calls fail now, which is fine: just go */
	_exit(0);
}
