/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abi.h - every difference between the MPI ABIs that librmad-mpi is built
 * for, in one place: librmad-mpi.so against Open MPI's mpi.h and
 * librmad-mpich.so against MPICH's (Intel MPI, MVAPICH, Cray MPICH share
 * its ABI).  The rest of mpi/ is the same source for both.
 *
 * What differs, and where it is met:
 *   handles    Open MPI's are pointers to its objects, MPICH's are ints
 *              whose high bits say the kind of object (0x4c000405 is
 *              MPI_INT) and whose low bits count up.  The tables of
 *              windows, datatypes and requests hash rmpi_hword(handle), a
 *              word either way (MPICH's mixed, as its low bits are dense
 *              and its high bits alike in one table) and compare the
 *              handles themselves; 0 is no valid handle in either
 *              (MPICH's HANDLE_KIND_INVALID), so it marks an empty slot.
 *   status     Open MPI's MPI_Status holds _cancelled and _ucount, MPICH's
 *              count_lo and count_hi_and_cancelled: the library sets only
 *              the public fields (MPI_SOURCE, MPI_TAG, MPI_ERROR) and the
 *              rest through PMPI_Status_set_elements/_set_cancelled.
 *   commit     neither MPI says whether a type is committed; a send to
 *              MPI_PROC_NULL, which does nothing, checks it as their
 *              one-sided calls do (map.c) -- Open MPI at any count,
 *              MPICH only for a count above 0, so its probe sends 1
 *              (from a buffer that is never read).
 *   constants  both mpi.h define the same names; only MPI_ERR_PROC_FAILED
 *              (MPIX_ in both, Open MPI 5 and MPICH with ULFM) may be
 *              missing, and RMPI_HAVE_PROC_FAILED says whether it is.
 *   PMPI_*     both libraries export the profiling entries of every call
 *              from the one shared object (libmpi.so.40, libmpich.so.12),
 *              so the interposer calls PMPI_* directly either way.
 *   launch     Open MPI's mpirun serves PMIx, which librmad's own boot
 *              reads; MPICH's hydra serves PMI-1/2 only, so the ranks
 *              bootstrap through MPI itself (boot.c, RMPI_BOOT_BY_MPI).
 */
#ifndef RMPI_ABI_H
#define RMPI_ABI_H

#include <mpi.h>
#include <stdint.h>

#if defined(MPICH) || defined(MPICH_VERSION)
#define RMPI_ABI_MPICH		1
#define RMPI_ABI_NAME		"MPICH"
#elif defined(OPEN_MPI)
#define RMPI_ABI_OMPI		1
#define RMPI_ABI_NAME		"Open MPI"
#else
#error "librmad-mpi knows the ABIs of Open MPI and of MPICH only"
#endif

/* A handle as the word its table hashes. */
#ifdef RMPI_ABI_MPICH
#define rmpi_hword(h)	((uintptr_t)(unsigned int)(h) * \
			 (uintptr_t)0x9e3779b97f4a7c15ull >> 16)
#else
#define rmpi_hword(h)	((uintptr_t)(h))
#endif

#if defined(MPI_ERR_PROC_FAILED)
#define RMPI_HAVE_PROC_FAILED	1
#define RMPI_ERR_PROC_FAILED	MPI_ERR_PROC_FAILED
#elif defined(MPIX_ERR_PROC_FAILED)
#define RMPI_HAVE_PROC_FAILED	1
#define RMPI_ERR_PROC_FAILED	MPIX_ERR_PROC_FAILED
#endif

/* map.c's committed(): the count of its send to MPI_PROC_NULL */
#ifdef RMPI_ABI_MPICH
#define RMPI_COMMIT_PROBE_COUNT	1
#else
#define RMPI_COMMIT_PROBE_COUNT	0
#endif

/*
 * How the ranks learn their job: through the launcher's PMIx where it
 * has one (librmad's boot, as for a native program), else through MPI
 * (mpi/boot.c).  Open MPI always launches with PMIx; MPICH never does
 * (hydra), but a MPICH built for Slurm's PMIx may.
 */
#ifdef RMPI_ABI_MPICH
#define RMPI_BOOT_BY_MPI_DEFAULT	1
#else
#define RMPI_BOOT_BY_MPI_DEFAULT	0
#endif

#endif
