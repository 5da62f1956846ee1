/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * winmem.h - can a created or dynamic window's memory be reached in
 * place (winmem.c)?
 */
#ifndef RMAD_AGENT_WINMEM_H
#define RMAD_AGENT_WINMEM_H

#include <stdint.h>

#include "agent.h"

/*
 * Client c's window memory [addr, addr + size) (a created window's, with
 * its control memfd of ctl_size bytes, or a region it attaches): 0;
 * RMAD_ERR_PERM (logged) when we cannot reach it in place; RMAD_ERR_ARG
 * for a bad request or unreadable memory.
 */
int winmem_check(struct agent *a, uint32_t c, uint64_t addr, uint64_t size,
		 int64_t ctl_size);
/*
 * Every local member of created or dynamic window w is here: mark
 * RMAD_ERR_PERM (logged, with the cause) on each member that another
 * member could not reach with process_vm_readv/writev.
 */
void winmem_peers(struct agent *a, struct agent_win *w);

#endif
