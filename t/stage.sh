#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# stage.sh - an agent that may not reach its clients' memory in place
# (cma=false, as under a seccomp profile or Yama that refuses
# process_vm_readv): clients learn it at rmad_init and stage remote
# operations on ordinary memory through the segment.  t/prog_rma and
# t/prog_rdma must pass unchanged across 2 virtual nodes.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
run() {
	local what=$1 np=$2 prog=$3 arg=$4 out rc n
	shift 4
	out=$(run_bounded 180 "$RMAD_RUN" -q --set cma=false \
		--set log_level=info "$@" -np "$np" "$prog" "$arg" 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | grep -v ' info: ' | tail -30)"
	[ "$(echo "$out" | grep -c 'it stages')" -eq "$np" ]
	ok $? "$what: every client was told to stage"
}
run "prog_rma, shm, 2 vnodes" 3 "$top_builddir/t/prog_rma" 20 \
	--vnodes 2 --provider shm
run "prog_rdma, tcp;ofi_rxm, 2 vnodes" 3 "$top_builddir/t/prog_rdma" 2 \
	--vnodes 2 --provider 'tcp;ofi_rxm'
done_testing
