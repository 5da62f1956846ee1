/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c - rmad beside MPI: MPI_Init and MPI_Init_thread start rmad
 * (rmad_init: the agents of rmad-run, or an embedded one for a plain
 * single-node mpirun or mpiexec), MPI_Finalize stops it first.  Under a
 * launcher without PMIx the job is learnt through MPI first (boot.c).
 *
 * The environment:
 *   RMAD_MPI_DISABLE=1  everything goes to MPI (the library is inert);
 *   RMAD_MPI_STRICT=1   anything rmad cannot serve aborts the job with
 *                       the reason, instead of falling back to MPI;
 *   RMAD_MPI_REPORT=1   one line per window at its free: who served it
 *                       and how many ops it took;
 *   RMAD_MPI_BOOT=mpi|pmix  how the ranks learn their job (boot.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmpi.h"

struct rmpi rmpi;

static int env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/* A line on stderr, once per distinct message per process. */
void rmpi_notice(const char *fmt, ...)
{
	static char said[16][160];
	static int nsaid;
	char line[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (int i = 0; i < nsaid; i++)
		if (!strcmp(said[i], line))
			return;
	if (nsaid < 16)
		snprintf(said[nsaid++], sizeof(said[0]), "%s", line);
	fprintf(stderr, "rmad-mpi: rank %d: %s\n", rmpi.rank, line);
}

/* Something rmad cannot serve: said once; fatal when strict. */
void rmpi_unmapped(const char *fmt, ...)
{
	char line[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (rmpi.strict) {
		fprintf(stderr, "rmad-mpi: rank %d: cannot map %s "
			"(RMAD_MPI_STRICT=1): aborting\n", rmpi.rank, line);
		PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION);
	}
	rmpi_notice("cannot map %s", line);
}

/* rmad beside an initialized MPI; every rank agrees whether it is on. */
static void start(int *argc, char ***argv)
{
	int err = 0, r = -1, n = -1, ok, all = 0;

	PMPI_Comm_rank(MPI_COMM_WORLD, &rmpi.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &rmpi.size);
	rmpi.strict = env_on("RMAD_MPI_STRICT");
	rmpi.report = env_on("RMAD_MPI_REPORT");
	if (env_on("RMAD_MPI_DISABLE")) {
		rmpi.disabled = 1;
		return;
	}
	if (rmpi_boot_by_mpi())
		err = rmpi_boot_mpi();
	if (!err)
		err = rmad_init(argc, argv);
	if (!err) {
		rmad_rank(&r);
		rmad_size(&n);
		if (r != rmpi.rank || n != rmpi.size)
			err = RMAD_ERR_BOOTSTRAP;
	}
	if (!err)
		err = rmpi_map_init();
	ok = !err;
	PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (all) {
		rmpi.on = 1;
		return;
	}
	if (ok)
		err = RMAD_ERR_BOOTSTRAP;	/* another rank failed */
	rmpi_unmapped("this job (rmad_init: %s; rmad rank %d of %d, MPI "
		      "rank %d of %d); MPI serves every window",
		      rmad_strerror(err), r, n, rmpi.rank, rmpi.size);
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		start(argc, argv);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		start(argc, argv);
	return rc;
}

int MPI_Finalize(void)
{
	if (rmpi.on && !rmpi.finalized) {
		if (rmpi.report)
			rmpi_win_report();
		rmpi_map_fini();
		rmad_finalize();
		rmpi.finalized = 1;
		rmpi.on = 0;
	}
	return PMPI_Finalize();
}
