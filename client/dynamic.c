/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dynamic.c - dynamic windows: rmad_win_attach, rmad_win_detach and
 * rmad_get_address.
 *
 * Attaching and detaching are local: one request to this process's own
 * agent, which keeps the member's regions, checks the accesses that
 * reach it against them and publishes them for same-node peers
 * (agent/dynwin.c); no other node hears of it.  A detach returns once
 * the agent took the region out and no same-node peer is still inside
 * an access it began before (the busy bytes of the published table), so
 * the memory may be freed at once.
 */
#include <sched.h>
#include <string.h>

#include "internal.h"
#include "log.h"
#include "util.h"

#define DETACH_WAIT_NS	(10ull * 1000 * 1000 * 1000)

static int dyn_request(rmad_win_t win, uint16_t type, const void *base,
		       size_t size)
{
	struct rmad_ctl_win_attach m = { 0 };

	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = type;
	m.key = win->key;
	m.addr = (uint64_t)(uintptr_t)base;
	m.size = size;
	return rmad_ctl_request(&m, sizeof(m), win->key);
}

int rmad_win_attach(rmad_win_t handle, void *base, size_t size)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t win = rmad_win_get(handle);

	if (!rmad_win_ok(win) || win->flavor != RMAD_WIN_FLAVOR_DYNAMIC ||
	    !base || !size || size > (1ull << 40))
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if (c->staged && !rmad_mem_shared(base, size)) {
		rmad_err("rmad_win_attach: the agent cannot reach this "
			 "process's memory in place (the cma setting, or the "
			 "kernel); attach rmad_alloc_mem memory");
		return RMAD_ERR_PERM;
	}
	return dyn_request(win, RMAD_CTL_WIN_ATTACH, base, size);
}

int rmad_win_detach(rmad_win_t handle, const void *base)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t win = rmad_win_get(handle);
	struct rmad_win_dyn *d;
	uint64_t t0 = 0;
	int err;

	if (!rmad_win_ok(win) || win->flavor != RMAD_WIN_FLAVOR_DYNAMIC ||
	    !base)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	err = dyn_request(win, RMAD_CTL_WIN_DETACH, base, 0);
	if (err)
		return err;
	/* peers inside an access they began before the region went */
	d = (struct rmad_win_dyn *)((char *)win->ctl + RMAD_WIN_CTL_SIZE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (uint32_t s = 0; s < sizeof(d->busy); s++) {
		if (s == c->slot)
			continue;
		for (unsigned n = 0;
		     __atomic_load_n(&d->busy[s], __ATOMIC_ACQUIRE); n++) {
			if (!t0)
				t0 = rmad_now_ns();
			if (rmad_now_ns() - t0 > DETACH_WAIT_NS) {
				rmad_warn("rmad_win_detach: client %u stays "
					  "inside an access", s);
				return 0;
			}
			sched_yield();
		}
	}
	return 0;
}

int rmad_get_address(const void *location, size_t *address)
{
	if (!address)
		return RMAD_ERR_ARG;
	*address = (size_t)(uintptr_t)location;
	return 0;
}
