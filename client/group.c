/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * group.c - groups of ranks, for collective window calls and PSCW.
 *
 * A group lists its members in the order given (member i is the i-th
 * rank passed to rmad_group_incl), as MPI groups do.  Its storage is
 * O(members), which is what a group is; nothing here grows with the job.
 * Live groups are kept on a list so that a freed or forged handle is
 * refused with RMAD_ERR_ARG instead of being dereferenced.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GROUP_MAGIC 0x67726f75u		/* "grou" */

struct rmad_group_s {
	uint32_t magic;
	int n;
	uint64_t hash;			/* of the member list, for window keys */
	struct rmad_group_s *next;
	int ranks[];
};

static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rmad_group_s *groups;

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int rmad_group_incl(const int *ranks, int n, rmad_group_t *group)
{
	struct rmad_group_s *g;
	int *sorted, size;
	uint64_t h = 1469598103934665603ull;

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
	qsort(sorted, (size_t)n, sizeof(int), cmp_int);
	for (int i = 1; i < n; i++)
		if (sorted[i] == sorted[i - 1]) {
			free(sorted);
			return RMAD_ERR_ARG;	/* a rank listed twice */
		}
	free(sorted);
	g = malloc(sizeof(*g) + sizeof(int) * (size_t)n);
	if (!g)
		return RMAD_ERR_NOMEM;
	g->magic = GROUP_MAGIC;
	g->n = n;
	memcpy(g->ranks, ranks, sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)(uint32_t)ranks[i]) * 1099511628211ull;
	g->hash = h;
	pthread_mutex_lock(&groups_lock);
	g->next = groups;
	groups = g;
	pthread_mutex_unlock(&groups_lock);
	*group = g;
	return 0;
}

/* Is g a live group?  (RMAD_GROUP_ALL is not on the list.) */
static int group_live(rmad_group_t g)
{
	int live = 0;

	pthread_mutex_lock(&groups_lock);
	for (struct rmad_group_s *p = groups; p; p = p->next)
		if (p == g) {
			live = 1;
			break;
		}
	pthread_mutex_unlock(&groups_lock);
	return live;
}

int rmad_group_free(rmad_group_t *group)
{
	struct rmad_group_s **pp, *g;

	if (!group || *group == RMAD_GROUP_NULL || *group == RMAD_GROUP_ALL)
		return RMAD_ERR_ARG;
	g = *group;
	pthread_mutex_lock(&groups_lock);
	for (pp = &groups; *pp && *pp != g; pp = &(*pp)->next)
		;
	if (!*pp) {
		pthread_mutex_unlock(&groups_lock);
		return RMAD_ERR_ARG;
	}
	*pp = g->next;
	pthread_mutex_unlock(&groups_lock);
	g->magic = 0;
	free(g);
	*group = RMAD_GROUP_NULL;
	return 0;
}

int rmad_group_members(rmad_group_t g, int *n)
{
	if (g == RMAD_GROUP_ALL) {
		*n = rmad_cl.b.size;
		return 0;
	}
	if (g == RMAD_GROUP_NULL || !group_live(g))
		return RMAD_ERR_ARG;
	*n = g->n;
	return 0;
}

uint64_t rmad_group_hash(rmad_group_t g)
{
	return g->hash;
}

int rmad_group_rank(rmad_group_t g, int i)
{
	return g == RMAD_GROUP_ALL ? i : g->ranks[i];
}
