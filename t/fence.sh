#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fence.sh - active target by fence (t/prog_fence.c): exact results,
# fifty epochs, NOPRECEDE/NOSUCCEED, a computing target, misuse and a
# subgroup, on one node (the shared-memory barrier, embedded agent) and
# across 2 and 3 virtual nodes over shm and tcp;ofi_rxm (the agents'
# barrier); and a member SIGKILLed between fences: the others' fence
# returns RMAD_ERR_PROC_FAILED, on one node and across vnodes.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 9
pf="$top_builddir/t/prog_fence"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pf" 2>&1)
ranks_ok "1 node (shared-memory barrier), 4 ranks" 4 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	for k in 2 3; do
		np=$((k + 2))
		out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes "$k" \
			--provider "$prov" -np "$np" "$pf" 2>&1)
		ranks_ok "$prov, $k vnodes, $np ranks" "$np" "$out" $?
	done
done
# a member dies: the job goes on without it
export OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0
dead() {
	local what=$1 np=$2 out=$3 n
	n=$(echo "$out" | grep -c ": ok: fence after a member died")
	[ "$n" -eq $((np - 1)) ]
	ok $? "$what: $n of $((np - 1)) survivors' fence fails with RMAD_ERR_PROC_FAILED"
	[ "$n" -eq $((np - 1)) ] || diag "$out"
}
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pf" die 1 2>&1)
dead "1 node, rank 1 killed" 3 "$out"
out=$(run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --provider shm -np 4 "$pf" \
	die 1 2>&1)
dead "shm, 2 vnodes, rank 1 killed (same node as rank 0)" 4 "$out"
out=$(run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --provider 'tcp;ofi_rxm' \
	-np 4 "$pf" die 2 2>&1)
dead "tcp;ofi_rxm, 2 vnodes, rank 2 killed (other vnode)" 4 "$out"
ok_clean
done_testing
