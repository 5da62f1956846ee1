/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dynwin.c - dynamic windows: the regions each local member attached.
 *
 * A member of a dynamic window attaches and detaches memory with a
 * control message to its own agent (WIN_ATTACH, WIN_DETACH); no other
 * node hears of it.  The agent keeps the member's regions, sorted by
 * address, in private memory, and checks every operation that reaches
 * it against them (dynwin_check: one region, or regions attached end to
 * end), so an access outside every region, or on
 * a region detached while the op travelled, fails with RMAD_ERR_DISP
 * and touches nothing.  It writes a copy of the table after the
 * member's control page, under a sequence lock, for same-node peers,
 * which reach the memory themselves (client/peer.c).  The table grows
 * with the regions attached, up to RMAD_DYN_MAX per member, never with
 * the origins.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "windows.h"
#include "winmem.h"
#include "dynwin.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

/* The first region whose end lies above addr (binary search). */
static uint32_t lower(const struct win_local *l, uint64_t addr)
{
	uint32_t lo = 0, hi = l->nreg;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->reg[mid].addr + l->reg[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * [addr, addr + len) lies in attached memory: in one region, or across
 * regions attached end to end (MPI-3.1 11.2.4 lets an access span
 * them: they are one piece of the member's memory).
 */
int dynwin_check(const struct win_local *l, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len, at;
	uint32_t i;

	if (!l->nreg || end < addr)
		return RMAD_ERR_DISP;
	i = lower(l, addr);
	if (i >= l->nreg || addr < l->reg[i].addr)
		return RMAD_ERR_DISP;
	for (at = l->reg[i].addr + l->reg[i].size; at < end; i++) {
		if (i + 1 >= l->nreg || l->reg[i + 1].addr != at)
			return RMAD_ERR_DISP;	/* a gap */
		at += l->reg[i + 1].size;
	}
	return 0;
}

/* The peers' copy: rewritten whole under the sequence lock. */
static void publish(struct win_local *l)
{
	struct rmad_win_dyn *p = l->pub;
	uint32_t s = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);

	/* even again below, whatever a client scribbled */
	__atomic_store_n(&p->seq, (s | 1u), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (l->nreg)
		memcpy(p->r, l->reg, sizeof(*l->reg) * l->nreg);
	__atomic_store_n(&p->n, l->nreg, __ATOMIC_RELAXED);
	__atomic_store_n(&p->seq, (s | 1u) + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int attach(struct agent *a, uint32_t c, struct win_local *l,
		  uint64_t addr, uint64_t size)
{
	struct rmad_dyn_region *r;
	uint32_t i;
	int err;

	if (!size || !addr || addr + size < addr || size > (1ull << 40))
		return RMAD_ERR_ARG;
	if (l->nreg >= RMAD_DYN_MAX)
		return RMAD_ERR_NOMEM;
	i = lower(l, addr);
	if (i < l->nreg && l->reg[i].addr < addr + size)
		return RMAD_ERR_ARG;	/* overlaps an attached region */
	err = winmem_check(a, c, addr, size, RMAD_WIN_CTL_SIZE);
	if (err)
		return err;	/* (logged) */
	r = realloc(l->reg, sizeof(*r) * (l->nreg + 1));
	if (!r)
		return RMAD_ERR_NOMEM;
	l->reg = r;
	memmove(&r[i + 1], &r[i], sizeof(*r) * (l->nreg - i));
	r[i].addr = addr;
	r[i].size = size;
	l->nreg++;
	publish(l);
	return 0;
}

static int detach(struct win_local *l, uint64_t addr)
{
	uint32_t i = lower(l, addr);

	if (i >= l->nreg || l->reg[i].addr != addr)
		return RMAD_ERR_ARG;	/* not the base of a region */
	memmove(&l->reg[i], &l->reg[i + 1],
		sizeof(*l->reg) * (l->nreg - i - 1));
	l->nreg--;
	publish(l);
	return 0;
}

void dynwin_request(struct agent *a, uint32_t c,
		       const struct rmad_ctl_win_attach *m)
{
	struct agent_win *w = agent_win_of_client(a, c, m->key);
	struct rmad_ctl_win_reply r = { 0 };
	struct win_local *l = NULL;
	int st = RMAD_ERR_ARG;

	for (int32_t i = 0; w && i < w->nhere; i++)
		if (w->local[i].client == c &&
		    w->local[i].gen == a->cl[c].gen)
			l = &w->local[i];
	if (l && l->dynamic && l->pub)
		st = m->h.type == RMAD_CTL_WIN_ATTACH ?
		     attach(a, c, l, m->addr, m->size) : detach(l, m->addr);
	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_WIN_REPLY;
	r.key = m->key;
	r.status = st;
	rmad_send_msg(a->cl[c].fd, &r, sizeof(r), NULL, 0);
}
