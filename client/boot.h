/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot.h - how librmad learns its job from the runtime that started it,
 * behind one small interface with a backend per runtime (as Sandia
 * OpenSHMEM's runtime layer has: pmix, pmi, pmi2, mpi):
 *
 *   preset     the caller said it all before rmad_init
 *              (rmad_boot_preset): librmad-mpi bootstrapping through MPI
 *              under a launcher without PMIx (MPICH's hydra; mpi/boot.c);
 *   pmix       the launcher's PMIx server (boot_pmix.c): Open MPI's
 *              mpirun, Slurm's PMIx plugin, PRRTE;
 *   pmi        PMI-2 (or PMI-1) over the socket in PMI_FD (boot_pmi.c):
 *              Slurm's srun --mpi=pmi2, MPICH's hydra;
 *   singleton  no launcher: a job of one.
 *
 * The first backend whose probe says yes fills rank, size, local rank
 * and size and the job's name (nspace); boot.c adds what comes from
 * rmad-run (virtual nodes, the session) whatever the backend.
 */
#ifndef RMAD_CLIENT_BOOT_H
#define RMAD_CLIENT_BOOT_H

#include <stddef.h>

struct rmad_bootinfo;

struct rmad_boot_backend {
	const char *name;
	int (*probe)(void);			/* 1: this runtime started us */
	int (*init)(struct rmad_bootinfo *b);	/* 0 or RMAD_ERR_* */
	void (*fini)(struct rmad_bootinfo *b);	/* NULL: nothing to undo */
};

extern const struct rmad_boot_backend rmad_boot_pmix;
extern const struct rmad_boot_backend rmad_boot_pmi;

/* boot_pmi.c's parsing, for t/test_pmi */
int rmad_pmi_field(const char *msg, int v2, const char *key, char *out,
		   size_t cap);
int rmad_pmi_map_nodes(const char *map, int size, int *node_of);
int rmad_pmi_local(const char *map, int rank, int size, int *lrank,
		   int *lsize);

/*
 * rmad_boot_preset, the job as the caller knows it for the next
 * rmad_init (the preset backend), is declared in mpi_api.h: librmad-mpi,
 * into which the client is compiled, calls it.
 */

#endif
