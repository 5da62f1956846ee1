#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# oppool.sh - the op_pool window hint (t/prog_oppool.c): windows with
# their own op pools next to one without, under tiny pools (op_pool=8,
# client_op_pool=1, one target element), over shm and tcp;ofi_rxm.  Exact
# counters, no deadlock, the reservations visible in rmadctl status while
# the windows live and gone once they are freed.  Then a global pool too
# small for every reservation (op_pool=4): the windows get less, one
# element per process stays unreserved for lending, and nothing starves.
# Last, lending wakes the client that waits for it: with client_op_pool=1
# a rank posts 32 puts that wait for a lock another rank holds for
# 1.5 s, so each post borrows from the global pool while nothing
# completes, with agents and clients that sleep at once (progress=event);
# a lending that woke nobody would cost each post the client's 50 ms
# wait timeout.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
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
out=$(run_bounded 120 "$RMAD_RUN" -q --set op_pool=64 --set client_op_pool=1 \
	--set progress=event --vnodes 2 --provider shm -np 2 "$pr" "$ctl" \
	lend 1500 2>&1)
rc=$?
n=$(echo "$out" | grep -c ": ok (")
ms=$(echo "$out" | sed -n 's/.*ok (32 puts posted in \([0-9]*\).*/\1/p')
# a few ms; without the wake up to 31 x 50 ms
[ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && [ "${ms:-99999}" -lt 150 ]
ok $? "lending wakes the waiting client: 32 posts in ${ms:-?} ms (rc $rc, bound 150)"
echo "$out" | grep "ok (" | sed 's/^/# /'
[ "$n" -eq 2 ] || diag "$(echo "$out" | tail -30)"
done_testing
