/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_api.h - the client's internal entries that librmad-mpi (mpi/) calls.
 *
 * The client is compiled into librmad-mpi (libclientmpi.la), so the MPI
 * layer's blocking forms call these directly, past the public wrappers of
 * rmad.h.  This header is the whole contract between mpi/ and client/:
 * client/internal.h includes it, and so does mpi/rmpi.h; nothing in mpi/
 * may include internal.h.  The entries are hidden (not exported).
 */
#ifndef RMAD_MPI_API_H
#define RMAD_MPI_API_H

#include <stddef.h>

#include "rmad.h"

struct rmad_request_s;

#define RMAD_HIDDEN __attribute__((visibility("hidden")))

/* boot.c: the job as the caller knows it, for the next rmad_init (the
 * preset backend, boot.h); 0, or RMAD_ERR_ARG for values that are no
 * job.  mpi/boot.c calls it when MPI, not PMIx, knows the job */
RMAD_HIDDEN int rmad_boot_preset(int rank, int size, int local_rank,
				 int local_size, const char *nspace);
/* rma.c: the data operations, with a request (NULL: none), on a window
 * already resolved from its handle (rmad_win_get; NULL or dead: error);
 * and rmad_win_flush on one (librmad-mpi keeps its windows resolved) */
RMAD_HIDDEN int rmad_win_flush_w(int target, rmad_win_t win);
/* win.c: rmad_win_get for librmad-mpi, which cannot see the handle table */
RMAD_HIDDEN rmad_win_t rmad_win_resolve(rmad_win_t handle);
/* win.c: librmad-mpi made an MPI window, served by rmad (1) or by MPI
 * (0): counted in this client's block for rmadctl status */
RMAD_HIDDEN void rmad_mpi_window_note(int by_rmad);
/* submit.c: the calling thread sleeps outside rmad (on) or no longer
 * (off): librmad-mpi's blocking waits on MPI alone (MPI_Barrier) count
 * as a waiter on a completion counter, so that the agent, which polls
 * while every client of its sleeps so, finds the next packet awake as
 * it does for rmad's own waits.  A no-op before rmad_init. */
RMAD_HIDDEN void rmad_idle_mark(int on);
RMAD_HIDDEN int rmad_put_req(const void *origin, int ocount,
			     rmad_datatype_t otype, int target, size_t tdisp,
			     int tcount, rmad_datatype_t ttype, rmad_win_t win,
			     struct rmad_request_s *rq);
RMAD_HIDDEN int rmad_get_req(void *origin, int ocount, rmad_datatype_t otype,
			     int target, size_t tdisp, int tcount,
			     rmad_datatype_t ttype, rmad_win_t win,
			     struct rmad_request_s *rq);
RMAD_HIDDEN int rmad_accumulate_req(const void *origin, int ocount,
				    rmad_datatype_t otype, int target,
				    size_t tdisp, int tcount,
				    rmad_datatype_t ttype, rmad_op_t op,
				    rmad_win_t win, struct rmad_request_s *rq);
RMAD_HIDDEN int rmad_get_accumulate_req(const void *origin, int ocount,
					rmad_datatype_t otype, void *result,
					int rcount, rmad_datatype_t rtype,
					int target, size_t tdisp, int tcount,
					rmad_datatype_t ttype, rmad_op_t op,
					rmad_win_t win,
					struct rmad_request_s *rq);

#endif
