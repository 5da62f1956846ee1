#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# agent-kill.sh - when the agent dies, clients get RMAD_ERR_AGENT (-8)
# promptly instead of hanging, and a new client with no agent to reach
# fails the same way after connect_timeout_ms.  What the killed agent
# could not remove (socket, pid file, shm regions) goes at the next
# agent's start and with `rmad --sweep`, and a live agent's files stay.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 9
start_agent ak "$T_TMP/agent.log"
wait_for "[ -S '$(sock_of ak)' ]" 10 || bail "agent did not start"
RMAD_SESSION=ak run_bounded 60 "$top_builddir/t/prog_wait" ping "$T_TMP/w" \
	>"$T_TMP/w.out" 2>&1 &
cpid=$!
wait_for "[ -e '$T_TMP/w.0' ]" 20
ok $? "the client is attached and pinging"
sleep 0.3
kill -KILL "$AGENT_PID"
t0=$SECONDS
wait "$cpid"
grep -q "result -8 " "$T_TMP/w.out"
ok $? "the client gets RMAD_ERR_AGENT: $(cat "$T_TMP/w.out")"
[ $((SECONDS - t0)) -le 10 ]
ok $? "within $((SECONDS - t0)) s"
out=$(RMAD_SESSION=ak RMAD_CONNECT_TIMEOUT_MS=1000 run_bounded 30 \
	"$top_builddir/examples/hello" 2>&1)
echo "$out" | grep -q "agent unreachable"
ok $? "rmad_init without an agent returns RMAD_ERR_AGENT ($out)"
sdir=$T_RUNDIR/ak
ls "$sdir"/agent.sock "$sdir"/agent.pid >/dev/null 2>&1
ok $? "the killed agent left its socket and pid file: $(ls "$sdir" | tr '\n' ' ')"
# another session's agent sweeps them at its start, not its own
start_agent other "$T_TMP/other.log"
opid=$AGENT_PID
wait_for "[ -S '$(sock_of other)' ]" 10 || bail "agent other did not start"
[ ! -e "$sdir/agent.sock" ] && [ ! -e "$sdir/agent.pid" ] &&
	[ -S "$(sock_of other)" ] && [ -e "$T_RUNDIR/other/agent.pid" ]
ok $? "a new agent removes them and keeps its own: $(ls "$sdir" "$T_RUNDIR/other" | tr '\n' ' ')"
# a sweep never touches a live agent
n=$("$RMAD" --sweep)
[ -S "$(sock_of other)" ] && [ -e "$T_RUNDIR/other/agent.pid" ] &&
	RMAD_SESSION=other run_bounded 30 "$top_builddir/examples/hello" \
		>/dev/null 2>&1
ok $? "rmad --sweep ($n) leaves the live agent serving"
kill -KILL "$opid"
wait "$opid" 2>/dev/null
n=$("$RMAD" --sweep)
[ "$n" -ge 1 ]
ok $? "rmad --sweep removes what a second killed agent left ($n)"
left=$(leftovers)
[ -z "$left" ]
ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
done_testing
