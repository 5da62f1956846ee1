#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mesh.sh - a static mesh of agents, as systemd starts them (rmad(8),
# LAUNCH MODES 2): three agents on one host named by the mesh key
# (127.0.0.1 and three ports, mesh_self telling each its entry; as
# virtual nodes, so that ranks find theirs), started one after another
# with no launcher.  Each comes up when it answers the others'
# heartbeats; a job of 6 ranks spans all three (t/prog_rma: locks, puts,
# gets, accumulates, a target that computes); one agent is killed, the
# others declare it dead, and a job on the two left works; it is
# started again, comes back up, and the job of 6 works again; another
# hangs (SIGSTOP) until the others declare it dead, goes on (SIGCONT),
# drops them in turn, shakes hands again, and the job works.  Then
# the bad configurations: a list without this host, an unusable entry
# (in the list, and in a mesh_file, which node 2 reads its list from),
# two entries with one address, and a provider that cannot bind to a
# socket address (shm).  Two agents named by IPv6 entries ([::1]:port)
# come up and serve a job; so do two on a link-local address named
# with its link (fe80::...%eth0), where the host has one; an IPv6 entry
# without its bracket, a link-local one without its link, and a mesh of
# both families, are refused.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 23
prog="$top_builddir/t/prog_rma"
sess=mesh
base=$((20000 + $$ % 20000))
ports=($base $((base + 1)) $((base + 2)))
mesh="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
# node 2 reads the same list from a file, with comments and a blank
printf '# the test mesh\n127.0.0.1:%s\n  127.0.0.1:%s   # node 1\n\n127.0.0.1:%s\n' \
	"${ports[@]}" >"$T_TMP/mesh.list"
pids=()
# agent K [LOGSUFFIX]: start node K of the mesh (idle nodes, those with
# no job in common, declared dead after 3 s: t/mesh-idle.sh has them;
# heartbeat_confirm_ms=0: dead, not only suspect, then)
agent() {
	local m=(--set "mesh=$mesh")

	[ "$1" -eq 2 ] && m=(--set "mesh_file=$T_TMP/mesh.list")
	start_agent "$sess" "$T_TMP/agent$1${2:-}.log" --vnodes 3 \
		--set "provider=tcp;ofi_rxm" "${m[@]}" \
		--set "mesh_self=$1" --set log_level=info \
		--set heartbeat_idle_ms=500 --set heartbeat_confirm_ms=0
	pids[$1]=$AGENT_PID
}
# ups K LOGSUFFIX N: agent K's log says N times that a node is up
ups() { [ "$(grep -c ': node [0-9]*: up$' "$T_TMP/agent$1${2:-}.log")" -ge "$3" ]; }
# job NP VNODES [SESSION]: a job of NP ranks on the first VNODES agents
job() {
	RMAD_SESSION=${3:-$sess} RMAD_VNODES=$2 run_bounded 120 mpirun -np "$1" \
		-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
		-x RMAD_CONF -x RMAD_SPIN_US "$prog" 2>&1
}

agent 0
agent 1
wait_for 'ups 0 "" 1 && ups 1 "" 1' 20
ok $? "two agents of three: up to each other"
sleep 1
agent 2
wait_for 'ups 0 "" 2 && ups 1 "" 2 && ups 2 "" 2' 20
ok $? "the third, started later: up with both"
[ "$(cat "$T_TMP"/agent[012].log | grep -c 'declared dead')" -eq 0 ]
ok $? "no node declared dead while the mesh came up"

out=$(job 6 3)
ranks_ok "a job of 6 ranks on the 3 agents" 6 "$out" $? ": ok (node"

kill -KILL "${pids[2]}"
wait_for 'grep -q "node 2: declared dead" "$T_TMP/agent0.log" &&
	grep -q "node 2: declared dead" "$T_TMP/agent1.log"' 10
ok $? "agent 2 killed: the others declare node 2 dead"
"$RMAD" --session "$sess" --sweep >/dev/null 2>&1
out=$(job 4 2)
ranks_ok "a job of 4 ranks on the two agents left" 4 "$out" $? ": ok (node"

agent 2 .again
wait_for 'ups 0 "" 3 && ups 1 "" 3 && ups 2 .again 2' 20
ok $? "agent 2 started again: up with both, and they with it"
out=$(job 6 3)
ranks_ok "a job of 6 ranks on the 3 agents again" 6 "$out" $? ": ok (node"

# agent 1 hangs past heartbeat_timeout_ms and then goes on: the others
# declared it dead, it learns so from their heartbeats, drops them too,
# and all shake hands anew
kill -STOP "${pids[1]}"
wait_for 'grep -q "node 1: declared dead" "$T_TMP/agent0.log" &&
	grep -q "node 1: declared dead" "$T_TMP/agent2.again.log"' 10
kill -CONT "${pids[1]}"
wait_for 'ups 0 "" 4 && ups 2 .again 3 && ups 1 "" 4' 20
st=$?
ok $st "agent 1 hung, declared dead, went on: it drops the others too, and all are up again"
[ $st -eq 0 ] || diag "$(grep -h 'node [0-9]*:' "$T_TMP"/agent*.log)"
out=$(job 6 3)
ranks_ok "a job of 6 ranks on the 3 agents after the hang" 6 "$out" $? ": ok (node"
for k in 0 1 2; do
	kill -TERM "${pids[$k]}"
done
wait_for '! kill -0 ${pids[0]} 2>/dev/null && ! kill -0 ${pids[1]} 2>/dev/null && ! kill -0 ${pids[2]} 2>/dev/null' 10
ok $? "the three agents stop on SIGTERM"

# pair_up SESSION MESH: two agents of a 2-node mesh, nodes 0 and 1 (logs
# SESSION0.log, SESSION1.log; pids[0], pids[1]), up to each other
pair_up() {
	local k
	for k in 0 1; do
		start_agent "$1" "$T_TMP/$1$k.log" --vnodes 2 \
			--set "provider=tcp;ofi_rxm" --set "mesh=$2" \
			--set "mesh_self=$k" --set log_level=info
		pids[$k]=$AGENT_PID
	done
	wait_for "[ \$(grep -c ': node [0-9]*: up\$' '$T_TMP/${1}0.log') -ge 1 ] &&
		[ \$(grep -c ': node [0-9]*: up\$' '$T_TMP/${1}1.log') -ge 1 ]" 20
}

# IPv6: two agents named by [::1]:port entries, up to each other, and a
# job on them
if ip -6 addr show lo 2>/dev/null | grep -q 'inet6 ::1/'; then
	pair_up mesh6 "[::1]:$((base + 3)),[::1]:$((base + 4))"
	ok $? "IPv6: two agents on [::1] entries, up to each other"
	out=$(job 4 2 mesh6)
	ranks_ok "IPv6: a job of 4 ranks on them" 4 "$out" $? ": ok (node"
	kill -TERM "${pids[0]}" "${pids[1]}"
	wait "${pids[0]}" "${pids[1]}" 2>/dev/null
else
	ok 0 "# SKIP no ::1 on lo"
	ok 0 "# SKIP no ::1 on lo"
fi
# a link-local address, named with its link
ll=$(ip -6 -o addr show scope link 2>/dev/null |
	grep -v -e tentative -e dadfailed |
	awk '{ sub("/.*", "", $4); print $4 "%" $2; exit }')
if [ -n "$ll" ]; then
	pair_up meshll "[$ll]:$((base + 5)),[$ll]:$((base + 6))"
	ok $? "link-local: two agents on [$ll] entries, up to each other"
	kill -TERM "${pids[0]}" "${pids[1]}"
	wait "${pids[0]}" "${pids[1]}" 2>/dev/null
else
	ok 0 "# SKIP no link-local IPv6 address"
fi

# bad configurations fail at start, saying why
# refused SESSION PATTERN WHAT SETTING...: an agent started with these
# --set settings exits with an error whose message matches PATTERN
refused() {
	local session=$1 pat=$2 what=$3 out rc kv sets=()
	shift 3
	for kv in "$@"; do sets+=(--set "$kv"); done
	out=$(run_bounded 20 "$RMAD" --foreground --session "$session" \
		"${sets[@]}" 2>&1)
	rc=$?
	[ "$rc" -ne 0 ] && echo "$out" | grep -q "$pat"
	ok $? "$what: refused (rc $rc)"
}
# documentation addresses (RFC 5737), unless this host has one of them
far=198.51.100.1,203.0.113.1
if ip -4 addr 2>/dev/null | grep -qE 'inet (198\.51\.100\.1|203\.0\.113\.1)/'; then
	ok 0 "# SKIP this host has $far"
else
	refused meshbad1 "no entry is an address of this host" \
		"a mesh that does not list this host" \
		"provider=tcp;ofi_rxm" "mesh=$far"
fi
refused meshbad2 "bad port" "a bad entry" \
	"provider=tcp;ofi_rxm" "mesh=127.0.0.1:99999"
printf '127.0.0.1:%s\n127.0.0.1:x\n' "${ports[0]}" >"$T_TMP/bad.list"
refused meshbad5 "bad.list:2: bad port" "a bad line of a mesh_file, naming it" \
	"provider=tcp;ofi_rxm" "mesh_file=$T_TMP/bad.list"
refused meshbad6 "bad entry" "an IPv6 entry without its closing bracket" \
	"provider=tcp;ofi_rxm" "mesh=[::1:${ports[0]}"
refused meshbad8 "is link-local: name its link" \
	"a link-local entry without its link" \
	"provider=tcp;ofi_rxm" "mesh=[fe80::1]:${ports[0]},[fe80::2]:${ports[1]}" \
	mesh_self=0
refused meshbad7 "has no IPv4 address" "IPv4 and IPv6 entries in one mesh" \
	"provider=tcp;ofi_rxm" "mesh=127.0.0.1:${ports[0]},[::1]:${ports[1]}" \
	mesh_self=0
refused meshbad3 "same address" "two entries with one address" \
	"provider=tcp;ofi_rxm" "mesh=127.0.0.1,127.0.0.1"
refused meshbad4 "needs tcp;ofi_rxm" \
	"shm, which has no socket addresses" provider=shm \
	"mesh=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" mesh_self=0
"$RMAD" --sweep >/dev/null 2>&1
ok_clean
done_testing
