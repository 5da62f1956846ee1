#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dynamic.sh - dynamic windows (t/prog_dynamic): put, get and atomics at
# absolute addresses with exact results, fence and PSCW, 66 regions,
# accesses past a region or on a detached one failing with
# RMAD_ERR_DISP and touching nothing (in lock, fence and PSCW epochs:
# reported once, by the closing call or, where that did not wait for
# the acknowledgement, by a later one), misuse and queries; on one node
# and across 2 and 3 virtual nodes over shm and tcp;ofi_rxm; and a
# target that computes 3 s while its origins' epochs on its attached
# memory finish.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 9
pd="$top_builddir/t/prog_dynamic"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pd" 2>&1)
ranks_ok "1 node, 4 ranks" 4 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	for k in 2 3; do
		np=$((k + 2))
		out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes "$k" \
			--provider "$prov" -np "$np" "$pd" 2>&1)
		ranks_ok "$prov, $k vnodes, $np ranks" "$np" "$out" $?
	done
done
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pd" 3000 2>&1)
ranks_ok "1 node, target computes 3 s: origins done meanwhile" 3 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 4 "$pd" 3000 2>&1)
	ranks_ok "$prov, 2 vnodes, target computes 3 s" 4 "$out" $?
done
ok_clean
done_testing
