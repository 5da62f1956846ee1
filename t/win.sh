#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# win.sh - window allocation, subgroups, shared_query and bad input on
# one node (embedded agent), and across 2 and 3 virtual nodes over shm
# and tcp;ofi_rxm; and with more same-node members than one control
# message carries (12 ranks on one node, 9 on each of 2 vnodes).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 7
pw="$top_builddir/t/prog_win"
check() {
	local what=$1 np=$2 out=$3 rc=$4 n
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$out"
}
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pw" 2>&1)
check "1 node (embedded agent), 4 ranks" 4 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	for k in 2 3; do
		np=$((k + 2))
		out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes "$k" \
			--provider "$prov" -np "$np" "$pw" 2>&1)
		check "$prov, $k vnodes, $np ranks" "$np" "$out" $?
	done
done
out=$(run_bounded 120 "$RMAD_RUN" -q -np 12 "$pw" 2>&1)
check "1 node, 12 ranks" 12 "$out" $?
out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider shm -np 18 "$pw" \
	2>&1)
check "shm, 2 vnodes, 18 ranks" 18 "$out" $?
done_testing
