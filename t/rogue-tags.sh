#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rogue-tags.sh - an outsider that takes over a mesh agent's address
# speaks for nobody when the mesh has a key (fabric_auth,
# mesh_key_file; rmad(7), ISOLATION).  Two agents of a static mesh over
# tcp;ofi_rxm on 127.0.0.1; agent 1 is stopped, and t/test_rogue, plain
# libfabric bound to agent 1's address and port, sends agent 0 ten
# PINGs in node 1's name.  Without a key agent 0 answers them (the
# outsider is node 1 as far as it can tell); with one it drops all ten
# for their tags, answers none, and agent 1, started again, comes back
# up.  Heartbeats that echo an old stamp of agent 0's, as a stash of a
# dead node's heartbeats played later would, do not keep node 1 alive:
# without a key the outsider that sends only those is taken for node 1
# and then declared dead within heartbeat_timeout_ms, again and again
# (heartbeat_confirm_ms=0; or sooner, for its free agent lock: no agent).
# An agent killed and started again before the others time it out is
# taken as restarted and comes back up.  Then the key files an agent
# refuses: one that others may read, one that is not a key.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 9
base=$((20000 + ($$ + 4243) % 20000))
ports=($base $((base + 1)))
mesh="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}"
key=$T_TMP/mesh.key
printf '0123456789abcdef0123456789ABCDEF\n' >"$key"
chmod 600 "$key"
pids=()
# agent SESSION K [SETTINGS...]: start node K of the session's mesh
# (every node at heartbeat_ms: none of them has a job, and idle nodes'
# heartbeats, heartbeat_idle_ms, are t/mesh-idle.sh's)
agent() {
	local sess=$1 k=$2
	shift 2
	start_agent "$sess" "$T_TMP/$sess$k.log" --vnodes 2 \
		--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
		--set "mesh_self=$k" --set log_level=info \
		--set heartbeat_ms=50 --set heartbeat_timeout_ms=400 \
		--set heartbeat_confirm_ms=0 \
		--set heartbeat_idle_ms=0 "$@"
	pids[$k]=$AGENT_PID
}
ups() { [ "$(grep -c ": node [0-9]*: up$" "$T_TMP/$1$2.log")" -ge "$3" ]; }
# takeover SESSION [SETTINGS...]: agent 1 stops, the rogue claims its
# address (with $rogue_opts); out: what the rogue said
takeover() {
	local sess=$1
	shift
	agent "$sess" 0 "$@"
	agent "$sess" 1 "$@"
	wait_for "ups $sess 0 1 && ups $sess 1 1" 20 || echo "not up"
	kill -KILL "${pids[1]}"
	wait "${pids[1]}" 2>/dev/null
	wait_for "grep -q 'declared dead' '$T_TMP/${sess}0.log'" 20 ||
		echo "node 1 not declared dead"
	out=$(run_bounded 30 "$top_builddir/t/test_rogue" -c $rogue_opts \
		-b "${ports[1]}" -n 1 "127.0.0.1:${ports[0]}" 2>&1)
}

rogue_opts=
takeover open
diag "$out"
u=$(grep -c ": node 1: up$" "$T_TMP/open0.log")
d=$(grep -c ": node 1: declared dead" "$T_TMP/open0.log")
echo "$out" | grep -q "pongs [1-9]" && [ "$u" -eq 2 ] && [ "$d" -eq 1 ]
ok $? "without a key, the outsider at node 1's address is taken for node 1 ($u ups, $d deaths) and answered"
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null

rogue_opts=-s
takeover stale
diag "$out"
rogue_opts=
u=$(grep -c ": node 1: up$" "$T_TMP/stale0.log")
d=$(grep -c ": node 1: declared dead, its ranks failed: .*no sign of life" "$T_TMP/stale0.log")
[ "$u" -ge 2 ] && [ "$d" -ge 2 ]
ok $? "heartbeats that echo an old stamp: node 1 up, then declared dead for no sign of life ($u ups, $d deaths)"
[ "$d" -ge 2 ] || diag "$(grep "node 1" "$T_TMP/stale0.log")"
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null

takeover keyed --set "mesh_key_file=$key"
diag "$out"
grep -q "packets tagged" "$T_TMP/keyed0.log"
ok $? "with mesh_key_file, packets are tagged"
n=$(grep -c "fabric: dropped a message from node 1: its trailer names" "$T_TMP/keyed0.log")
u=$(grep -c ": node 1: up$" "$T_TMP/keyed0.log")
echo "$out" | grep -q "pongs 0$" && [ "$n" -ge 10 ] && [ "$u" -eq 1 ]
ok $? "with a key, its heartbeats and PINGs are dropped ($n), node 1 stays down, no PING is answered"
agent keyed 1 --set "mesh_key_file=$key"
wait_for "ups keyed 0 2 && ups keyed 1 1" 20
ok $? "agent 1, started again, comes back up"
kill "${pids[0]}" "${pids[1]}"
wait "${pids[0]}" "${pids[1]}" 2>/dev/null

# A restart quicker than the heartbeat timeout: node 0 still has node 1
# up, in session, and must take the new agent's unbound heartbeat as a
# restart, then shake hands anew under the new incarnations.  Heartbeats
# every 2 s: send errors to the killed agent are evidence two heartbeats
# on (liveness.c), and an agent started on two loaded cores may take
# longer than 100 ms to answer.
slow="--set heartbeat_timeout_ms=30000 --set heartbeat_ms=2000"
slow="$slow --set mesh_key_file=$key"
agent quick 0 $slow
agent quick 1 $slow
wait_for "ups quick 0 1 && ups quick 1 1" 20
kill -KILL "${pids[1]}"
wait "${pids[1]}" 2>/dev/null
agent quick 1 $slow
wait_for "ups quick 0 2 && ups quick 1 1" 20 &&
	grep -q "node 1: declared dead.*it restarted" "$T_TMP/quick0.log"
st=$?
ok $st "with a key, agent 1 killed and started again at once: taken as a restart, up again"
[ $st -eq 0 ] || diag "$(grep "node 1" "$T_TMP/quick0.log")"
kill "${pids[0]}" "${pids[1]}"
wait "${pids[0]}" "${pids[1]}" 2>/dev/null

# refused NAME MESSAGE SETTING: an agent of the mesh with SETTING exits
# at once (not by the timeout), saying MESSAGE; sets rc
refused() {
	run_bounded 20 "$RMAD" --foreground --session "$1" \
		--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
		--set mesh_self=0 --set "$3" >"$T_TMP/$1.log" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "$2" "$T_TMP/$1.log"
}
chmod 644 "$key"
refused bad1 "group or others may read or write it" "mesh_key_file=$key"
ok $? "a key file that others may read: the agent refuses to start (rc $rc)"
printf 'not a key\n' >"$key"
chmod 600 "$key"
refused bad2 "not 32 hexadecimal digits" "mesh_key_file=$key"
ok $? "a key file that holds no key: refused (rc $rc)"
refused bad3 "a static mesh needs mesh_key_file" fabric_auth=on
ok $? "fabric_auth = on without a key file: refused (rc $rc)"
done_testing
