/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_hold.c - a job that keeps a window open for an outsider to aim
 * at (t/rogue.sh).  Every rank allocates a 64 KiB window filled with a
 * pattern of its own, puts 8 bytes into its right neighbour's (so the
 * agents have moved data and registered their buffers), writes
 * "ready" to the file given as argv[1] (rank 0), and waits until
 * the file argv[2] exists (at most 60 s).  Then each checks that its
 * window still holds exactly what the job put there and frees it.
 */
#include <unistd.h>

#include "prog.h"

int rank, fails;

#define WIN_BYTES	(64 * 1024)

static uint8_t pat(int r, size_t i)
{
	return (uint8_t)(0x5a ^ (r * 31) ^ (i * 7));
}

int main(int argc, char **argv)
{
	int size;
	uint8_t *base = NULL, *src = malloc(WIN_BYTES);
	uint64_t mark;
	rmad_win_t w = RMAD_WIN_NULL;

	if (!src || argc < 3 || t_init(&argc, &argv, &rank, &size, NULL))
		return 2;
	OK(rmad_win_allocate(WIN_BYTES, 1, NULL, RMAD_GROUP_ALL, &base, &w));
	if (fails)
		return t_finish(rank, fails, "%s", "");
	for (size_t i = 0; i < WIN_BYTES; i++)
		base[i] = src[i] = pat(rank, i);
	OK(rmad_barrier());
	mark = 0x1122334455667700ull | (uint64_t)rank;
	OK(rmad_win_lock_all(0, w));
	/* 8 bytes at 4096, and 32 KiB at 8192 (a large put: the agents'
	 * transfer path) */
	OK(rmad_put(&mark, 1, RMAD_UINT64, (rank + 1) % size, 4096, 1,
		    RMAD_UINT64, w));
	OK(rmad_put(src + 8192, 32768, RMAD_BYTE, (rank + 1) % size, 8192,
		    32768, RMAD_BYTE, w));
	OK(rmad_win_unlock_all(w));
	OK(rmad_barrier());
	if (rank == 0) {
		FILE *f = fopen(argv[1], "w");

		if (f) {
			fputs("ready\n", f);
			fclose(f);
		}
	}
	for (int t = 0; t < 6000 && access(argv[2], F_OK); t++)
		usleep(10000);
	CHECK(!access(argv[2], F_OK), "no %s after 60 s", argv[2]);
	OK(rmad_barrier());
	{
		int l = (rank + size - 1) % size, bad = -1;
		uint64_t want = 0x1122334455667700ull | (uint64_t)l, got;

		memcpy(&got, base + 4096, 8);
		CHECK(got == want, "the left rank's 8 bytes: %#llx",
		      (unsigned long long)got);
		for (size_t i = 0; i < WIN_BYTES && bad < 0; i++) {
			uint8_t v = i >= 8192 && i < 8192 + 32768 ?
				    pat(l, i) : pat(rank, i);

			if ((i < 4096 || i >= 4104) && base[i] != v)
				bad = (int)i;
		}
		CHECK(bad < 0, "window byte %d changed from outside", bad);
	}
	OK(rmad_barrier());
	OK(rmad_win_free(&w));
	free(src);
	return t_finish(rank, fails, " (window intact)");
}
