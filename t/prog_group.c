/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_group.c - groups: membership, order, bad input, freed handles.
 * Every rank runs the checks; rank 0 prints TAP, the others exit
 * non-zero if any check fails.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rmad.h>

#include "tap.h"

static int rank;

#define CHECK(cond, ...)				\
	do {						\
		if (rank == 0)				\
			ok((cond), __VA_ARGS__);	\
		else if (!(cond))			\
			bad++;				\
	} while (0)

int main(int argc, char **argv)
{
	rmad_group_t g = RMAD_GROUP_NULL, g2 = RMAD_GROUP_NULL, stale;
	int size, bad = 0, r[4];

	int early;

	alarm_after(60);
	r[0] = 0;
	early = rmad_group_incl(r, 1, &g);
	if (rmad_init(&argc, &argv)) {
		printf("Bail out! rmad_init failed\n");
		return 1;
	}
	rmad_rank(&rank);
	rmad_size(&size);
	if (rank == 0)
		plan(12);
	CHECK(early == RMAD_ERR_SYNC && g == RMAD_GROUP_NULL,
	      "before rmad_init: RMAD_ERR_SYNC");
	r[0] = size - 1;
	r[1] = 0;
	CHECK(rmad_group_incl(r, 2, &g) == 0 && g != RMAD_GROUP_NULL,
	      "a group of the last rank and rank 0");
	CHECK(rmad_group_incl(r, 0, &g2) == 0, "an empty group is fine");
	CHECK(rmad_group_free(&g2) == 0 && g2 == RMAD_GROUP_NULL,
	      "free sets the handle to RMAD_GROUP_NULL");
	r[2] = size;
	CHECK(rmad_group_incl(r, 3, &g2) == RMAD_ERR_RANK,
	      "rank == size: RMAD_ERR_RANK");
	r[2] = -1;
	CHECK(rmad_group_incl(r, 3, &g2) == RMAD_ERR_RANK,
	      "negative rank: RMAD_ERR_RANK");
	r[2] = 0;
	CHECK(rmad_group_incl(r, 3, &g2) == RMAD_ERR_ARG,
	      "a rank listed twice: RMAD_ERR_ARG");
	CHECK(rmad_group_incl(NULL, 2, &g2) == RMAD_ERR_ARG &&
	      rmad_group_incl(r, -1, &g2) == RMAD_ERR_ARG &&
	      rmad_group_incl(r, 1, NULL) == RMAD_ERR_ARG,
	      "NULL list, negative count, NULL out: RMAD_ERR_ARG");
	CHECK(g2 == RMAD_GROUP_NULL, "failed calls leave the handle alone");
	stale = g;
	CHECK(rmad_group_free(&g) == 0, "free a live group");
	CHECK(rmad_group_free(&stale) == RMAD_ERR_ARG,
	      "freeing it again through a stale copy: RMAD_ERR_ARG");
	{
		rmad_group_t all = RMAD_GROUP_ALL, null = RMAD_GROUP_NULL;

		CHECK(rmad_group_free(&all) == RMAD_ERR_ARG &&
		      rmad_group_free(&null) == RMAD_ERR_ARG &&
		      rmad_group_free(NULL) == RMAD_ERR_ARG,
		      "RMAD_GROUP_ALL, NULL handle, NULL pointer: RMAD_ERR_ARG");
	}
	if (rmad_finalize())
		bad++;
	return rank == 0 ? done_testing() : bad != 0;
}
