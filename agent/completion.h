/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * completion.h - the completion layer: the segment's op elements, their
 * lending, completion counters and wakeups (completion.c).
 */
#ifndef RMAD_AGENT_COMPLETION_H
#define RMAD_AGENT_COMPLETION_H

#include <stdint.h>

struct agent;

/* The shared segment and the private owner records of its elements. */
int completion_segment_create(struct agent *a);
void completion_segment_destroy(struct agent *a);

/* 0 and marked in flight when index i is client c's to submit. */
int completion_op_take(struct agent *a, uint32_t c, uint32_t i);
/* The RMAD_OPF_* flags of taken element i, from the agent's private
 * copy: completion_op_done() trusts these, not the shared element. */
void completion_op_flags(struct agent *a, uint32_t i, uint16_t flags);
/* End op i of client c: status, counters, the element back home. */
void completion_op_done(struct agent *a, uint32_t c, uint32_t i, int status);
/* Op i ended after its client went away: a lent element goes home. */
void completion_op_abandon(struct agent *a, uint32_t i);
/* Wake the clients whose counters moved since the last call. */
void completion_flush_wakeups(struct agent *a);

/* Lending: 1 when nothing could be lent, so held ops must go. */
int completion_refill(struct agent *a, uint32_t c);
/* The op_pool hint's sync ops (RMAD_OPC_OPS_RESERVE/RETURN). */
void completion_ops_reserve(struct agent *a, uint32_t c, uint32_t i,
			    const struct rmad_op_elem *e);
void completion_ops_return(struct agent *a, uint32_t c, uint32_t i,
			   const struct rmad_op_elem *e);
void completion_client_reset(struct agent *a, uint32_t c);
/* A new segment for client slot c, mapped at its place: its memfd, to
 * send to the client (the caller closes it), or -errno. */
int completion_client_segment(struct agent *a, uint32_t c);
uint32_t completion_client_gone(struct agent *a, uint32_t c);
/* How many of slot c's elements are still in flight: a slot whose last
 * client died is not given to a new one until this is 0, so no late
 * result of the dead client's ops lands in the newcomer's segment. */
uint32_t completion_slot_inflight(struct agent *a, uint32_t c);

uint32_t completion_global_free(struct agent *a);
/* global elements reserved to windows' op pools (op_pool hint) */
uint32_t completion_global_reserved(struct agent *a);

#endif
