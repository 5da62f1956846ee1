/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot.c - the MPI backend of librmad's bootstrap (client/boot.h): under
 * a launcher without PMIx (MPICH's hydra), the ranks learn their job
 * through MPI itself before rmad_init, and hand it to the client's
 * preset backend.
 *
 *   rank, size   MPI_COMM_WORLD's;
 *   local rank   in MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), the node's
 *   and size     ranks (rmad-run's RMAD_VNODES still splits them after);
 *   job name     rank 0's host, pid and clock, broadcast: the agents key
 *                the job on it, and an embedded agent's session is named
 *                after it, so every rank must hold the same one.
 *
 * Which one serves: RMAD_MPI_BOOT=mpi|pmix, else the ABI's default
 * (abi.h: MPI for MPICH, PMIx for Open MPI, whose mpirun always has it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rmpi.h"

int rmpi_boot_by_mpi(void)
{
	const char *v = getenv("RMAD_MPI_BOOT");

	if (v && !strcmp(v, "mpi"))
		return 1;
	if (v && !strcmp(v, "pmix"))
		return 0;
	return RMPI_BOOT_BY_MPI_DEFAULT;
}

int rmpi_boot_mpi(void)
{
	char ns[128] = "";
	int rank, size, lrank = 0, lsize = 1;
	MPI_Comm node = MPI_COMM_NULL;

	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
				 MPI_INFO_NULL, &node) != MPI_SUCCESS)
		return RMAD_ERR_BOOTSTRAP;
	PMPI_Comm_rank(node, &lrank);
	PMPI_Comm_size(node, &lsize);
	PMPI_Comm_free(&node);
	if (rank == 0) {
		char host[64] = "";
		struct timespec ts;

		gethostname(host, sizeof(host) - 1);
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(ns, sizeof(ns), "mpi.%s.%d.%lx", host, (int)getpid(),
			 (unsigned long)ts.tv_sec);
	}
	if (PMPI_Bcast(ns, sizeof(ns), MPI_CHAR, 0, MPI_COMM_WORLD) !=
	    MPI_SUCCESS)
		return RMAD_ERR_BOOTSTRAP;
	ns[sizeof(ns) - 1] = '\0';
	return rmad_boot_preset(rank, size, lrank, lsize, ns);
}
