#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# shared.sh - contiguous shared windows (t/prog_shared): one region in
# group order with a zero-size member, shared_query and RMAD_PROC_NULL,
# plain stores, put and fence, CPU atomics mixed with fetch_and_op,
# no-op operations on RMAD_PROC_NULL, the alloc_shared_noncontig hint;
# on one node (the whole job) and on each node of 2 virtual nodes over
# shm and tcp;ofi_rxm, where a shared window over the whole job fails
# with RMAD_ERR_ARG.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
ps="$top_builddir/t/prog_shared"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$ps" 2>&1)
ranks_ok "1 node, 4 ranks" 4 "$out" $? ": ok (4 of 4"
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 5 "$ps" 2>&1)
	ranks_ok "$prov, 2 vnodes, 5 ranks" 5 "$out" $? ": ok ("
done
ok_clean
done_testing
