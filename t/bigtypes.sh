#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bigtypes.sh - large operations with derived target types between
# virtual nodes (t/prog_bigtypes.c): a strided put and get (into
# malloc'd and rmad_alloc_mem memory), large and small indexed
# accumulates on the same elements with exact totals, and a struct of
# mixed basic types; their packed streams move in chunks that the
# target's agent reads or, for gets, writes (rma_pull.c), and walks
# through its cached type (each rank reports the chunks).  Then a
# same-node rank's 16 MiB strided accumulate, applied by itself in
# batches under the accumulate lock, against small ones from other
# nodes that the target's agent applies between the batches: exact
# totals, no op refused.  Over shm and
# tcp;ofi_rxm, on allocated, created and dynamic windows, with chunks
# smaller than the transfers, and with rdma_threshold = 0 (active
# messages instead, nothing moved).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 10
pr="$top_builddir/t/prog_bigtypes"
# run WHAT NP WANT ARGS...: every rank passes, and every rank's chunks
# were moved by the targets (WANT=some) or none were (none)
run() {
	local what=$1 np=$2 want=$3 out rc n c
	shift 3
	out=$(run_bounded 180 "$RMAD_RUN" -q "$@" -np "$np" "$pr" 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | head -40)"
	c=$(echo "$out" | sed -n 's/.*rounds, \([0-9]*\) chunks moved.*/\1/p')
	case $want in
	some) [ -n "$c" ] && ! echo "$c" | grep -qx 0 ;;
	none) [ -n "$c" ] && ! echo "$c" | grep -qvx 0 ;;
	esac
	ok $? "$what: chunks moved by the targets: $want ($(echo $c))"
}
run "shm, 2 vnodes, 3 ranks" 3 some --vnodes 2 --provider shm
run "tcp;ofi_rxm, 3 vnodes, 3 ranks, 64k chunks" 3 some --vnodes 3 \
	--provider 'tcp;ofi_rxm' --set rdma_chunk=64k
RMAD_T_FLAVOR=create run "created windows, tcp;ofi_rxm, 2 vnodes, 3 ranks" 3 some \
	--vnodes 2 --provider 'tcp;ofi_rxm'
RMAD_T_FLAVOR=dynamic run "dynamic windows, shm, 2 vnodes, 3 ranks" 3 \
	some --vnodes 2 --provider shm
run "tcp;ofi_rxm, 2 vnodes, rdma_threshold=0" 2 none --vnodes 2 \
	--provider 'tcp;ofi_rxm' --set rdma_threshold=0
done_testing
