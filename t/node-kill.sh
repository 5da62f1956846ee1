#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# node-kill.sh - a node's agent hangs (SIGSTOP, over shm) or dies
# (SIGKILL, over tcp;ofi_rxm and over shm) in the middle of a job on 3
# vnodes: the other agents declare it dead, the killed one at once on
# evidence (over tcp;ofi_rxm its address refuses connections, over shm
# its agent lock is free: within 10 s), the stopped one, of which nothing
# says it died, after heartbeat_confirm_ms (20 s: within 45), every call
# that waits on it returns RMAD_ERR_PROC_FAILED, an epoch among the live
# nodes works (a lock the dead node's rank held is released), a lock_all
# epoch fails only where it covers the dead node, and
# rmad-run exits, with status 4 because an agent died (t/prog_nodekill.c),
# leaving no process, run directory or shm region behind.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 76
prog="$top_builddir/t/prog_nodekill"
n=0
# over shm the agent hangs (SIGSTOP, no error anywhere: the confirmation
# window, heartbeat_confirm_ms, finds it); over tcp;ofi_rxm it dies
# (SIGKILL: a connection to its address is refused, or, when the
# provider saw it first, send errors with no echo after them: either is
# evidence); over shm it dies too (SIGKILL: its agent lock is free).
# The evidence is looked for once it is suspect (heartbeat_timeout_ms).
# The reason is an extended regular expression.
for c in "shm STOP 45 heartbeat_confirm_ms" \
	"tcp;ofi_rxm KILL 10 refused a connection|send errors on the fabric" \
	"shm KILL 10 its lock is free"; do
	read -r prov sig within reason <<<"$c"
	n=$((n + 1))
	d=$T_TMP/nk$n
	mkdir -p "$d"
	run_bounded 150 "$RMAD_RUN" -q --vnodes 3 --provider "$prov" \
		--session "nk$n" --set target_pool=1 -np 3 "$prog" "$d" \
		"$within" >"$d/out" 2>&1 &
	rpid=$!
	apid=""
	if wait_for "[ -e '$d/ready' ]" 60; then
		read -r apid <"$T_RUNDIR/nk$n/agent-1.pid"
		kill -"$sig" "$apid"
		date +%s.%N >"$d/t_stop"
		: >"$d/stopped"
	fi
	wait_for "[ -e '$d/done' ]" 120
	[ -n "$apid" ] && kill -KILL "$apid" 2>/dev/null
	: >"$d/killed"
	wait "$rpid"
	rc=$?
	want=(
		"rank 1: ok: holds rank 2's lock"
		"rank 0: ok: lock rank 1 while node 1 lives"
		"rank 0: ok: flush to the silent node 1 fails"
		"rank 0: ok: unlock of the dead node's rank fails"
		"rank 0: ok: lock rank 2, held by the dead node's rank 1"
		"rank 0: ok: lock_all, put to rank 2, while node 1 is silent"
		"rank 0: ok: an epoch on the live node 2"
		"rank 0: ok: lazy lock_all that never reached node 1: all syncs"
		"rank 0: ok: w3 (lazy locks): flush of the live rank 2 works"
		"rank 0: ok: w3 (lazy locks): flush_all covers the dead node"
		"rank 0: ok: w3 (lazy locks): unlock_all covers it too"
		"rank 0: ok: w3 (lazy locks): a new lock_all on rank 2 works"
		"rank 0: ok: w3 (lazy locks): then a lock epoch on rank 2"
		"rank 0: ok: w4 (every member): flush of the live rank 2 works"
		"rank 0: ok: w4 (every member): flush_all covers the dead node"
		"rank 0: ok: w4 (every member): unlock_all covers it too"
		"rank 0: ok: w4 (every member): a new lock_all on rank 2 works"
		"rank 0: ok: w4 (every member): then a lock epoch on rank 2"
		"rank 0: ok: a new epoch on the dead node fails"
		"rank 0: ok: ping rank 1 fails"
		"rank 0: ok: ping rank 2 works"
		"rank 0: ok: the job's barrier fails"
		"rank 0: ok: a fence on a window of the dead node fails"
	)
	for w in "${want[@]}"; do
		line=$(grep -F "$w" "$d/out" | head -n 1)
		[ -n "$line" ]
		ok $? "$prov, SIG$sig: ${line:-$w: missing}"
	done
	# why, for both others: a stopped agent only the window finds; a
	# killed one, its evidence
	why=$(grep "node 1: declared dead" "$d/out" | head -n 2 | tr '\n' ' ')
	[ "$(grep "node 1: declared dead" "$d/out" | grep -cE "$reason")" -eq 2 ]
	ok $? "$prov, SIG$sig: both declare it dead, for '$reason': ${why:-none}"
	grep -q "FAIL" "$d/out" && diag "$(cat "$d/out")"
	[ "$rc" -eq 4 ]
	ok $? "$prov, SIG$sig: rmad-run exits with status 4: an agent died ($rc)"
	[ "$rc" -eq 4 ] || diag "$(cat "$d/out")"
done
left=$(leftovers)
[ -z "$left" ]
ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
done_testing
