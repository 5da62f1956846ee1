#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mesh-idle.sh - a static mesh's idle nodes (rmad.conf(5),
# heartbeat_idle_ms): three agents with heartbeat_ms=100,
# heartbeat_timeout_ms=600, heartbeat_confirm_ms=0 (dead, not only
# suspect, at that timeout) and heartbeat_idle_ms=2000, so that a node
# with no job in common is declared dead only after 12 s without an
# echo, and a busy one after 0.6 s.  While no job runs, an agent sends
# its peers a heartbeat every 2 s, not every 100 ms (its statistics
# count them).  A job of 3 ranks (t/prog_nodekill, rank r on node r)
# makes every node busy: node 1's agent hangs (SIGSTOP) in the middle
# of it, the others declare it dead within seconds, and the calls that
# wait on it fail.  Node 1's agent, killed and started again, comes
# back up; then node 2's agent hangs while no job runs: it is not
# declared dead at the busy timeout, but at the idle one.  Last, node 0,
# the lowest node up, which collects job maps, hangs while idle: a job
# on nodes 1 and 2 (RMAD_VNODE_BASE=1) that starts a second later, well
# before the idle timeout, finds it dead by probing it first, and node 1
# collects its map.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 13
prog="$top_builddir/t/prog_nodekill"
sess=meshidle
base=$((20000 + ($$ + 7000) % 20000))
mesh="127.0.0.1:$base,127.0.0.1:$((base + 1)),127.0.0.1:$((base + 2))"
pids=()
# agent K [LOGSUFFIX]: start node K of the mesh
agent() {
	start_agent "$sess" "$T_TMP/agent$1${2:-}.log" --vnodes 3 \
		--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
		--set "mesh_self=$1" --set log_level=info \
		--set heartbeat_ms=100 --set heartbeat_timeout_ms=600 \
		--set heartbeat_confirm_ms=0 --set heartbeat_idle_ms=2000
	pids[$1]=$AGENT_PID
}
# ups K LOGSUFFIX N: agent K's log says N times that a node is up
ups() { [ "$(grep -c ': node [0-9]*: up$' "$T_TMP/agent$1${2:-}.log")" -ge "$3" ]; }
# dead K NODE: agent K declared NODE dead
dead() { grep -q "node $2: declared dead" "$T_TMP/agent$1.log"; }
# hb_sent K: the heartbeats agent K has sent
hb_sent() {
	RMAD_SESSION=$sess run_bounded 10 "$top_builddir/rmadctl" --vnode "$1" \
		stats 2>/dev/null | awk '$1 == "HEARTBEAT" { print $2 }'
}
now() { date +%s%N; }

for k in 0 1 2; do
	agent $k
done
wait_for 'ups 0 "" 2 && ups 1 "" 2 && ups 2 "" 2' 20
ok $? "three mesh agents: up to one another"

# idle: a heartbeat every 2 s per peer (and each answered), not 10 a second
sleep 1.5
h0=$(hb_sent 0)
sleep 3
h1=$(hb_sent 0)
n=$(( ${h1:-999} - ${h0:-0} ))
[ -n "$h0" ] && [ -n "$h1" ] && [ "$n" -le 30 ]
ok $? "no job: agent 0 sent $n heartbeats in 3 s to its 2 idle peers (busy: about 120)"
line=$(RMAD_SESSION=$sess run_bounded 10 "$top_builddir/rmadctl" --vnode 0 \
	status 2>&1 | grep '^  nodes   ')
[ "$line" = "  nodes        2 others up (0 busy, 2 idle), 0 not up" ]
ok $? "rmadctl status says so:$line"

# a job of 3 ranks, one per node: node 1's agent hangs in the middle
d=$T_TMP/nk
mkdir -p "$d"
RMAD_SESSION=$sess RMAD_VNODES=3 run_bounded 120 mpirun -np 3 \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF -x RMAD_SPIN_US "$prog" "$d" >"$d/out" 2>&1 &
jpid=$!
t_stop=""
if wait_for "[ -e '$d/ready' ]" 60; then
	kill -STOP "${pids[1]}"
	t_stop=$(now)
	: >"$d/stopped"
fi
wait_for 'dead 0 1 && dead 2 1' 20
st=$?
ms=$(( ($(now) - ${t_stop:-0}) / 1000000 ))
[ $st -eq 0 ] && [ -n "$t_stop" ] && [ "$ms" -lt 6000 ]
ok $? "a job's node hangs: declared dead by both others within $ms ms (idle timeout: 12 s)"
diag "$(grep -h 'node 1: declared dead' "$T_TMP"/agent[02].log)"
wait_for "[ -e '$d/done' ]" 60
kill -KILL "${pids[1]}" 2>/dev/null
: >"$d/killed"
wait "$jpid"
for w in "rank 0: ok: flush to the silent node 1 fails" \
	"rank 0: ok: lock rank 2, held by the dead node's rank 1"; do
	line=$(grep -F "$w" "$d/out" | head -n 1)
	[ -n "$line" ]
	ok $? "${line:-$w: missing}"
done
grep -q "FAIL" "$d/out" && diag "$(cat "$d/out")"
"$RMAD" --session "$sess" --sweep >/dev/null 2>&1

# node 1 again, then node 2 hangs while no job runs
wait "${pids[1]}" 2>/dev/null
agent 1 .again
wait_for 'ups 0 "" 3 && ups 2 "" 3 && ups 1 .again 2' 20
ok $? "node 1's agent started again: up with both, and they with it"
sleep 1
kill -STOP "${pids[2]}"
t_stop=$(now)
sleep 3
! dead 0 2
ok $? "an idle node hangs: not declared dead at the busy timeout (3 s later)"
wait_for 'dead 0 2' 20
st=$?
ms=$(( ($(now) - t_stop) / 1000000 ))
[ $st -eq 0 ] && [ "$ms" -ge 4000 ]
ok $? "... but at the idle one: declared dead $ms ms after it hung"
kill -CONT "${pids[2]}"

# the node that collects job maps (the lowest one up, node 0) hangs
# while idle; a job on nodes 1 and 2 starts a second later, before the
# idle timeout: their agents probe node 0 before they send it their
# ranks, declare it dead, and node 1 collects the map instead
# (node 1 may not have timed it out yet: then it stays up for node 1)
wait_for 'ups 0 "" 4 && ups 2 "" 4' 20
st=$?
ok $st "node 2 went on: up with node 0 again"
[ $st -eq 0 ] || diag "$(grep -h 'node [0-9]*: up$' "$T_TMP"/agent[02].log)"
sleep 2
kill -STOP "${pids[0]}"
t_stop=$(now)
sleep 1
out=$(RMAD_SESSION=$sess RMAD_VNODES=2 RMAD_VNODE_BASE=1 run_bounded 60 \
	mpirun -np 4 -x RMAD_SESSION -x RMAD_VNODES -x RMAD_VNODE_BASE \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH -x RMAD_CONF -x RMAD_SPIN_US \
	"$top_builddir/t/prog_rma" 2>&1)
rc=$?
ms=$(( ($(now) - t_stop) / 1000000 ))
ranks_ok "the map's node hangs: a job on nodes 1 and 2 a second later, done $ms ms after the hang" 4 "$out" $rc ": ok (node"
st=0
for k in 1.again 2; do
	grep -q "which would collect its map, is dead: node 1 does" \
		"$T_TMP/agent$k.log" &&
		grep -q "node 0: declared dead.*heartbeat_timeout_ms" \
			"$T_TMP/agent$k.log" || st=1
done
ok $st "... node 1 collected it: nodes 1 and 2 probed node 0 and declared it dead at the busy timeout"
[ $st -eq 0 ] || diag "$(grep -h 'node 0\|collect' "$T_TMP"/agent1.again.log "$T_TMP"/agent2.log)"
kill -CONT "${pids[0]}"
for k in 0 1 2; do
	kill -TERM "${pids[$k]}" 2>/dev/null
done
wait_for '! kill -0 ${pids[0]} 2>/dev/null && ! kill -0 ${pids[1]} 2>/dev/null && ! kill -0 ${pids[2]} 2>/dev/null' 10
"$RMAD" --session "$sess" --sweep >/dev/null 2>&1
ok_clean
done_testing
