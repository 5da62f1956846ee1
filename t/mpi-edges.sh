#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi-edges.sh - t/mpi/mpi_edges (the corners of MPI RMA that MPICH's
# test/mpi/rma found open: zero-count ops, MPI_BOTTOM, shared_query on
# every flavor, an access across adjacent dynamic regions, empty members
# of a noncontiguous shared window, windows over MPI_COMM_TYPE_SHARED
# communicators under vnodes, a lock epoch between fences) under
# librmad-mpi, strict, on one node and on 2 vnodes over shm and
# tcp;ofi_rxm, 4 ranks.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

lib="$top_builddir/.libs/librmad-mpi.so"
prog="$top_builddir/t/mpi/mpi_edges"
[ -r "$lib" ] && [ -x "$prog" ] ||
	skip_all "librmad-mpi not built (configure found no Open MPI)"
export RMAD_MPI_LIB="$lib"
export LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RMAD_MPI_STRICT=1
plan 21

# run WHAT ARGS...: the program's 7 points, named for this placement
run() {
	local what=$1 out rc n
	shift
	out=$(run_bounded 150 "$RMAD_RUN" -q --mpi "$@" -np 4 "$prog" 2>&1)
	rc=$?
	n=0
	while read -r st num rest; do
		case "$st" in
		ok) ok 0 "$what: ${rest#- }"; n=$((n + 1)) ;;
		not) ok 1 "$what: ${rest#*- }"; n=$((n + 1)) ;;
		esac
	done < <(echo "$out" | grep -E '^(not )?ok [0-9]+ ')
	while [ $n -lt 7 ]; do
		ok 1 "$what: point $((n + 1)) never ran (rc $rc)"
		n=$((n + 1))
	done
	[ "$rc" -eq 0 ] || echo "$out" | tail -20 | sed 's/^/# /'
}

run "1 node"
run "2 vnodes over shm" --vnodes 2 --provider shm
run "2 vnodes over tcp;ofi_rxm" --vnodes 2 --provider 'tcp;ofi_rxm'
done_testing
