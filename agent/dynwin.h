/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dynwin.h - dynamic windows: attached regions per local member
 * (dynwin.c).
 */
#ifndef RMAD_AGENT_DYNWIN_H
#define RMAD_AGENT_DYNWIN_H

#include <stdint.h>

#include "agent.h"

struct rmad_ctl_win_attach;

/* WIN_ATTACH or WIN_DETACH from client c: done, and answered. */
void dynwin_request(struct agent *a, uint32_t c,
		       const struct rmad_ctl_win_attach *m);
/* 0 when [addr, addr + len) lies in one region l attached, else
 * RMAD_ERR_DISP. */
int dynwin_check(const struct win_local *l, uint64_t addr, uint64_t len);

#endif
