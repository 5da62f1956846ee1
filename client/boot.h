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
 *   singleton  no launcher: a job of one.
 *
 * The first backend whose probe says yes fills rank, size, local rank
 * and size and the job's name (nspace); boot.c adds what comes from
 * rmad-run (virtual nodes, the session) whatever the backend.
 */
#ifndef RMAD_CLIENT_BOOT_H
#define RMAD_CLIENT_BOOT_H

struct rmad_bootinfo;

struct rmad_boot_backend {
	const char *name;
	int (*probe)(void);			/* 1: this runtime started us */
	int (*init)(struct rmad_bootinfo *b);	/* 0 or RMAD_ERR_* */
	void (*fini)(struct rmad_bootinfo *b);	/* NULL: nothing to undo */
};

extern const struct rmad_boot_backend rmad_boot_pmix;

/*
 * rmad_boot_preset, the job as the caller knows it for the next
 * rmad_init (the preset backend), is declared in mpi_api.h: librmad-mpi,
 * into which the client is compiled, calls it.
 */

#endif
