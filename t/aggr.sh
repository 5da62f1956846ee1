#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# aggr.sh - node-level aggregation (t/prog_aggr.c): the small operations
# of every client and window of a node bound for another node share
# fabric messages (rmad_win_stats: pkts_aggregated over aggr_msgs above
# 1), the target applies them in order (the last REPLACE wins, exact
# counts), and with aggregate = false nothing is aggregated.  Over shm
# and tcp;ofi_rxm, 2 and 3 vnodes.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 5
pa="$top_builddir/t/prog_aggr"
run() {
	local what=$1 np=$2 mode=$3 out rc n
	shift 3
	out=$(run_bounded 120 "$RMAD_RUN" -q "$@" -np "$np" "$pa" "$mode" \
		2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok: ")
	[ "$rc" -eq 0 ] && [ "$n" -ge 1 ] && ! echo "$out" | grep -q FAIL
	ok $? "$what: $n ranks checked their packets (rc $rc)"
	echo "$out" | grep ": ok: " | head -2 | sed 's/^/# /'
	[ "$rc" -eq 0 ] || diag "$(echo "$out" | tail -20)"
}
run "shm, 2 vnodes, 2 ranks" 2 on --vnodes 2 --provider shm
run "tcp;ofi_rxm, 2 vnodes, 2 ranks" 2 on --vnodes 2 --provider 'tcp;ofi_rxm'
run "tcp;ofi_rxm, 3 vnodes, 6 ranks" 6 on --vnodes 3 --provider 'tcp;ofi_rxm'
RMAD_AGGREGATE=false run "aggregate = false, shm, 2 vnodes" 2 off \
	--vnodes 2 --provider shm
ok_clean
done_testing
