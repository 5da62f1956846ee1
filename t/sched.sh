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
#
# wait_spin_us: an event-driven agent under SCHED_FIFO whose clients all
# sleep on their counters polls in SCHED_IDLE instead of sleeping; with
# 2 vnodes (each agent on a core of its own where there are 2) the
# agents count such polls (wait_spins), over both providers, and none
# with wait_spin_us=0, and the ranks' results are the same.
#
# The guard thread: agents that poll on a core where another process
# computes are starved (SCHED_IDLE); the guard raises them back to
# SCHED_FIFO (wait_spins_raised), and the ranks still pass: over tcp
# with both agents on that core, and over shm, whose passes also run in
# SCHED_IDLE while a guard watches, with one agent there.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 16
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
	T_N=$((T_N + 1))
	echo "ok $T_N # SKIP SCHED_FIFO refused here (no CAP_SYS_NICE or RLIMIT_RTPRIO)"
else
	f=$(echo "$out" | grep -c "scheduling: SCHED_FIFO")
	n=$(echo "$out" | grep -c "SCHED_FIFO not used")
	[ "$f" -ge 3 ] && [ "$n" -eq 0 ]
	ok $? "tcp;ofi_rxm, one core: the agents take SCHED_FIFO ($f times, $n said not used)"
fi

# the agents' last "LABEL N" of their stats lines, summed
stat_sum() {
	echo "$out" | grep "stats:" |
		sed -n "s/.*\(rmad\[[0-9]*\]\).*$1 \([0-9]*\).*/\1 \2/p" |
		awk '{ last[$1] = $2 } END { s = 0; for (k in last) s += last[k]; print s }'
}
polls() { stat_sum "polls begun while clients sleep"; }
# guard_raised WHAT: the last run's agents were raised by their guards
guard_raised() {
	if echo "$out" | grep -q "SCHED_FIFO refused\|guard: no thread"; then
		T_N=$((T_N + 1))
		echo "ok $T_N # SKIP SCHED_FIFO refused here: no polling, no guard"
		return
	fi
	r=$(stat_sum "raised by the guard thread")
	[ "${r:-0}" -gt 0 ]
	ok $? "$1 ($r times)"
}
common=(--set progress=event --set log_level=info --set stats_interval_ms=100
	--vnodes 2)
for prov in shm 'tcp;ofi_rxm'; do
	run "$prov, 2 vnodes, wait_spin_us=200" --provider "$prov" \
		--set wait_spin_us=200
	if echo "$out" | grep -q "SCHED_FIFO refused"; then
		T_N=$((T_N + 1))
		echo "ok $T_N # SKIP SCHED_FIFO refused here: no polling in SCHED_IDLE"
	else
		p=$(polls)
		[ "${p:-0}" -gt 0 ]
		ok $? "$prov: the agents polled while their clients slept ($p polls)"
	fi
	run "$prov, 2 vnodes, wait_spin_us=0" --provider "$prov" \
		--set wait_spin_us=0
	p=$(polls)
	[ "${p:-1}" -eq 0 ]
	ok $? "$prov, wait_spin_us=0: no such polls ($p)"
done

taskset -c 0 bash -c 'while :; do :; done' &
hog=$!
T_PIDS+=("$hog")
common=(--set progress=event --set log_level=info --set stats_interval_ms=100
	--set core=0 --vnodes 2)
run "tcp;ofi_rxm, 2 vnodes polling on core 0, where a process computes" \
	--provider 'tcp;ofi_rxm' --set wait_spin_us=200
kill "$hog" 2>/dev/null
guard_raised "the guard raised the starved agents"

# over shm the agents need cores of their own (core=auto): the process
# computes on vnode 1's agent's core, vnode 0's agent shares its locks
read -r -a vc <<<"$("$RMAD" --print-vnode-cores 2)"
c1=${vc[1]%%,*}
ncpu=$(getconf _NPROCESSORS_ONLN)
nc=$("$RMAD" --print-vnode-cores 1 | tr ',' ' ' | wc -w)
if [ -z "$c1" ] || [ "$ncpu" -ne "$nc" ] || [ "$c1" = "${vc[0]%%,*}" ]; then
	for i in 1 2; do
		T_N=$((T_N + 1))
		echo "ok $T_N # SKIP no core of vnode 1's agent as a CPU number here"
	done
	done_testing
fi
taskset -c "$c1" bash -c 'while :; do :; done' &
hog=$!
T_PIDS+=("$hog")
common=(--set progress=event --set log_level=info --set stats_interval_ms=100
	--vnodes 2)
run "shm, 2 vnodes polling, a process computing on vnode 1's agent core ($c1)" \
	--provider shm --set wait_spin_us=200
kill "$hog" 2>/dev/null
guard_raised "shm: the guard raised the starved agent"
done_testing
