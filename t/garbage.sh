#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# garbage.sh - a client that writes garbage into the shared segment hurts
# only itself: the agent drops what it cannot check and keeps serving.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
start_agent gb "$T_TMP/agent.log"
wait_for "[ -S '$(sock_of gb)' ]" 10 || bail "agent did not start"
run_bounded 60 "$top_builddir/t/test_garbage" "$(sock_of gb)" | sed '/^1\.\./d'
n=18
n=$((n + 1))
if RMAD_SESSION=gb run_bounded 60 "$top_builddir/t/prog_barrier" -b 20 -p 500 \
	>"$T_TMP/after.out" 2>&1; then
	echo "ok $n - a well-behaved client still works afterwards"
else
	echo "not ok $n - a well-behaved client still works afterwards"
	sed 's/^/# /' "$T_TMP/after.out"
fi
n=$((n + 1))
if kill -0 "$AGENT_PID" && grep -q "bad op index" "$T_TMP/agent.log"; then
	echo "ok $n - the agent is alive and logged the bad indices"
else
	echo "not ok $n - the agent is alive and logged the bad indices"
fi
n=$((n + 1))
# the hostile client left elements reserved and lent: all are home
out=$(run_bounded 10 "$top_builddir/rmadctl" -s gb --json status 2>&1)
if echo "$out" | python3 -c '
import json, sys
p = json.load(sys.stdin)["op_pool"]
assert p["in_use"] == 0 and p["reserved"] == 0, p'; then
	echo "ok $n - every global op element is home again"
else
	echo "not ok $n - every global op element is home again"
	echo "$out" | sed 's/^/# /'
fi
echo "1..$n"
