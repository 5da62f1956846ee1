#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi-mpich.sh - librmad-mpich: the programs of t/mpi and bench/mpi built
# with MPICH's compiler wrapper (t/mpich/) run under plain MPICH and under
# rmad-run --mpi, which picks MPICH's mpiexec (hydra, no PMIx: the ranks
# learn their job through MPI), on one node and on 2 vnodes, strict:
#   mpi_rma       every window flavor and operation, request ops in the
#                 MPI_Wait family, fence, PSCW, derived types, attributes,
#                 misuse's error classes; also under a plain mpiexec with
#                 the library preloaded (the embedded agent);
#   mpi_patterns  counter, halo, work stealing, threads; also linked with
#                 -lrmad-mpich rather than preloaded, with the report;
#   mpi_typeop    the (datatype, op, call) table: the same under
#                 librmad-mpich as under librmad-mpi (when Open MPI is
#                 there too);
#   mpi_edges     the corners MPICH's own suite found (zero counts,
#                 MPI_BOTTOM, shared_query, adjacent dynamic regions...);
#   mpi_argcheck  the error class of each misuse: the same table as
#                 under librmad-mpi;
#   mpi_async     the origins' epochs end while the target computes;
#   mpi-bench     bench/mpi/mpi-bench unchanged;
#   unmapped      strict mode's abort says what it could not map
#                 (MPIX_C_FLOAT16, which MPICH leaves unnamed).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

lib="$top_builddir/.libs/librmad-mpich.so"
d="$top_builddir/t/mpich"
command -v mpiexec.mpich >/dev/null 2>&1 ||
	skip_all "no mpiexec.mpich (install mpich)"
[ -r "$lib" ] && [ -x "$d/mpi_rma" ] ||
	skip_all "librmad-mpich not built (configure found no mpicc.mpich)"
export RMAD_MPICH_LIB="$lib"
export LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plan 16

# tap_ok WHAT OUT RC: one point, passed when the program's TAP has no
# "not ok", a plan, and it exited 0
tap_ok() {
	local what=$1 out=$2 rc=$3 n bad
	n=$(echo "$out" | grep -c '^ok ')
	bad=$(echo "$out" | grep -c '^not ok ')
	[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$n" -gt 0 ] &&
		echo "$out" | grep -q "^1\.\.$n\$"
	ok $? "$what: $n checks passed, $bad failed (rc $rc)"
	[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] || say "$out"
}
say() { echo "$1" | tail -30 | sed 's/^/# /'; }

# plain MPICH (4.0.2, ch4) fails some of mpi_rma's points (PSCW, darray,
# f90 types): the reference is that it runs to the end; its counts go
# to the log
out=$(run_bounded 120 mpiexec.mpich -np 3 "$d/mpi_rma" 2>&1)
rc=$?
n=$(echo "$out" | grep -c '^ok ')
bad=$(echo "$out" | grep -c '^not ok ')
echo "$out" | grep -q '^1\.\.29$'
ok $? "mpi_rma runs to its end under plain MPICH ($n passed, $bad failed, rc $rc)"
echo "$out" | grep '^not ok ' | sed 's/^/# plain MPICH: /'
out=$(RMAD_IDLE_EXIT_MS=200 RMAD_MPI_STRICT=1 run_bounded 120 \
	mpiexec.mpich -np 3 -genv LD_PRELOAD "$lib" "$d/mpi_rma" 2>&1)
tap_ok "mpi_rma, plain mpiexec.mpich, library preloaded (embedded agent)" \
	"$out" $?
echo "$out" | grep -q "librmad-mpi serving"
ok $? "the preloaded run was served by the library"

export RMAD_MPI_STRICT=1
out=$(run_bounded 120 "$RMAD_RUN" -q --mpi -np 4 "$d/mpi_rma" 2>&1)
tap_ok "mpi_rma, rmad-run --mpi (MPICH picked), 1 node, 4 ranks, strict" \
	"$out" $?
out=$(run_bounded 150 "$RMAD_RUN" -q --mpi --launcher mpich --vnodes 2 \
	--provider shm -np 3 "$d/mpi_rma" 2>&1)
tap_ok "mpi_rma, rmad-run --mpi --launcher mpich, 2 vnodes over shm, strict" \
	"$out" $?
out=$(run_bounded 90 "$RMAD_RUN" -q --mpi -np 3 "$d/mpi_patterns" 2>&1)
tap_ok "mpi_patterns, 1 node, strict" "$out" $?
out=$(run_bounded 120 "$RMAD_RUN" -q --mpi --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 4 "$d/mpi_patterns" 2>&1)
tap_ok "mpi_patterns, 2 vnodes over tcp;ofi_rxm, strict" "$out" $?

# linked with -lrmad-mpich instead of preloaded: no --mpi; the report
out=$(RMAD_MPI_REPORT=1 run_bounded 120 "$RMAD_RUN" -q --vnodes 2 -np 3 \
	"$d/mpi_patterns_linked" 2>&1)
rc=$?
tap_ok "mpi_patterns linked with -lrmad-mpich, 2 vnodes, strict" \
	"$(echo "$out" | grep -v '^rmad-mpi:')" $rc
n=$(echo "$out" | grep -c "served by rmad")
[ "$n" -ge 3 ]
ok $? "... and the report says rmad served its windows ($n window reports)"

# the (datatype, op, call) table: the same as under librmad-mpi
run_bounded 180 "$RMAD_RUN" -q --mpi -np 2 "$d/mpi_typeop" \
	>"$T_TMP/mpich.out" 2>"$T_TMP/mpich.err"
rc=$?
n=$(grep -vc '^END$' "$T_TMP/mpich.out")
ompi="$top_builddir/t/mpi/mpi_typeop"
if [ -x "$ompi" ] && [ -r "$top_builddir/.libs/librmad-mpi.so" ]; then
	RMAD_MPI_LIB="$top_builddir/.libs/librmad-mpi.so" run_bounded 180 \
		"$RMAD_RUN" -q --mpi -np 2 "$ompi" >"$T_TMP/ompi.out" \
		2>"$T_TMP/ompi.err"
	# the same outcome everywhere; the error classes are each MPI's
	# numbers (MPI_ERR_OP is 10 in Open MPI, 9 in MPICH), so each
	# class of one must stand for one class of the other
	noclass() { sed 's/ class=[0-9]*//' "$1" | sort; }
	diffs=$(diff <(noclass "$T_TMP/ompi.out") \
		<(noclass "$T_TMP/mpich.out") | grep -c '^[<>]')
	pairs=$(paste -d'|' <(sort "$T_TMP/ompi.out") \
		<(sort "$T_TMP/mpich.out") |
		sed -n 's/.*\(class=[0-9]*\)|.*\(class=[0-9]*\).*/\1 \2/p' |
		sort -u)
	p1=$(echo "$pairs" | awk '{ print $1 }' | sort | uniq -d | wc -l)
	p2=$(echo "$pairs" | awk '{ print $2 }' | sort | uniq -d | wc -l)
	[ "$rc" -eq 0 ] && grep -q '^END$' "$T_TMP/mpich.out" &&
		[ "$n" -gt 2000 ] && [ "$diffs" -eq 0 ] && [ "$p1$p2" = 00 ]
	ok $? "mpi_typeop: $n cases, as under librmad-mpi ($diffs lines differ; classes $(echo $pairs | tr ' ' ':'))"
	[ "$diffs" -eq 0 ] || diff <(noclass "$T_TMP/ompi.out") \
		<(noclass "$T_TMP/mpich.out") | head -20 | sed 's/^/# /'
else
	[ "$rc" -eq 0 ] && grep -q '^END$' "$T_TMP/mpich.out" &&
		[ "$n" -gt 2000 ]
	ok $? "mpi_typeop: $n cases (no Open MPI build to compare with)"
fi
[ "$rc" -eq 0 ] || tail -5 "$T_TMP/mpich.err" | sed 's/^/# /'

out=$(run_bounded 150 "$RMAD_RUN" -q --mpi --vnodes 2 --provider shm -np 4 \
	"$d/mpi_edges" 2>&1)
tap_ok "mpi_edges, 2 vnodes over shm, strict" "$out" $?

# the class of each misuse, by name: as under librmad-mpi
out=$(run_bounded 90 "$RMAD_RUN" -q --mpi -np 2 "$d/mpi_argcheck" 2>&1)
rc=$?
ompi="$top_builddir/t/mpi/mpi_argcheck"
if [ -x "$ompi" ] && [ -r "$top_builddir/.libs/librmad-mpi.so" ]; then
	ref=$(RMAD_MPI_LIB="$top_builddir/.libs/librmad-mpi.so" run_bounded 90 \
		"$RMAD_RUN" -q --mpi -np 2 "$ompi" 2>&1)
	n=$(echo "$out" | grep -c ': ERR_')
	diffs=$(diff <(echo "$ref" | grep ': ERR_\|: SUCCESS' | sort) \
		<(echo "$out" | grep ': ERR_\|: SUCCESS' | sort) | grep -c '^[<>]')
	[ "$rc" -eq 0 ] && [ "$n" -gt 20 ] && [ "$diffs" -eq 0 ]
	ok $? "mpi_argcheck: $n classes, as under librmad-mpi ($diffs lines differ, rc $rc)"
	[ "$diffs" -eq 0 ] || diff <(echo "$ref" | grep ': ERR_\|: SUCCESS' |
		sort) <(echo "$out" | grep ': ERR_\|: SUCCESS' | sort) |
		head -20 | sed 's/^/# /'
else
	[ "$rc" -eq 0 ]
	ok $? "mpi_argcheck runs (rc $rc; no Open MPI build to compare with)"
fi

out=$(run_bounded 90 "$RMAD_RUN" -q --mpi --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 3 "$d/mpi_async" --seconds 2 \
	--expect-async 2>&1)
rc=$?
say "rmad, MPICH, 2 vnodes tcp: $out"
[ "$rc" -eq 0 ]
ok $? "mpi_async under rmad: both epochs end while the target computes (rc $rc)"

out=$(run_bounded 120 "$RMAD_RUN" -q --mpi --vnodes 2 --provider shm -np 2 \
	"$top_builddir/bench/mpi/mpi-bench-mpich" --quick -t lat 2>&1)
rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q "put"
ok $? "bench/mpi/mpi-bench (MPICH) runs unchanged under the library (rc $rc)"
[ "$rc" -eq 0 ] || say "$out"

out=$(run_bounded 60 "$RMAD_RUN" -q --mpi -np 2 "$d/mpi_rma" --unmapped 2>&1)
rc=$?
[ "$rc" -ne 0 ] && echo "$out" | grep -q "cannot map datatype .*: a predefined type rmad lacks (RMAD_MPI_STRICT=1): aborting"
ok $? "strict mode aborts the job and names what it could not map (rc $rc)"
[ "$rc" -ne 0 ] || say "$out"
ok_clean
done_testing
