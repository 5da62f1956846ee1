/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_win.c - windows: collective allocation over all ranks and over a
 * subgroup, several at once, the shared-memory query (same-node memory
 * is really shared, other nodes answer RMAD_ERR_NOT_LOCAL), the window
 * queries (group, attributes, info, name), and bad input.  Every rank checks; each prints "rank R: ok ..." or
 * "rank R: FAIL ..." and exits non-zero on failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmad.h>

#include "prog.h"

static int rank, size, fails;


static size_t size_of(int r)
{
	return 4096 + 8 * (size_t)r;	/* every rank differs */
}

/* rmad_win_get_group, _get_attr, _set_info/_get_info, _set_name/_get_name
 * on w, a window of every rank with this rank's base, size and unit */
static void queries(rmad_win_t w, void *base, size_t sz, int du)
{
	static const char defaults[] = "no_locks=false,same_size=false,"
		"same_disp_unit=false,accumulate_ordering=rar+raw+war+waw,"
		"accumulate_ops=same_op_no_op";
	char info[RMAD_MAX_INFO_LEN], name[RMAD_MAX_OBJECT_NAME], big[300];
	rmad_group_t g = RMAD_GROUP_NULL;
	int n = -1, *gr = malloc(sizeof(int) * (size_t)size), err, i;
	void *vb = NULL;
	size_t vs = 0;

	err = rmad_win_get_group(w, &g);
	err = err ? err : rmad_group_size(g, &n);
	err = err ? err : rmad_group_ranks(g, gr);
	CHECK(err == 0 && n == size, "get_group: %d members (%s)", n,
	      rmad_strerror(err));
	for (i = 0; !err && i < n && gr[i] == i; i++)
		;
	CHECK(!err && i == n, "get_group lists the job in rank order");
	CHECK(rmad_group_free(&g) == 0, "the window's group can be freed");
	free(gr);
	CHECK(rmad_win_get_group(w, NULL) == RMAD_ERR_ARG,
	      "get_group NULL out");

	i = -1;
	CHECK(rmad_win_get_attr(w, RMAD_WIN_BASE, &vb) == 0 && vb == base,
	      "attr base");
	CHECK(rmad_win_get_attr(w, RMAD_WIN_SIZE, &vs) == 0 && vs == sz,
	      "attr size %zu", vs);
	CHECK(rmad_win_get_attr(w, RMAD_WIN_DISP_UNIT, &i) == 0 && i == du,
	      "attr disp_unit %d", i);
	CHECK(rmad_win_get_attr(w, RMAD_WIN_CREATE_FLAVOR, &i) == 0 &&
	      i == RMAD_WIN_FLAVOR_ALLOCATE, "attr flavor %d", i);
	CHECK(rmad_win_get_attr(w, RMAD_WIN_MODEL, &i) == 0 &&
	      i == RMAD_WIN_UNIFIED, "attr model %d", i);
	CHECK(rmad_win_get_attr(w, 99, &i) == RMAD_ERR_ARG &&
	      rmad_win_get_attr(w, RMAD_WIN_SIZE, NULL) == RMAD_ERR_ARG &&
	      rmad_win_get_attr(RMAD_WIN_NULL, RMAD_WIN_SIZE, &vs) ==
	      RMAD_ERR_ARG, "attr: unknown, NULL value, NULL window");

	err = rmad_win_get_info(w, info, sizeof(info));
	CHECK(err == 0 && !strcmp(info, defaults), "get_info: %s", info);
	CHECK(rmad_win_get_info(w, info, 8) == RMAD_ERR_ARG && !info[0],
	      "get_info into a short buffer: RMAD_ERR_ARG, empty string");
	CHECK(rmad_win_set_info(w, "same_size=true,no_locks=true") == 0 &&
	      rmad_win_get_info(w, info, sizeof(info)) == 0 &&
	      !strcmp(info, defaults),
	      "set_info is accepted; the hints in force stay: %s", info);
	CHECK(rmad_win_set_info(w, "no_locks=maybe") == RMAD_ERR_HINT &&
	      rmad_win_set_info(w, ",,") == RMAD_ERR_HINT,
	      "set_info of a malformed string: RMAD_ERR_HINT");
	CHECK(rmad_win_set_info(w, NULL) == 0, "set_info NULL");

	CHECK(rmad_win_get_name(w, name, sizeof(name)) == 0 && !name[0],
	      "a new window has the empty name");
	CHECK(rmad_win_set_name(w, "halo") == 0 &&
	      rmad_win_get_name(w, name, sizeof(name)) == 0 &&
	      !strcmp(name, "halo"), "set_name/get_name: '%s'", name);
	CHECK(rmad_win_get_name(w, name, 4) == RMAD_ERR_ARG && !name[0],
	      "get_name into a short buffer: RMAD_ERR_ARG");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(rmad_win_set_name(w, big) == 0 &&
	      rmad_win_get_name(w, name, sizeof(name)) == 0 &&
	      strlen(name) == RMAD_MAX_OBJECT_NAME - 1,
	      "a long name is truncated to %zu bytes", strlen(name));
	CHECK(rmad_win_set_name(w, NULL) == RMAD_ERR_ARG &&
	      rmad_win_get_name(w, NULL, 8) == RMAD_ERR_ARG,
	      "set_name/get_name NULL");
}

int main(int argc, char **argv)
{
	struct rmad_info in;
	rmad_win_t w = RMAD_WIN_NULL, ws[3], stale;
	rmad_group_t even = RMAD_GROUP_NULL;
	uint64_t *base = NULL, *b2;
	int err, local = 0, remote = 0, *ranks;

	if (rmad_init(&argc, &argv))
		return 1;
	rmad_rank(&rank);
	rmad_size(&size);
	rmad_get_info(&in);

	/* 1. all ranks, sizes differ */
	err = rmad_win_allocate(size_of(rank), 8, NULL, RMAD_GROUP_ALL, &base,
				&w);
	CHECK(err == 0 && base && w, "allocate: %s", rmad_strerror(err));
	if (err)
		goto out;
	for (size_t i = 0; i < size_of(rank) / 8; i++)
		base[i] = (uint64_t)rank * 1000000 + i;
	rmad_barrier();
	for (int r = 0; r < size; r++) {
		size_t sz = 0;
		int du = 0;
		uint64_t *pb = NULL;

		err = rmad_win_shared_query(w, r, &sz, &du, &pb);
		if (err == RMAD_ERR_NOT_LOCAL) {
			remote++;
			continue;
		}
		CHECK(err == 0, "shared_query(%d): %s", r, rmad_strerror(err));
		if (err)
			continue;
		local++;
		CHECK(sz == size_of(r) && du == 8 && pb,
		      "shared_query(%d): size %zu unit %d", r, sz, du);
		if (pb && sz == size_of(r))
			CHECK(pb[0] == (uint64_t)r * 1000000 &&
			      pb[sz / 8 - 1] == (uint64_t)r * 1000000 + sz / 8 - 1,
			      "rank %d's memory is not shared with us", r);
	}
	CHECK(local == in.local_size && remote == size - in.local_size,
	      "%d same-node and %d other-node ranks, expected %d and %d",
	      local, remote, in.local_size, size - in.local_size);
	rmad_barrier();

	/* 2. bad input changes nothing */
	{
		size_t sz;
		int du;
		void *pb;
		rmad_win_t x = RMAD_WIN_NULL;

		CHECK(rmad_win_shared_query(w, size, &sz, &du, &pb) ==
		      RMAD_ERR_RANK, "query rank == size");
		CHECK(rmad_win_shared_query(w, -1, &sz, &du, &pb) ==
		      RMAD_ERR_RANK, "query rank -1");
		CHECK(rmad_win_shared_query(w, rank, NULL, &du, &pb) ==
		      RMAD_ERR_ARG, "query NULL size");
		CHECK(rmad_win_shared_query(RMAD_WIN_NULL, rank, &sz, &du,
					    &pb) == RMAD_ERR_ARG,
		      "query null window");
		CHECK(rmad_win_allocate(64, 0, NULL, RMAD_GROUP_ALL, &pb,
					&x) == RMAD_ERR_ARG && !x,
		      "disp_unit 0");
		CHECK(rmad_win_allocate(64, 8, "no_locks=maybe",
					RMAD_GROUP_ALL, &pb, &x) ==
		      RMAD_ERR_HINT && !x, "malformed hint");
		CHECK(rmad_win_allocate(64, 8, NULL, RMAD_GROUP_ALL, NULL,
					&x) == RMAD_ERR_ARG, "NULL base_out");
		CHECK(rmad_win_free(NULL) == RMAD_ERR_ARG &&
		      rmad_win_free(&x) == RMAD_ERR_ARG, "free NULL");
	}

	/* 2b. the queries */
	queries(w, base, size_of(rank), 8);

	/* 3. three windows at once, with hints, freed in reverse order */
	for (int k = 0; k < 3; k++) {
		err = rmad_win_allocate(1 << (10 + k), 1,
					"same_size=true,accumulate_ordering=none",
					RMAD_GROUP_ALL, &b2, &ws[k]);
		CHECK(err == 0, "window %d: %s", k, rmad_strerror(err));
	}
	{
		char info[RMAD_MAX_INFO_LEN];

		err = rmad_win_get_info(ws[1], info, sizeof(info));
		CHECK(err == 0 && !strcmp(info, "no_locks=false,same_size=true,"
			"same_disp_unit=false,accumulate_ordering=none,"
			"accumulate_ops=same_op_no_op"),
		      "get_info of a window with hints: %s (%s)", info,
		      rmad_strerror(err));
	}
	for (int k = 2; k >= 0; k--) {
		err = rmad_win_free(&ws[k]);
		CHECK(err == 0 && ws[k] == RMAD_WIN_NULL, "free %d: %s", k,
		      rmad_strerror(err));
	}

	/* 4. a subgroup: the even ranks */
	ranks = malloc(sizeof(int) * (size_t)size);
	for (int r = 0; r < size; r += 2)
		ranks[r / 2] = r;
	err = rmad_group_incl(ranks, (size + 1) / 2, &even);
	CHECK(err == 0, "group_incl: %s", rmad_strerror(err));
	if (rank % 2 == 0) {
		rmad_win_t we = RMAD_WIN_NULL;

		err = rmad_win_allocate(256, 4, NULL, even, &b2, &we);
		CHECK(err == 0, "even window: %s", rmad_strerror(err));
		if (!err) {
			size_t sz;
			int du;
			void *pb;

			rmad_group_t g = RMAD_GROUP_NULL;
			int n = -1, *gr = malloc(sizeof(int) * (size_t)size);

			err = rmad_win_shared_query(we, rank, &sz, &du, &pb);
			CHECK(err == 0 && sz == 256 && du == 4 && pb == b2,
			      "own entry of the even window");
			err = rmad_win_get_group(we, &g);
			err = err ? err : rmad_group_size(g, &n);
			err = err ? err : rmad_group_ranks(g, gr);
			CHECK(err == 0 && n == (size + 1) / 2,
			      "get_group of the even window: %d members (%s)",
			      n, rmad_strerror(err));
			for (int i = 0; !err && i < n; i++)
				CHECK(gr[i] == 2 * i, "member %d is %d", i,
				      gr[i]);
			rmad_group_free(&g);
			free(gr);
			err = rmad_win_free(&we);
			CHECK(err == 0, "free even window: %s",
			      rmad_strerror(err));
		}
	} else {
		rmad_win_t we = RMAD_WIN_NULL;

		CHECK(rmad_win_allocate(256, 4, NULL, even, &b2, &we) ==
		      RMAD_ERR_ARG, "a non-member cannot join");
	}
	rmad_group_free(&even);
	free(ranks);

	/* 5. memory the agent maps too */
	{
		char *p = NULL, *q = NULL;
		int x;

		err = rmad_alloc_mem(1 << 20, (void **)&p);
		CHECK(err == 0 && p, "alloc_mem 1 MiB: %s", rmad_strerror(err));
		if (p) {
			memset(p, 0x5a, 1 << 20);
			CHECK(p[(1 << 20) - 1] == 0x5a, "alloc_mem is writable");
		}
		err = rmad_alloc_mem(0, (void **)&q);
		CHECK(err == 0 && q && q != p, "alloc_mem of 0 bytes");
		CHECK(rmad_alloc_mem(64, NULL) == RMAD_ERR_ARG,
		      "alloc_mem NULL out");
		CHECK(rmad_free_mem(NULL) == RMAD_ERR_ARG &&
		      rmad_free_mem(&x) == RMAD_ERR_ARG,
		      "free_mem of memory it did not give");
		CHECK(rmad_free_mem(p) == 0 && rmad_free_mem(q) == 0,
		      "free_mem");
		CHECK(rmad_free_mem(p) == RMAD_ERR_ARG, "free_mem twice");
	}

	/* 6. free the first window; a stale handle is refused */
	stale = w;
	err = rmad_win_free(&w);
	CHECK(err == 0 && w == RMAD_WIN_NULL, "free: %s", rmad_strerror(err));
	CHECK(rmad_win_free(&stale) == RMAD_ERR_ARG, "stale handle");
	{
		void *vb;
		char buf[16];

		CHECK(rmad_win_get_attr(stale, RMAD_WIN_BASE, &vb) ==
		      RMAD_ERR_ARG && rmad_win_get_name(stale, buf,
		      sizeof(buf)) == RMAD_ERR_ARG &&
		      rmad_win_set_info(stale, NULL) == RMAD_ERR_ARG,
		      "queries on a freed window: RMAD_ERR_ARG");
	}
out:
	err = rmad_finalize();
	CHECK(err == 0, "finalize: %s", rmad_strerror(err));
	if (!fails)
		printf("rank %d: ok (node %d, %d local, %d remote)\n", rank,
		       in.node, local, remote);
	return fails != 0;
}
