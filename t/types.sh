#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# types.sh - derived datatypes in operations (t/prog_types.c): strided
# put, get, accumulate (exact totals from every rank), subarray put,
# get_accumulate into a strided result, a struct of mixed types, rput
# with a vector, and the errors; on one node (in place, on allocated
# and created windows) and across 2 virtual nodes over shm and
# tcp;ofi_rxm (pieces through the agents).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
pt="$top_builddir/t/prog_types"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pt" 2>&1)
ranks_ok "1 node (in place), 3 ranks" 3 "$out" $?
# a peer's created window: its runs moved in batches of iovecs
out=$(RMAD_T_FLAVOR=create RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 \
	-x RMAD_T_FLAVOR -x RMAD_IDLE_EXIT_MS -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	"$pt" 2>&1)
ranks_ok "created windows, 1 node (in place), 3 ranks" 3 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 4 "$pt" 2>&1)
	ranks_ok "$prov, 2 vnodes, 4 ranks" 4 "$out" $?
done
out=$(RMAD_T_FLAVOR=create run_bounded 120 "$RMAD_RUN" -q --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 4 "$pt" 2>&1)
ranks_ok "created windows, tcp;ofi_rxm, 2 vnodes, 4 ranks" 4 "$out" $?
ok_clean
done_testing
