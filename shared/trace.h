/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace.h - timestamps of the submission path's steps, for seeing where
 * the microseconds of an operation go (doc/measurements.md).  Built only
 * with ./configure --enable-trace; otherwise RMAD_TRACE compiles to
 * nothing.  Each process (agent or client) keeps its last 2^21 events
 * in memory and writes them at exit to $RMAD_TRACE_DIR/rmad-trace.PID
 * (default /tmp), a line each: CLOCK_MONOTONIC ns, event, argument.
 * tools/trace-window merges an origin's and a target's files into one
 * timeline.
 */
#ifndef RMAD_TRACE_H
#define RMAD_TRACE_H

enum rmad_trace_ev {
	/* agent */
	RMAD_TR_RING = 1,	/* ops taken from a client's ring (count) */
	RMAD_TR_SEND,		/* a fabric message handed to the provider
				 * (bytes) */
	RMAD_TR_SENT,		/* ... the provider returned (status) */
	RMAD_TR_RECV,		/* a fabric message received (bytes) */
	RMAD_TR_COUNT,		/* a client's counter moves (which) */
	RMAD_TR_WAKE,		/* a client woken (counters moved, a mask) */
	RMAD_TR_SLEEP,		/* the agent sleeps */
	RMAD_TR_AWAKE,		/* ... and runs again */
	/* client */
	RMAD_TR_SYNC = 20,	/* a synchronous element submitted */
	RMAD_TR_SYNC_DONE,	/* ... its answer came (status) */
	RMAD_TR_FUTEX,		/* a counter wait sleeps (which) */
	RMAD_TR_FUTEX_WOKEN,	/* ... and returns (which) */
};

#ifdef RMAD_TRACE
void rmad_trace(int ev, long arg);
#define RMAD_TR(ev, arg) rmad_trace((ev), (long)(arg))
#else
#define RMAD_TR(ev, arg) ((void)0)
#endif

#endif
