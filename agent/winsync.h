/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * winsync.h - the fence barrier and the post/start/complete/wait notices
 * of windows between agents (winsync.c).
 */
#ifndef RMAD_AGENT_WINSYNC_H
#define RMAD_AGENT_WINSYNC_H

#include <stdint.h>

#include "agent.h"

/* Its packet handlers, and the windows' ready hook (early notices). */
void winsync_init(struct agent *a);
/*
 * Local member l arrives at w's fence barrier.  Once every local member
 * has, this node arrives at the window's root; the root releases the
 * member nodes once all have.  The release (or a member's death) calls
 * a->win_hooks.fence.  Returns 0, or RMAD_ERR_PROC_FAILED / _SYNC at once.
 */
int winsync_fence_arrive(struct agent *a, struct agent_win *w,
			   struct win_local *l);
/*
 * Post/start/complete/wait: the WIN_POST notices that came in for local
 * member l are kept until a start takes them; take target's (1), or 0
 * when it has not posted.  WIN_COMPLETE notices count in the target's
 * control page (pscw_done), where its wait looks.
 */
int winsync_post_take(struct win_local *l, int32_t target);
/* One origin completed its access epoch at member l (a WIN_COMPLETE, or
 * an op with RMAD_AMF_PSCW_DONE applied): its wait counts it, and a
 * waiter woken for it counts as a client we woke (a->woke). */
void winsync_count_complete(struct agent *a, struct win_local *l);

#endif
