#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# autostart-race.sh - 4 ranks of one job start at once with no agent:
# exactly one agent serves them all, every time.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
hello="$top_builddir/examples/hello"
for round in 1 2 3; do
	rm -rf "$T_RUNDIR"/job-* 2>/dev/null
	out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 \
		-x RMAD_IDLE_EXIT_MS -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
		"$hello" 2>&1)
	n=$(echo "$out" | grep -c "rank [0-3] of 4: node 0 of 1")
	[ "$n" -eq 4 ]
	ok $? "round $round: all 4 ranks initialized ($n)"
	agents=$(echo "$out" | sed -n 's/.*agent pid \([0-9]*\).*/\1/p' | sort -u | wc -l)
	[ "$agents" -eq 1 ]
	ok $? "round $round: one agent served them all ($agents)"
	[ "$n" -eq 4 ] || diag "$out"
	# let it leave before the next round
	apid=$(echo "$out" | sed -n 's/.*agent pid \([0-9]*\).*/\1/p' | head -1)
	[ -n "$apid" ] && wait_for "! kill -0 $apid 2>/dev/null || grep -q zombie /proc/$apid/status" 10
done
done_testing
