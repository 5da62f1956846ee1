/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * winmem.c - reaching a created or dynamic window's memory in place.
 *
 * A created window is the member's own memory: we reach it through its
 * rmad_alloc_mem mapping or with process_vm_readv/writev, and its
 * same-node peers reach it with process_vm_readv/writev themselves.
 * Where the kernel would refuse either, the window is refused at
 * creation, on every member alike: the member's status travels with
 * its node's table to the window's root (windows.c), so no member waits
 * for another that gave up.  What the kernel allows is judged here:
 *
 *  - us: cma on, the client not staged (it answered our probe), and one
 *    byte of its memory readable now;
 *  - a peer i reaching member j: the same user, and Yama's ptrace_scope
 *    0, or i holding CAP_SYS_PTRACE (scope below 3).
 *
 * The second is a rule, not a probe: a member made undumpable, or an
 * LSM policy of its own, can still refuse at the first operation, which
 * then fails with RMAD_ERR_PERM.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "agent.h"
#include "mem.h"
#include "winmem.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

int winmem_check(struct agent *a, uint32_t c, uint64_t addr, uint64_t size,
		 int64_t ctl_size)
{
	struct agent_client *ac = &a->cl[c];
	uint8_t b;
	struct iovec lv = { &b, 1 }, rv = { (void *)(uintptr_t)addr, 1 };

	if (ctl_size < RMAD_WIN_CTL_SIZE ||
	    (size && (!addr || addr + size < addr)))
		return RMAD_ERR_ARG;
	if (!size || agent_mem_lookup(a, c, addr, size))
		return 0;
	if (!a->p.cma || ac->staged) {
		rmad_warn("client %u (rank %d): its memory at %#llx needs "
			  "process_vm_readv/writev, which %s; refused (use "
			  "rmad_alloc_mem memory)", c, ac->rank,
			  (unsigned long long)addr,
			  !a->p.cma ? "the cma setting turns off" :
			  "its kernel refuses us");
		return RMAD_ERR_PERM;
	}
	if (process_vm_readv(ac->pid, &lv, 1, &rv, 1, 0) != 1) {
		int e = errno;

		rmad_warn("client %u (rank %d): cannot read its memory at "
			  "%#llx: %s", c, ac->rank,
			  (unsigned long long)addr, strerror(e));
		return e == EPERM ? RMAD_ERR_PERM : RMAD_ERR_ARG;
	}
	return 0;
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = 0;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	return scope;
}

static int has_ptrace_cap(pid_t pid)
{
	char path[64], line[256];
	unsigned long long cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			break;
	if (f)
		fclose(f);
	return !!(cap & (1ull << 19));	/* CAP_SYS_PTRACE */
}

void winmem_peers(struct agent *a, struct agent_win *w)
{
	int scope;

	if (w->nhere < 2 || !w->local[0].created)
		return;
	scope = yama_scope();
	for (int32_t i = 0; i < w->nhere; i++) {
		struct agent_client *ci = &a->cl[w->local[i].client];
		int cap = scope < 3 && has_ptrace_cap(ci->pid);

		for (int32_t j = 0; j < w->nhere; j++) {
			struct win_local *lj = &w->local[j];
			struct agent_client *cj = &a->cl[lj->client];
			const char *why = NULL;

			if (i == j || lj->status || cap)
				continue;
			if (ci->uid != cj->uid)
				why = "they run as different users";
			else if (scope >= 1)
				why = "kernel.yama.ptrace_scope is 1 or more";
			if (!why)
				continue;
			rmad_warn("window %llx: rank %d cannot reach rank %d's "
				  "memory with process_vm_readv/writev (%s, "
				  "and it lacks CAP_SYS_PTRACE); the window is "
				  "refused", (unsigned long long)w->key,
				  w->local[i].rank, lj->rank, why);
			lj->status = RMAD_ERR_PERM;
		}
	}
}
