/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_load.c - bulk traffic for t/load.sh: every rank puts and
 * accumulates large strided blocks into its right neighbour's window
 * (256 KiB of 1 KiB rows with a put, 256 KiB of 2 KiB rows with an
 * accumulate, one lock_all epoch, a flush_local after each put and a
 * flush after each accumulate) for SECS seconds, while the shell loads
 * the machine; then checks that every accumulate landed exactly once.
 *
 * usage: prog_load SECS DIR
 *
 * Rank 0 writes DIR/ready once the traffic runs, DIR/end when its SECS
 * are up, and waits (30 s at most) for DIR/go before the job ends, so
 * that the shell can read the agents' statistics meanwhile.  Each rank
 * prints "rank R: ok (N rounds)" or "rank R: FAIL ..." lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;

#define PUT_ROWS	256		/* 1 KiB rows, 2 KiB apart */
#define PUT_ROW		128		/* int64 each */
#define ACC_ROWS	128		/* 2 KiB rows, 4 KiB apart */
#define ACC_ROW		256
#define PUT_AT		0		/* where in the window, in int64 */
#define ACC_AT		(2 * PUT_ROWS * PUT_ROW)
#define CNT_AT		(ACC_AT + 2 * ACC_ROWS * ACC_ROW)
#define WIN_WORDS	(CNT_AT + 8)

static void mark(const char *dir, const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
}

static int marked(const char *dir, const char *name)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

int main(int argc, char **argv)
{
	rmad_datatype_t pt, at;
	int64_t *base = NULL, *src, *ones;
	uint64_t rounds = 0, got = 0;
	rmad_win_t w = RMAD_WIN_NULL;
	double secs, t0;
	const char *dir;
	int right, e;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_load SECS DIR\n");
		return 2;
	}
	secs = atof(argv[1]);
	dir = argv[2];
	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	right = (rank + 1) % size;
	src = calloc(PUT_ROWS * PUT_ROW, sizeof(*src));
	ones = calloc(ACC_ROWS * ACC_ROW, sizeof(*ones));
	CHECK(src && ones, "no memory");
	if (!src || !ones)
		return t_finish(rank, fails, " (no rounds)");
	for (int i = 0; i < ACC_ROWS * ACC_ROW; i++)
		ones[i] = 1;
	OK(rmad_type_vector(PUT_ROWS, PUT_ROW, 2 * PUT_ROW, RMAD_INT64,
			    &pt));
	OK(rmad_type_commit(&pt));
	OK(rmad_type_vector(ACC_ROWS, ACC_ROW, 2 * ACC_ROW, RMAD_INT64, &at));
	OK(rmad_type_commit(&at));
	OK(rmad_win_allocate(WIN_WORDS * 8, 8, NULL, RMAD_GROUP_ALL, &base,
			     &w));
	if (fails)
		return t_finish(rank, fails, " (no rounds)");
	memset(base, 0, WIN_WORDS * 8);
	OK(rmad_barrier());
	OK(rmad_win_lock_all(0, w));
	t0 = rmad_wtime();
	while (!fails && rmad_wtime() - t0 < secs) {
		for (int i = 0; i < PUT_ROWS * PUT_ROW; i++)
			src[i] = (int64_t)(rounds << 20) + i;
		e = rmad_put(src, PUT_ROWS * PUT_ROW, RMAD_INT64, right, PUT_AT,
			     1, pt, w);
		e = e ? e : rmad_win_flush_local(right, w);
		e = e ? e : rmad_accumulate(ones, ACC_ROWS * ACC_ROW,
					    RMAD_INT64, right, ACC_AT, 1, at,
					    RMAD_SUM, w);
		e = e ? e : rmad_win_flush(right, w);
		CHECK(!e, "round %llu: %s", (unsigned long long)rounds,
		      rmad_strerror(e));
		rounds++;
		if (rank == 0 && rounds == 1)
			mark(dir, "ready");
	}
	OK(rmad_win_unlock_all(w));
	if (rank == 0) {
		mark(dir, "end");
		for (int i = 0; i < 3000 && !marked(dir, "go"); i++)
			usleep(10000);
	}
	OK(rmad_barrier());
	/* how many accumulates each origin sent, to its target */
	OK(rmad_win_lock_all(0, w));
	OK(rmad_put(&rounds, 1, RMAD_INT64, right, CNT_AT, 1, RMAD_INT64, w));
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	got = (uint64_t)base[CNT_AT];
	for (int r = 0; r < ACC_ROWS && !fails; r++)
		for (int i = 0; i < ACC_ROW; i++) {
			int64_t v = base[ACC_AT + 2 * r * ACC_ROW + i];
			int64_t gap = base[ACC_AT + (2 * r + 1) * ACC_ROW + i];

			if (v != (int64_t)got || gap) {
				CHECK(0, "accumulate row %d [%d]: %lld, want "
				      "%llu (gap %lld)", r, i, (long long)v,
				      (unsigned long long)got,
				      (long long)gap);
				break;
			}
		}
	CHECK(rounds > 0, "no round done in %.1f s", secs);
	OK(rmad_barrier());
	rmad_win_free(&w);
	rmad_type_free(&pt);
	rmad_type_free(&at);
	free(src);
	free(ones);
	return t_finish(rank, fails, " (%llu rounds)",
			(unsigned long long)rounds);
}
