#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rmadctl.sh - rmadctl against a running agent with one attached client:
# status shows the client, its named window and the progress mode, --json parses (odd names escaped), stats count
# the client's ops, reload reaches the agent, stop ends it cleanly and
# the client learns the agent is gone; no agent and bad usage give the
# documented exit statuses.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 18
ctl="$top_builddir/rmadctl"
json_ok='import json,sys; json.load(sys.stdin)'

# up front, before the client keeps the first agent busy
odd='we"ird\name'
start_agent "$odd" "$T_TMP/odd.log" --set core=none
start_agent ctl "$T_TMP/agent.log" --set log_level=info
apid=$AGENT_PID
for s in ctl we_ird_name; do
	wait_for "[ -S '$(sock_of $s)' ]" 20 ||
		{ sed 's/^/# /' "$T_TMP"/*.log; bail "agent $s did not start"; }
done
RMAD_SESSION=ctl run_bounded 90 "$top_builddir/t/prog_wait" pingwin "$T_TMP/w" \
	>"$T_TMP/w.out" 2>&1 &
client=$!
T_PIDS+=($client)
wait_for "[ -s '$T_TMP/w.0' ]" 20 || bail "the client did not attach"
cpid=$(cut -d' ' -f1 "$T_TMP/w.0")

# 1. status: the client's row is "SLOT PID RANK LOCAL BAD_OPS JOB"
out=$(run_bounded 10 "$ctl" -s ctl status 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -Eq "^ +[0-9]+ +$cpid +0 +0 +0 +[^ ]"
ok $? "status lists the client, pid $cpid rank 0 (rc $rc)"
echo "$out" | grep -q "^  pid          $apid\$"
ok $? "status names the agent's pid $apid"
echo "$out" | grep -Eq '^  [0-9a-f]{16} +1 +1/1 allocate ready +ctl "probe"$'
ok $? "status lists the client's window: key, members, kind, state, name"
echo "$out" | grep -Eq '^  progress     (event-driven|spinning) \([0-9]+ on our core\)$'
ok $? "status says how the agent waits (progress)"
[ $rc -eq 0 ] || echo "$out" | sed 's/^/# /'

# 2. JSON
run_bounded 10 "$ctl" -s ctl --json status >"$T_TMP/s.json" 2>&1 &&
	python3 -c "$json_ok" <"$T_TMP/s.json"
ok $? "status --json is valid JSON"
python3 -c '
import json, sys
d = json.load(sys.stdin)
c = [c for c in d["clients"] if c["pid"] == int(sys.argv[1])]
assert len(c) == 1 and c[0]["rank"] == 0, c
assert d["agent"]["session"] == "ctl" and d["stats"]["ops_done"] > 0
assert len(d["jobs"]) == 1 and d["jobs"][0]["local_ranks"] == 1
w = d["windows"]
assert len(w) == 1 and w[0]["name"] == "ctl \"probe\"" and w[0]["members"] == 1, w
assert d["agent"]["progress"] in ("event", "spin"), d["agent"]
' "$cpid" <"$T_TMP/s.json" 2>"$T_TMP/py.err"
ok $? "the JSON holds the client, its job and counters $(cat "$T_TMP/py.err")"
run_bounded 10 "$ctl" -s "$odd" --json status 2>&1 | python3 -c '
import json, sys
assert json.load(sys.stdin)["agent"]["session"] == sys.argv[1]' "$odd"
ok $? "a session name with a quote and a backslash is escaped"

# 3. stats: the counters only, and the client's pings are counted
out=$(run_bounded 10 "$ctl" -s ctl stats 2>&1)
n=$(echo "$out" | sed -n 's/^  ops done  *\([0-9]*\)$/\1/p')
[ "${n:-0}" -gt 0 ]
ok $? "stats count the client's ops (${n:-none})"
[ "$(echo "$out" | head -n1)" = stats ] && ! echo "$out" | grep -q "^clients"
ok $? "stats print only the counters"

# 4. reload
out=$(run_bounded 10 "$ctl" -s ctl reload 2>&1)
ok $? "reload succeeds ($out)"
wait_for "grep -q 'reloaded' '$T_TMP/agent.log'" 10
ok $? "the agent reloaded its configuration"

# 5. stop
out=$(run_bounded 20 "$ctl" -s ctl stop 2>&1)
ok $? "stop succeeds ($out)"
wait_for "! kill -0 $apid 2>/dev/null" 10
wait "$apid"
rc=$?
[ $rc -eq 0 ]
ok $? "the agent exits with status 0 ($rc)"
[ ! -e "$(sock_of ctl)" ]
ok $? "and removes its socket"
wait_for "! kill -0 $client 2>/dev/null" 20
grep -q "result -8" "$T_TMP/w.out"
ok $? "the client gets RMAD_ERR_AGENT: $(tail -n1 "$T_TMP/w.out")"

# 6. no agent, bad usage
out=$(run_bounded 10 "$ctl" -s nosuch status 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "no agent at $(sock_of nosuch)"
ok $? "no agent: exit 1 naming the socket (rc $rc: $out)"
run_bounded 10 "$ctl" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ]
ok $? "no command: exit 2 ($rc)"
run_bounded 10 "$ctl" -s ctl frobnicate >/dev/null 2>&1
rc1=$?
run_bounded 10 "$ctl" --bogus status >/dev/null 2>&1
rc2=$?
run_bounded 10 "$ctl" --vnode x status >/dev/null 2>&1
rc3=$?
[ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && [ $rc3 -eq 2 ]
ok $? "unknown command, option or vnode: exit 2 ($rc1 $rc2 $rc3)"
done_testing
