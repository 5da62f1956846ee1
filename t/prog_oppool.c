/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_oppool.c - the op_pool window hint: windows with their own op
 * pools (op_pool=2 and op_pool=1) and one without, used at once under
 * tiny pools, every epoch kind.  The counters must come out exact, and
 * each node's first rank asks its agent (rmadctl status --json) how many
 * global elements are reserved: every rank's full reservation while the
 * windows live when the pool allows it ("exact"), never more than the
 * pool ("tight"), and none once the windows are freed.
 *
 * Usage: prog_oppool RMADCTL exact|tight [rounds] (default 20).  Prints
 * "rank R: ok (...)" or FAIL lines.
 *
 * prog_oppool RMADCTL lend [holdms]: rank 0 holds an exclusive lock on
 * itself for holdms (default 1500) ms while rank 1 posts NLEND puts to
 * it under an exclusive lock of its own: they wait for the lock in
 * rank 1's agent, holding their elements, so with client_op_pool=1 each
 * post after the first waits for the agent to lend an element from the
 * global pool, with nothing completing meanwhile.  Prints "rank R: ok
 * (... ms)" with the time the posts took: the caller bounds it, since a
 * lending that does not wake the waiting client costs it its wait's
 * timeout.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define NWIN	3
#define ADDS	4

static const char *const win_hints[NWIN] = {
	"op_pool=2", "op_pool=1,target_pool=1", NULL,
};
static const int win_resv[NWIN] = { 2, 1, 0 };

/* One number of the agent's "op_pool" JSON object, or -1. */
static long pool_field(const char *ctl, const struct rmad_info *in,
		       const char *key)
{
	char cmd[1024], buf[65536], pat[64];
	size_t n;
	const char *p;
	FILE *f;
	long v = -1;

	snprintf(cmd, sizeof(cmd), "'%s' -s '%s' --vnode %d --json status",
		 ctl, in->session, in->node);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	if (pclose(f) != 0)
		return -1;
	p = strstr(buf, "\"op_pool\":{");
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	if (p)
		p = strstr(p, pat);
	if (p)
		v = strtol(p + strlen(pat), NULL, 10);
	return v;
}

/* One round on window w: every epoch kind, slot s counts our adds. */
static void round_on(rmad_win_t w, int s)
{
	int64_t one = 1, old;

	OK(rmad_win_lock_all(0, w));
	for (int t = 0; t < size; t++)
		for (int k = 0; k < ADDS / 2; k++)
			OK(rmad_accumulate(&one, 1, RMAD_INT64, t, (size_t)s,
					   1, RMAD_INT64, RMAD_SUM, w));
	OK(rmad_win_flush_all(w));
	OK(rmad_win_unlock_all(w));
	for (int t = 0; t < size; t++) {
		OK(rmad_win_lock(RMAD_LOCK_SHARED, t, 0, w));
		OK(rmad_fetch_and_op(&one, &old, RMAD_INT64, t, (size_t)s,
				     RMAD_SUM, w));
		OK(rmad_accumulate(&one, 1, RMAD_INT64, t, (size_t)s, 1,
				   RMAD_INT64, RMAD_SUM, w));
		OK(rmad_win_unlock(t, w));
	}
}

#define NLEND	32

/* The lend mode (see the top): returns the process's exit status. */
static int lend(int holdms)
{
	rmad_win_t w = NULL;
	int64_t *base, v[NLEND];
	double ms = 0;

	OK(rmad_win_allocate(NLEND * 8, 8, NULL, RMAD_GROUP_ALL, &base, &w));
	if (!w)
		return 1;
	if (rank == 0) {
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w));
		OK(rmad_win_flush(0, w));	/* granted before rank 1 asks */
	}
	rmad_barrier();
	if (rank == 0) {
		struct timespec ts = { holdms / 1000,
				       (long)(holdms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		OK(rmad_win_unlock(0, w));
	} else if (rank == 1) {
		double t0 = rmad_wtime();

		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w));
		for (int k = 0; k < NLEND; k++) {
			v[k] = 100 + k;
			OK(rmad_put(&v[k], 1, RMAD_INT64, 0, (size_t)k, 1,
				    RMAD_INT64, w));
		}
		ms = (rmad_wtime() - t0) * 1e3;
		OK(rmad_win_unlock(0, w));
	}
	rmad_barrier();
	if (rank == 0)
		for (int k = 0; k < NLEND && !fails; k++)
			CHECK(base[k] == 100 + k, "slot %d: %lld, want %d", k,
			      (long long)base[k], 100 + k);
	rmad_barrier();
	OK(rmad_win_free(&w));
	return t_finish(rank, fails, " (%d puts posted in %.1f ms)",
			rank == 1 ? NLEND : 0, ms);
}

int main(int argc, char **argv)
{
	const char *ctl = argc > 1 ? argv[1] : "rmadctl";
	int exact = argc > 2 && !strcmp(argv[2], "exact");
	int rounds = argc > 3 ? atoi(argv[3]) : 20;
	rmad_win_t w[NWIN] = { 0 };
	int64_t *base[NWIN];
	struct rmad_info in;
	long resv, size_, used;

	if (t_init(&argc, &argv, &rank, &size, &in))
		return 1;
	if (argc > 2 && !strcmp(argv[2], "lend"))
		return lend(argc > 3 ? atoi(argv[3]) : 1500);
	for (int k = 0; k < NWIN; k++) {
		OK(rmad_win_allocate(64 * 8, 8, win_hints[k], RMAD_GROUP_ALL,
				     &base[k], &w[k]));
		if (w[k])
			memset(base[k], 0, 64 * 8);
	}
	rmad_barrier();
	if (in.local_rank == 0) {
		long want = 0;

		for (int k = 0; k < NWIN; k++)
			want += win_resv[k];
		want *= in.local_size;
		resv = pool_field(ctl, &in, "reserved");
		size_ = pool_field(ctl, &in, "size");
		used = pool_field(ctl, &in, "in_use");
		if (exact)
			CHECK(resv == want, "node %d: %ld elements reserved, "
			      "want %ld", in.node, resv, want);
		else
			CHECK(resv >= 0 && resv <= want && resv <= size_,
			      "node %d: %ld elements reserved of %ld, want "
			      "at most %ld", in.node, resv, size_, want);
		CHECK(used >= resv, "node %d: %ld in use, %ld reserved",
		      in.node, used, resv);
		printf("rank %d: node %d reserved %ld of %ld\n", rank,
		       in.node, resv, size_);
	}
	rmad_barrier();
	for (int r = 0; r < rounds && !fails; r++)
		for (int k = 0; k < NWIN; k++)
			if (w[k])
				round_on(w[k], 1 + k);
	rmad_barrier();
	for (int k = 0; k < NWIN; k++) {
		int64_t want = (int64_t)size * ADDS * rounds;

		if (!w[k] || fails)
			continue;
		CHECK(base[k][1 + k] == want, "window %d: counter %lld, want "
		      "%lld", k, (long long)base[k][1 + k], (long long)want);
	}
	rmad_barrier();
	/* the first window's pool goes back; the others' stay */
	OK(rmad_win_free(&w[0]));
	rmad_barrier();
	if (in.local_rank == 0 && exact) {
		resv = pool_field(ctl, &in, "reserved");
		CHECK(resv == (long)win_resv[1] * in.local_size,
		      "node %d: %ld reserved after the first free, want %ld",
		      in.node, resv, (long)win_resv[1] * in.local_size);
	}
	/* a freed window's elements serve the rest */
	for (int k = 1; k < NWIN; k++)
		if (w[k] && !fails)
			round_on(w[k], 1 + k);
	rmad_barrier();
	for (int k = 1; k < NWIN; k++)
		if (w[k])
			OK(rmad_win_free(&w[k]));
	rmad_barrier();
	if (in.local_rank == 0) {
		resv = pool_field(ctl, &in, "reserved");
		CHECK(resv == 0, "node %d: %ld reserved after every free",
		      in.node, resv);
	}
	rmad_barrier();
	return t_finish(rank, fails, " (node %d of %d, %d rounds)", in.node,
			in.nnodes, rounds);
}
