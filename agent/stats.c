/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - the agent's statistics table and the three reports made
 * from it: rmadctl's text and JSON, and the log line of
 * stats_interval_ms.  A new counter in struct agent_stats gets one line
 * in stat_table and shows up everywhere.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

static const char *const am_names[RMAD_AM_TYPE_MAX] = {
	[RMAD_AM_PING] = "PING",
	[RMAD_AM_PONG] = "PONG",
	[RMAD_AM_JOB_JOIN] = "JOB_JOIN",
	[RMAD_AM_JOB_MAP] = "JOB_MAP",
	[RMAD_AM_BARRIER_ARRIVE] = "BARRIER_ARRIVE",
	[RMAD_AM_BARRIER_RELEASE] = "BARRIER_RELEASE",
	[RMAD_AM_JOB_FAIL] = "JOB_FAIL",
	[RMAD_AM_WIN_JOIN] = "WIN_JOIN",
	[RMAD_AM_WIN_READY] = "WIN_READY",
	[RMAD_AM_WIN_FREE_ARRIVE] = "WIN_FREE_ARRIVE",
	[RMAD_AM_WIN_FREE_DONE] = "WIN_FREE_DONE",
	[RMAD_AM_RMA_LOCK] = "LOCK",
	[RMAD_AM_RMA_LOCK_GRANTED] = "LOCK_GRANTED",
	[RMAD_AM_RMA_LOCK_RETRY] = "LOCK_RETRY",
	[RMAD_AM_RMA_UNLOCK] = "UNLOCK",
	[RMAD_AM_RMA_UNLOCK_ACK] = "UNLOCK_ACK",
	[RMAD_AM_RMA_PUT] = "PUT",
	[RMAD_AM_RMA_ACC] = "ACC",
	[RMAD_AM_RMA_GET] = "GET",
	[RMAD_AM_RMA_GACC] = "GET_ACC",
	[RMAD_AM_RMA_CAS] = "CAS",
	[RMAD_AM_RMA_ACK] = "ACK",
	[RMAD_AM_RMA_RESP] = "RESP",
	[RMAD_AM_RMA_NOTE] = "RDMA_NOTE",
	[RMAD_AM_RMA_FLUSH] = "FLUSH",
	[RMAD_AM_RMA_FLUSH_ACK] = "FLUSH_ACK",
	[RMAD_AM_HEARTBEAT] = "HEARTBEAT",
	[RMAD_AM_WIN_FENCE_ARRIVE] = "WIN_FENCE_ARRIVE",
	[RMAD_AM_WIN_FENCE_RELEASE] = "WIN_FENCE_RELEASE",
	[RMAD_AM_WIN_POST] = "WIN_POST",
	[RMAD_AM_WIN_COMPLETE] = "WIN_COMPLETE",
	[RMAD_AM_BATCH] = "BATCH",
	[RMAD_AM_TYPE_DEF] = "TYPE_DEF",
	[RMAD_AM_JOB_HELD] = "JOB_HELD",
};
/* a new packet type needs its name here */
static_assert(RMAD_AM_TYPE_MAX == RMAD_AM_JOB_HELD + 1, "am_names");

enum stat_kind {
	STAT_COUNT,			/* one uint64_t */
	STAT_PKT_SUM,			/* the sum of a per-type array */
};

static const struct stat_desc {
	const char *text;		/* text report and log */
	const char *json;		/* JSON key */
	const char *unit;		/* text report only */
	enum stat_kind kind;
	size_t off;
} stat_table[] = {
#define S(f, text, json, unit) \
	{ text, json, unit, STAT_COUNT, offsetof(struct agent_stats, f) }
#define P(f, text, json) \
	{ text, json, "", STAT_PKT_SUM, offsetof(struct agent_stats, f) }
	S(ops_done, "ops done", "ops_done", ""),
	S(ops_bad, "bad ops", "bad_ops", ""),
	S(wakeups, "wakeups", "wakeups", ""),
	S(sleeps, "sleeps", "sleeps", ""),
	S(clients_attached, "clients attached", "clients_attached",
	  " since start"),
	S(clients_died, "clients died", "clients_died", " since start"),
	S(clients_refused, "connections refused (not admitted, over a "
	  "quota, or not registered in time)", "clients_refused",
	  " since start"),
	P(pkts_sent, "packets sent", "pkts_sent_total"),
	P(pkts_recv, "packets received", "pkts_recv_total"),
	S(pkts_dropped, "packets dropped", "pkts_dropped", ""),
	S(pkts_held, "packets held (a busy accumulate lock)", "pkts_held",
	  ""),
	S(nodes_dead, "nodes declared dead", "nodes_dead", ""),
	S(nodes_suspect, "nodes held suspect (no echo in time)",
	  "nodes_suspect", ""),
	S(hb_gap_max_us, "longest wait for an echo", "hb_gap_max_us", " us"),
	S(tick_gap_max_us, "longest gap between timer runs",
	  "tick_gap_max_us", " us"),
	S(jobs_evicted, "jobs failed to make room (max_jobs)", "jobs_evicted",
	  ""),
	S(acc_bulk, "accumulates in bulk", "acc_bulk", ""),
	S(aggr_msgs, "aggregated messages", "aggr_msgs", ""),
	S(aggr_pkts, "packets in them", "aggr_pkts", ""),
	S(typed_ops, "ops with a cached target type", "typed_ops", ""),
	S(type_defs_sent, "target types sent", "type_defs_sent", ""),
	S(type_defs_recv, "target types cached", "type_defs_recv", ""),
	S(acc_pulls, "(get-)accumulate chunks read from origins",
	  "acc_pulls", ""),
	S(put_pulls, "put chunks read from origins", "put_pulls", ""),
	S(get_pushes, "get chunks written to origins", "get_pushes", ""),
	S(xfer_inplace, "chunks moved in place (no bounce copy)",
	  "xfer_inplace", ""),
	S(mem_kept, "released memory kept for a transfer", "mem_kept", ""),
	S(rt_lent, "SCHED_FIFO given up while busy", "rt_lent", ""),
	S(wait_spins, "polls begun while clients sleep", "wait_spins", ""),
	S(wait_spins_lost, "such polls that lost the core",
	  "wait_spins_lost", ""),
	S(wait_spins_raised, "of those, raised by the guard thread",
	  "wait_spins_raised", ""),
#undef S
#undef P
};

static uint64_t stat_value(const struct agent_stats *st,
			   const struct stat_desc *d)
{
	const char *base = (const char *)st + d->off;
	uint64_t v = 0;

	if (d->kind == STAT_COUNT) {
		memcpy(&v, base, sizeof(v));
		return v;
	}
	for (int t = 0; t < RMAD_AM_TYPE_MAX; t++) {
		uint64_t x;

		memcpy(&x, base + (size_t)t * sizeof(x), sizeof(x));
		v += x;
	}
	return v;
}

struct out {
	char *buf;
	size_t len, need;
};

static void out_printf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	size_t room = o->need < o->len ? o->len - o->need : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->need += (size_t)n;
}

size_t agent_stats_format(const struct agent_stats *st,
			  enum agent_stats_fmt f, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(stat_table) / sizeof(stat_table[0]);
	     i++) {
		const struct stat_desc *d = &stat_table[i];
		unsigned long long v = stat_value(st, d);

		switch (f) {
		case AGENT_STATS_TEXT:
			out_printf(&o, "  %-17s  %llu%s\n", d->text, v,
				   d->unit);
			break;
		case AGENT_STATS_JSON:
			out_printf(&o, ",\"%s\":%llu", d->json, v);
			break;
		case AGENT_STATS_LOG:
			out_printf(&o, "%s%s %llu", i ? ", " : "", d->text, v);
			break;
		}
	}
	return o.need;
}

const char *agent_stats_pkt_name(int type)
{
	if (type <= 0 || type >= RMAD_AM_TYPE_MAX || !am_names[type])
		return "";
	return am_names[type];
}
