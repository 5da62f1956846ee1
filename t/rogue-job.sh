#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rogue-job.sh - a node of the mesh acts only in the jobs it has ranks
# in (rmad(7), SECURITY).  Three agents of a keyless static mesh over
# tcp;ofi_rxm; node 2's agent is not started, and t/test_rogue, plain
# libfabric bound to node 2's address, plays node 2 to the others (an
# insider: a node turned hostile).  The agents serve at most 4 jobs,
# and before the job starts the rogue sends node 0, the collector of
# every job's map, JOINs of 16 made-up jobs: the first 4 take its slots,
# so node 0 must fail one of them for the real job (jobs.c, job_evict),
# and refuse the rogue the others.  A job of 2 ranks runs on nodes 0
# and 1 (t/prog_barrier: eight barriers in which one rank sleeps
# 300 ms first, so the other must wait in them, then 50 more).  Once
# node 0 has sent the job's map, the rogue sends both agents, every
# 20 ms, barrier arrivals and releases of the job for epochs 0 to 15
# and a JOB_FAIL of it.  An arrival or release it sent for node 2
# counted would end a barrier early, and the failure would fail the
# job; all must be dropped and the job pass.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
sess=roguejob
rogue_mesh "$sess" 13000 -j --set max_jobs=4
jobf=$T_TMP/job
rpid=$ROGUE_PID
wait_for "[ \$(grep -c \"no job slot (max_jobs) for node 2's JOIN\" '$T_TMP/agent0.log') -ge 12 ]" 20

RMAD_SESSION=$sess RMAD_VNODES=2 run_bounded 60 mpirun -np 2 \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF -x RMAD_SPIN_US \
	"$top_builddir/t/prog_barrier" -r 8 -b 50 -p 20 >"$T_TMP/out" 2>&1 &
jpid=$!
wait_for "grep -q 'ranks on 2 nodes, map sent' '$T_TMP/agent0.log'" 30
ns=$(sed -n 's/.*job \(.*\): 2 ranks on 2 nodes, map sent.*/\1/p' \
	"$T_TMP/agent0.log" | head -1)
echo "$ns" >"$jobf.tmp" && mv "$jobf.tmp" "$jobf"
wait "$jpid"
rc=$?
ranks_ok "the job's barriers hold while node 2 forges its packets" 2 \
	"$(cat "$T_TMP/out")" "$rc" ": ok (node"
: >"$jobf.done"
wait_for '! kill -0 $rpid 2>/dev/null' 10 || kill -KILL "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
rout=$(cat "$T_TMP/rogue.out")
diag "$rout"
echo "$rout" | grep -q "rogue: job $ns: [1-9][0-9]* rounds"
ok $? "the rogue sent its packets while the job ran"
n0=$(grep -c "dropped a barrier arrival from node 2" "$T_TMP/agent0.log")
n1=$(grep -c "dropped a barrier release from node 2" "$T_TMP/agent1.log")
f0=$(grep -c "a failure from node 2, which holds no rank of it: dropped" \
	"$T_TMP/agent0.log")
f1=$(grep -c "a failure from node 2, which holds no rank of it: dropped" \
	"$T_TMP/agent1.log")
[ "$n0" -gt 0 ] && [ "$n1" -gt 0 ] && [ "$f0" -gt 0 ] && [ "$f1" -gt 0 ] &&
	! grep -q "failed, says node 2" "$T_TMP/agent0.log" "$T_TMP/agent1.log"
ok $? "both agents dropped them: arrivals at the root ($n0), releases at node 1 ($n1), failures ($f0, $f1)"
ev=$(grep -c "fails, to make room (max_jobs) for a job of .*: node 2's JOINs made" "$T_TMP/agent0.log")
no=$(grep -c "no job slot (max_jobs) for node 2's JOIN" "$T_TMP/agent0.log")
echo "$rout" | grep -q ", 16 made-up jobs joined" && [ "$ev" -ge 1 ] &&
	[ "$no" -ge 12 ] && ! grep -q "no job slot (max_jobs) for node 1" \
	"$T_TMP/agent0.log"
st=$?
[ $st = 0 ] || diag "$(grep -e made-up -e max_jobs "$T_TMP/agent0.log" | head -5)"
ok $st "node 0 failed a made-up job for the real one ($ev) and refused the rogue $no others"
rogue_mesh_end "$sess"
done_testing
