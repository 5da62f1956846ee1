/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_pullkill.c - large accumulates whose operands lie in the origin's
 * rmad_alloc_mem memory, which the origin's agent lends to the target's
 * read in place (rma_pull.c, mem.c), while that memory goes away under
 * them.
 *
 * usage: prog_pullkill die|free|stop|getstop PIDFILE
 *
 * The last rank (the victim) opens a lock_all epoch, posts NACC large
 * SUMs of ones into region 1 of every other rank's window, and then
 *   die:  kills itself at once (SIGKILL), before any flush;
 *   free: frees the operands' memory at once (rmad_free_mem, an
 *         erroneous program) and then flushes: the flush succeeds or
 *         fails with an error code, and if it succeeds every target
 *         holds exactly NACC in every element of region 1.
 *   stop: as free, but first stops the agent whose pid PIDFILE holds
 *         (SIGSTOP: another node's, whose ranks are targets), and
 *         continues it (SIGCONT) 200 ms after the free: the chunks its
 *         agent was lent before the free are still unread when the
 *         memory goes, so the victim's agent must keep it mapped for
 *         them (stat mem_kept).
 *   getstop: the mirror for gets (whose bytes the target's agent
 *         writes into the origin's memory): every rank also creates a
 *         window over its own memory (rmad_win_create); the victim
 *         takes its locks, stops that agent as in stop, gets each
 *         remote rank's NEL elements into its rmad_alloc_mem memory,
 *         frees that memory 50 ms later, continues the agent 200 ms
 *         after the free, and flushes: the writes land in the mapping
 *         its agent kept, and the flush succeeds or fails with an
 *         error code.  Then the rest as in stop.
 * In the other modes, whether some chunk is still being read when the
 * memory goes (its agent then keeps the mapping until the read is
 * answered) depends on timing: some runs catch one, others do not.
 * Either way the agents must go on: every live rank then accumulates
 * ones from rmad_alloc_mem memory into region 2 of every other live
 * rank under an exclusive lock and reads it back under another; every
 * element must be equal, between 1 and the number of live ranks less
 * one (other ranks' epochs may come before or after).  Prints "rank R:
 * ok ..." (the victim in free mode: "flush RC", each target: "region 1
 * exact" or "region 1 partial") or "rank R: FAIL ...".
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#define NEL	(128 * 1024)	/* 1 MiB of int64: two 512k chunks */
#define NACC	16		/* per target: reads for some ms */

static int rank, size;

/* Region 2 round: 0, or -1 after printing a FAIL line. */
static int region2(rmad_win_t w, const int64_t *ones, int64_t *back,
		   int live)
{
	for (int t = 0; t < live; t++) {
		int e;

		if (t == rank)
			continue;
		e = rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w);
		e = e ? e : rmad_accumulate(ones, NEL, RMAD_INT64, t, NEL,
					    NEL, RMAD_INT64, RMAD_SUM, w);
		e = e ? e : rmad_win_unlock(t, w);
		e = e ? e : rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w);
		e = e ? e : rmad_get(back, NEL, RMAD_INT64, t, NEL, NEL,
				     RMAD_INT64, w);
		e = e ? e : rmad_win_unlock(t, w);
		if (e) {
			printf("rank %d: FAIL region 2 of rank %d: error %d\n",
			       rank, t, e);
			return -1;
		}
		for (size_t i = 0; i < NEL; i++)
			if (back[i] != back[0] || back[0] < 1 ||
			    back[0] > live - 1) {
				printf("rank %d: FAIL region 2 of rank %d: "
				       "element %zu is %lld, element 0 %lld\n",
				       rank, t, i, (long long)back[i],
				       (long long)back[0]);
				return -1;
			}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int die = argc > 1 && !strcmp(argv[1], "die"), victim, live, rc = 0;
	int getstop = argc > 2 && !strcmp(argv[1], "getstop");
	int stop = getstop || (argc > 2 && !strcmp(argv[1], "stop"));
	pid_t agent = 0;
	int64_t *base, *ones = NULL, *back = NULL, *own = NULL;
	rmad_win_t w, wc = RMAD_WIN_NULL;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	alarm(90);
	victim = size - 1;
	live = die ? size - 1 : size;
	if (rmad_win_allocate(2 * NEL * 8, 8, NULL, RMAD_GROUP_ALL, &base,
			      &w) ||
	    rmad_alloc_mem(NEL * 8, (void **)&ones) ||
	    rmad_alloc_mem(NEL * 8, (void **)&back)) {
		printf("rank %d: FAIL setup\n", rank);
		return 1;
	}
	memset(base, 0, 2 * NEL * 8);
	for (size_t i = 0; i < NEL; i++)
		ones[i] = 1;
	if (getstop) {
		own = malloc(NEL * 8);
		for (size_t i = 0; own && i < NEL; i++)
			own[i] = 7;
		if (!own || rmad_win_create(own, NEL * 8, 8, NULL,
					    RMAD_GROUP_ALL, &wc)) {
			printf("rank %d: FAIL setup (created window)\n",
			       rank);
			return 1;
		}
	}
	rmad_barrier();
	if (rank == victim) {
		rmad_win_t ws = getstop ? wc : w;
		int e = rmad_win_lock_all(0, ws);

		if (stop) {
			/* the locks first: a stopped agent grants none */
			FILE *f = fopen(argv[2], "r");
			int p = 0;

			for (int t = 0; t < size && !e; t++)
				e = rmad_get(back, 1, RMAD_INT64, t, 0, 1,
					     RMAD_INT64, ws);
			e = e ? e : rmad_win_flush_all(ws);
			if (e || !f || fscanf(f, "%d", &p) != 1 || p <= 1 ||
			    kill(p, SIGSTOP)) {
				printf("rank %d: FAIL cannot stop the agent "
				       "of %s (%d)\n", rank, argv[2], e);
				return 1;
			}
			fclose(f);
			agent = p;
		}

		/* getstop: the gets' chunks, lent to the stopped agent's
		 * writes, lie in back */
		for (int t = 0; getstop && t < size && !e; t++)
			if (t != rank)
				e = rmad_get(back, NEL, RMAD_INT64, t, 0, NEL,
					     RMAD_INT64, ws);
		for (int k = 0; k < NACC && !e && !getstop; k++)
			for (int t = 0; t < size && !e; t++)
				if (t != rank)
					e = rmad_accumulate(ones, NEL,
							    RMAD_INT64, t, 0,
							    NEL, RMAD_INT64,
							    RMAD_SUM, w);
		if (e)
			printf("rank %d: FAIL posting: %d\n", rank, e);
		fflush(stdout);
		if (die)
			raise(SIGKILL);
		if (agent)	/* our agent lends the first chunks */
			usleep(50 * 1000);
		if (rmad_free_mem(getstop ? back : ones))
			printf("rank %d: FAIL rmad_free_mem\n", rank);
		if (agent) {	/* well within heartbeat_timeout_ms */
			usleep(200 * 1000);
			kill(agent, SIGCONT);
		}
		e = rmad_win_flush_all(ws);
		rc = rmad_win_unlock_all(ws);
		if (e > 0 || rc > 0 || (!e && rc))
			printf("rank %d: FAIL flush %d unlock %d\n", rank, e,
			       rc);
		else
			printf("rank %d: ok: flush %d\n", rank, e);
		fflush(stdout);
		if (rmad_alloc_mem(NEL * 8, getstop ? (void **)&back :
						      (void **)&ones)) {
			printf("rank %d: FAIL alloc_mem again\n", rank);
			return 1;
		}
		for (size_t i = 0; i < NEL; i++)
			ones[i] = 1;
		rc = 0;
	}
	if (!die)
		rmad_barrier();	/* the victim's epoch is over */
	else
		usleep(300 * 1000);	/* its agent saw it die */
	if (rank != victim && !die && !getstop) {
		size_t k = 0;

		rmad_win_sync(w);
		while (k < NEL && ((volatile int64_t *)base)[k] == NACC)
			k++;
		printf("rank %d: ok: region 1 %s\n", rank,
		       k == NEL ? "exact" : "partial");
	}
	if (region2(w, ones, back, live))
		rc = 1;
	else
		printf("rank %d: ok: region 2 of every live rank\n", rank);
	fflush(stdout);
	if (die) {
		/* the job lost a rank: collectives fail; stay until the
		 * others' epochs on us are over */
		sleep(2);
		_exit(rc);
	}
	rmad_barrier();
	rmad_win_free(&w);
	if (wc)
		rmad_win_free(&wc);
	free(own);
	rmad_free_mem(ones);
	rmad_free_mem(back);
	rmad_finalize();
	return rc;
}
