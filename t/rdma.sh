#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma.sh - large puts and gets between virtual nodes (t/prog_rdma.c)
# over shm and tcp;ofi_rxm: they move by fi_write/fi_read (the agents'
# statistics show it), with chunks smaller than the transfers, with
# more chunks wanted than the agent keeps in flight, from rmad_alloc_mem
# memory in pieces of direct_chunk (over shm, the origin agent's own CMA
# writes and reads), and, with
# rdma_threshold=0, as active messages instead; on created and dynamic
# windows (the process's own memory, not registered) the puts are read
# by the target's agent and written in place, and the gets read in
# place and written into the origin's memory by it (reads and writes);
# the data is checked every time.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 14
pr="$top_builddir/t/prog_rdma"
# run WHAT NP WANT ARGS...: the job passes on every rank, and every
# agent's fi_write count at exit is zero (WANT=none) or not (WANT=some),
# or some agent's fi_read and some agent's fi_write counts are not
# (WANT=both)
run() {
	local what=$1 np=$2 want=$3 out rc n w
	shift 3
	out=$(run_bounded 180 "$RMAD_RUN" -q --set log_level=info "$@" \
		-np "$np" "$pr" 2 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | grep -v ' info: ' | head -40)"
	w=$(echo "$out" | grep -o 'fi_write [0-9]*, fi_read [0-9]*')
	case $want in
	some) ! echo "$w" | grep -q 'fi_write 0\b' && [ -n "$w" ] ;;
	none) [ -n "$w" ] && ! echo "$w" | grep -qv 'fi_write 0, fi_read 0' ;;
	both) echo "$w" | grep -q 'fi_read [1-9]' &&
		echo "$w" | grep -q 'fi_write [1-9]' ;;
	esac
	ok $? "$what: one-sided transfers $want ($(echo $w | tr '\n' ' '))"
}
run "shm, 2 vnodes" 3 some --vnodes 2 --provider shm
run "tcp;ofi_rxm, 3 vnodes" 3 some --vnodes 3 --provider 'tcp;ofi_rxm'
run "shm, 2 vnodes, 4k chunks" 2 some --vnodes 2 --provider shm \
	--set rdma_chunk=4k
run "shm, 2 vnodes, 64k direct chunks" 2 some --vnodes 2 --provider shm \
	--set direct_chunk=64k
run "tcp;ofi_rxm, 2 vnodes, rdma_threshold=0" 2 none --vnodes 2 \
	--provider 'tcp;ofi_rxm' --set rdma_threshold=0
RMAD_T_FLAVOR=create run "created windows, tcp;ofi_rxm, 3 vnodes" 3 both \
	--vnodes 3 --provider 'tcp;ofi_rxm'
RMAD_T_FLAVOR=dynamic run "dynamic windows, shm, 2 vnodes, 64k chunks" 2 \
	both --vnodes 2 --provider shm --set rdma_chunk=64k
done_testing
