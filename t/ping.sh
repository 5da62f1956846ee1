#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ping.sh - round trips client -> own agent -> client and client ->
# remote agent -> client, over shm and tcp;ofi_rxm (numbers as diag).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
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
done_testing
