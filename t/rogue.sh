#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rogue.sh - an outsider that reaches the agents' network reads and
# writes nothing (rmad(7), ISOLATION).  Two agents of a static mesh over
# tcp;ofi_rxm on 127.0.0.1 hold a job's window (t/prog_hold: its
# pattern, a put of 8 bytes and one of 32 KiB between them, so the
# agents have registered window memory and transfer buffers); while it
# is open, t/test_rogue, plain libfabric and no rmad code, aims a remote
# read and a remote write of 8 bytes at every registration key from 0
# to 256 at each agent, then sends each ten packets that claim to come
# from node 1.  None of the reads and writes may succeed, the packets
# must be dropped as from no node of theirs, the job must find its
# windows intact, and the agents must still serve it.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 5
sess=rogue
base=$((20000 + ($$ + 7919) % 20000))
ports=($base $((base + 1)))
mesh="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}"
for k in 0 1; do
	start_agent "$sess" "$T_TMP/agent$k.log" --vnodes 2 \
		--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
		--set "mesh_self=$k" --set log_level=info
done
wait_for '[ "$(cat "$T_TMP"/agent[01].log | grep -c ": node [0-9]*: up$")" -ge 2 ]' 20
ok $? "two agents of a mesh over tcp;ofi_rxm: up"

ready=$T_TMP/ready
done=$T_TMP/done
RMAD_SESSION=$sess RMAD_VNODES=2 run_bounded 120 mpirun -np 2 \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF "$top_builddir/t/prog_hold" "$ready" "$done" \
	>"$T_TMP/job.out" 2>&1 &
job=$!
wait_for "[ -s '$ready' ] || ! kill -0 $job" 60
rout=$(ROGUE_DEBUG=${ROGUE_DEBUG:-} run_bounded 200 "$top_builddir/t/test_rogue" -k 256 -n 1 \
	"127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" 2>&1)
rrc=$?
touch "$done"
wait "$job"
jrc=$?
diag "$rout"
n=$(echo "$rout" | grep -c "reads 257 ok 0, writes 257 ok 0,")
[ "$rrc" -eq 0 ] && [ "$n" -eq 2 ]
ok $? "an outsider's reads and writes at keys 0-256 all fail at both agents (rc $rrc)"
n0=$(grep -c "dropped packet: type 1 claims node 1 but came from no node of ours" "$T_TMP/agent0.log")
n1=$(grep -c "dropped packet: type 1 claims node 1 but came from no node of ours" "$T_TMP/agent1.log")
! echo "$rout" | grep -q "did not leave" && [ "$n0" -eq 10 ] && [ "$n1" -eq 10 ]
ok $? "packets that claim to be node 1's are dropped by both agents ($n0 and $n1 of 10)"
out=$(cat "$T_TMP/job.out")
ranks_ok "the job's windows are intact afterwards" 2 "$out" "$jrc" \
	": ok (window intact)"
out=$(RMAD_SESSION=$sess RMAD_VNODES=2 run_bounded 120 mpirun -np 2 \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF "$top_builddir/t/prog_rma" 2>&1)
ranks_ok "the agents still serve a job" 2 "$out" $? ": ok (node"
done_testing
