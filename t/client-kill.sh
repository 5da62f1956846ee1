#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# client-kill.sh - a client killed with SIGKILL: the agent releases what
# it held, the job's other ranks get RMAD_ERR_PROC_FAILED (-9) from the
# barrier instead of hanging, and the agent keeps serving others.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
start_agent ck "$T_TMP/agent.log" --set log_level=info
wait_for "[ -S '$(sock_of ck)' ]" 10 || bail "agent did not start"

# a 3-rank job; Open MPI must not tear the job down when rank 2 dies
OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0 \
RMAD_SESSION=ck run_bounded 60 mpirun -np 3 -x RMAD_SESSION -x RMAD_RUNDIR \
	"$top_builddir/t/prog_wait" barrier "$T_TMP/w" >"$T_TMP/job.out" 2>&1 &
jpid=$!
wait_for "[ -e '$T_TMP/w.0' ] && [ -e '$T_TMP/w.1' ] && [ -e '$T_TMP/w.2' ]" 30
ok $? "3 ranks attached"
victim=$(cut -d' ' -f1 "$T_TMP/w.2")
kill -KILL "$victim"
wait_for "grep -q 'died' '$T_TMP/agent.log'" 10
ok $? "the agent saw rank 2 (pid $victim) die"
touch "$T_TMP/w.go"
wait "$jpid"
n=$(grep -c "result -9 " "$T_TMP/job.out")
[ "$n" -eq 2 ]
ok $? "both survivors get RMAD_ERR_PROC_FAILED from the barrier ($n)"
[ "$n" -eq 2 ] || diag "$(cat "$T_TMP/job.out")"
kill -0 "$AGENT_PID"
ok $? "the agent is alive"
RMAD_SESSION=ck run_bounded 30 "$top_builddir/t/prog_barrier" -b 10 -p 100 \
	>"$T_TMP/after.out" 2>&1
ok $? "and serves a new job: $(cat "$T_TMP/after.out")"
# a killed client in the middle of pinging: elements come back
RMAD_SESSION=ck run_bounded 60 "$top_builddir/t/prog_wait" ping "$T_TMP/p" \
	>/dev/null 2>&1 &
ppid=$!
wait_for "[ -e '$T_TMP/p.0' ]" 20
sleep 0.2
kill -KILL "$ppid"
wait_for "[ \$(grep -c died '$T_TMP/agent.log') -ge 2 ]" 10
RMAD_SESSION=ck run_bounded 30 "$top_builddir/t/prog_barrier" -b 10 -p 2000 \
	>"$T_TMP/after2.out" 2>&1
ok $? "after a client died mid-stream, others still run 2000 ops"
done_testing
