#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pscw.sh - active target by post/start/complete/wait (t/prog_pscw.c):
# a ring exchange with exact results, overlapping subsets, rmad_win_test,
# every assert combination, a target computing between post and wait
# while its origins finish, misuse and a subgroup, on one node (shared
# memory only) and across 2 and 3 virtual nodes over shm and
# tcp;ofi_rxm (the agents carry the notices); and an origin SIGKILLed in
# its access epoch: the target's wait returns RMAD_ERR_PROC_FAILED.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 8
pp="$top_builddir/t/prog_pscw"
ms=1500
check() {
	ranks_ok "$@"
	echo "$3" | grep -E "computed|computing target" | sed 's/^/# /'
}
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pp" $ms 2>&1)
check "1 node (shared memory), 4 ranks" 4 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	for k in 2 3; do
		np=$((k + 2))
		out=$(run_bounded 150 "$RMAD_RUN" -q --vnodes "$k" \
			--provider "$prov" -np "$np" "$pp" $ms 2>&1)
		check "$prov, $k vnodes, $np ranks" "$np" "$out" $?
	done
done
# an origin dies in its access epoch: the target's wait fails
export OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0
dead() {
	local what=$1 out=$2
	echo "$out" | grep -q "rank 0: ok: wait after a member died"
	ok $? "$what: the target's wait returns RMAD_ERR_PROC_FAILED"
	echo "$out" | grep -q "rank 0: ok: wait" || diag "$out"
}
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pp" die 1 2>&1)
dead "1 node, rank 1 killed" "$out"
out=$(run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --provider 'tcp;ofi_rxm' \
	-np 4 "$pp" die 2 2>&1)
dead "tcp;ofi_rxm, 2 vnodes, rank 2 killed (other vnode)" "$out"
ok_clean
done_testing
