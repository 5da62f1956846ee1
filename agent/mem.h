/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem.h - rmad_alloc_mem regions of each client, mapped in the agent too (mem.c).
 */
#ifndef RMAD_AGENT_MEM_H
#define RMAD_AGENT_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

struct rmad_ctl_mem;

int agent_mem_init(struct agent *a);
void agent_mem_fini(struct agent *a);
void agent_mem_reg(struct agent *a, uint32_t c, const struct rmad_ctl_mem *m,
		   int fd);
void agent_mem_probe(struct agent *a, uint32_t c,
		     const struct rmad_ctl_mem *m);
void agent_mem_dereg(struct agent *a, uint32_t c,
		     const struct rmad_ctl_mem *m);
void *agent_mem_lookup(struct agent *a, uint32_t c, uint64_t addr,
		       uint64_t len);
/*
 * May the agent map need bytes of memfd fd, which client c handed over
 * as `what`?  0 when it is a memfd of the kernel's shared memory
 * (tmpfs, not hugetlbfs), sealed against shrinking and growing
 * (RMAD_MEMFD_SEALS), and holds need bytes: its size can then never
 * change under the agent's mapping, so no read or write through it
 * faults.  Otherwise RMAD_ERR_PERM (not such a memfd, or unsealed) or
 * RMAD_ERR_ARG (too small), logged.
 */
int agent_mem_fd_check(struct agent *a, uint32_t c, int fd, uint64_t need,
		      const char *what);
/* As agent_mem_lookup, and the region stays mapped, even past its
 * deregistration or its client, until agent_mem_drop(*held). */
void *agent_mem_hold(struct agent *a, uint32_t c, uint64_t addr,
		     uint64_t len, struct mem_region **held);
void agent_mem_drop(struct agent *a, struct mem_region *held);
void agent_mem_release(struct agent *a, uint32_t c);

#endif
