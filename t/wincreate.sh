#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# wincreate.sh - windows over memory the process has (t/prog_wincreate):
# heap, stack, static and rmad_alloc_mem memory under lock_all, fence and
# PSCW with exact results; accumulates atomic per element with same-node
# peers (process_vm_readv/writev), the target itself and remote agents
# applying them at once; a zero-size member, bounds and queries.  On one
# node and across 2 and 3 virtual nodes over shm and tcp;ofi_rxm; a
# target that computes 3 s while its origins' epochs finish; and an
# agent with cma=false: RMAD_ERR_PERM at creation for heap memory,
# rmad_alloc_mem memory still works; and, where Yama allows arranging
# it, ranks the kernel keeps out of each other's memory.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 11
pc="$top_builddir/t/prog_wincreate"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pc" 2>&1)
ranks_ok "1 node, 4 ranks" 4 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	for k in 2 3; do
		np=$((k + 2))
		out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes "$k" \
			--provider "$prov" -np "$np" "$pc" 2>&1)
		ranks_ok "$prov, $k vnodes, $np ranks" "$np" "$out" $?
	done
done
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 3 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$pc" 3000 2>&1)
ranks_ok "1 node, target computes 3 s: origins done meanwhile" 3 "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 4 "$pc" 3000 2>&1)
	ranks_ok "$prov, 2 vnodes, target computes 3 s" 4 "$out" $?
done
out=$(run_bounded 120 "$RMAD_RUN" -q --set cma=false --vnodes 2 \
	--provider shm -np 4 "$pc" perm 2>&1)
ranks_ok "cma=false: RMAD_ERR_PERM for heap memory, on every rank even when one rank's is out of reach; rmad_alloc_mem works" \
	4 "$out" $?
# the kernel's refusal: ranks without CAP_SYS_PTRACE under Yama
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)
if [ -z "$scope" ]; then
	ok 0 "# SKIP no Yama LSM in this kernel, and a rank of another user cannot join mpirun's job here: the kernel's refusal cannot be arranged"
elif [ "$scope" -lt 1 ] || ! command -v setpriv >/dev/null; then
	ok 0 "# SKIP kernel.yama.ptrace_scope is $scope (0 lets same-user ranks in), or no setpriv"
else
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider shm -np 4 \
		setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace \
		"$pc" refused 2>&1)
	ranks_ok "Yama ptrace_scope $scope, no CAP_SYS_PTRACE: RMAD_ERR_PERM at creation" \
		4 "$out" $?
fi
ok_clean
done_testing
