#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# sched.sh - the agent's scheduling class (rt_priority, rmad(8)).  Over
# shm an agent whose core another agent of the mesh may run on keeps
# SCHED_OTHER even while event-driven (at nice -20 then, so that its
# wakeups still preempt computing ranks): as SCHED_FIFO it would spin on a
# shm lock held by the other agent it preempted, until the kernel's
# real-time throttling, about a second, which heartbeats take for a dead
# node.  Over tcp;ofi_rxm, which shares no lock between agents, it
# still takes SCHED_FIFO.  core=0 puts every agent on one core, on any
# machine; progress=event makes them event-driven.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
pr="$top_builddir/t/prog_lockmix"
common=(--set core=0 --set progress=event --set log_level=info --vnodes 3)
run() {
	local what=$1 rc n
	shift
	out=$(run_bounded 120 "$RMAD_RUN" -q "$@" "${common[@]}" -np 3 "$pr" mix 40 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq 3 ]
	ok $? "$what: $n of 3 ranks passed (rc $rc)"
	[ "$n" -eq 3 ] || diag "$(echo "$out" | tail -30)"
}

run "shm, 3 vnodes on core 0" --provider shm
n=$(echo "$out" | grep -c "SCHED_FIFO not used: the agent of node")
f=$(echo "$out" | grep -c "scheduling: SCHED_FIFO")
r=$(echo "$out" | grep -c "scheduling: nice -20")
# without CAP_SYS_NICE or RLIMIT_NICE nice -20 is refused, and said so
[ "$n" -eq 3 ] && [ "$f" -eq 0 ] &&
	{ [ "$r" -ge 3 ] || echo "$out" | grep -q "nice -20 refused"; }
ok $? "shm, one core: each agent keeps SCHED_OTHER, says why, and takes nice -20 ($n of 3 said so, $f took SCHED_FIFO, $r nice -20)"

run "tcp;ofi_rxm, 3 vnodes on core 0" --provider 'tcp;ofi_rxm'
if echo "$out" | grep -q "SCHED_FIFO refused"; then
	echo "ok 4 # SKIP SCHED_FIFO refused here (no CAP_SYS_NICE or RLIMIT_RTPRIO)"
else
	f=$(echo "$out" | grep -c "scheduling: SCHED_FIFO")
	n=$(echo "$out" | grep -c "SCHED_FIFO not used")
	[ "$f" -ge 3 ] && [ "$n" -eq 0 ]
	ok $? "tcp;ofi_rxm, one core: the agents take SCHED_FIFO ($f times, $n said not used)"
fi
done_testing
