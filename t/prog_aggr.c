/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_aggr.c - node-level aggregation (agent/am_batch.c, the aggregate key):
 * every rank sends small operations to the next rank (on another node
 * under --vnodes), through two windows at once; the operations of all
 * clients and windows of a node bound for one node share fabric
 * messages, and the target applies them in order.
 *
 * Per rank, 2000 rounds of: an accumulate REPLACE of the round number
 * to slot 0 of window A (order: the last one must win), a put of it to
 * slot 1 + round % 62 of window A, and an accumulate SUM of 1 to slot 0
 * of window B; a flush of both every 250 rounds.  Then each rank checks
 * what its left neighbour left in its windows, and its own
 * rmad_win_stats: with "on", some of its packets traveled aggregated,
 * more than one to a message on average (a rank whose agent took every
 * packet alone sends up to 5 more bursts first); with "off", none did.
 *
 * Usage: prog_aggr on|off [rounds]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, fails;

/* n rounds of the three operations to the right neighbour, a flush of
 * both windows every flush_every rounds, under lock_all */
static void burst(int n, int flush_every, int right, rmad_win_t wa,
		  rmad_win_t wb)
{
	int64_t one = 1;

	OK(rmad_win_lock_all(0, wa));
	OK(rmad_win_lock_all(0, wb));
	for (int64_t i = 0; i < n && !fails; i++) {
		OK(rmad_accumulate(&i, 1, RMAD_INT64, right, T_D(wa, right, 0),
				   1, RMAD_INT64, RMAD_REPLACE, wa));
		OK(rmad_put(&i, 1, RMAD_INT64, right,
			    T_D(wa, right, 1 + i % 62), 1, RMAD_INT64, wa));
		OK(rmad_accumulate(&one, 1, RMAD_INT64, right,
				   T_D(wb, right, 0), 1, RMAD_INT64, RMAD_SUM,
				   wb));
		if (i % flush_every == flush_every - 1) {
			OK(rmad_win_flush(right, wa));
			OK(rmad_win_flush(right, wb));
		}
	}
	OK(rmad_win_unlock_all(wa));
	OK(rmad_win_unlock_all(wb));
}

int main(int argc, char **argv)
{
	int on = argc > 1 && !strcmp(argv[1], "on");
	int n = argc > 2 ? atoi(argv[2]) : 2000, size, right, left;
	int64_t *a, *b;
	rmad_win_t wa = NULL, wb = NULL;
	struct rmad_stats sa, sb;

	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;
	OK(t_win_allocate(64 * 8, 8, NULL, RMAD_GROUP_ALL, &a, &wa));
	OK(t_win_allocate(8, 8, NULL, RMAD_GROUP_ALL, &b, &wb));
	if (!wa || !wb)
		return 1;
	memset(a, 0xff, 64 * 8);
	b[0] = 0;
	rmad_barrier();
	burst(n, 250, right, wa, wb);
	rmad_barrier();
	CHECK(a[0] == n - 1, "slot 0 from rank %d is %lld, want %d (the last "
	      "REPLACE)", left, (long long)a[0], n - 1);
	for (int s = 0; s < 62 && s < n; s++) {
		int64_t last = s + ((n - 1 - s) / 62) * 62;

		CHECK(a[1 + s] == last, "slot %d is %lld, want %lld", 1 + s,
		      (long long)a[1 + s], (long long)last);
	}
	CHECK(b[0] == n, "window B's counter is %lld, want %d",
	      (long long)b[0], n);
	rmad_barrier();
	OK(rmad_win_stats(wa, &sa));
	OK(rmad_win_stats(wb, &sb));
	/*
	 * A right neighbour on our node takes no packets.  Whether any of
	 * ours share a message depends on how far this client runs ahead
	 * of its agent: on cores shared with other jobs the agent may
	 * take each packet as it comes.  With aggregation on, a rank
	 * none of whose packets shared a message sends more bursts (no
	 * flush within one), up to 5; nobody checks the windows now.
	 */
	int t = 0;

	for (; on && !fails && t < 5 &&
	     sa.ops_remote + sb.ops_remote > 0 &&
	     sa.pkts_aggregated + sb.pkts_aggregated == 0; t++) {
		burst(n, n, right, wa, wb);
		OK(rmad_win_stats(wa, &sa));
		OK(rmad_win_stats(wb, &sb));
	}
	if (sa.ops_remote + sb.ops_remote > 0) {
		uint64_t p = sa.pkts_aggregated + sb.pkts_aggregated;
		uint64_t m = sa.aggr_msgs + sb.aggr_msgs;

		/* some of our packets shared messages (p counts a window's
		 * packets in aggregates, m the aggregates once per window:
		 * one that held a packet of wa and one of wb counts 2 and 2) */
		if (on)
			CHECK(p > 0 && m > 0 && p >= m,
			      "aggregation on: %llu packets in %llu messages",
			      (unsigned long long)p, (unsigned long long)m);
		else
			CHECK(p == 0 && m == 0,
			      "aggregation off: %llu packets in %llu messages",
			      (unsigned long long)p, (unsigned long long)m);
		if (!fails)
			printf("rank %d: ok: %llu packets sent, %llu of them "
			       "aggregated in %llu messages (%d more bursts)\n",
			       rank,
			       (unsigned long long)(sa.pkts_sent_total +
						    sb.pkts_sent_total),
			       (unsigned long long)p, (unsigned long long)m, t);
	}
	rmad_barrier();
	OK(rmad_win_free(&wa));
	OK(rmad_win_free(&wb));
	rmad_finalize();
	if (fails)
		printf("rank %d: %d failures\n", rank, fails);
	return fails ? 1 : 0;
}
