#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# oppool.sh - the op_pool window hint (t/prog_oppool.c): windows with
# their own op pools next to one without, under tiny pools (op_pool=8,
# client_op_pool=1, one target element), over shm and tcp;ofi_rxm.  Exact
# counters, no deadlock, the reservations visible in rmadctl status while
# the windows live and gone once they are freed.  Then a global pool too
# small for every reservation (op_pool=4): the windows get less, one
# element per process stays unreserved for lending, and nothing starves.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 3
pr="$top_builddir/t/prog_oppool"
ctl="$top_builddir/rmadctl"
tiny=(--set target_pool=1 --set win_target_pool=1 --set win_slots=1)
run() {
	local what=$1 np=$2 mode=$3 out rc n
	shift 3
	out=$(run_bounded 120 "$RMAD_RUN" -q "$@" -np "$np" "$pr" "$ctl" \
		"$mode" 10 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	echo "$out" | grep "reserved" | sed 's/^/# /'
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | tail -30)"
}
run "shm, 3 vnodes, 4 ranks, op_pool=8" 4 exact "${tiny[@]}" \
	--set op_pool=8 --set client_op_pool=1 --vnodes 3 --provider shm
run "tcp;ofi_rxm, 2 vnodes, 3 ranks, op_pool=8" 3 exact "${tiny[@]}" \
	--set op_pool=8 --set client_op_pool=1 --vnodes 2 \
	--provider 'tcp;ofi_rxm'
run "shm, 2 vnodes, 4 ranks, op_pool=4" 4 tight "${tiny[@]}" \
	--set op_pool=4 --set client_op_pool=1 --vnodes 2 --provider shm
done_testing
