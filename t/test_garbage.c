/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_garbage.c - a hostile client: attaches through the control socket
 * like librmad, then writes garbage where the agent reads.
 *
 *  - its own segment and a read-only header are all it can map: the
 *    header cannot be mapped writable (sealed) or made writable;
 *  - op indices out of its segment, and of lend slots it was never lent;
 *  - a valid element with a bad opcode (must complete with RMAD_ERR_ARG);
 *  - a corrupt free-list head and scribbled ring sequence numbers;
 *  - a barrier op although the job has one rank (must still complete);
 *  - window op pools: a reservation of 2^64 - 1 elements (capped), a
 *    return of indices that are out of range, not global, not reserved,
 *    in flight or repeated (only the one good index goes home), then
 *    elements left reserved at exit (the agent takes them back);
 *  - rmad_win_stats of a window it never made (refused with
 *    RMAD_ERR_ARG), then a short stats request (the agent drops it).
 *
 * The agent must drop or fail each one, stay up, and keep the completion
 * counters consistent.  The shell test then checks that a well-behaved
 * client still works.
 *
 * usage: test_garbage SOCKET
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "atomics.h"
#include "counter.h"
#include "pool.h"
#include "ring.h"
#include "rmad_abi.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "rawclient.h"
#include "tap.h"
#include "util.h"

static struct rmad_pool_view view(void)
{
	struct rmad_pool_view v = {
		.base = (char *)seg + h->off_ops,
		.stride = sizeof(struct rmad_op_elem),
		.first = 0,
		.n = rmad_shm_nops_client(h),
	};
	return v;
}

static uint32_t take(void)
{
	struct rmad_pool_view v = view();

	return rmad_pool_get(&me->op_free, &v);
}

static void fill(uint32_t i, uint16_t opc, uint16_t flags)
{
	struct rmad_op_elem *e = rmad_shm_op_at(seg, h, i);

	memset(e, 0, sizeof(*e));
	e->opcode = opc;
	e->flags = flags;
	e->owner = reg.client;
	e->status = 12345;
}

/* A KEEP|SYNC op of `count` on element i, waited for: its status. */
static int sync_count(uint32_t i, uint16_t opc, uint64_t count)
{
	uint64_t sync0 = rmad_counter_read(me, RMAD_CNT_SYNC);

	fill(i, opc, RMAD_OPF_KEEP | RMAD_OPF_SYNC);
	rmad_shm_op_at(seg, h, i)->count = count;
	push(i);
	if (!wait_cnt(RMAD_CNT_SYNC, sync0 + 1))
		return 99999;
	return load_acquire(&rmad_shm_op_at(seg, h, i)->status);
}

static void op_pools(uint32_t mine, uint32_t other)
{
	uint32_t *st = (uint32_t *)rmad_shm_staging_at(seg, h, 0);
	uint32_t got, g0, *held, bad = 0;
	uint8_t *seen = calloc(h->op_pool_size + 1, 1);
	int s1, s2;

	/* greedy: capped by the pool (less the one element kept for
	 * lending), every index global and distinct */
	s1 = sync_count(mine, RMAD_OPC_OPS_RESERVE, UINT64_MAX);
	got = st[0];
	held = calloc(got + 1, sizeof(*held));
	for (uint32_t k = 0; held && k < got && k < h->op_pool_size; k++) {
		held[k] = st[1 + k];
		if (held[k] >= h->op_pool_size || seen[held[k]]++)
			bad++;
	}
	ok(s1 == 0 && got > 0 && got <= h->op_pool_size && !bad && held,
	   "a reservation of 2^64-1 elements gets %u of %u, all distinct "
	   "lend slots (status %d)", got, h->op_pool_size, s1);
	if (!held || !got) {
		free(seen);
		return;
	}
	/* garbage back: only g0 may go home, and once */
	g0 = held[0];
	memset(st, 0xff, h->staging_size);
	st[0] = g0;
	st[1] = g0;
	st[2] = rmad_shm_nops_client(h);
	st[3] = other;
	st[4] = mine;
	st[5] = 0x80000000u;
	s1 = sync_count(mine, RMAD_OPC_OPS_RETURN, UINT64_MAX);
	s2 = sync_count(mine, RMAD_OPC_OPS_RESERVE, 5);
	ok(s1 == 0 && s2 == 0 && st[0] == 1 && st[1] == g0,
	   "a return of garbage sent home only the good index (%u back, "
	   "status %d %d)", st[0], s1, s2);
	/* all back (g0 twice over is refused), then all again */
	memcpy(st, held, got * sizeof(*held));
	s1 = sync_count(mine, RMAD_OPC_OPS_RETURN, got);
	s2 = sync_count(mine, RMAD_OPC_OPS_RESERVE, got);
	ok(s1 == 0 && s2 == 0 && st[0] == got,
	   "every element back, and %u of %u reserved again", st[0], got);
	/* keep three: the agent must take them back when we are gone */
	if (got > 3) {
		memmove(st, st + 4, (got - 3) * sizeof(*st));
		s1 = sync_count(mine, RMAD_OPC_OPS_RETURN, got - 3);
	}
	ok(s1 == 0, "kept %u reserved elements for the agent to take back",
	   got < 3 ? got : 3);
	free(held);
	free(seen);
}

int main(int argc, char **argv)
{
	uint32_t mine, other, nops;
	uint64_t sync0, local0;
	char nsp[64];

	alarm_after(60);
	snprintf(nsp, sizeof(nsp), "garbage-%d", (int)getpid());
	plan(16);
	if (argc < 2 || raw_attach(argv[1], nsp) < 0) {
		diag("cannot attach to %s", argc > 1 ? argv[1] : "(none)");
		return 1;
	}
	nops = rmad_shm_nops_client(h);
	ok(1, "attached as client %u (%u op elements in its segment)",
	   reg.client, nops);

	/* the header is the agent's: no writable mapping of it */
	{
		void *w = mmap(NULL, RMAD_SHM_ALIGN, PROT_READ | PROT_WRITE,
			       MAP_SHARED, hfd, 0);
		int mp = mprotect((void *)h, RMAD_SHM_ALIGN,
				  PROT_READ | PROT_WRITE);

		ok(w == MAP_FAILED && mp < 0,
		   "the header cannot be mapped or made writable (%s, %s)",
		   w == MAP_FAILED ? "mmap refused" : "MAPPED",
		   mp < 0 ? "mprotect refused" : "MPROTECTED");
		ok(reg.seg_size == h->client_seg_size &&
		   lseek(hfd, 0, SEEK_END) == RMAD_SHM_ALIGN,
		   "its own segment (%llu bytes) and a one-page header are "
		   "all it was given", (unsigned long long)reg.seg_size);
	}

	/* indices that are not ours: all must be dropped */
	push(nops);
	push(0xfffffff0u);
	push(RMAD_NIL);
	push(0);	/* a lend slot never lent to us */
	other = nops + h->client_op_pool;
	push(other);	/* past our segment: another slot's, for the agent */
	/* a good no-op then proves the agent went past all of them */
	local0 = rmad_counter_read(me, RMAD_CNT_LOCAL);
	mine = take();
	fill(mine, RMAD_OPC_NOOP, 0);
	push(mine);
	ok(wait_cnt(RMAD_CNT_LOCAL, local0 + 1),
	   "foreign and out-of-range indices dropped; a good op completes");

	/* a barrier of a one-rank job completes at once */
	mine = take();
	fill(mine, RMAD_OPC_BARRIER, RMAD_OPF_KEEP | RMAD_OPF_SYNC);
	sync0 = rmad_counter_read(me, RMAD_CNT_SYNC);
	push(mine);
	ok(wait_cnt(RMAD_CNT_SYNC, sync0 + 1) &&
	   rmad_shm_op_at(seg, h, mine)->status == 0,
	   "a one-rank barrier completes with status 0");

	/* a bad opcode fails that op, with RMAD_ERR_ARG */
	sync0 = rmad_counter_read(me, RMAD_CNT_SYNC);
	fill(mine, 999, RMAD_OPF_KEEP | RMAD_OPF_SYNC);
	push(mine);
	{
		int done = wait_cnt(RMAD_CNT_SYNC, sync0 + 1);
		int st = load_acquire(&rmad_shm_op_at(seg, h, mine)->status);

		ok(done && st == RMAD_ERR_ARG,
		   "a bad opcode completes with RMAD_ERR_ARG (%d)", st);
	}

	/* a ping to a rank outside the job */
	sync0 = rmad_counter_read(me, RMAD_CNT_SYNC);
	fill(mine, RMAD_OPC_PING, RMAD_OPF_KEEP | RMAD_OPF_SYNC);
	rmad_shm_op_at(seg, h, mine)->target = 77;
	push(mine);
	ok(wait_cnt(RMAD_CNT_SYNC, sync0 + 1) &&
	   rmad_shm_op_at(seg, h, mine)->status == RMAD_ERR_RANK,
	   "a ping to rank 77 of 1 completes with RMAD_ERR_RANK");

	op_pools(mine, other);

	/* our own free list and ring turned to garbage: only we suffer */
	me->op_free.head = 0x123456789abcull;
	store_release(&me->want_ops, 1);
	for (uint32_t i = 0; i < h->ring_entries; i++)
		me->ring[i].seq = 0xdeadbeef + i;
	me->sq_tail = 0x7777;
	{
		uint64_t one = 1;

		if (write(bell, &one, sizeof(one)) < 0) {
			/* polled anyway */
		}
	}
	usleep(200000);
	ok(1, "scribbled on our ring and free list");
	ok(load_acquire(&h->agent_flags) != 0xffffffffu &&
	   !(load_acquire(&h->agent_flags) & RMAD_AGENT_STOPPING),
	   "the agent did not stop");
	{
		char c;
		long n = recv(sock, &c, 1, MSG_DONTWAIT);

		ok(n < 0 && errno == EAGAIN,
		   "and our socket is still open (the agent lives)");
	}

	/* attach and detach on a window that is not ours */
	for (int k = 0; k < 2; k++) {
		struct rmad_ctl_win_attach m = { 0 };
		struct rmad_ctl_win_reply r;
		long n;

		m.h.magic = RMAD_CTL_MAGIC;
		m.h.abi_version = RMAD_ABI_VERSION;
		m.h.type = k ? RMAD_CTL_WIN_DETACH : RMAD_CTL_WIN_ATTACH;
		m.key = 0x5eedull;
		m.addr = 0x1000;
		m.size = ~0ull;
		memset(&r, 0, sizeof(r));
		n = rmad_send_msg(sock, &m, sizeof(m), NULL, 0) < 0 ? -1 :
		    rmad_recv_msg(sock, &r, sizeof(r), NULL, NULL);
		ok(n == (long)sizeof(r) && r.h.type == RMAD_CTL_WIN_REPLY &&
		   r.key == m.key && r.status == RMAD_ERR_ARG,
		   "%s on no window of ours: RMAD_ERR_ARG (%d)",
		   k ? "detach" : "attach", r.status);
	}

	/* window stats: a key of no window of ours, then a short message */
	{
		struct rmad_ctl_win_stats m = { 0 };
		struct rmad_ctl_win_stats_reply r;
		long n;

		m.h.magic = RMAD_CTL_MAGIC;
		m.h.abi_version = RMAD_ABI_VERSION;
		m.h.type = RMAD_CTL_WIN_STATS;
		m.key = 0x5eedull;
		memset(&r, 0, sizeof(r));
		n = rmad_send_msg(sock, &m, sizeof(m), NULL, 0) < 0 ? -1 :
		    rmad_recv_msg(sock, &r, sizeof(r), NULL, NULL);
		ok(n == (long)sizeof(r) &&
		   r.h.type == RMAD_CTL_WIN_STATS_REPLY && r.key == m.key &&
		   r.status == RMAD_ERR_ARG &&
		   r.stats.pkts_sent_total == 0,
		   "stats of an unknown window: RMAD_ERR_ARG (%d)", r.status);
		n = rmad_send_msg(sock, &m, sizeof(m) - 4, NULL, 0) < 0 ? -1 :
		    rmad_recv_msg(sock, &r, sizeof(r), NULL, NULL);
		ok(n == 0, "a short stats request: the agent hangs up (%ld)",
		   n);
	}
	return done_testing();
}
