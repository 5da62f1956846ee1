#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ping.sh - round trips client -> own agent -> client and client ->
# remote agent -> client, over shm and tcp;ofi_rxm (numbers as diag);
# and that sleeping agents are woken by the fabric's wait fd (tcp) or
# their peers' doorbell (shm).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 8
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 2 "$top_builddir/examples/ping" 2000 2>&1)
	rc=$?
	echo "$out" | grep -q "client->own agent->client *median"
	ok $? "$prov: local round trips (rc $rc)"
	echo "$out" | grep -q "client->remote agent->client median"
	ok $? "$prov: remote round trips"
	echo "$out" | grep median | while read -r l; do diag "$prov: $l"; done
	[ $rc -eq 0 ] || diag "$out"
done
# Event-driven agents that sleep at once (no answer spin) with a sleep
# bound of a second: only the fabric's wait fd (tcp;ofi_rxm) or the
# peers' doorbell (shm, bell.c) can wake the agent a request or an
# answer is for sooner than its 100 ms tick.
for prov in shm 'tcp;ofi_rxm'; do
	out=$(RMAD_PROGRESS=event RMAD_ANSWER_SPIN_US=0 \
		RMAD_IDLE_POLL_US=1000000 run_bounded 120 "$RMAD_RUN" -q \
		--vnodes 2 --provider "$prov" -np 2 \
		"$top_builddir/examples/ping" 200 2>&1)
	rc=$?
	med=$(echo "$out" |
		sed -n 's/.*remote agent->client median *\([0-9.]*\) us.*/\1/p')
	[ $rc -eq 0 ] && [ -n "$med" ]
	ok $? "$prov, sleeping agents: 200 remote round trips (rc $rc)"
	[ -n "$med" ] && awk -v m="$med" 'BEGIN { exit !(m < 10000) }'
	ok $? "$prov: the wakeup reaches them: median ${med:-?} us, under 10 ms (the tick is 100 ms)"
	[ $rc -eq 0 ] || diag "$out"
done
done_testing
