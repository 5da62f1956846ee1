/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace.c - the event buffer of trace.h (./configure --enable-trace).
 * One buffer per process, filled by its one thread that traces (the
 * agent's loop; a client's submitting thread), written out at exit.
 */
#include "trace.h"

#ifdef RMAD_TRACE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TRACE_N (1u << 21)

struct trace_ev {
	unsigned long long ns;
	int ev;
	long arg;
};

static struct trace_ev *trace_buf;
static unsigned long long trace_n;

static void trace_dump(void)
{
	const char *dir = getenv("RMAD_TRACE_DIR");
	unsigned long long k = trace_n > TRACE_N ? trace_n - TRACE_N : 0;
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/rmad-trace.%d", dir ? dir : "/tmp",
		 (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	for (; k < trace_n; k++) {
		const struct trace_ev *e = &trace_buf[k % TRACE_N];

		fprintf(f, "%llu %d %ld\n", e->ns, e->ev, e->arg);
	}
	fclose(f);
}

void rmad_trace(int ev, long arg)
{
	struct timespec ts;
	struct trace_ev *e;

	if (!trace_buf) {
		trace_buf = malloc(sizeof(*trace_buf) * TRACE_N);
		if (!trace_buf)
			return;
		atexit(trace_dump);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	e = &trace_buf[trace_n++ % TRACE_N];
	e->ns = (unsigned long long)ts.tv_sec * 1000000000ull +
		(unsigned long long)ts.tv_nsec;
	e->ev = ev;
	e->arg = arg;
}
#endif
