#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# acchold.sh - a window member's accumulate lock held by a live client
# (t/prog_acchold.c, three ranks on three virtual nodes): the target's
# agent keeps the packets of the origin's node and window that need
# the lock, and those behind them, in order, instead of waiting for it;
# it serves another node's operations on another window meanwhile, and
# the origin node's own on another window, and once the lock is free
# the kept epoch is applied whole and succeeds; with its first
# operation carrying the lock request, or the lock granted before (with
# a large accumulate first, or small operations only, which all reach
# the target's agent and are kept there), or that request queued behind
# another origin's exclusive lock and granted while the accumulate lock
# is held.
# Held longer than acc_lock_timeout_ms, the epoch fails with
# RMAD_ERR_SYNC (said in the agent's log) and nothing hangs.  Over shm
# and tcp;ofi_rxm.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 7
pr="$top_builddir/t/prog_acchold"
# run WHAT WANT ARGS... -- PROG_ARGS...: all three ranks pass; WANT
# says whether the agent's log says an op was refused (refused) or not
run() {
	local what=$1 want=$2 out rc n w
	shift 2
	local args=() pargs=()
	while [ "$1" != "--" ]; do args+=("$1"); shift; done
	shift
	pargs=("$@")
	out=$(run_bounded 120 "$RMAD_RUN" -q "${args[@]}" -np 3 "$pr" \
		"${pargs[@]}" 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	w=$(echo "$out" | grep -c "accumulate lock is held by .* ops refused")
	[ "$rc" -eq 0 ] && [ "$n" -eq 3 ] &&
		if [ "$want" = refused ]; then [ "$w" -ge 1 ]; else [ "$w" -eq 0 ]; fi
	ok $? "$what: $n of 3 ranks passed, refusals logged: $w (rc $rc)"
	echo "$out" | grep "^rank 1: ok" | sed 's/^/# /'
	[ "$rc" -eq 0 ] && [ "$n" -eq 3 ] || diag "$(echo "$out" | tail -20)"
}
run "shm, lock held 1 s: the epoch waits, then succeeds; the other window is served" \
	none --vnodes 3 --provider shm -- 1000
run "tcp;ofi_rxm, lock held 1 s, the epoch's lock granted before" none \
	--vnodes 3 --provider 'tcp;ofi_rxm' -- 1000 granted
run "shm, the lock granted before, small ops only: kept in the target's agent, and the origin's other window passes them" \
	none --vnodes 3 --provider shm -- 1000 small
run "shm, the epoch's lock granted after another origin's, while the accumulate lock is held" \
	none --vnodes 3 --provider shm -- 1000 queued
run "shm, lock held 1.5 s, acc_lock_timeout_ms 200: the epoch fails" \
	refused --vnodes 3 --provider shm --set acc_lock_timeout_ms=200 -- \
	1500 timeout
run "tcp;ofi_rxm, the same, the lock granted before" refused --vnodes 3 \
	--provider 'tcp;ofi_rxm' --set acc_lock_timeout_ms=200 -- 1500 \
	timeout granted
ok_clean
done_testing
