#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rma.sh - passive-target RMA (t/prog_rma.c: counters, exclusive RMW,
# CAS spin lock, op x type, 1 B..4 MiB put/get, flush_local reuse, tiny
# pools, bad input, asynchronous progress) on one node and across 2 and
# 3 virtual nodes over shm and tcp;ofi_rxm; and on created windows
# (rmad_win_create over heap memory, RMAD_T_FLAVOR=create in t/prog.h)
# and, on one node, shared ones (rmad_win_allocate_shared).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 8
pr="$top_builddir/t/prog_rma"
check() {
	local what=$1 np=$2 out=$3 rc=$4 n
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$out"
	echo "$out" | grep "async:" | sed 's/^/# /'
}
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 180 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pr" 100 2>&1)
check "1 node (embedded agent), 4 ranks" 4 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	for k in 2 3; do
		np=$((k + 2))
		out=$(run_bounded 240 "$RMAD_RUN" -q --vnodes "$k" \
			--provider "$prov" -np "$np" "$pr" 100 2>&1)
		check "$prov, $k vnodes, $np ranks" "$np" "$out" $?
	done
done
# the same on windows made by rmad_win_create over heap memory
out=$(RMAD_T_FLAVOR=create RMAD_IDLE_EXIT_MS=200 run_bounded 180 mpirun -np 4 \
	-x RMAD_T_FLAVOR -x RMAD_IDLE_EXIT_MS -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	"$pr" 100 2>&1)
check "created windows, 1 node, 4 ranks" 4 "$out" $?
out=$(RMAD_T_FLAVOR=shared RMAD_IDLE_EXIT_MS=200 run_bounded 180 mpirun -np 4 \
	-x RMAD_T_FLAVOR -x RMAD_IDLE_EXIT_MS -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	"$pr" 100 2>&1)
check "shared windows (rmad_win_allocate_shared), 1 node, 4 ranks" 4 "$out" $?
out=$(RMAD_T_FLAVOR=create run_bounded 240 "$RMAD_RUN" -q --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 4 "$pr" 100 2>&1)
check "created windows, tcp;ofi_rxm, 2 vnodes, 4 ranks" 4 "$out" $?
done_testing
