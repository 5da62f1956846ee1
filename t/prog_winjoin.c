/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_winjoin.c - a window of the whole job whose last rank is served
 * by a hostile node (t/rogue-win.sh: t/test_rogue -w), which joins the
 * window with forged entries for the other members.  The ranks before
 * it (the real ones) make one window of every rank, RANKS x 8 bytes
 * each, unit 8; rank 0 waits -d ms first, so that the other joins
 * reach its agent (the root) before its group is known there.  Then
 * every real rank writes its rank and a pattern into every other real
 * rank's window, under an exclusive lock, reads it back, and checks,
 * after a barrier, what the others wrote into its own memory: with a
 * forged entry in the table (8 bytes, unit 1) the writes beyond its
 * first 8 bytes would fail or land elsewhere.  The window then stays
 * 200 ms before it is freed.  The last rank is never a target.  Each real rank prints "rank R: ok" or its failures.
 *
 * usage: prog_winjoin [-d MS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rmad.h>

#include "prog.h"

#define WORDS	512

static int rank, size, fails;

static uint64_t pat(int from, int to, int i)
{
	return ((uint64_t)from << 48) ^ ((uint64_t)to << 32) ^
	       (uint64_t)i * 0x9e3779b97f4a7c15ull;
}

int main(int argc, char **argv)
{
	uint64_t *base = NULL, buf[WORDS], back[WORDS];
	rmad_win_t w = RMAD_WIN_NULL;
	int delay = 0, c, real;

	while ((c = getopt(argc, argv, "d:")) != -1)
		if (c == 'd')
			delay = atoi(optarg);
	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	real = size - 1;
	if (rank == 0 && delay > 0)
		usleep((useconds_t)delay * 1000);
	OK(rmad_win_allocate((size_t)real * WORDS * 8, 8, NULL,
			     RMAD_GROUP_ALL, &base, &w));
	if (fails)
		return t_finish(rank, fails, " (no window)");
	for (int t = 0; t < real; t++) {
		if (t == rank)
			continue;
		for (int i = 0; i < WORDS; i++)
			buf[i] = pat(rank, t, i);
		OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, t, 0, w));
		OK(rmad_put(buf, WORDS, RMAD_UINT64, t,
			    (size_t)rank * WORDS, WORDS, RMAD_UINT64, w));
		OK(rmad_win_flush(t, w));
		OK(rmad_get(back, WORDS, RMAD_UINT64, t,
			    (size_t)rank * WORDS, WORDS, RMAD_UINT64, w));
		OK(rmad_win_unlock(t, w));
		for (int i = 0; i < WORDS; i++)
			CHECK(back[i] == buf[i], "read back word %d of "
			      "rank %d: %llx, wrote %llx", i, t,
			      (unsigned long long)back[i],
			      (unsigned long long)buf[i]);
	}
	OK(rmad_barrier());
	for (int f = 0; f < real; f++)
		for (int i = 0; f != rank && i < WORDS; i++)
			if (base[(size_t)f * WORDS + i] != pat(f, rank, i)) {
				CHECK(0, "word %d from rank %d: %llx", i, f,
				      (unsigned long long)
				      base[(size_t)f * WORDS + i]);
				break;
			}
	/* the window ready for 200 ms: the rogue's joins in that time must
	 * find its table made */
	usleep(200000);
	OK(rmad_barrier());
	OK(rmad_win_free(&w));
	return t_finish(rank, fails, " (%d ranks wrote and read %d words "
			"each)", real, WORDS);
}
