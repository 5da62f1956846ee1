/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_pmixwait.c - a rank of a job that runs no rmad code: it is a
 * PMIx client (so that the launcher takes its end for a proper one),
 * waits until FILE exists or SECS pass, and ends.  t/rogue-win.sh runs
 * it as the rank whose node is played by t/test_rogue.
 *
 * usage: prog_pmixwait FILE SECS; exit status 0 once FILE exists,
 * 1 after SECS without it, 2 without PMIx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <pmix.h>

int main(int argc, char **argv)
{
	pmix_proc_t me;
	int secs = argc > 2 ? atoi(argv[2]) : 60, rc = 1;

	if (argc < 2 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
		fprintf(stderr, "prog_pmixwait: no PMIx server\n");
		return 2;
	}
	for (int i = 0; i < secs * 10; i++) {
		if (!access(argv[1], F_OK)) {
			rc = 0;
			break;
		}
		usleep(100000);
	}
	PMIx_Finalize(NULL, 0);
	return rc;
}
