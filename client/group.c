/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * group.c - groups of ranks, for collective window calls and PSCW.
 *
 * A group lists its members in the order given (member i is the i-th
 * rank passed to rmad_group_incl), as MPI groups do.  Its storage is
 * O(members), which is what a group is; nothing here grows with the job.
 * A handle is a slot of a handle table with generations (handle.h), so
 * a garbage, freed or forged handle is refused with RMAD_ERR_ARG
 * instead of being dereferenced.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"
#include "internal.h"

struct rmad_group_s {
	int n;
	uint64_t hash;			/* of the member list, for window keys */
	int ranks[];
};

static struct handle_table group_handles = HANDLE_TABLE_INIT(HANDLE_TAG_GROUP);

/* The group of a live handle other than RMAD_GROUP_ALL, or NULL. */
static struct rmad_group_s *group_of(rmad_group_t g)
{
	return handle_get(&group_handles, (uintptr_t)g);
}

int rmad_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int rmad_group_incl(const int *ranks, int n, rmad_group_t *group)
{
	struct rmad_group_s *g;
	int *sorted, size, err;
	uint64_t h = 1469598103934665603ull;
	uintptr_t handle;

	if (!group || n < 0 || (n > 0 && !ranks))
		return RMAD_ERR_ARG;
	if (!rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	size = rmad_cl.b.size;
	if (n > size)
		return RMAD_ERR_ARG;
	for (int i = 0; i < n; i++)
		if (ranks[i] < 0 || ranks[i] >= size)
			return RMAD_ERR_RANK;
	sorted = malloc(sizeof(int) * (size_t)(n ? n : 1));
	if (!sorted)
		return RMAD_ERR_NOMEM;
	memcpy(sorted, ranks, sizeof(int) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(int), rmad_cmp_int);
	for (int i = 1; i < n; i++)
		if (sorted[i] == sorted[i - 1]) {
			free(sorted);
			return RMAD_ERR_ARG;	/* a rank listed twice */
		}
	free(sorted);
	g = malloc(sizeof(*g) + sizeof(int) * (size_t)n);
	if (!g)
		return RMAD_ERR_NOMEM;
	g->n = n;
	memcpy(g->ranks, ranks, sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)(uint32_t)ranks[i]) * 1099511628211ull;
	g->hash = h;
	err = handle_new(&group_handles, g, &handle);
	if (err) {
		free(g);
		return err;
	}
	*group = (rmad_group_t)handle;
	return 0;
}

int rmad_group_free(rmad_group_t *group)
{
	struct rmad_group_s *g;

	if (!group)
		return RMAD_ERR_ARG;
	g = handle_free(&group_handles, (uintptr_t)*group);
	if (!g)
		return RMAD_ERR_ARG;	/* NULL, ALL, freed or garbage */
	free(g);
	*group = RMAD_GROUP_NULL;
	return 0;
}

int rmad_group_members(rmad_group_t g, int *n)
{
	struct rmad_group_s *p;

	if (g == RMAD_GROUP_ALL) {
		*n = rmad_cl.b.size;
		return 0;
	}
	p = group_of(g);
	if (!p)
		return RMAD_ERR_ARG;
	*n = p->n;
	return 0;
}

/* For a live group, after rmad_group_members() said so. */
uint64_t rmad_group_hash(rmad_group_t g)
{
	struct rmad_group_s *p = group_of(g);

	return p ? p->hash : 0;
}

int rmad_group_rank(rmad_group_t g, int i)
{
	struct rmad_group_s *p;

	if (g == RMAD_GROUP_ALL)
		return i;
	p = group_of(g);
	return p && i >= 0 && i < p->n ? p->ranks[i] : -1;
}

int rmad_group_size(rmad_group_t g, int *size)
{
	if (!size)
		return RMAD_ERR_ARG;
	if (g == RMAD_GROUP_ALL && !rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	return rmad_group_members(g, size);
}

int rmad_group_ranks(rmad_group_t g, int *ranks)
{
	struct rmad_group_s *p;

	if (!ranks)
		return RMAD_ERR_ARG;
	if (g == RMAD_GROUP_ALL) {
		if (!rmad_cl.initialized)
			return RMAD_ERR_SYNC;
		for (int i = 0; i < rmad_cl.b.size; i++)
			ranks[i] = i;
		return 0;
	}
	p = group_of(g);
	if (!p)
		return RMAD_ERR_ARG;
	memcpy(ranks, p->ranks, sizeof(int) * (size_t)p->n);
	return 0;
}
