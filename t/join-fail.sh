#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# join-fail.sh - a node dies while its job's rank map is being made.
# Three agents of a static mesh (heartbeat_ms=100,
# heartbeat_timeout_ms=600 and dead then, heartbeat_confirm_ms=0,
# attach_timeout_ms=60000) and a job of 3
# ranks, rank r on node r (t/prog_wait late): ranks 1 and 2 attach and
# their nodes send their ranks to node 0, which collects the map; rank 0
# waits.  Node 1's agent is killed.  Node 0 knows that node 1 had ranks
# of the job, declares it dead and fails the job on every node: rank 2,
# waiting in rmad_init on node 2, gets RMAD_ERR_PROC_FAILED within
# seconds, not at attach_timeout_ms, and rank 0, which attaches after
# that, at once.  Then node 1 dies again while node 0 collects the map
# of a job on node 0 alone: a node without ranks of a job does not fail
# it.  Last, the collector itself dies while a job of ranks on all three
# nodes starts: it had told node 1 that it holds a rank (JOB_HELD), so
# node 1 fails the job rather than collecting its map, and so does the
# late rank 2 whose JOIN goes to node 1, now the lowest node up.  With
# max_jobs=1, each job takes the slot of the failed one an agent keeps
# to answer late JOINs.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 12
prog="$top_builddir/t/prog_wait"
sess=joinfail
base=$((20000 + ($$ + 11000) % 20000))
mesh="127.0.0.1:$base,127.0.0.1:$((base + 1)),127.0.0.1:$((base + 2))"
pids=()
# agent K [LOGSUFFIX]: start node K of the mesh
agent() {
	start_agent "$sess" "$T_TMP/agent$1${2:-}.log" --vnodes 3 \
		--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
		--set "mesh_self=$1" --set "log_level=${3:-info}" \
		--set heartbeat_ms=100 --set heartbeat_timeout_ms=600 \
		--set heartbeat_confirm_ms=0 --set heartbeat_idle_ms=300 --set attach_timeout_ms=60000 \
		--set max_jobs=1
	pids[$1]=$AGENT_PID
}
# ups K [LOGSUFFIX]: agent K's log says that both others are up
ups() {
	local n
	n=$(grep -c ': node [0-9]*: up$' "$T_TMP/agent$1${2:-}.log" 2>/dev/null)
	[ "${n:-0}" -ge 2 ]
}
agent 0 "" debug	# says when a node joins a job
agent 1
agent 2
wait_for 'ups 0 && ups 1 && ups 2' 20
ok $? "three mesh agents: up to one another"
# clients K: agent K's count of attached clients
clients() {
	RMAD_SESSION=$sess run_bounded 10 "$top_builddir/rmadctl" --vnode "$1" \
		status 2>/dev/null | awk '$1 == "clients" { print $2; exit }'
}

# kill_node K: SIGKILL node K's agent; t0: when
kill_node() {
	kill -KILL "${pids[$1]}"
	t0=$(date +%s%N)
	wait "${pids[$1]}" 2>/dev/null
}
# init_of R: wait for rank R's rmad_init line in $d/out: line, and ms
# since t0
init_of() {
	wait_for "grep -q '^rank $1: init' '$d/out'" 30
	ms=$((($(date +%s%N) - t0) / 1000000))
	line=$(grep "^rank $1: init" "$d/out")
}

d=$T_TMP/late
mkdir -p "$d"
OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0 \
RMAD_SESSION=$sess RMAD_VNODES=3 run_bounded 90 mpirun -np 3 \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF -x RMAD_SPIN_US "$prog" late "$d/f" >"$d/out" 2>&1 &
jpid=$!
# joined J: node 0 got job JOINs from nodes 1 and 2, J in all
joined() {
	[ "$(grep -c 'node [12] joins, [0-9]* of [0-9]* ranks' \
		"$T_TMP/agent0.log")" -ge "$1" ]
}
wait_for 'joined 2' 30
st=$?
kill_node 1
ok $st "ranks 1 and 2 attached and their nodes joined; node 1's agent killed"
init_of 2
echo "$line" | grep -q "result -9 " && [ "$ms" -lt 20000 ]
ok $? "rank 2, waiting on node 2, fails $ms ms after the kill (attach_timeout_ms 60 s): $line"
grep -q "job .*: node 1 is dead; its ranks there failed" "$T_TMP/agent0.log" &&
	grep -q "failed, says node 0" "$T_TMP/agent2.log"
ok $? "node 0 knew node 1 had joined, and told node 2"
: >"$d/f.go"
wait "$jpid"
jst=$?
line=$(grep '^rank 0: init' "$d/out")
echo "$line" | grep -q "result -9 "
st=$?
ok $st "rank 0, attaching after that to node 0: $line"
if [ $st -ne 0 ]; then
	diag "mpirun's status $jst, its output: $(cat "$d/out")"
	diag "node 0: $(grep -v ': debug: ' "$T_TMP/agent0.log" | tail -n 20)"
fi

# node 1 again; a job of 2 ranks on node 0, which collects its map:
# rank 1 attaches, node 1 dies (it has no ranks of the job), rank 0
# attaches
wait "${pids[1]}" 2>/dev/null
agent 1 .again
wait_for 'ups 1 .again' 20
ok $? "node 1's agent started again"
d=$T_TMP/late2
mkdir -p "$d"
RMAD_SESSION=$sess RMAD_VNODES=1 run_bounded 90 \
	mpirun -np 2 -x RMAD_SESSION -x RMAD_VNODES \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH -x RMAD_CONF -x RMAD_SPIN_US \
	"$prog" late "$d/f" >"$d/out" 2>&1 &
jpid=$!
wait_for '[ "$(clients 0)" = 1 ]' 30
sleep 1
kill_node 1
wait_for "[ \$(grep -c 'node 1: declared dead' '$T_TMP/agent0.log') -ge 2 ]" 20
st=$?
: >"$d/f.go"
wait "$jpid"
rc=$?
[ $st -eq 0 ] && [ $rc -eq 0 ] && [ "$(grep -c 'init result 0 ' "$d/out")" -eq 2 ]
ok $? "a node without ranks of a job dies while node 0 collects its map: the job runs (rc $rc)"
[ $rc -eq 0 ] || diag "$(cat "$d/out")"
# node 1 again; a job of 3 ranks, rank 2 late: node 0, which collects
# the map, holds rank 0 and tells node 1 so when node 1 joins; node 0
# dies: node 1 fails the job instead of collecting the map itself, and
# answers node 2's JOIN, once rank 2 attaches, with the failure
wait "${pids[1]}" 2>/dev/null
agent 1 .third debug
wait_for 'ups 1 .third' 20
ok $? "node 1's agent started again"
d=$T_TMP/late3
mkdir -p "$d"
OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0 \
RMAD_SESSION=$sess RMAD_VNODES=3 run_bounded 90 mpirun -np 3 \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF -x RMAD_SPIN_US "$prog" late "$d/f" 2 >"$d/out" 2>&1 &
jpid=$!
wait_for "grep -q 'which collects its map, holds 1 of its ranks' '$T_TMP/agent1.third.log'" 30
st=$?
kill_node 0
ok $st "node 1 joined and heard that node 0 holds a rank; node 0's agent killed"
init_of 1
echo "$line" | grep -q "result -9 " && [ "$ms" -lt 20000 ]
ok $? "rank 1 fails $ms ms after the collector's kill (attach_timeout_ms 60 s): $line"
: >"$d/f.go"
wait "$jpid"
ms=$((($(date +%s%N) - t0) / 1000000))
line=$(grep '^rank 2: init' "$d/out")
echo "$line" | grep -q "result -9 " && [ "$ms" -lt 30000 ]
ok $? "rank 2, attaching after that, joins node 1 and fails too ($ms ms after the kill): $line"
grep -q "^rank [12]: init" "$d/out" || diag "$(cat "$d/out")"
for k in 1 2; do
	kill -TERM "${pids[$k]}" 2>/dev/null
done
wait_for '! kill -0 ${pids[1]} 2>/dev/null && ! kill -0 ${pids[2]} 2>/dev/null' 10
"$RMAD" --session "$sess" --sweep >/dev/null 2>&1
ok_clean
done_testing
