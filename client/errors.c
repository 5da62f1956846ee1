/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errors.c - rmad_strerror and rmad_wtime, which need no initialization.
 */
#include <time.h>

#include "rmad.h"

const char *rmad_strerror(int err)
{
	static const char *const msg[] = {
		[0] = "success",
		[1] = "bad argument",
		[2] = "rank out of range",
		[3] = "access outside the target's window",
		[4] = "bad datatype",
		[5] = "bad reduction op",
		[6] = "call not valid in the current epoch",
		[7] = "out of memory",
		[8] = "agent unreachable, or it died",
		[9] = "a peer process died",
		[10] = "the launcher or PMIx failed",
		[11] = "the transport failed",
		[12] = "client and agent ABI mismatch",
		[13] = "not a same-node peer",
		[14] = "not allowed (another user or job)",
		[15] = "malformed hint string",
		[16] = "internal error",
	};

	if (err > 0 || err < RMAD_ERR_LAST)
		return "unknown error code";
	return msg[-err];
}

double rmad_wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
