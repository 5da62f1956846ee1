/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.h - the agent's statistics, described once.  The table in
 * stats.c names every counter of struct agent_stats; the text and JSON
 * reports of rmadctl and the periodic log line are generated from it,
 * so they cannot drift apart.
 */
#ifndef RMAD_AGENT_STATS_H
#define RMAD_AGENT_STATS_H

#include <stddef.h>

#include "agent.h"

enum agent_stats_fmt {
	AGENT_STATS_TEXT,		/* "  name    value unit\n" lines */
	AGENT_STATS_JSON,		/* "\"key\":value" pairs, comma first */
	AGENT_STATS_LOG,		/* "name value, ..." on one line */
};

/*
 * Writes the counters of st in format f into buf (always terminated,
 * cut to len).  Returns the length it needed, as snprintf does.
 */
size_t agent_stats_format(const struct agent_stats *st,
			  enum agent_stats_fmt f, char *buf, size_t len);

/* The packet types' names, for the per-type tables ("" for 0). */
const char *agent_stats_pkt_name(int type);

#endif
