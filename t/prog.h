/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog.h - the checks the multi-rank test programs (t/prog_*.c) share.
 * The including file defines `int rank, fails`: CHECK prints a
 * "rank R: FAIL ..." line and counts it; OK checks that a call
 * returned 0 and names the call and its error otherwise.
 */
#ifndef RMAD_T_PROG_H
#define RMAD_T_PROG_H

#include <stdio.h>

#include <rmad.h>

#define CHECK(cond, ...)					\
	do {							\
		if (!(cond)) {					\
			printf("rank %d: FAIL ", rank);		\
			printf(__VA_ARGS__);			\
			printf("\n");				\
			fflush(stdout);				\
			fails++;				\
		}						\
	} while (0)

#define OK(call)						\
	do {							\
		int e_ = (call);				\
		CHECK(e_ == 0, "%s:%d %s: %s", __FILE__, __LINE__, \
		      #call, rmad_strerror(e_));		\
	} while (0)

#endif
