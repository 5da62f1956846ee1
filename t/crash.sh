#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# crash.sh - the agent's crash report (rmad(8), DIAGNOSTICS): on each
# fatal signal, SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, an agent
# (over shm, whose provider libpsm2 of libfabric may be loaded too, with
# its own handler) writes the signal and a backtrace on stderr, then dies
# of the signal itself (status 128 + signal), not of an exit.  (Before,
# nothing of the agent's printed; libpsm2's handler printed a line and
# exited with status 1.)
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
ulimit -c 0
sigs="SEGV BUS FPE ILL ABRT"
plan 10
for s in $sigs; do
	log=$T_TMP/agent-$s.log
	start_agent "crash$s" "$log" --set log_level=info
	pid=$AGENT_PID
	wait_for "grep -q 'agent ready' '$log'" 20 || diag "$(cat "$log")"
	kill -"$s" "$pid"
	wait "$pid"
	rc=$?
	num=$(kill -l "$s")
	[ "$rc" -eq $((128 + num)) ]
	ok $? "SIG$s: the agent dies of it (status $rc)"
	grep -q "error: fatal SIG$s (signal $num" "$log" &&
		grep -q "Backtrace:" "$log" &&
		grep -q "end of the crash report" "$log" &&
		[ "$(sed -n '/Backtrace:/,/end of the crash report/p' "$log" | wc -l)" -ge 4 ]
	ok $? "SIG$s: its report names the signal, with a backtrace"
	grep -q "fatal SIG$s" "$log" || diag "$(tail -n 20 "$log")"
	"$RMAD" --session "crash$s" --sweep >/dev/null 2>&1
done
done_testing
