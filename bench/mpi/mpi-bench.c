/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi-bench.c - rmad-bench's workloads on MPI-3 RMA (MPI_Win_allocate,
 * MPI_Put/Get/Accumulate/Get_accumulate/Fetch_and_op/Compare_and_swap,
 * MPI_Win_lock/unlock/lock_all/flush), with the same options and output,
 * so that its rows compare directly with rmad-bench's.  It is the same
 * source: only the backend section of ../rmad-bench.c differs.
 *
 * Build: mpicc -O2 -o mpi-bench bench/mpi/mpi-bench.c (bench/compare
 * does it for Open MPI and MPICH).
 */
#define BENCH_MPI 1
#include "../rmad-bench.c"
