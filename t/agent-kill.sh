#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# agent-kill.sh - when the agent dies, clients get RMAD_ERR_AGENT (-8)
# promptly instead of hanging, and a new client with no agent to reach
# fails the same way after connect_timeout_ms.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
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
done_testing
