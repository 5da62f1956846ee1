#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# early-exit.sh - a rank that exits before rmad_init: nobody can see it
# die, so the agents give up on the job after attach_timeout_ms and the
# ranks that did attach get RMAD_ERR_PROC_FAILED (-9) from rmad_init
# instead of waiting forever: on one node (the rank's own agent counts
# its local ranks), and across virtual nodes where the rank was alone
# on its node (only agent 0, which collects the map, can tell).  The
# agents stay up and serve the next job.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 7
prog="$top_builddir/t/prog_wait"

start_agent ee "$T_TMP/agent.log" --set attach_timeout_ms=2000
wait_for "[ -S '$(sock_of ee)' ]" 10 || bail "agent did not start"
# Open MPI must not end the job itself when rank 2 exits
t0=$(date +%s)
OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0 \
RMAD_SESSION=ee run_bounded 60 mpirun -np 3 -x RMAD_SESSION -x RMAD_RUNDIR \
	"$prog" early "$T_TMP/e" >"$T_TMP/job.out" 2>&1
t=$(($(date +%s) - t0))
n=$(grep -c "result -9 " "$T_TMP/job.out")
[ "$n" -eq 2 ]
ok $? "one node: both ranks that attached get RMAD_ERR_PROC_FAILED from rmad_init ($n, ${t} s)"
[ "$n" -eq 2 ] || diag "$(cat "$T_TMP/job.out")"
grep -q "2 of its 3 ranks on this node attached within attach_timeout_ms" \
	"$T_TMP/agent.log"
ok $? "the agent says which job and how many ranks attached"
kill -0 "$AGENT_PID"
ok $? "the agent is alive"
RMAD_SESSION=ee run_bounded 30 "$top_builddir/t/prog_barrier" -b 10 -p 100 \
	>"$T_TMP/after.out" 2>&1
ok $? "and serves a new job: $(cat "$T_TMP/after.out")"
kill -TERM "$AGENT_PID"
wait_for "! kill -0 $AGENT_PID 2>/dev/null" 10

# two virtual nodes, ranks 0-1 on node 0 and rank 2 alone on node 1:
# agent 1 never hears of the job
out=$(OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0 \
	run_bounded 90 "$RMAD_RUN" --vnodes 2 --provider shm \
	--set attach_timeout_ms=2000 --set log_level=info -np 3 \
	"$prog" early "$T_TMP/v" 2>&1)
n=$(echo "$out" | grep -c "result -9 ")
[ "$n" -eq 2 ]
ok $? "2 vnodes: both ranks of node 0 get RMAD_ERR_PROC_FAILED from rmad_init ($n)"
[ "$n" -eq 2 ] || diag "$out"
echo "$out" | grep -q "a rank on another node never attached"
ok $? "agent 0 says a rank on another node never attached"
ok_clean
done_testing
