/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * am_batch.h - node-level aggregation (am_batch.c), below the
 * active-message layer (am.h, which includes this header for the
 * modules that flush).
 */
#ifndef RMAD_AGENT_AM_BATCH_H
#define RMAD_AGENT_AM_BATCH_H

#include <stddef.h>

#include "agent.h"

/*
 * Node-level aggregation (the aggregate key): am_send_st() (am.h) puts
 * an RMA packet of a window, whose statistics st (or NULL) count it when
 * it shares a fabric message, in its node's open aggregate
 * (am_batch_add).  Operations and their answers to another node wait
 * there; a flush, an unlock, a full aggregate, a packet of another kind
 * to the node (am_batch_close), or am_flush() at the end of the agent's
 * pass (before it can go idle) sends it; an aggregate for a node
 * declared dead meanwhile is not sent.  am_forget_stats() drops st from
 * the open aggregates (its origin goes).
 */
int am_batch_start(struct agent *a);
void am_batch_fini(struct agent *a);
/* 1: queued in node's aggregate; 0: not for aggregation (send it). */
int am_batch_add(struct agent *a, int node, const struct rmad_am_hdr *h,
		 const void *payload, size_t plen, struct rmad_stats *st);
/* Send what waits for node now (another kind of packet follows). */
void am_batch_close(struct agent *a, int node);
void am_flush(struct agent *a);
void am_forget_stats(struct agent *a, const struct rmad_stats *st);

#endif
