/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wintab.h - the agent's tables of windows (wintab.c), below windows.c:
 * insert/remove/find by (job, key), window blocks, per-user quotas.
 */
#ifndef RMAD_WINTAB_H
#define RMAD_WINTAB_H

#include <sys/types.h>

struct agent;
struct agent_job;
struct agent_win;

/* w (its job and key set) into the list and the hash; -1 without
 * memory (nothing changed). */
int wintab_insert(struct agent *a, struct agent_win *w);
void wintab_remove(struct agent *a, struct agent_win *w);
struct agent_win *wintab_find(struct agent *a, struct agent_job *j,
			      uint64_t key);
/* A free block for w (w->block); -1 without memory. */
int wintab_block_take(struct agent *a, struct agent_win *w);
void wintab_block_put(struct agent *a, struct agent_win *w);
/* w counts in uid's windows; RMAD_ERR_NOMEM past max_windows (0: no
 * quota) or without memory. */
int wintab_quota_charge(struct agent *a, struct agent_win *w, uid_t uid);
void wintab_quota_release(struct agent *a, struct agent_win *w);

#endif
