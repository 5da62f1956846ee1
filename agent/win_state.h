/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * win_state.h - the agent's window objects (win_state.c): made, found,
 * failed and destroyed.  The lookups are the RMA layer's (through
 * windows.h); the win_* entries below them are for the windows modules
 * above (win_join.c, windows.c) only.
 */
#ifndef RMAD_AGENT_WIN_STATE_H
#define RMAD_AGENT_WIN_STATE_H

#include <stdint.h>
#include <sys/types.h>

#include "agent.h"
#include "rmad_abi.h"

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


/* --- for win_join.c and windows.c */

#define WIN_SIZE_MAX	(1ull << 40)	/* 1 TiB per rank */

/* Entries a node joined with before the group was known (meta_add). */
struct win_joined {
	int node;
	int32_t gsize;			/* the group's size it said */
	int32_t n, cap;
	struct rmad_am_win_member *m;
};


/* A new window of job j, in the tables; NULL without memory. */
struct agent_win *win_state_new(struct agent *a, struct agent_job *j,
			  uint64_t key, int32_t gsize);
/* w out of the tables and freed; its mapping and registration kept a
 * while when transfers may still land there. */
void win_state_destroy(struct agent *a, struct agent_win *w);
/* w no longer counts among the windows others' joins made first. */
void win_state_early_end(struct agent_win *w);
/* The joins kept before w's group was known, dropped. */
void win_state_joined_free(struct agent_win *w);
/* w's table sorted by rank, for win_state_member_index; 0 or -1. */
int win_state_sort(struct agent_win *w);
/* rank's entry in w's table, or -1. */
int32_t win_state_member_index(const struct agent_win *w, int32_t rank);
/* The node of w's group member grank, or -1. */
int win_state_member_node(struct agent_win *w, int32_t grank);
/* Whether member l's client is still the one that asked. */
int win_state_client_alive(struct agent *a, const struct win_local *l);
/* Answer member l's create or free with status (once it waits). */
void win_state_reply(struct agent *a, struct agent_win *w, struct win_local *l,
	       int status);

#endif
