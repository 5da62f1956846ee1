/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * acc_rate.c - how fast the accumulate combiners run, per type: SUM of
 * one buffer into another under the accumulate lock's bulk path
 * (rmad_acc_apply_excl) and with the per-element path
 * (rmad_acc_apply), in GB/s of the target buffer and ns per element.
 * The types wider than 8 bytes are always under that lock, so their
 * per-element path takes the bulk loops too where they have them.
 * The software types (FLOAT128, C_FLOAT128_COMPLEX on x86-64) against
 * the hardware ones show what a REAL*16 accumulate costs.
 *
 * usage: acc_rate [-s SIZE] [-r REPS]   (SIZE in bytes, K and M: 4M)
 * Output: CSV, one line per type and path:
 *   type,path,bytes,reps,ns_per_elem,gb_per_s
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtype.h"
#include "rmad_abi.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	return (size_t)v;
}

/* n elements of type t, each 1 + k/2^20 (the real parts of complexes;
 * imaginary parts 0): sums that stay finite and inexact, so no software
 * shortcut for zeros or exact values is measured */
static void fill(void *buf, uint32_t t, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++) {
		double v = 1.0 + (double)(k & 0xfffff) / (1 << 20);

		switch (t) {
		case RMAD_INT64:
			((int64_t *)buf)[k] = (int64_t)k;
			break;
		case RMAD_DOUBLE:
			((double *)buf)[k] = v;
			break;
		case RMAD_FLOAT:
			((float *)buf)[k] = (float)v;
			break;
		case RMAD_C_FLOAT_COMPLEX:
			((float *)buf)[2 * k] = (float)v;
			((float *)buf)[2 * k + 1] = 0;
			break;
		case RMAD_LONG_DOUBLE:
			memset((long double *)buf + k, 0, sizeof(long double));
			((long double *)buf)[k] = v;
			break;
		case RMAD_C_LONG_DOUBLE_COMPLEX:
			memset((long double *)buf + 2 * k, 0,
			       2 * sizeof(long double));
			((long double *)buf)[2 * k] = v;
			break;
		case RMAD_C_DOUBLE_COMPLEX:
			((double *)buf)[2 * k] = v;
			((double *)buf)[2 * k + 1] = 0;
			break;
#ifdef __SIZEOF_FLOAT128__
		case RMAD_FLOAT128:
			((__float128 *)buf)[k] = v;
			break;
		case RMAD_C_FLOAT128_COMPLEX:
			((__float128 *)buf)[2 * k] = v;
			((__float128 *)buf)[2 * k + 1] = 0;
			break;
#endif
		default:
			break;
		}
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		uint32_t type;
	} types[] = {
		{ "INT64", RMAD_INT64 },
		{ "FLOAT", RMAD_FLOAT },
		{ "DOUBLE", RMAD_DOUBLE },
		{ "C_FLOAT_COMPLEX", RMAD_C_FLOAT_COMPLEX },
		{ "LONG_DOUBLE", RMAD_LONG_DOUBLE },
		{ "C_DOUBLE_COMPLEX", RMAD_C_DOUBLE_COMPLEX },
		{ "C_LONG_DOUBLE_COMPLEX", RMAD_C_LONG_DOUBLE_COMPLEX },
		{ "FLOAT128", RMAD_FLOAT128 },
		{ "C_FLOAT128_COMPLEX", RMAD_C_FLOAT128_COMPLEX },
	};
	size_t bytes = 4u << 20;
	int reps = 20, c;
	unsigned char *dst, *src;

	while ((c = getopt(argc, argv, "s:r:h")) != -1) {
		if (c == 's')
			bytes = parse_size(optarg);
		else if (c == 'r')
			reps = atoi(optarg);
		else {
			fprintf(stderr, "usage: acc_rate [-s SIZE] [-r REPS]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (bytes < 64 || reps < 1) {
		fprintf(stderr, "acc_rate: -s of 64 bytes or more, -r of 1 or more\n");
		return 2;
	}
	dst = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	src = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	if (!dst || !src)
		return 1;
	printf("type,path,bytes,reps,ns_per_elem,gb_per_s\n");
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		size_t es = rmad_dtype_size(types[t].type);
		uint64_t n;

		if (!es || rmad_op_check(types[t].type, RMAD_SUM)) {
			printf("%s,none,%zu,0,,\n", types[t].name, bytes);
			continue;
		}
		n = bytes / es;
		for (int path = 0; path < 2; path++) {
			double t0 = now_s(), dt;

			memset(dst, 0, n * es);
			memset(src, 0, n * es);
			fill(dst, types[t].type, n);
			fill(src, types[t].type, n);
			for (int r = -1; r < reps; r++) {
				if (r == 0)
					t0 = now_s();
				if (path)
					rmad_acc_apply(dst, src, NULL,
						       types[t].type, RMAD_SUM,
						       n);
				else
					rmad_acc_apply_excl(dst, src, NULL,
							    types[t].type,
							    RMAD_SUM, n);
			}
			dt = (now_s() - t0) / reps;
			printf("%s,%s,%zu,%d,%.3f,%.3f\n", types[t].name,
			       path ? "element" : "bulk", (size_t)(n * es),
			       reps, dt * 1e9 / (double)n,
			       (double)(n * es) / dt * 1e-9);
		}
	}
	free(dst);
	free(src);
	return 0;
}
