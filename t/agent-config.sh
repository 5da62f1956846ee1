#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# agent-config.sh - the agent's configuration: --show-config, bad values
# refused with the key and line, environment overrides, SIGHUP reload,
# pinning, and a clean SIGTERM stop that removes the run files.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 15

out=$(run_bounded 10 "$RMAD" --show-config 2>&1)
echo "$out" | grep -Eq '^spin_us +=  *2000 +# env'
ok $? "--show-config shows an environment override and its source"

conf="$T_TMP/bad.conf"
printf '# test\nlog_level = info\nspin_us = abc\n' >"$conf"
err=$(run_bounded 10 "$RMAD" --config "$conf" --show-config 2>&1)
rc=$?
[ $rc -ne 0 ] && echo "$err" | grep -q "bad.conf:3" && echo "$err" | grep -q spin_us
ok $? "a bad value stops the agent naming file:line and key ($err)"

printf 'no_such_key = 1\n' >"$conf"
err=$(run_bounded 10 "$RMAD" --config "$conf" --show-config 2>&1)
[ $? -ne 0 ] && echo "$err" | grep -q "no_such_key"
ok $? "an unknown key is refused ($err)"

err=$(RMAD_RING_ENTRIES=1000 run_bounded 10 "$RMAD" --show-config 2>&1)
[ $? -ne 0 ] && echo "$err" | grep -q "RMAD_RING_ENTRIES"
ok $? "a bad environment value names the variable ($err)"

err=$(run_bounded 10 "$RMAD" --set max_clients=0 --show-config 2>&1)
[ $? -ne 0 ] && echo "$err" | grep -q max_clients
ok $? "--set refuses an out-of-range value ($err)"

run_bounded 10 "$RMAD" --bogus-option >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "an unknown option exits with status 2"

run_bounded 10 "$RMAD" --show-config=json | grep -q '"spin_us": 2000'
ok $? "--show-config=json"

# a running agent: pinning, reload and stop
printf 'log_level = info\n' >"$conf"
start_agent cfg "$T_TMP/agent.log" --config "$conf" --set core=auto
sock=$(sock_of cfg)
wait_for "[ -S '$sock' ]" 10
ok $? "agent listens on $sock"
[ "$(stat -c %a "$T_RUNDIR/cfg")" = 700 ]
ok $? "the session directory is private (mode 700)"
grep -Eq "pinned to core [0-9]+|could not pin" "$T_TMP/agent.log"
ok $? "the agent logs its core: $(grep -Eo 'pinned to core [0-9]+ of [0-9]+' "$T_TMP/agent.log")"

printf 'log_level = info\nidle_poll_us = 500\nmax_clients = 8\n' >"$conf"
kill -HUP "$AGENT_PID"
wait_for "grep -q 'reloaded' '$T_TMP/agent.log'" 10
ok $? "SIGHUP reloads the file"
grep -q "reloaded.*: 1 parameters changed" "$T_TMP/agent.log"
ok $? "only the reloadable key changed (idle_poll_us, not max_clients)"

kill -TERM "$AGENT_PID"
wait_for "! kill -0 $AGENT_PID 2>/dev/null" 10
ok $? "SIGTERM stops the agent"
wait "$AGENT_PID"
ok $? "with exit status 0"
[ ! -e "$sock" ] && [ ! -e "$T_RUNDIR/cfg" ]
ok $? "socket and session directory are gone"
done_testing
