#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi-args.sh - librmad-mpi makes the argument checks of MPI's one-sided
# calls that Open MPI makes, with the same error classes, in the same
# order (rmad-mpi(7), ERRORS): t/mpi/mpi_argcheck prints the class of
# each bad call (uncommitted datatypes, negative counts, bad ranks,
# displacements, ops, asserts and lock types, MPI_WIN_NULL) under plain
# Open MPI and under the library, on one node and on 2 vnodes; the
# lines must be the same.  With --beyond, the cases Open MPI 4.1 lets
# through (a get_accumulate's uncommitted result type, which crashes
# it; a flush of a bad rank) must be errors under the library.
# (Before, a put of an uncommitted type succeeded and wrote its data.)
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

lib="$top_builddir/.libs/librmad-mpi.so"
ma="$top_builddir/t/mpi/mpi_argcheck"
[ -r "$lib" ] && [ -x "$ma" ] ||
	skip_all "librmad-mpi not built (configure found no Open MPI)"
export RMAD_MPI_LIB="$lib"
export LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RMAD_MPI_STRICT=1
plan 5

say() { echo "$1" | sed 's/^/# /'; }
ref=$(run_bounded 60 mpirun --mca osc sm,pt2pt -np 2 "$ma" 2>&1)
rc=$?
n=$(echo "$ref" | grep -c ': ')
[ "$rc" -eq 0 ] && [ "$n" -ge 30 ]
ok $? "plain Open MPI: $n cases (rc $rc)"
[ "$rc" -eq 0 ] || say "$ref"
for v in 1 2; do
	out=$(run_bounded 90 "$RMAD_RUN" -q --mpi --vnodes "$v" -np 2 "$ma" 2>&1)
	rc=$?
	d=$(diff <(echo "$ref") <(echo "$out"))
	[ "$rc" -eq 0 ] && [ -z "$d" ]
	ok $? "librmad-mpi, $v vnode(s): the same classes as Open MPI (rc $rc)"
	[ -z "$d" ] || say "$d"
done
out=$(run_bounded 90 "$RMAD_RUN" -q --mpi -np 2 "$ma" --beyond 2>&1)
rc=$?
echo "$out" | grep -qx "get_accumulate, uncommitted result type: ERR_TYPE" &&
	echo "$out" | grep -qx "flush, target rank np: ERR_RANK"
ok $? "librmad-mpi: an uncommitted result type and a flush of a bad rank are errors (rc $rc)"
[ "$rc" -eq 0 ] || say "$out"
ok_clean
done_testing
