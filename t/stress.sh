#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# stress.sh - resource exhaustion (t/prog_stress.c): pools of one or two
# elements (op_pool=2, client_op_pool=1, target_pool=1,
# win_target_pool=1, win_slots=1, lock_queue=2), three windows at once,
# every passive-target epoch kind, over shm and tcp;ofi_rxm.  No
# deadlock, exact counters, and no growth of the agents' memory.  Then
# t/prog_lockmix.c: lock_all epochs against exclusive one-target epochs,
# one rank per node, which deadlocks if queued exclusive requests keep
# shared ones out; and exclusive locks on every target at once, taken in
# rank order, which deadlocks unless locks are acquired in call order.
#
# RMAD_TEST_SCALE=N (make check-long: 10) runs N times the rounds, with
# N times the time bound.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 10
scale=${RMAD_TEST_SCALE:-1}
pr="$top_builddir/t/prog_stress"
tiny=(--set op_pool=2 --set client_op_pool=1 --set target_pool=1
	--set win_target_pool=1 --set win_slots=1 --set lock_queue=2)
run() {
	local what=$1 np=$2 out rc n
	shift 2
	out=$(run_bounded $((120 * scale)) "$RMAD_RUN" -q "$@" -np "$np" "$pr" $args 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	echo "$out" | grep "RSS" | sed 's/^/# /'
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | tail -30)"
}
args=$((10 * scale))
run "shm, 3 vnodes, 4 ranks" 4 "${tiny[@]}" --vnodes 3 --provider shm
run "tcp;ofi_rxm, 2 vnodes, 3 ranks" 3 "${tiny[@]}" --vnodes 2 \
	--provider 'tcp;ofi_rxm'
export RMAD_T_FLAVOR=create	# windows by rmad_win_create
run "created windows, shm, 3 vnodes, 4 ranks" 4 "${tiny[@]}" --vnodes 3 \
	--provider shm
export RMAD_T_FLAVOR=dynamic	# heap memory attached to dynamic windows
run "dynamic windows, tcp;ofi_rxm, 3 vnodes, 4 ranks" 4 "${tiny[@]}" \
	--vnodes 3 --provider 'tcp;ofi_rxm'
unset RMAD_T_FLAVOR
pr="$top_builddir/t/prog_lockmix"
args="mix $((300 * scale))"
run "lock_all vs exclusive, shm, 4 vnodes" 4 --vnodes 4 --provider shm
run "lock_all vs exclusive, tcp;ofi_rxm, 4 vnodes" 4 --vnodes 4 \
	--provider 'tcp;ofi_rxm'
RMAD_T_FLAVOR=dynamic run "lock_all vs exclusive, dynamic windows, shm, 4 vnodes" \
	4 --vnodes 4 --provider shm
args="order $((150 * scale))"
run "exclusive locks on every target, in order, shm, 3 vnodes" 4 \
	--vnodes 3 --provider shm
run "exclusive locks on every target, in order, tiny pools, tcp;ofi_rxm" \
	4 "${tiny[@]}" --vnodes 3 --provider 'tcp;ofi_rxm'
# no reserved elements at all: the first client to come borrows the
# whole global pool, and the others must still get their share
pr="$top_builddir/t/prog_barrier"
args=""
run "client_op_pool=0, op_pool=4: barriers, shm, 2 vnodes" 4 \
	--set op_pool=4 --set client_op_pool=0 --vnodes 2 --provider shm
done_testing
