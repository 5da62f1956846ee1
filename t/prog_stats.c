/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_stats.c - rmad_win_stats, checked by every rank:
 *
 *   1. bad arguments: before rmad_init, a NULL window or out, a freed
 *      window, each returning its code
 *   2. a fresh window counts nothing
 *   3. N puts + flush to a same-node target (this rank): all done in
 *      place, no packets
 *   4. lock, N 8-byte puts, unlock to a target on another node (when
 *      there is one): all handed to the agent, issued, completed, one PUT
 *      packet each, something received, the sync calls counted and timed
 *   5. with -k (run it alone): the agent is SIGKILLed after 3, and
 *      rmad_win_stats returns RMAD_ERR_AGENT with this process's
 *      counters still filled in
 *
 * Only what holds whatever the protocol saves (piggybacking, ack
 * elimination) is asserted: never exact totals of lock, unlock or ack
 * packets.  Each phase compares counters before and after it.
 *
 * Usage: prog_stats [-k] [N]  (default 10).  Each rank prints
 * "rank R: ok (...)" or "rank R: FAIL ..." lines and exits non-zero on
 * failure.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;


#define D(f)	((unsigned long long)(s1.f - s0.f))

/* A rank of another node, or -1 when every rank shares ours. */
static int remote_rank(rmad_win_t w)
{
	for (int i = 1; i < size; i++) {
		int t = (rank + i) % size, du;
		size_t sz;
		void *b;

		if (rmad_win_shared_query(w, t, &sz, &du, &b) ==
		    RMAD_ERR_NOT_LOCAL)
			return t;
	}
	return -1;
}

/* 5. the agent dies: our half of the counters still comes back */
static void agent_killed(rmad_win_t w, int agent_pid, int n)
{
	struct rmad_stats s;
	int err = 0;

	CHECK(agent_pid > 0 && kill(agent_pid, SIGKILL) == 0,
	      "cannot kill the agent (pid %d)", agent_pid);
	/* SIGKILL lands asynchronously: ask until the socket says so */
	for (int i = 0; i < 500; i++) {
		memset(&s, 0xff, sizeof(s));
		err = rmad_win_stats(w, &s);
		if (err)
			break;
		usleep(10000);
	}
	CHECK(err == RMAD_ERR_AGENT, "dead agent: %s", rmad_strerror(err));
	CHECK(s.ops_posted == (unsigned)n && s.ops_local == (unsigned)n &&
	      s.ops_remote == 0 && s.sync_calls == 3 &&
	      s.pkts_sent_total == 0 && s.ops_issued == 0 && s.type_defs == 0,
	      "dead agent: posted %llu, local %llu, sync %llu, pkts %llu",
	      (unsigned long long)s.ops_posted,
	      (unsigned long long)s.ops_local,
	      (unsigned long long)s.sync_calls,
	      (unsigned long long)s.pkts_sent_total);
}

int main(int argc, char **argv)
{
	int kill_agent = argc > 1 && !strcmp(argv[1], "-k");
	int n = argc > 1 + kill_agent ? atoi(argv[1 + kill_agent]) : 10;
	rmad_win_t w = RMAD_WIN_NULL, w2 = RMAD_WIN_NULL, stale;
	struct rmad_stats s0, s1;
	struct rmad_info in;
	int64_t *base = NULL, *base2 = NULL;
	int t, dummy;

	/* 1. before rmad_init */
	CHECK(rmad_win_stats((rmad_win_t)(void *)&dummy, &s0) ==
	      RMAD_ERR_SYNC, "stats before init");
	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	rmad_get_info(&in);
	OK(rmad_win_allocate((size_t)size * (size_t)n * 8, 8, NULL,
			     RMAD_GROUP_ALL, &base, &w));
	if (!base)
		return 1;
	memset(base, 0, (size_t)size * (size_t)n * 8);

	/* 1. bad arguments */
	CHECK(rmad_win_stats(RMAD_WIN_NULL, &s0) == RMAD_ERR_ARG,
	      "NULL window");
	CHECK(rmad_win_stats(w, NULL) == RMAD_ERR_ARG, "NULL out");
	OK(rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, &base2, &w2));
	stale = w2;
	OK(rmad_win_free(&w2));
	CHECK(rmad_win_stats(stale, &s0) == RMAD_ERR_ARG, "freed window");

	/* 2. nothing counted yet */
	memset(&s0, 0xff, sizeof(s0));
	OK(rmad_win_stats(w, &s0));
	CHECK(s0.ops_posted == 0 && s0.ops_local == 0 && s0.ops_remote == 0 &&
	      s0.sync_calls == 0 && s0.sync_wait_ns == 0 &&
	      s0.ops_issued == 0 && s0.pkts_sent_total == 0 &&
	      s0.pkts_recv_total == 0, "fresh window: posted %llu, sync %llu, "
	      "pkts %llu/%llu", (unsigned long long)s0.ops_posted,
	      (unsigned long long)s0.sync_calls,
	      (unsigned long long)s0.pkts_sent_total,
	      (unsigned long long)s0.pkts_recv_total);
	rmad_barrier();

	/* 3. same node: this rank's own window */
	OK(rmad_win_stats(w, &s0));
	OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, rank, 0, w));
	for (int k = 0; k < n; k++) {
		int64_t v = k;

		OK(rmad_put(&v, 1, RMAD_INT64, rank, (size_t)(rank * n + k), 1,
			    RMAD_INT64, w));
	}
	OK(rmad_win_flush(rank, w));
	OK(rmad_win_unlock(rank, w));
	OK(rmad_win_stats(w, &s1));
	CHECK(D(ops_posted) == (unsigned)n && D(ops_local) == (unsigned)n &&
	      D(ops_remote) == 0, "same node: posted %llu, local %llu, "
	      "remote %llu, want %d local", D(ops_posted), D(ops_local),
	      D(ops_remote), n);
	CHECK(s1.pkts_sent_total == 0 && s1.pkts_recv_total == 0 &&
	      s1.ops_issued == 0, "same node: pkts sent %llu, recv %llu, "
	      "issued %llu, want none",
	      (unsigned long long)s1.pkts_sent_total,
	      (unsigned long long)s1.pkts_recv_total,
	      (unsigned long long)s1.ops_issued);
	CHECK(D(sync_calls) == 3, "same node: %llu sync calls, want 3",
	      D(sync_calls));
	CHECK(s1.ops_posted == s1.ops_local + s1.ops_remote,
	      "posted %llu != local + remote",
	      (unsigned long long)s1.ops_posted);
	if (kill_agent) {
		agent_killed(w, in.agent_pid, n);
		if (!fails)
			printf("rank %d: ok (node %d of %d, agent killed)\n",
			       rank, in.node, in.nnodes);
		fflush(stdout);
		rmad_finalize();
		return fails ? 1 : 0;
	}
	rmad_barrier();

	/* 4. another node, if any */
	t = remote_rank(w);
	if (t >= 0) {
		OK(rmad_win_stats(w, &s0));
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
		for (int k = 0; k < n; k++) {
			int64_t v = 1000 + k;

			OK(rmad_put(&v, 1, RMAD_INT64, t,
				    (size_t)(rank * n + k), 1, RMAD_INT64, w));
		}
		OK(rmad_win_unlock(t, w));
		OK(rmad_win_stats(w, &s1));
		CHECK(D(ops_posted) == (unsigned)n &&
		      D(ops_remote) == (unsigned)n && D(ops_local) == 0,
		      "remote: posted %llu, remote %llu, local %llu, want %d "
		      "remote", D(ops_posted), D(ops_remote), D(ops_local), n);
		CHECK(D(ops_issued) == (unsigned)n &&
		      D(ops_completed) == (unsigned)n,
		      "remote: issued %llu, completed %llu, want %d",
		      D(ops_issued), D(ops_completed), n);
		CHECK(D(pkts_sent[RMAD_PKT_PUT]) == (unsigned)n,
		      "remote: %llu PUT packets, want %d",
		      D(pkts_sent[RMAD_PKT_PUT]), n);
		CHECK(D(pkts_sent_total) >= (unsigned)n &&
		      D(pkts_recv_total) >= 1,
		      "remote: %llu packets sent, %llu received",
		      D(pkts_sent_total), D(pkts_recv_total));
		CHECK(D(sync_calls) == 2 && D(sync_wait_ns) > 0,
		      "remote: %llu sync calls in %llu ns, want 2 in > 0",
		      D(sync_calls), D(sync_wait_ns));
		printf("rank %d: stats: %llu sent (%llu PUT), %llu received, "
		       "sync %llu ns\n", rank,
		       (unsigned long long)s1.pkts_sent_total,
		       (unsigned long long)s1.pkts_sent[RMAD_PKT_PUT],
		       (unsigned long long)s1.pkts_recv_total,
		       (unsigned long long)s1.sync_wait_ns);
	}
	rmad_barrier();
	/* ours from phase 3, the others' from phase 4 (or untouched) */
	for (int r = 0; r < size; r++)
		for (int k = 0; k < n; k++) {
			int64_t v = base[r * n + k];

			CHECK(r == rank ? v == k : v == 0 || v == 1000 + k,
			      "slot %d of rank %d: %lld", k, r, (long long)v);
		}
	OK(rmad_win_free(&w));
	if (!fails)
		printf("rank %d: ok (node %d of %d, remote target %d)\n", rank,
		       in.node, in.nnodes, t);
	fflush(stdout);
	rmad_finalize();
	return fails ? 1 : 0;
}
