/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad.h - the public C API of librmad.
 *
 * librmad gives an application MPI-3 RMA semantics while all progress
 * (lock granting, applying incoming operations, sending acks) is made by
 * the per-node agent, rmad(8).  The names and signatures below are a
 * contract: programs are written against them, so they never change.
 * See rmad(7) for the overview and one man page per function.
 */
#ifndef RMAD_H
#define RMAD_H

#include <stddef.h>
#include <stdint.h>

#include "rmad_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * librmad is built with hidden visibility: only what this header
 * declares is exported (t/exports.sh checks the list against the man
 * pages).
 */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define RMAD_VERSION_MAJOR 0
#define RMAD_VERSION_MINOR 1

/* Opaque handles. */
typedef struct rmad_win_s *rmad_win_t;
typedef struct rmad_group_s *rmad_group_t;
typedef struct rmad_request_s *rmad_request_t;

#define RMAD_WIN_NULL		((rmad_win_t)0)
/* A target rank that makes an operation, lock, unlock or flush a no-op;
 * in rmad_win_shared_query, the lowest member with a nonzero size. */
#define RMAD_PROC_NULL		(-2)
#define RMAD_GROUP_NULL		((rmad_group_t)0)
#define RMAD_REQUEST_NULL	((rmad_request_t)0)
#define RMAD_DATATYPE_NULL	((rmad_datatype_t)0)

/* Every rank of the job. */
#define RMAD_GROUP_ALL		((rmad_group_t)1)

/* Lifecycle. */
int rmad_init(int *argc, char ***argv);
int rmad_finalize(void);
int rmad_rank(int *rank);
int rmad_size(int *size);
int rmad_barrier(void);
double rmad_wtime(void);
const char *rmad_strerror(int err);

/*
 * Extensions beyond the API contract: where this process runs, and a
 * round trip through the agents (used by examples/hello and rmad-bench).
 */
struct rmad_info {
	int rank;		/* rank in the job */
	int size;		/* ranks in the job */
	int node;		/* node (agent) index serving this rank */
	int nnodes;		/* agents in the mesh */
	int local_rank;		/* rank among this node's ranks of the job */
	int local_size;		/* ranks of the job on this node */
	int agent_pid;		/* pid of the serving agent */
	int agent_core;		/* core the agent is pinned to, -1 if none */
	char hostname[64];	/* host of the serving agent */
	char provider[32];	/* libfabric provider of the mesh */
	char session[64];	/* session the agent serves */
};
int rmad_get_info(struct rmad_info *info);
int rmad_ping(int rank);

/* Groups. */
int rmad_group_incl(const int *ranks, int n, rmad_group_t *group);
int rmad_group_free(rmad_group_t *group);
int rmad_group_size(rmad_group_t group, int *size);
int rmad_group_ranks(rmad_group_t group, int *ranks);

/* Memory the agent reads and writes in place. */
int rmad_alloc_mem(size_t size, void **ptr);
int rmad_free_mem(void *ptr);

/* Windows. */
int rmad_win_allocate(size_t size, int disp_unit, const char *hints,
		      rmad_group_t group, void *base_out, rmad_win_t *win);
/* A window over memory the process has (heap, stack, static). */
int rmad_win_create(void *base, size_t size, int disp_unit, const char *hints,
		    rmad_group_t group, rmad_win_t *win);
/* Dynamic windows: displacements are addresses (rmad_get_address). */
int rmad_win_create_dynamic(const char *hints, rmad_group_t group,
			    rmad_win_t *win);
int rmad_win_attach(rmad_win_t win, void *base, size_t size);
int rmad_win_detach(rmad_win_t win, const void *base);
int rmad_get_address(const void *location, size_t *address);
/* One node's members, one region contiguous in rank order. */
int rmad_win_allocate_shared(size_t size, int disp_unit, const char *hints,
			     rmad_group_t group, void *base_out,
			     rmad_win_t *win);
int rmad_win_free(rmad_win_t *win);
int rmad_win_shared_query(rmad_win_t win, int rank, size_t *size,
			  int *disp_unit, void *base_out);

/* Window queries, with MPI's meanings. */
#define RMAD_WIN_BASE		1	/* value: void * */
#define RMAD_WIN_SIZE		2	/* value: size_t */
#define RMAD_WIN_DISP_UNIT	3	/* value: int */
#define RMAD_WIN_CREATE_FLAVOR	4	/* value: int, RMAD_WIN_FLAVOR_* */
#define RMAD_WIN_MODEL		5	/* value: int, RMAD_WIN_UNIFIED */
#define RMAD_WIN_FLAVOR_CREATE		1
#define RMAD_WIN_FLAVOR_ALLOCATE	2
#define RMAD_WIN_FLAVOR_DYNAMIC		3
#define RMAD_WIN_FLAVOR_SHARED		4
#define RMAD_WIN_SEPARATE	1
#define RMAD_WIN_UNIFIED	2
#define RMAD_MAX_OBJECT_NAME	128	/* window names, with the NUL */
#define RMAD_MAX_INFO_LEN	512	/* rmad_win_get_info always fits */
int rmad_win_get_group(rmad_win_t win, rmad_group_t *group);
int rmad_win_get_attr(rmad_win_t win, int attr, void *value);
int rmad_win_set_info(rmad_win_t win, const char *hints);
int rmad_win_get_info(rmad_win_t win, char *buf, size_t len);
int rmad_win_set_name(rmad_win_t win, const char *name);
int rmad_win_get_name(rmad_win_t win, char *buf, size_t len);

/* Communication (MPI-3 RMA; predefined types, contiguous counts). */
int rmad_put(const void *origin, int ocount, rmad_datatype_t otype,
	     int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
	     rmad_win_t win);
int rmad_get(void *origin, int ocount, rmad_datatype_t otype, int target,
	     size_t tdisp, int tcount, rmad_datatype_t ttype, rmad_win_t win);
int rmad_accumulate(const void *origin, int ocount, rmad_datatype_t otype,
		    int target, size_t tdisp, int tcount,
		    rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win);
int rmad_get_accumulate(const void *origin, int ocount, rmad_datatype_t otype,
			void *result, int rcount, rmad_datatype_t rtype,
			int target, size_t tdisp, int tcount,
			rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win);
int rmad_fetch_and_op(const void *origin, void *result, rmad_datatype_t type,
		      int target, size_t tdisp, rmad_op_t op, rmad_win_t win);
int rmad_compare_and_swap(const void *origin, const void *compare,
			  void *result, rmad_datatype_t type, int target,
			  size_t tdisp, rmad_win_t win);

/* Request-based operations: valid in passive-target epochs; complete at
 * the origin (the buffer reusable, or the result here) once a wait or
 * test says so. */
int rmad_rput(const void *origin, int ocount, rmad_datatype_t otype,
	      int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
	      rmad_win_t win, rmad_request_t *req);
int rmad_rget(void *origin, int ocount, rmad_datatype_t otype,
	      int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
	      rmad_win_t win, rmad_request_t *req);
int rmad_raccumulate(const void *origin, int ocount, rmad_datatype_t otype,
		     int target, size_t tdisp, int tcount,
		     rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win,
		     rmad_request_t *req);
int rmad_rget_accumulate(const void *origin, int ocount,
			 rmad_datatype_t otype, void *result, int rcount,
			 rmad_datatype_t rtype, int target, size_t tdisp,
			 int tcount, rmad_datatype_t ttype, rmad_op_t op,
			 rmad_win_t win, rmad_request_t *req);
int rmad_wait(rmad_request_t *req);
int rmad_test(rmad_request_t *req, int *done);
int rmad_waitall(int n, rmad_request_t *reqs);
int rmad_testall(int n, rmad_request_t *reqs, int *done);
int rmad_waitany(int n, rmad_request_t *reqs, int *index);
int rmad_testany(int n, rmad_request_t *reqs, int *index, int *done);
int rmad_request_free(rmad_request_t *req);

/* Derived datatypes (MPI-3.1 chapter 4). */
#define RMAD_ORDER_C		1
#define RMAD_ORDER_FORTRAN	2
int rmad_type_contiguous(int count, rmad_datatype_t old,
			 rmad_datatype_t *newtype);
int rmad_type_vector(int count, int blocklen, int stride, rmad_datatype_t old,
		     rmad_datatype_t *newtype);
int rmad_type_create_hvector(int count, int blocklen, ptrdiff_t stride,
			     rmad_datatype_t old, rmad_datatype_t *newtype);
int rmad_type_indexed(int count, const int *blocklens, const int *displs,
		      rmad_datatype_t old, rmad_datatype_t *newtype);
int rmad_type_create_hindexed(int count, const int *blocklens,
			      const ptrdiff_t *displs, rmad_datatype_t old,
			      rmad_datatype_t *newtype);
int rmad_type_create_indexed_block(int count, int blocklen, const int *displs,
				   rmad_datatype_t old,
				   rmad_datatype_t *newtype);
int rmad_type_create_hindexed_block(int count, int blocklen,
				    const ptrdiff_t *displs,
				    rmad_datatype_t old,
				    rmad_datatype_t *newtype);
int rmad_type_create_struct(int count, const int *blocklens,
			    const ptrdiff_t *displs,
			    const rmad_datatype_t *types,
			    rmad_datatype_t *newtype);
int rmad_type_create_subarray(int ndims, const int *sizes,
			      const int *subsizes, const int *starts,
			      int order, rmad_datatype_t old,
			      rmad_datatype_t *newtype);
int rmad_type_create_resized(rmad_datatype_t old, ptrdiff_t lb,
			     ptrdiff_t extent, rmad_datatype_t *newtype);
int rmad_type_dup(rmad_datatype_t old, rmad_datatype_t *newtype);
int rmad_type_commit(rmad_datatype_t *type);
int rmad_type_free(rmad_datatype_t *type);
int rmad_type_size(rmad_datatype_t type, size_t *size);
int rmad_type_get_extent(rmad_datatype_t type, ptrdiff_t *lb,
			 ptrdiff_t *extent);
int rmad_type_get_true_extent(rmad_datatype_t type, ptrdiff_t *lb,
			      ptrdiff_t *extent);

/* Active-target synchronization: fence, and post/start/complete/wait. */
int rmad_win_fence(int assert, rmad_win_t win);
int rmad_win_post(rmad_group_t group, int assert, rmad_win_t win);
int rmad_win_start(rmad_group_t group, int assert, rmad_win_t win);
int rmad_win_complete(rmad_win_t win);
int rmad_win_wait(rmad_win_t win);
int rmad_win_test(rmad_win_t win, int *flag);

/* Passive-target synchronization. */
int rmad_win_lock(int lock_type, int target, int assert, rmad_win_t win);
int rmad_win_unlock(int target, rmad_win_t win);
int rmad_win_lock_all(int assert, rmad_win_t win);
int rmad_win_unlock_all(rmad_win_t win);
int rmad_win_flush(int target, rmad_win_t win);
int rmad_win_flush_all(rmad_win_t win);
int rmad_win_flush_local(int target, rmad_win_t win);
int rmad_win_flush_local_all(rmad_win_t win);
int rmad_win_sync(rmad_win_t win);

/* Introspection: see rmad_win_stats(3) and struct rmad_stats in
 * rmad_abi.h. */
int rmad_win_stats(rmad_win_t win, struct rmad_stats *out);

/*
 * The rest of the API (fence, PSCW, derived datatypes, request-based
 * operations, other window flavors) is declared here as it is
 * delivered; rmad(7) lists what this release implements.
 */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* RMAD_H */
