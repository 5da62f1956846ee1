/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmpi.h - librmad-mpi's insides: the PMPI interposition library that runs
 * an unmodified MPI program's RMA on rmad (rmad-mpi(7)).
 *
 * The modules, calls going downward:
 *   init.c  MPI_Init*, MPI_Finalize: rmad_init beside MPI, strict mode,
 *           the one-time notices and the end-of-job report;
 *   req.c   request ops' MPI_Requests (generalized requests) and the
 *           MPI_Wait/Test families that complete them;
 *   sync.c  fence, PSCW, lock/unlock, flushes, sync;
 *   rma.c   put ... compare_and_swap and their request forms;
 *   win.c   window creation in the four flavors, free, attach/detach,
 *           queries, MPI_Alloc_mem/MPI_Free_mem, and the window table;
 *   map.c   translation: datatypes (decoded and cached on the MPI type),
 *           ops, asserts, lock types, communicators and groups, errors;
 *   darray.c  a distributed-array datatype in rmad's constructors;
 *   boot.c  the job learnt through MPI, where the launcher has no PMIx.
 * abi.h holds what differs between the Open MPI and the MPICH builds.
 */
#ifndef RMPI_H
#define RMPI_H

#include <mpi.h>
#include <stdint.h>

#include "abi.h"

#include "rmad.h"

/* One MPI window as the library sees it. */
struct mwin {
	MPI_Win handle;			/* the user's MPI_Win (a real window) */
	rmad_win_t rw;			/* RMAD_WIN_NULL when MPI serves it */
	rmad_win_t wp;			/* rw resolved (rmad_win_resolve) */
	int *world;			/* comm rank -> job rank; NULL: same */
	int gsize;			/* ranks of the window's communicator */
	int flavor;			/* MPI_WIN_FLAVOR_* */
	/* the values MPI_Win_get_attr points to */
	void *base;
	MPI_Aint size;
	int disp_unit;
	int model;
	/* PSCW: the last group of post and of start, translated */
	MPI_Group pgrp, sgrp;
	rmad_group_t prg, srg;
	int *pranks, *sranks;
	int pn, sn;
	uint64_t ops;			/* ops this process posted on it */
	int serial;			/* the report's window number */
	void *dummy;			/* the handle's (empty) memory */
	MPI_Group grp;			/* the communicator's group (the
					 * handle's own is MPI_COMM_SELF's) */
	int has_grp;
};

struct rmpi {
	int on;				/* rmad is in use (init succeeded) */
	int disabled;			/* RMAD_MPI_DISABLE=1: MPI serves all,
					 * quietly */
	int strict;			/* RMAD_MPI_STRICT=1 */
	int report;			/* RMAD_MPI_REPORT=1 */
	int rank, size;
	int finalized;
};
extern struct rmpi rmpi;

/* init.c */
void rmpi_notice(const char *what, ...)
	__attribute__((format(printf, 1, 2)));
void rmpi_unmapped(const char *what, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * MPI's own argument checks, beyond rmad's codes, made as Open MPI
 * makes them (t/mpi-args.sh): a negative count (MPI_ERR_COUNT), a
 * negative displacement outside a dynamic window (MPI_ERR_DISP), a bad
 * lock type (MPI_ERR_LOCKTYPE), an assert of bits MPI does not define
 * (MPI_ERR_ASSERT).
 */
#define RMPI_ERR_COUNT		(-1000)
#define RMPI_ERR_DISP		(-1001)
#define RMPI_ERR_LOCKTYPE	(-1002)
#define RMPI_ERR_ASSERT		(-1003)

/* boot.c */
int rmpi_boot_by_mpi(void);
int rmpi_boot_mpi(void);

/* map.c */
int rmpi_map_init(void);
void rmpi_map_fini(void);
int rmpi_type_slow(MPI_Datatype t, rmad_datatype_t *out);
/* darray.c: the type of MPI_Type_create_darray's contents (iv: its ni
 * integers) over old; 0 or RMAD_ERR_*. */
int rmpi_darray(const int *iv, int ni, rmad_datatype_t old,
		rmad_datatype_t *out);
int rmpi_op(MPI_Op op, rmad_op_t *out);
int rmpi_op_on(MPI_Op op, MPI_Datatype t, rmad_op_t *out);
int rmpi_assert(int mpi_assert);
int rmpi_lock_type(int mpi_lock, int *out);
int rmpi_errclass(int rmad_err);
int rmpi_comm_world_ranks(MPI_Comm comm, int **world, int *n);
int rmpi_group_world_ranks(MPI_Group g, int **world, int *n);
int rmpi_info_hints(MPI_Info info, char *buf, size_t len);
int rmpi_hints_info(const char *hints, MPI_Info *info);

/* win.c */
struct mwin *rmpi_win_slow(MPI_Win w);
void rmpi_win_report(void);
int rmpi_win_raise(struct mwin *m, int err);

/*
 * The fast paths, inline: an op's window is most often the last one
 * looked up, and its datatypes sit in the first slot of their cache line
 * (map.c, win.c hold the tables and the slow paths).
 */
extern struct mwin *rmpi_last_win;

static inline struct mwin *rmpi_win(MPI_Win w)
{
	struct mwin *m = __atomic_load_n(&rmpi_last_win, __ATOMIC_ACQUIRE);

	if (m && m->handle == w)
		return m;
	return rmpi_win_slow(w);
}

static inline int rmpi_win_err(struct mwin *m, int err)
{
	return err ? rmpi_win_raise(m, err) : MPI_SUCCESS;
}

#define RMPI_TCACHE 256
struct rmpi_tslot {
	MPI_Datatype m;			/* 0: empty (MPI_DATATYPE_NULL is not 0) */
	rmad_datatype_t r;
};
extern struct rmpi_tslot rmpi_tcache[RMPI_TCACHE];

static inline unsigned int rmpi_thash(MPI_Datatype t)
{
	uintptr_t v = rmpi_hword(t);

	return (unsigned int)((v >> 4) ^ (v >> 12)) & (RMPI_TCACHE - 1);
}

static inline int rmpi_type(MPI_Datatype t, rmad_datatype_t *out)
{
	struct rmpi_tslot *s = &rmpi_tcache[rmpi_thash(t)];

	if (__atomic_load_n(&s->m, __ATOMIC_ACQUIRE) == t) {
		*out = s->r;
		return 0;
	}
	return rmpi_type_slow(t, out);
}

/*
 * The checks of a data operation's target, in Open MPI's order after
 * its counts': the rank (t, from rmpi_target), then the displacement
 * (an address, in a dynamic window, which rmad checks).
 */
static inline int rmpi_check_target(const struct mwin *m, int t,
				    MPI_Aint tdisp)
{
	if (t == -1)
		return RMAD_ERR_RANK;
	if (tdisp < 0 && m->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return RMPI_ERR_DISP;
	return 0;
}

/* How a window's target rank becomes a job rank: -1 when out of range,
 * RMAD_PROC_NULL for MPI_PROC_NULL. */
static inline int rmpi_target(const struct mwin *m, int rank)
{
	if (rank == MPI_PROC_NULL)
		return RMAD_PROC_NULL;
	if (rank < 0 || rank >= m->gsize)
		return -1;
	return m->world ? m->world[rank] : rank;
}

/*
 * librmad's own entries of the data operations, of flush and of the
 * boot preset (client/mpi_api.h, the one header mpi/ shares with
 * client/): the client is compiled into librmad-mpi, so the blocking
 * forms call them directly, past the public wrappers (rq NULL: no
 * request), on the window resolved once from its handle (m->wp).
 */
#include "mpi_api.h"

/* req.c */
int rmpi_req_new(struct mwin *m, rmad_request_t rr, MPI_Request *out);
int rmpi_req_any(void);

#endif
