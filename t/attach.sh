#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# attach.sh - attach and detach: a singleton starts its own agent, which
# leaves when idle; clients attach to a running agent one after another
# and at once; op pools that run dry are refilled by the agent.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 11
hello="$top_builddir/examples/hello"
pb="$top_builddir/t/prog_barrier"

# 1. embedded: no agent anywhere, the client starts one
out=$(RMAD_IDLE_EXIT_MS=300 run_bounded 60 "$hello" 2>&1)
echo "$out" | grep -q "rank 0 of 1: node 0 of 1"
ok $? "a singleton starts its own agent ($out)"
apid=$(echo "$out" | sed -n 's/.*agent pid \([0-9]*\).*/\1/p')
wait_for "! kill -0 $apid 2>/dev/null || grep -q zombie /proc/$apid/status 2>/dev/null" 15
ok $? "the embedded agent exits when idle"
left=$(find "$T_RUNDIR" -name '*.sock' | wc -l)
[ "$left" -eq 0 ]
ok $? "and leaves no socket behind ($left)"

# 2. a running agent serves clients one after another and together
start_agent at "$T_TMP/agent.log" --set log_level=info
wait_for "[ -S '$(sock_of at)' ]" 10 || bail "agent did not start"
fails=0
for i in 1 2 3 4 5; do
	RMAD_SESSION=at run_bounded 30 "$hello" >/dev/null 2>&1 || fails=$((fails + 1))
done
[ $fails -eq 0 ]
ok $? "5 clients attach and detach in turn ($fails failed)"
n=$(grep -c "attached" "$T_TMP/agent.log")
d=$(grep -c "detached" "$T_TMP/agent.log")
[ "$n" -eq 5 ] && [ "$d" -eq 5 ]
ok $? "the agent saw 5 attaches and 5 detaches ($n, $d)"
pids=()
for i in 1 2 3 4; do
	RMAD_SESSION=at run_bounded 60 "$pb" -b 20 -p 300 >"$T_TMP/c$i.out" 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
[ $fails -eq 0 ]
ok $? "4 independent singleton jobs at once on one agent ($fails failed)"
kill -0 "$AGENT_PID"
ok $? "the agent is still serving"

# 3. pools: a client's own list of 1 (or 0) elements, global pool of 2
start_agent tiny "$T_TMP/tiny.log" --set client_op_pool=1 --set op_pool=2
wait_for "[ -S '$(sock_of tiny)' ]" 10 || bail "agent did not start"
RMAD_SESSION=tiny run_bounded 60 "$pb" -b 50 -p 3000 >"$T_TMP/tiny.out" 2>&1
ok $? "3000 ops through 1 reserved + 2 global elements: $(cat "$T_TMP/tiny.out")"
start_agent zero "$T_TMP/zero.log" --set client_op_pool=0 --set op_pool=1
wait_for "[ -S '$(sock_of zero)' ]" 10 || bail "agent did not start"
RMAD_SESSION=zero run_bounded 60 "$pb" -b 50 -p 3000 >"$T_TMP/zero.out" 2>&1
ok $? "with no reserve, every op borrows the one global element"
pids=()
for i in 1 2 3; do
	RMAD_SESSION=zero run_bounded 60 "$pb" -b 10 -p 1000 >/dev/null 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
[ $fails -eq 0 ]
ok $? "3 clients share one global element without deadlock ($fails failed)"

# 4. a full agent refuses politely
start_agent one "$T_TMP/one.log" --set max_clients=1
wait_for "[ -S '$(sock_of one)' ]" 10 || bail "agent did not start"
RMAD_SESSION=one "$top_builddir/t/prog_wait" ping "$T_TMP/one" >"$T_TMP/one.out" 2>&1 &
T_PIDS+=($!)
wait_for "[ -e '$T_TMP/one.0' ]" 20
out=$(RMAD_SESSION=one RMAD_CONNECT_TIMEOUT_MS=2000 run_bounded 30 "$hello" 2>&1)
echo "$out" | grep -q "out of memory"
ok $? "a client beyond max_clients gets RMAD_ERR_NOMEM ($out)"
done_testing
