/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ring.c - the submission ring under multi-process contention.
 *
 * Several forked producers push tagged values into one ring in shared
 * memory while the parent pops: every value must arrive exactly once, in
 * each producer's order.  Also: a full ring refuses a push, an empty one
 * pops nothing, and the free-running counters wrap correctly.  The
 * consumer takes values in gulps and frees their slots afterwards
 * (rmad_ring_take, rmad_ring_release), as the agent does: a held slot is
 * not reused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring.h"
#include "tap.h"

#define NPROD	4
#define PER	200000u
#define ENTRIES	64u

struct shared_ring {
	uint32_t tail;
	uint32_t head;
	struct rmad_ring_slot slot[ENTRIES];
};

static void init_at(struct shared_ring *r, uint32_t base)
{
	/* as rmad_ring_init, but starting at an arbitrary position */
	for (uint32_t i = 0; i < ENTRIES; i++) {
		uint32_t pos = base + i;

		r->slot[pos & (ENTRIES - 1)].seq = pos;
	}
	r->tail = base;
	r->head = base;
}

static int contention(uint32_t base, uint32_t gulp)
{
	struct shared_ring *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint32_t next[NPROD] = { 0 }, head, v;
	uint64_t got = 0, bad = 0;
	pid_t pids[NPROD];

	if (r == MAP_FAILED)
		return 0;
	init_at(r, base);
	head = base;
	for (int p = 0; p < NPROD; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			for (uint32_t i = 0; i < PER; i++) {
				uint32_t val = ((uint32_t)p << 24) | i;

				while (rmad_ring_push(r->slot, ENTRIES - 1,
						      &r->tail, val) < 0)
					caa_cpu_relax();
			}
			_exit(0);
		}
	}
	while (got < (uint64_t)NPROD * PER) {
		uint32_t from = head, k = 0, vals[16];

		while (k < gulp && k < 16 &&
		       rmad_ring_take(r->slot, ENTRIES - 1, &head, &vals[k]))
			k++;
		if (!k) {
			caa_cpu_relax();
			continue;
		}
		rmad_ring_release(r->slot, ENTRIES - 1, ENTRIES, from, head);
		for (uint32_t j = 0; j < k; j++) {
			v = vals[j];
			got++;
			if ((v >> 24) >= NPROD ||
			    (v & 0xffffff) != next[v >> 24]) {
				bad++;
				continue;
			}
			next[v >> 24]++;
		}
	}
	for (int p = 0; p < NPROD; p++)
		waitpid(pids[p], NULL, 0);
	ok(bad == 0, "base %u, gulps of %u: %llu values, none lost, "
	   "duplicated or reordered (bad %llu)", base, gulp,
	   (unsigned long long)got,
	   (unsigned long long)bad);
	v = 0;
	ok(!rmad_ring_pop(r->slot, ENTRIES - 1, ENTRIES, &head, &v),
	   "base %u: ring empty afterwards", base);
	munmap(r, sizeof(*r));
	return 1;
}

int main(void)
{
	struct shared_ring r;
	uint32_t head, v, n = 0;
	int full_ok = 1;

	alarm_after(120);
	plan(11);

	rmad_ring_init(r.slot, ENTRIES, &r.tail, &r.head);
	head = 0;
	ok(!rmad_ring_pop(r.slot, ENTRIES - 1, ENTRIES, &head, &v),
	   "empty ring pops nothing");
	for (uint32_t i = 0; i < ENTRIES; i++)
		full_ok &= rmad_ring_push(r.slot, ENTRIES - 1, &r.tail, i) == 0;
	ok(full_ok, "%u pushes fit", ENTRIES);
	ok(rmad_ring_push(r.slot, ENTRIES - 1, &r.tail, 99) == -1,
	   "a full ring refuses a push");
	while (rmad_ring_pop(r.slot, ENTRIES - 1, ENTRIES, &head, &v) &&
	       v == n)
		n++;
	ok(n == ENTRIES, "pops return the values in order (%u)", n);
	ok(rmad_ring_push(r.slot, ENTRIES - 1, &r.tail, 7) == 0 &&
	   rmad_ring_pop(r.slot, ENTRIES - 1, ENTRIES, &head, &v) && v == 7,
	   "the next lap works");

	/* held slots: taken, not yet released, are not reused */
	for (uint32_t i = 0; i < ENTRIES; i++)
		rmad_ring_push(r.slot, ENTRIES - 1, &r.tail, i);
	{
		uint32_t from = head, k = 0;

		while (rmad_ring_take(r.slot, ENTRIES - 1, &head, &v))
			k++;
		ok(k == ENTRIES &&
		   rmad_ring_push(r.slot, ENTRIES - 1, &r.tail, 5) == -1,
		   "%u taken and held: the ring still refuses a push", k);
		rmad_ring_release(r.slot, ENTRIES - 1, ENTRIES, from, head);
		ok(rmad_ring_push(r.slot, ENTRIES - 1, &r.tail, 5) == 0 &&
		   rmad_ring_pop(r.slot, ENTRIES - 1, ENTRIES, &head, &v) &&
		   v == 5, "released: the next lap works");
	}

	contention(0, 1);
	contention(UINT32_MAX - 1000, 7);	/* the counters wrap mid-run */
	return done_testing();
}
