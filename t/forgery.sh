#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# forgery.sh - a victim client and an attacker on one agent: the
# attacker, in another job as the same user and then as another user
# admitted with allow_users, finds no byte of the victim in any memory
# it can map, and cannot make the agent run ops on the victim's
# elements; the victim's counters and data stay untouched.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
prog="$top_builddir/t/test_forgery"
plan 23

# a run directory other users can traverse: the agent serves them
chmod 0711 "$T_RUNDIR"
base=$T_RUNDIR/forg
mkdir -m 0755 "$base"
RMAD_RUNDIR=$base RMAD_ALLOW_USERS=nobody start_agent forg "$T_TMP/agent.log"
sock=$base/forg/agent.sock
wait_for "[ -S '$sock' ]" 10 || bail "agent did not start: $(cat "$T_TMP/agent.log")"

# tap PREFIX FILE: the program's PASS/FAIL lines as TAP points
tap() {
	local pre=$1 f=$2 line
	while read -r line; do
		case $line in
		PASS\ *) ok 0 "$pre${line#PASS }" ;;
		FAIL\ *) ok 1 "$pre${line#FAIL }" ;;
		esac
	done <"$f"
}

round() {
	# round NAME DIR [ATTACKER-PREFIX...]
	local name=$1 d=$2
	shift 2
	mkdir -p "$d" && chmod 0777 "$d"
	run_bounded 120 "$prog" victim "$sock" "$d" >"$d/victim.out" 2>&1 &
	local vpid=$!
	run_bounded 120 "$@" "$prog" attacker "$sock" "$d" \
		>"$d/attacker.out" 2>&1
	wait $vpid
	tap "$name: " "$d/attacker.out"
	tap "$name: " "$d/victim.out"
}

# 1. the same user, another job: 6 attacker and 5 victim points
round "same user, other job" "$T_TMP/r1"

# 2. another user (nobody), admitted by allow_users
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 ||
	! setpriv --reuid=nobody --regid=nogroup --clear-groups \
		test -x "$prog" 2>/dev/null; then
	for i in 1 2 3 4 5 6 7 8 9 10 11; do
		ok 0 "# SKIP cannot run the attacker as user nobody (not root, no such user, or $prog not reachable by it)"
	done
else
	round "user nobody" "$T_TMP/r2" setpriv --reuid=nobody \
		--regid=nogroup --clear-groups
fi
grep -q "uid 65534" "$T_TMP/r2/attacker.out" 2>/dev/null ||
	[ "$(id -u)" -ne 0 ] || diag "$(cat "$T_TMP/r2/attacker.out" 2>/dev/null)"
kill -0 "$AGENT_PID"
ok $? "the agent is still serving"
done_testing
