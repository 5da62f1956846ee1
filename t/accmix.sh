#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# accmix.sh - bulk and small accumulates at once (t/prog_accmix.c): large
# SUMs combined in bulk with plain loads and stores, small SUMs, fetch-
# and-ops and compare-and-swaps with per-element atomics, on overlapping
# ranges of int64 and double arrays in rank 0's window, from every rank;
# the totals must be exact (rmad(7), "Atomicity and ordering of
# accumulates").  On one node the same-node clients apply everything;
# across vnodes the target's agent
# applies the remote ranks' accumulates against rank 0's own.  The bulk
# threshold is the default (64 bytes, so that nearly every accumulate
# goes in bulk against the 1..4-element ones), or 2k (mixed sizes on
# both sides of it), or 0 (all on atomics, the reference); with
# rdma_threshold = 1k, so that the larger remote ones are read by the
# target's agent and combined there in bulk (rma_pull.c); and on
# created windows, where every accumulate is made under the accumulate
# lock.
#
# RMAD_TEST_SCALE=N (make check-long: 10) runs N times the rounds.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 8
scale=${RMAD_TEST_SCALE:-1}
pr="$top_builddir/t/prog_accmix"
run() {
	local what=$1 np=$2 out rc
	shift 2
	out=$(run_bounded $((120 * scale)) "$RMAD_RUN" -q "$@" -np "$np" \
		"$pr" $((40 * scale)) 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && echo "$out" | grep -q "elements exact"
	ok $? "$what (rc $rc)"
	[ "$rc" -eq 0 ] || diag "$(echo "$out" | tail -20)"
}
RMAD_ACC_BULK_THRESHOLD=2k run "1 node, 4 ranks, threshold 2 KiB" 4
run "1 node, 4 ranks, default threshold (64 B)" 4
RMAD_ACC_BULK_THRESHOLD=0 run "1 node, 3 ranks, no bulk (atomics only)" 3
RMAD_ACC_BULK_THRESHOLD=64 run "shm, 2 vnodes, 4 ranks, threshold 64 B" 4 \
	--vnodes 2 --provider shm
RMAD_ACC_BULK_THRESHOLD=2k run "tcp;ofi_rxm, 2 vnodes, 3 ranks, threshold 2 KiB" 3 \
	--vnodes 2 --provider 'tcp;ofi_rxm'
RMAD_RDMA_THRESHOLD=1k RMAD_ACC_BULK_THRESHOLD=64 run \
	"shm, 2 vnodes, 4 ranks, accumulates from 1 KiB read by the target" 4 \
	--vnodes 2 --provider shm
RMAD_T_FLAVOR=create RMAD_ACC_BULK_THRESHOLD=64 run \
	"created windows, shm, 2 vnodes, 4 ranks, threshold 64 B" 4 \
	--vnodes 2 --provider shm
ok_clean
done_testing
