/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win_join.h - the windows' packets between agents (win_join.c):
 * WIN_JOIN to the root, WIN_READY from it, WIN_FREE_ARRIVE, WIN_FREE_DONE.
 */
#ifndef RMAD_AGENT_WIN_JOIN_H
#define RMAD_AGENT_WIN_JOIN_H

#include <stdint.h>

#include "agent.h"
#include "rmad_abi.h"

/* The four packets' handlers, registered. */
void win_join_init(struct agent *a);
/* Entries m[0, n) of w to node, as packet type (WIN_JOIN, WIN_READY),
 * in chunks that fit a message. */
void win_join_send_members(struct agent *a, int node, int type,
		      struct agent_win *w,
		      const struct rmad_am_win_member *m, int32_t n);
/* Once w's group is known: the joins kept before it, checked and
 * taken. */
void win_join_replay(struct agent *a, struct agent_win *w);

#endif
