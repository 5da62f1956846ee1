#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# stats.sh - rmad_win_stats (t/prog_stats.c: bad arguments, same-node
# operations counted in place with no packets, remote operations counted
# by the process and by its agent) on one node with an embedded agent
# and across 2 virtual nodes over shm; a dead agent still leaves the
# process's own counters.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 3
pr="$top_builddir/t/prog_stats"
check() {
	local what=$1 np=$2 out=$3 rc=$4 n
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$out"
	echo "$out" | grep "stats:" | sed 's/^/# /'
}
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 120 mpirun -np 2 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pr" 10 2>&1)
check "1 node (embedded agent), 2 ranks" 2 "$out" $?
out=$(run_bounded 180 "$RMAD_RUN" -q --vnodes 2 --provider shm -np 2 \
	"$pr" 10 2>&1)
check "shm, 2 vnodes, 2 ranks" 2 "$out" $?
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 60 "$pr" -k 10 2>&1)
check "alone, agent killed" 1 "$out" $?
done_testing
