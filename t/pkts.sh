#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pkts.sh - the seeds' message savings, by packet count (t/prog_pkts.c:
# single short op, 100 puts without acks, lock_all to used targets
# only, empty flushes, a get moved to carry the unlock, a queued
# lock+op, accumulate ordering, and fence epochs: the put's packets and
# the window barrier's one ARRIVE and one RELEASE per node and fence,
# and with two nodes no ack for the put, whose RELEASE follows it;
# post/start/complete/wait with one put: the POST notice, and the
# complete riding on the put, or its notice behind the put with no ack
# when the put left first),
# with one rank per virtual node.  Exact
# counts with piggyback_threshold large (the closing synchronization
# rides on the last op); bounds that hold whatever the timing with the
# defaults; and a channel taken as unordered, where every op is
# answered and ordered accumulates wait for each other.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
pr="$top_builddir/t/prog_pkts"
# run WHAT NP MODE RMAD-RUN-OPTIONS...
run() {
	local what=$1 np=$2 mode=$3 out rc n
	shift 3
	out=$(run_bounded 120 "$RMAD_RUN" -q "$@" -np "$np" "$pr" "$mode" 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok$")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	echo "$out" | grep -E "pkts|FAIL" | sed 's/^/# /'
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | tail -30)"
}
run "shm, 3 vnodes, exact counts" 3 1 --vnodes 3 --provider shm \
	--set piggyback_threshold=1000
run "tcp;ofi_rxm, 2 vnodes, defaults" 2 0 --vnodes 2 \
	--provider 'tcp;ofi_rxm'
# two nodes: the closing fence's RELEASE follows the put, no ack
run "shm, 2 vnodes, exact counts" 2 1 --vnodes 2 --provider shm \
	--set piggyback_threshold=1000
# answer_spin_us=0: an origin agent that polls for each accumulate's
# answer (under SCHED_FIFO, on 2 cores) keeps the client from queueing
# the next one before the answer, and then nothing ever waits (G)
run "shm, 2 vnodes, unordered (am_ordering=false)" 2 2 --vnodes 2 \
	--provider shm --set am_ordering=false --set answer_spin_us=0
# the same counts on windows made by rmad_win_create and on dynamic ones
export RMAD_T_FLAVOR=create
run "created windows, shm, 3 vnodes, exact counts" 3 1 --vnodes 3 \
	--provider shm --set piggyback_threshold=1000
export RMAD_T_FLAVOR=dynamic	# heap memory attached, addresses as displacements
run "dynamic windows, shm, 3 vnodes, exact counts" 3 1 --vnodes 3 \
	--provider shm --set piggyback_threshold=1000
unset RMAD_T_FLAVOR
done_testing
