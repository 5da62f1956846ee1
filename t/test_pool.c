/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pool.c - element free lists: exhaustion and refill, bounds, and
 * exclusive ownership under multi-process get/put contention, with one
 * process giving elements back in chains (rmad_pool_put_chain) as the
 * agent does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomics.h"
#include "pool.h"
#include "tap.h"

#define N	64
#define NPROC	4
#define ROUNDS	100000

struct elem {
	uint32_t next;
	uint32_t owner;		/* 0 when free */
	uint64_t pad[7];
};

struct arena {
	struct rmad_shm_freelist fl;
	uint32_t violations;
	struct elem e[N + 8];
};

int main(void)
{
	struct arena *a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct rmad_pool_view v;
	uint32_t got[N], i, n = 0;
	pid_t pids[NPROC];
	int distinct = 1;

	alarm_after(120);
	plan(12);
	if (a == MAP_FAILED)
		return 1;
	v = (struct rmad_pool_view){ .base = a->e, .stride = sizeof(a->e[0]),
				     .first = 4, .n = N };
	rmad_pool_init(&a->fl, &v);
	while ((i = rmad_pool_get(&a->fl, &v)) != RMAD_NIL && n < N + 1) {
		distinct &= i >= 4 && i < 4 + N &&
			    a->e[i].owner == 0;
		a->e[i].owner = 1;
		got[n++] = i;
	}
	ok(n == N && distinct, "exhaustion after exactly %d distinct gets (%u)",
	   N, n);
	ok(rmad_pool_get(&a->fl, &v) == RMAD_NIL, "empty pool gives NIL");
	ok(a->fl.count == 0, "count is 0 when empty");
	for (i = 0; i < n; i++) {
		a->e[got[i]].owner = 0;
		rmad_pool_put(&a->fl, &v, got[i]);
	}
	ok(a->fl.count == N, "refilled: count %u", a->fl.count);
	ok(rmad_pool_put(&a->fl, &v, 3) == -1 &&
	   rmad_pool_put(&a->fl, &v, 4 + N) == -1 &&
	   rmad_pool_put(&a->fl, &v, RMAD_NIL) == -1,
	   "out-of-pool indices are refused");
	ok(a->fl.count == N, "refused puts changed nothing");

	/* chains: gather some, give them back in one push */
	{
		struct rmad_pool_chain ch;
		uint32_t k, m = 0, seen[N] = { 0 }, twice = 0;

		rmad_pool_chain_init(&ch);
		ok(rmad_pool_chain_add(&ch, &v, 3) == -1 &&
		   rmad_pool_chain_add(&ch, &v, 4 + N) == -1 && ch.n == 0,
		   "a chain refuses out-of-pool indices");
		rmad_pool_put_chain(&a->fl, &v, &ch);	/* empty: nothing */
		for (i = 0; i < 10; i++) {
			k = rmad_pool_get(&a->fl, &v);
			rmad_pool_chain_add(&ch, &v, k);
		}
		ok(a->fl.count == N - 10 && ch.n == 10,
		   "ten elements in a private chain (count %u)", a->fl.count);
		rmad_pool_put_chain(&a->fl, &v, &ch);
		while ((k = rmad_pool_get(&a->fl, &v)) != RMAD_NIL &&
		       m <= N) {
			twice |= seen[k - 4]++;
			got[m++] = k;
		}
		ok(m == N && !twice && ch.n == 0 && ch.head == RMAD_NIL,
		   "after the chain's push the list holds all %d once (%u)",
		   N, m);
		for (i = 0; i < m; i++)
			rmad_pool_put(&a->fl, &v, got[i]);
	}

	/* corrupt head: get must refuse to follow it */
	{
		uint64_t saved = a->fl.head;

		a->fl.head = 12345;
		ok(rmad_pool_get(&a->fl, &v) == RMAD_NIL,
		   "a corrupt head index yields NIL, not a wild element");
		a->fl.head = saved;
	}

	for (int p = 0; p < NPROC; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			uint32_t me = (uint32_t)p + 1;
			struct rmad_pool_chain ch;

			rmad_pool_chain_init(&ch);
			for (int r = 0; r < ROUNDS; r++) {
				uint32_t k = rmad_pool_get(&a->fl, &v);
				uint32_t zero = 0;

				if (k == RMAD_NIL)
					continue;
				if (!__atomic_compare_exchange_n(
					    &a->e[k].owner, &zero, me, 0,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
					uatomic_inc(&a->violations);
				store_release(&a->e[k].owner, 0);
				if (p) {
					rmad_pool_put(&a->fl, &v, k);
					continue;
				}
				/* process 0 gives back as the agent does */
				rmad_pool_chain_add(&ch, &v, k);
				if (ch.n == 1 + (uint32_t)r % 7)
					rmad_pool_put_chain(&a->fl, &v, &ch);
			}
			rmad_pool_put_chain(&a->fl, &v, &ch);
			_exit(0);
		}
	}
	for (int p = 0; p < NPROC; p++)
		waitpid(pids[p], NULL, 0);
	ok(a->violations == 0, "%d processes x %d get/put (one putting "
	   "chains): no element owned twice (%u violations)", NPROC, ROUNDS,
	   a->violations);
	n = 0;
	while (rmad_pool_get(&a->fl, &v) != RMAD_NIL && n <= N)
		n++;
	ok(n == N, "all %d elements back after the storm (%u)", N, n);
	munmap(a, sizeof(*a));
	return done_testing();
}
