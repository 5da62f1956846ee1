/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.h - the RMA layer's interface to the modules above it: the operation table, remote operations and target-side lock granting (rma.c).
 */
#ifndef RMAD_AGENT_RMA_H
#define RMAD_AGENT_RMA_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

struct rmad_stats;

int agent_rma_init(struct agent *a);
/* Bytes of a derived target type that ops may carry (the segment header
 * says it to clients); 0 when this agent takes no typed ops. */
uint32_t ty_blob_max(struct agent *a);
/* Packed bytes of one chunk of a typed op. */
uint32_t ty_chunk_max(struct agent *a);
void agent_rma_fini(struct agent *a);
/* Client c submitted RMA op element i (its index checked already). */
void agent_rma_op(struct agent *a, uint32_t c, uint32_t op,
		  const struct rmad_op_elem *e);
/* MAKE_RMA_PROGRESS_GLOBAL: issue and clean up what can move. */
int make_rma_progress_global(struct agent *a);
/* fi_write/fi_read chunks in flight: their completions come from the
 * peer's progress, which rings no bell here, so the agent must not
 * sleep on them */
int agent_rma_transfers(struct agent *a);
/* Large accumulates read from their origins, or ops whose lock was
 * granted, that wait for a member's accumulate lock (rma_pull.c,
 * rma_target.c): any?  Try the former again (the latter go each pass,
 * with the lock grants). */
int agent_rma_waiting(struct agent *a);
void agent_rma_retry(struct agent *a);
void agent_rma_client_gone(struct agent *a, uint32_t c);
void agent_rma_win_gone(struct agent *a, struct agent_win *w);
/* client c found no op element to take: release what rma.c holds back */
void agent_rma_unhold(struct agent *a, uint32_t c);
/* The agent's counters for client c's use of window w (the fields
 * counted by the agent; the process-counted ones come back zero, and
 * *out is left alone when c never sent anything remote on w). */
void agent_rma_win_stats(struct agent_win *w, uint32_t c, uint32_t gen,
			 struct rmad_stats *out);

#endif
