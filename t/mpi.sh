#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi.sh - librmad-mpi: MPI programs that know nothing of rmad (t/mpi/)
# run under plain Open MPI and under the interposition library, on one
# node and across virtual nodes over shm and tcp;ofi_rxm, strict mode
# on (anything rmad could not serve would abort the job):
#   mpi_rma       every window flavor and operation, request ops in the
#                 MPI_Wait family mixed with point-to-point, fence, PSCW,
#                 derived types, attributes, misuse's error classes;
#   mpi_patterns  a distributed counter, a halo exchange under fence, a
#                 work-stealing queue on fetch_and_op, a counter shared by
#                 4 threads a rank (MPI_THREAD_MULTIPLE); also linked
#                 with -lrmad-mpi rather than preloaded;
#   mpi_async     the target computes 2 s in a plain loop: the origins'
#                 passive and PSCW epochs end while it computes under
#                 rmad; plain Open MPI (tcp, osc pt2pt) shows the stall;
#   rmadctl       rmadctl status counts MPI windows per rank;
#   mpi-bench     bench/mpi/mpi-bench unchanged under the library, and
#                 bench/mpi/mpi-overhead (MPI and rmad_* in one process);
#   unmapped      a datatype rmad cannot map: MPI_ERR_TYPE and one line
#                 on stderr, or, strict, an abort that names it.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

lib="$top_builddir/.libs/librmad-mpi.so"
mr="$top_builddir/t/mpi/mpi_rma"
mp="$top_builddir/t/mpi/mpi_patterns"
ma="$top_builddir/t/mpi/mpi_async"
mb="$top_builddir/bench/mpi/mpi-bench-ompi"
mo="$top_builddir/bench/mpi/mpi-overhead-ompi"
[ -r "$lib" ] && [ -x "$mr" ] ||
	skip_all "librmad-mpi not built (configure found no Open MPI)"
export RMAD_MPI_LIB="$lib"
export LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plan 20

# plain Open MPI: osc sm on one host, pt2pt for created and dynamic
# windows (osc rdma cannot make them over btl tcp)
plain=(mpirun --mca osc sm,pt2pt)

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

# say TEXT: every line of it as a diagnostic (a program's own "ok"
# lines must not pass for this test's)
say() { echo "$1" | sed 's/^/# /'; }

out=$(run_bounded 120 "${plain[@]}" -np 3 "$mr" 2>&1)
tap_ok "mpi_rma, plain Open MPI, 3 ranks" "$out" $?
out=$(RMAD_IDLE_EXIT_MS=200 RMAD_MPI_STRICT=1 run_bounded 120 mpirun -np 3 \
	-x LD_PRELOAD="$lib" -x LD_LIBRARY_PATH -x RMAD_IDLE_EXIT_MS \
	-x RMAD_MPI_STRICT -x RMAD_RUNDIR -x RMAD_AGENT_PATH "$mr" 2>&1)
tap_ok "mpi_rma, plain mpirun with the library preloaded (embedded agent)" \
	"$out" $?
echo "$out" | grep -q "librmad-mpi serving"
ok $? "the preloaded run was served by the library"
export RMAD_MPI_STRICT=1
out=$(run_bounded 120 "$RMAD_RUN" -q --mpi -np 4 "$mr" 2>&1)
tap_ok "mpi_rma, rmad-run --mpi, 1 node, 4 ranks, strict" "$out" $?
out=$(run_bounded 150 "$RMAD_RUN" -q --mpi --vnodes 2 --provider shm \
	-np 3 "$mr" 2>&1)
tap_ok "mpi_rma, rmad-run --mpi, 2 vnodes over shm, strict" "$out" $?
out=$(run_bounded 150 "$RMAD_RUN" -q --mpi --vnodes 3 \
	--provider 'tcp;ofi_rxm' -np 3 "$mr" 2>&1)
tap_ok "mpi_rma, rmad-run --mpi, 3 vnodes over tcp;ofi_rxm, strict" \
	"$out" $?

out=$(run_bounded 90 "${plain[@]}" -np 3 "$mp" 2>&1)
tap_ok "mpi_patterns, plain Open MPI" "$out" $?
out=$(run_bounded 90 "$RMAD_RUN" -q --mpi -np 3 "$mp" 2>&1)
tap_ok "mpi_patterns, rmad-run --mpi, 1 node, strict" "$out" $?
out=$(run_bounded 120 "$RMAD_RUN" -q --mpi --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 4 "$mp" 2>&1)
tap_ok "mpi_patterns, rmad-run --mpi, 2 vnodes over tcp;ofi_rxm, strict" \
	"$out" $?

# linked with -lrmad-mpi instead of preloaded: rmad-run without --mpi
out=$(RMAD_MPI_REPORT=1 run_bounded 120 "$RMAD_RUN" -q --vnodes 2 -np 3 \
	--mca-arg -x --mca-arg LD_LIBRARY_PATH --mca-arg -x \
	--mca-arg RMAD_MPI_STRICT --mca-arg -x --mca-arg RMAD_MPI_REPORT \
	"$top_builddir/t/mpi/mpi_patterns_linked" 2>&1)
rc=$?
tap_ok "mpi_patterns linked with -lrmad-mpi, 2 vnodes, strict" \
	"$(echo "$out" | grep -v '^rmad-mpi:')" $rc
n=$(echo "$out" | grep -c "served by rmad")
[ "$n" -ge 3 ]
ok $? "... and rmad served its windows ($n window reports)"

# the async comparison: both times go to the log
out=$(run_bounded 90 mpirun --mca btl self,tcp --mca osc pt2pt -np 3 "$ma" \
	--seconds 2 2>&1)
rc=$?
say "plain Open MPI (tcp, osc pt2pt): $out"
[ "$rc" -eq 0 ]
ok $? "mpi_async runs under plain Open MPI (rc $rc)"
out=$(run_bounded 90 "$RMAD_RUN" -q --mpi --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 3 "$ma" --seconds 2 --expect-async 2>&1)
rc=$?
say "rmad, 2 vnodes tcp: $out"
[ "$rc" -eq 0 ]
ok $? "mpi_async under rmad: both epochs end while the target computes (rc $rc)"

# rmad-bench's MPI twin, unchanged, under the library
out=$(run_bounded 120 "$RMAD_RUN" -q --mpi --vnodes 2 --provider shm -np 2 \
	"$mb" --quick -t lat 2>&1)
rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q "put"
ok $? "bench/mpi/mpi-bench runs unchanged under the library (rc $rc)"
[ "$rc" -eq 0 ] || say "$out"

# the overhead program: MPI calls and rmad_* calls in one process (its
# ratios are measurements, printed, not checked)
out=$(run_bounded 120 "$RMAD_RUN" -q --mpi -np 2 "$mo" 2000 1 2>&1)
rc=$?
say "$out"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "^put+flush 8 B "
ok $? "bench/mpi/mpi-overhead: MPI and rmad_* calls in one process (rc $rc)"

# what cannot be mapped: said, and an error; or, strict, an abort
out=$(RMAD_MPI_STRICT=0 run_bounded 60 "$RMAD_RUN" -q --mpi -np 2 "$mr" \
	--unmapped 2>&1)
rc=$?
n=$(echo "$out" | grep -c "unmapped put: class 3 ")
[ "$rc" -eq 0 ] && [ "$n" -eq 2 ] &&
	echo "$out" | grep -q "cannot map datatype MPI_2COMPLEX: a predefined type rmad lacks"
ok $? "an unmappable datatype: MPI_ERR_TYPE on both ranks and a notice"
[ "$n" -eq 2 ] || say "$out"
out=$(run_bounded 60 "$RMAD_RUN" -q --mpi -np 2 "$mr" --unmapped 2>&1)
rc=$?
[ "$rc" -ne 0 ] && echo "$out" | grep -q "cannot map datatype MPI_2COMPLEX: a predefined type rmad lacks (RMAD_MPI_STRICT=1): aborting"
ok $? "strict mode aborts the job and names what it could not map (rc $rc)"

# rmadctl status counts each rank's MPI windows served by rmad and by
# MPI (max_windows 2: MPI serves the third of three)
out=$(RMAD_MAX_WINDOWS=2 RMAD_MPI_STRICT=0 run_bounded 60 "$RMAD_RUN" -q \
	--mpi -np 2 "$mr" --status "$top_builddir/rmadctl status" 2>&1)
rc=$?
n=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ && $6 == "2/1"' | wc -l)
[ "$rc" -eq 0 ] && [ "$n" -eq 2 ]
ok $? "rmadctl status: each rank's MPI windows, 2 served by rmad, 1 by MPI"
[ "$n" -eq 2 ] || say "$out"

# RMAD_MPI_DISABLE: the library stays out of the way
out=$(RMAD_MPI_DISABLE=1 run_bounded 120 "$RMAD_RUN" -q --mpi -np 3 \
	--mca-arg --mca --mca-arg osc --mca-arg sm,pt2pt "$mr" 2>&1)
tap_ok "RMAD_MPI_DISABLE=1: MPI serves everything" "$out" $?
ok_clean
done_testing
