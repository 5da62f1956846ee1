/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * windows.h - windows: collective create and free across the agents,
 * each node's table of its members, and the lookups the RMA layer uses
 * (windows.c).  Their fence barrier and PSCW notices: winsync.h.
 */
#ifndef RMAD_AGENT_WINDOWS_H
#define RMAD_AGENT_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

struct rmad_ctl_win_create;
struct rmad_ctl_win_free;

int agent_win_init(struct agent *a);
void agent_win_fini(struct agent *a);
void agent_win_create(struct agent *a, uint32_t c,
		      const struct rmad_ctl_win_create *m, size_t len, int fd);
void agent_win_free(struct agent *a, uint32_t c,
		    const struct rmad_ctl_win_free *m);
void agent_win_am(struct agent *a, const struct rmad_am_hdr *h,
		  const void *payload, struct agent_job *j);
void agent_win_job_failed(struct agent *a, struct agent_job *j);
void agent_win_job_freed(struct agent *a, struct agent_job *j);
/* Member l of w died: its peers' loads and stores and transfers from
 * other nodes are refused from now on (its control page's dead flag,
 * its registration closed). */
void agent_win_member_dead(struct agent *a, struct agent_win *w,
			   struct win_local *l);
/* Mappings of freed windows kept for late transfers go once their time
 * is up (now 0: all). */
void agent_win_tick(struct agent *a, uint64_t now);

struct agent_win *agent_win_by_block(struct agent *a, uint32_t block,
				     uint64_t key);
struct agent_win *agent_win_by_key(struct agent *a, struct agent_job *j,
				   uint64_t key);
/* The window key of c's job, c a member not freeing it; or NULL. */
struct agent_win *agent_win_of_client(struct agent *a, uint32_t c,
				      uint64_t key);
struct agent_win *agent_win_first(struct agent *a);
/* Size and unit of rank's window; RMAD_ERR_RANK if not a member. */
int agent_win_target(struct agent_win *w, int32_t rank, uint64_t *size,
		     int32_t *disp_unit);
struct win_local *agent_win_local(struct agent_win *w, int32_t rank);
/* Where rank's window is registered for one-sided transfers; 0 or -1. */
int agent_win_rkey(struct agent_win *w, int32_t rank, uint64_t *key,
		   uint64_t *addr);
int agent_win_rank_of(struct agent_win *w, int32_t grank);

#endif
