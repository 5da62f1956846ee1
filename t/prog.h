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
#include <stdlib.h>
#include <string.h>

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

/*
 * A window as rmad_win_allocate makes it, or, with RMAD_T_FLAVOR=create
 * in the environment, a created window over zeroed heap memory (kept
 * until exit), or with RMAD_T_FLAVOR=shared (a job on one node) a
 * shared one, so that a test runs unchanged on each flavor.
 */
static void *t_kept[64];	/* reachable, for LeakSanitizer */
static int t_nkept;

static inline int t_win_allocate(size_t size, int disp_unit,
				 const char *hints, rmad_group_t group,
				 void *base_out, rmad_win_t *win)
{
	const char *f = getenv("RMAD_T_FLAVOR");
	void *m;
	int e;

	if (f && !strcmp(f, "shared"))	/* the job on one node only */
		return rmad_win_allocate_shared(size, disp_unit, hints, group,
						base_out, win);
	if (!f || strcmp(f, "create"))
		return rmad_win_allocate(size, disp_unit, hints, group,
					 base_out, win);
	m = calloc(1, size ? size : 1);
	if (!m)
		return RMAD_ERR_NOMEM;
	e = rmad_win_create(m, size, disp_unit, hints, group, win);
	if (e)
		free(m);
	else
		*(void **)base_out = m;
	if (!e && t_nkept < 64)
		t_kept[t_nkept++] = m;
	return e;
}

#endif
