#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# hostile.sh - memory the agent maps from a client can never hurt it
# (rmad(7), SECURITY).  t/test_hostile, a client that speaks to the agent
# directly, shrinks each kind of memfd the agent maps: its client
# segment; a window's memory of each flavor that comes from the client
# (handed over unsealed, which the agent must refuse, then sealed); the
# agent's own memfds of a shared window and of a window's table; and
# rmad_alloc_mem memory.  After each, the agent must be alive, and a
# fresh job must work at the end.  (Before the seals, the agent died of
# SIGBUS in agent_poll_rings or in the status's win_name.)
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
prog="$top_builddir/t/test_hostile"
sess=hostile
start_agent "$sess" "$T_TMP/agent.log" --set log_level=info
sock=$(sock_of "$sess")
wait_for "[ -S '$sock' ]" 10 || bail "agent did not start: $(cat "$T_TMP/agent.log")"

modes="segment allocate create dynamic shared mem"
for mode in $modes; do
	run_bounded 60 "$prog" "$mode" "$sock" "$T_TMP" >"$T_TMP/$mode.out" 2>&1
	rc=$?
	while read -r line; do
		case $line in
		PASS\ *) ok 0 "${line#PASS }" ;;
		FAIL\ *) ok 1 "${line#FAIL }" ;;
		*) diag "$mode: $line" ;;
		esac
	done <"$T_TMP/$mode.out"
	[ "$rc" -eq 0 ] || diag "$mode: exit $rc"
	kill -0 "$AGENT_PID" 2>/dev/null
	ok $? "$mode: the agent is alive afterwards"
	# wait until it has seen the client go
	wait_for "! grep -q 'hostile-$mode' <(run_bounded 10 '$top_builddir/rmadctl' -s $sess status 2>&1)" 10
done
n=$(grep -c "is not sealed against shrinking\|is not a memfd of shared memory" "$T_TMP/agent.log")
[ "$n" -ge 4 ]
ok $? "the agent logged each refusal ($n)"
out=$(RMAD_SESSION=$sess run_bounded 90 mpirun -np 2 -x RMAD_SESSION \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH -x RMAD_CONF \
	"$top_builddir/t/prog_win" 2>&1)
ranks_ok "a fresh job makes windows and works" 2 "$out" $? ": ok (node"
grep -qi "SIGBUS\|fatal" "$T_TMP/agent.log" && diag "$(tail -n 20 "$T_TMP/agent.log")"
kill -0 "$AGENT_PID" 2>/dev/null
ok $? "the agent is still serving"
echo "1..$T_N"
done_testing
