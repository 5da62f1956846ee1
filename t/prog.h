/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog.h - the checks the multi-rank test programs (t/prog_*.c) share.
 * The including file defines `int rank, fails`: CHECK prints a
 * "rank R: FAIL ..." line and counts it; OK checks that a call
 * returned 0 and names the call and its error otherwise.  t_init and
 * t_finish are a program's first and last steps.
 */
#ifndef RMAD_T_PROG_H
#define RMAD_T_PROG_H

#include <stdarg.h>
#include <stdint.h>
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
 * until exit), or with RMAD_T_FLAVOR=dynamic that memory attached to a
 * dynamic window (every displacement must then go through T_D), or with
 * RMAD_T_FLAVOR=shared (a job on one node) a shared one, so that a test
 * runs unchanged on each flavor.
 */
static void *t_kept[64];	/* reachable, for LeakSanitizer */
static int t_nkept;
/* dynamic windows: each one's handle, unit and every rank's address */
static struct {
	rmad_win_t w;
	size_t du;
	uint64_t *addr;
} t_dyn[64];
static int t_ndyn;

/* The displacement d (in the window's units) on target t of w: the
 * address of that place for a dynamic window made by t_win_allocate. */
static inline size_t T_D(rmad_win_t w, int t, size_t d)
{
	for (int i = t_ndyn - 1; i >= 0; i--)
		if (t_dyn[i].w == w)
			return (size_t)t_dyn[i].addr[t] + d * t_dyn[i].du;
	return d;
}

/* every rank's address of m, through an allocated window */
static inline int t_gather(void *m, uint64_t *all)
{
	uint64_t *b = NULL, mine = (uint64_t)(uintptr_t)m;
	rmad_win_t g = RMAD_WIN_NULL;
	int me, n, e;

	rmad_rank(&me);
	rmad_size(&n);
	e = rmad_win_allocate((size_t)n * 8, 8, NULL, RMAD_GROUP_ALL, &b, &g);
	e = e ? e : rmad_win_lock_all(0, g);
	for (int r = 0; !e && r < n; r++)
		e = rmad_put(&mine, 1, RMAD_UINT64, r, (size_t)me, 1,
			     RMAD_UINT64, g);
	e = e ? e : rmad_win_unlock_all(g);
	e = e ? e : rmad_barrier();
	if (!e)
		memcpy(all, b, (size_t)n * 8);
	e = e ? e : rmad_barrier();
	if (g != RMAD_WIN_NULL)
		rmad_win_free(&g);
	return e;
}

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
	if (!f || (strcmp(f, "create") && strcmp(f, "dynamic")))
		return rmad_win_allocate(size, disp_unit, hints, group,
					 base_out, win);
	m = calloc(1, size ? size : 1);
	if (!m)
		return RMAD_ERR_NOMEM;
	if (!strcmp(f, "dynamic")) {
		/* over the whole job only: the addresses go round it */
		int n;

		rmad_size(&n);
		if (group != RMAD_GROUP_ALL || t_ndyn == 64) {
			free(m);
			return RMAD_ERR_ARG;
		}
		t_dyn[t_ndyn].addr = calloc((size_t)n, 8);
		e = t_dyn[t_ndyn].addr ? 0 : RMAD_ERR_NOMEM;
		e = e ? e : rmad_win_create_dynamic(hints, group, win);
		e = e ? e : rmad_win_attach(*win, m, size ? size : 1);
		e = e ? e : t_gather(m, t_dyn[t_ndyn].addr);
		if (!e) {
			t_dyn[t_ndyn].w = *win;
			t_dyn[t_ndyn].du = (size_t)disp_unit;
			t_ndyn++;
		}
	} else {
		e = rmad_win_create(m, size, disp_unit, hints, group, win);
	}
	if (e)
		free(m);
	else
		*(void **)base_out = m;
	if (!e && t_nkept < 64)
		t_kept[t_nkept++] = m;
	return e;
}

/* rmad_init, then *rk, *sz and, unless NULL, *in: 0, or 1 after a
 * "rank ?: FAIL rmad_init" line. */
static inline int t_init(int *argc, char ***argv, int *rk, int *sz,
			 struct rmad_info *in)
{
	if (rmad_init(argc, argv)) {
		printf("rank ?: FAIL rmad_init\n");
		fflush(stdout);
		return 1;
	}
	rmad_rank(rk);
	rmad_size(sz);
	if (in)
		rmad_get_info(in);
	return 0;
}

/* The last line, "rank R: FAIL N checks" or "rank R: ok" and what fmt
 * adds, then rmad_finalize: the exit status. */
static inline int t_finish(int rk, int nfails, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int t_finish(int rk, int nfails, const char *fmt, ...)
{
	va_list ap;

	if (nfails) {
		printf("rank %d: FAIL %d checks\n", rk, nfails);
	} else {
		printf("rank %d: ok", rk);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
	rmad_finalize();
	return nfails != 0;
}

#endif
