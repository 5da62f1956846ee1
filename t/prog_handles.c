/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_handles.c - garbage, freed and foreign handles are refused with
 * RMAD_ERR_ARG by every call that takes one, and never crash the caller
 * (rmad_win_ok() once dereferenced a garbage window handle: SIGSEGV).
 * One rank (its own embedded agent); prints TAP.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmad.h>

#include "tap.h"

static void on_segv(int sig)
{
	static const char msg[] = "not ok - SIGSEGV on a bad handle\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

/* Every call that takes a window; counts those that refuse w. */
static int win_calls(rmad_win_t w, int *ncalls)
{
	int x = 0, y = 0, r = 0, n = 0, du;
	size_t sz;
	void *base;
	struct rmad_stats st;
	rmad_win_t wc = w;

#define T(call) do { n++; r += (call) == RMAD_ERR_ARG; } while (0)
	T(rmad_put(&x, 1, RMAD_INT, 0, 0, 1, RMAD_INT, w));
	T(rmad_get(&x, 1, RMAD_INT, 0, 0, 1, RMAD_INT, w));
	T(rmad_accumulate(&x, 1, RMAD_INT, 0, 0, 1, RMAD_INT, RMAD_SUM, w));
	T(rmad_get_accumulate(&x, 1, RMAD_INT, &y, 1, RMAD_INT, 0, 0, 1,
			      RMAD_INT, RMAD_SUM, w));
	T(rmad_fetch_and_op(&x, &y, RMAD_INT, 0, 0, RMAD_SUM, w));
	T(rmad_compare_and_swap(&x, &y, &x, RMAD_INT, 0, 0, w));
	T(rmad_win_lock(RMAD_LOCK_SHARED, 0, 0, w));
	T(rmad_win_unlock(0, w));
	T(rmad_win_lock_all(0, w));
	T(rmad_win_unlock_all(w));
	T(rmad_win_flush(0, w));
	T(rmad_win_flush_all(w));
	T(rmad_win_flush_local(0, w));
	T(rmad_win_flush_local_all(w));
	T(rmad_win_sync(w));
	T(rmad_win_shared_query(w, 0, &sz, &du, &base));
	T(rmad_win_stats(w, &st));
	T(rmad_win_free(&wc));
#undef T
	*ncalls = n;
	return r;
}

static int group_calls(rmad_group_t g)
{
	rmad_group_t gc = g;
	rmad_win_t w = RMAD_WIN_NULL;
	void *base;
	int r = 0;

	r += rmad_win_allocate(64, 1, NULL, g, &base, &w) == RMAD_ERR_ARG;
	r += rmad_group_free(&gc) == RMAD_ERR_ARG;
	return r + (w == RMAD_WIN_NULL);
}

int main(void)
{
	rmad_win_t w = RMAD_WIN_NULL, freed;
	rmad_group_t g = RMAD_GROUP_NULL, gfreed;
	char junk[256];
	void *base;
	int err, n, me = 0;
	struct {
		const char *what;
		uintptr_t v;
	} bad[] = {
		{ "0x2", 2 },
		{ "0x1234", 0x1234 },
		{ "-1", UINTPTR_MAX },
		{ "a pointer to junk", (uintptr_t)junk },
		{ "a pointer to code", (uintptr_t)&main },
		{ "0xdeadbeef00000013", 0xdeadbeef00000013ull },
		{ "a plausible slot, wrong generation", 0x0000000700000003ull },
		{ "a plausible group slot", 0x0000000300000005ull },
	};
	int nbad = (int)(sizeof(bad) / sizeof(bad[0]));

	signal(SIGSEGV, on_segv);
	signal(SIGBUS, on_segv);
	memset(junk, 0xa5, sizeof(junk));
	plan(2 * nbad + 6);
	err = rmad_init(NULL, NULL);
	if (err) {
		printf("Bail out! rmad_init: %s\n", rmad_strerror(err));
		return 1;
	}
	for (int i = 0; i < nbad; i++) {
		int r = win_calls((rmad_win_t)bad[i].v, &n);

		ok(r == n, "window handle %s: %d of %d calls refuse it",
		   bad[i].what, r, n);
		ok(group_calls((rmad_group_t)bad[i].v) == 3,
		   "group handle %s: allocate and free refuse it",
		   bad[i].what);
	}

	err = rmad_win_allocate(64, 4, NULL, RMAD_GROUP_ALL, &base, &w);
	ok(err == 0, "a live window: %s", rmad_strerror(err));
	err = rmad_win_lock(RMAD_LOCK_EXCLUSIVE, 0, 0, w);
	if (!err)
		err = rmad_put(&me, 1, RMAD_INT, 0, 0, 1, RMAD_INT, w);
	if (!err)
		err = rmad_win_unlock(0, w);
	ok(err == 0, "it works: %s", rmad_strerror(err));
	freed = w;
	err = rmad_win_free(&w);
	ok(!err && win_calls(freed, &n) == n,
	   "a freed window handle is refused by all %d calls", n);
	/* a new window may take the freed one's slot: the old handle
	 * still names nothing */
	err = rmad_win_allocate(64, 4, NULL, RMAD_GROUP_ALL, &base, &w);
	ok(!err && freed != w && win_calls(freed, &n) == n,
	   "after its slot is reused too");
	err = rmad_group_incl(&me, 1, &g);
	ok(!err && win_calls((rmad_win_t)g, &n) == n &&
	   group_calls((rmad_group_t)w) == 3,
	   "a group handle is no window, and a window handle no group");
	gfreed = g;
	rmad_group_free(&g);
	ok(group_calls(gfreed) == 3, "a freed group handle is refused");
	rmad_win_free(&w);
	err = rmad_finalize();
	return done_testing() || err;
}
