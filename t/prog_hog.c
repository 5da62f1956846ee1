/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_hog.c - load for t/load.sh, which ends by itself after SECS:
 *   prog_hog cpu SECS       spin on a core
 *   prog_hog mem MIB SECS   allocate MIB MiB and write every page of it
 *                           again and again (memory pressure)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	volatile uint64_t spin = 0;
	double end;

	if (argc == 3 && !strcmp(argv[1], "cpu")) {
		end = now() + atof(argv[2]);
		while (now() < end)
			for (int i = 0; i < 100000; i++)
				spin++;
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "mem")) {
		size_t len = (size_t)atol(argv[2]) << 20;
		long pg = sysconf(_SC_PAGESIZE);
		char *p = malloc(len);
		unsigned char v = 1;

		if (!p) {
			fprintf(stderr, "prog_hog: no %zu bytes\n", len);
			return 1;
		}
		end = now() + atof(argv[3]);
		while (now() < end) {
			for (size_t o = 0; o < len; o += (size_t)pg)
				p[o] = (char)v;
			v++;
		}
		free(p);
		return 0;
	}
	fprintf(stderr, "usage: prog_hog cpu SECS | mem MIB SECS\n");
	return 2;
}
