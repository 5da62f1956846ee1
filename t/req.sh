#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# req.sh - request-based operations (t/prog_req.c): rput, rget,
# raccumulate and rget_accumulate completed by wait, test, waitall,
# testall, waitany and testany; 5000 in flight; a request freed in
# flight; misuse; on one node (in place) and across 2 virtual nodes over
# shm and tcp;ofi_rxm (through the agents).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 5
pq="$top_builddir/t/prog_req"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pq" 2>&1)
ranks_ok "1 node (in place), 3 ranks" 3 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 4 "$pq" 2>&1)
	ranks_ok "$prov, 2 vnodes, 4 ranks" 4 "$out" $?
done
out=$(RMAD_T_FLAVOR=create run_bounded 120 "$RMAD_RUN" -q --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 4 "$pq" 2>&1)
ranks_ok "created windows, tcp;ofi_rxm, 2 vnodes, 4 ranks" 4 "$out" $?
ok_clean
done_testing
