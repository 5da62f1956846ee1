#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# admit.sh - admission before resources (rmad(7), SECURITY).  With
# allow_users set the agent's socket is open to every user: a user who
# is not in the list (nobody, while allow_users names root) opens 80
# connections and never registers, while a permitted job runs.  The
# agent must close every one of them at once and serve the job (before,
# they held all max_clients slots and the job failed "agent is full").
# Then: permitted connections that never register are closed after
# register_timeout_ms; max_user_clients and max_user_jobs bound another
# user's slots and jobs; and a user's client cannot join another user's
# job.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
prog="$top_builddir/t/test_hostile"
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1 ||
	! setpriv --reuid=nobody --regid=nogroup --clear-groups \
		test -x "$prog" 2>/dev/null; then
	skip_all "cannot run a client as user nobody (not root, no such user, or $prog not reachable by it)"
fi
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
plan 11

# flood SOCKET N SECS [STOPFILE]: N connections that never say a word,
# held SECS seconds or until STOPFILE exists; prints "connected N" at
# once and "closed K" at the end: how many the agent closed meanwhile
flood() {
	python3 -c '
import os, select, socket, sys, time
path, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
stop = sys.argv[4] if len(sys.argv) > 4 else None
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(path)
    except OSError as e:
        print("connect: %s" % e)
        break
    socks.append(s)
print("connected %d" % len(socks), flush=True)
live, end = list(socks), time.time() + hold
while live and time.time() < end and not (stop and os.path.exists(stop)):
    r, _, _ = select.select(live, [], [], 0.1)
    for s in r:
        try:
            d = s.recv(4096)
        except OSError:
            d = b""
        if not d:
            live.remove(s)
print("closed %d" % (len(socks) - len(live)), flush=True)
' "$@"
}

# a run directory other users can traverse: the agent serves them
chmod 0711 "$T_RUNDIR"
base=$T_RUNDIR/adm
mkdir -m 0755 "$base"
export RMAD_RUNDIR=$base
# (for the clients: a run directory that others traverse is fine)
export RMAD_ALLOW_USERS=root
job() {
	RMAD_SESSION=$1 run_bounded 90 mpirun -np 2 -x RMAD_SESSION \
		-x RMAD_RUNDIR -x RMAD_AGENT_PATH -x RMAD_CONF -x RMAD_ALLOW_USERS \
		"$top_builddir/t/prog_win" 2>&1
}

# 1. a user not admitted floods the socket
start_agent adm1 "$T_TMP/agent1.log" --set log_level=info
sock=$base/adm1/agent.sock
wait_for "[ -S '$sock' ]" 10 || bail "agent did not start: $(cat "$T_TMP/agent1.log")"
# (held until the job is done, so that before the check at accept the
# job found every slot taken)
as_nobody bash -c "$(declare -f flood); flood '$sock' 80 120 '$T_TMP/flood1.stop'" \
	>"$T_TMP/flood1.out" 2>&1 &
fpid=$!
wait_for "grep -q '^connected' '$T_TMP/flood1.out'" 20
out=$(job adm1)
ranks_ok "a permitted job runs while another user floods the socket" 2 \
	"$out" $? ": ok (node"
: >"$T_TMP/flood1.stop"
wait "$fpid"
diag "$(cat "$T_TMP/flood1.out")"
grep -qx "connected 80" "$T_TMP/flood1.out" &&
	grep -qx "closed 80" "$T_TMP/flood1.out"
ok $? "the agent closed all 80 connections of the user not admitted"
n=$(grep -c "uid 65534 not permitted" "$T_TMP/agent1.log")
[ "$n" -ge 1 ]
ok $? "and said why ($n lines)"
kill -0 "$AGENT_PID"
ok $? "the agent is alive"

# 2. permitted connections that never register: closed in time
start_agent adm2 "$T_TMP/agent2.log" --set max_clients=8 \
	--set register_timeout_ms=1000 --set log_level=info
sock=$base/adm2/agent.sock
wait_for "[ -S '$sock' ]" 10 || bail "agent did not start: $(cat "$T_TMP/agent2.log")"
flood "$sock" 8 20 >"$T_TMP/flood2.out" 2>&1 &
fpid=$!
wait_for "[ \$(grep -c 'did not register within' '$T_TMP/agent2.log') -ge 8 ]" 15
ok $? "8 connections that did not register within register_timeout_ms were closed"
out=$(job adm2)
ranks_ok "a job runs once they are closed" 2 "$out" $? ": ok (node"
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null

# 3. quotas of another user, and another user's job
start_agent adm3 "$T_TMP/agent3.log" --set allow_users=nobody \
	--set max_user_clients=3 --set max_user_jobs=1 --set log_level=info
sock=$base/adm3/agent.sock
wait_for "[ -S '$sock' ]" 10 || bail "agent did not start: $(cat "$T_TMP/agent3.log")"
as_nobody bash -c "$(declare -f flood); flood '$sock' 5 3" \
	>"$T_TMP/flood3.out" 2>&1
diag "$(cat "$T_TMP/flood3.out")"
grep -qx "closed 2" "$T_TMP/flood3.out"
ok $? "max_user_clients=3: 2 of 5 connections of user nobody refused"
d=$T_TMP/reg
as_nobody "$prog" register "$sock" nobodyjob "$d" >"$T_TMP/reg1.out" 2>&1 &
r1=$!
wait_for "grep -q registered '$T_TMP/reg1.out'" 20
ok $? "a client of user nobody registers"
as_nobody "$prog" register "$sock" nobodyjob2 "$d" >"$T_TMP/reg2.out" 2>&1
grep -q "^refused -7" "$T_TMP/reg2.out"
ok $? "max_user_jobs=1: its client of a second job is refused ($(cat "$T_TMP/reg2.out"))"
"$prog" register "$sock" rootjob "$d" >"$T_TMP/reg3.out" 2>&1 &
r3=$!
wait_for "grep -q registered '$T_TMP/reg3.out'" 20
as_nobody "$prog" register "$sock" rootjob "$d" >"$T_TMP/reg4.out" 2>&1
grep -q "^refused -14" "$T_TMP/reg4.out"
ok $? "a client of user nobody cannot join root's job ($(cat "$T_TMP/reg4.out"))"
: >"$d.done"
wait "$r1" "$r3"
out=$(job adm3)
ranks_ok "the agent serves a fresh job" 2 "$out" $? ": ok (node"
done_testing
