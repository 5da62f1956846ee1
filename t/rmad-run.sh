#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rmad-run.sh - the launcher: the demo output, bad arguments, and agents
# stopped (and their files removed) whether the job succeeds, fails or
# times out.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 9
count_agents() { pgrep -f -- "--foreground --session $1( |\$)" | wc -l; }

out=$(run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session rr1 -np 4 \
	"$top_builddir/examples/hello" 2>&1)
ok $? "rmad-run --vnodes 2 -np 4 hello"
n=$(echo "$out" | grep -Ec "rank [0-3] of 4: node [01] of 2 .*agent pid [0-9]+ on core -?[0-9]+")
[ "$n" -eq 4 ]
ok $? "each rank prints its node, agent and core ($n)"
[ "$n" -eq 4 ] || diag "$out"
[ "$(count_agents rr1)" -eq 0 ] && [ ! -e "$T_RUNDIR/rr1" ]
ok $? "agents gone and run directory removed after success"

run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session rr2 -np 2 false >/dev/null 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ]
ok $? "a failing job's status comes back ($rc)"
[ "$(count_agents rr2)" -eq 0 ] && [ ! -e "$T_RUNDIR/rr2" ]
ok $? "agents stopped after a failed job"

run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session rr3 --timeout 2 -np 2 \
	sleep 30 >/dev/null 2>&1
rc=$?
[ $rc -eq 124 ]
ok $? "--timeout stops a hung job with status 124 ($rc)"
[ "$(count_agents rr3)" -eq 0 ]
ok $? "agents stopped after a timed-out job"

run_bounded 10 "$RMAD_RUN" -np 0 true >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "bad arguments exit with status 2"
RMAD_AGENT_PATH=/nonexistent run_bounded 10 "$RMAD_RUN" -np 1 true >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "a missing agent binary is reported"
done_testing
