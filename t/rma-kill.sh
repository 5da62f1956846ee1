#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rma-kill.sh - the holder of an exclusive lock is SIGKILLed, on the
# target's node and on another vnode: every waiter, same node and remote,
# gets the lock (or RMAD_ERR_PROC_FAILED) instead of hanging.  Then a
# same-node process dies halfway through taking or giving back a shared
# lock (t/prog_sharedkill.c): its agent settles the count exactly; or
# dies in a small or a bulk accumulate: its agent clears its byte, the
# bulk word and the accumulate lock, and accumulates go on.
# Afterwards nothing of rmad's is left (process, run directory, shm).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 11
pk="$top_builddir/t/prog_rmakill"
export OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0
for prov in shm 'tcp;ofi_rxm'; do
	for holder in 1 2; do
		out=$(run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
			-np 4 "$pk" "$holder" 2>&1)
		n=$(echo "$out" | grep -c ": ok: lock after")
		[ "$n" -eq 3 ]
		ok $? "$prov, holder rank $holder ($( [ $holder = 1 ] && echo same node || echo other vnode)): $n of 3 waiters got the lock"
		[ "$n" -eq 3 ] || diag "$out"
	done
done
sk="$top_builddir/t/prog_sharedkill"
for mode in intent intent-cas releasing released small bulk; do
	out=$(RMAD_ACC_BULK_THRESHOLD=16 run_bounded 90 "$RMAD_RUN" -q \
		--vnodes 2 --provider shm -np 4 "$sk" "$mode" 2>&1)
	n=$(echo "$out" | grep -c ": ok: $mode")
	[ "$n" -eq 3 ]
	ok $? "death at '$mode' (shared lock or accumulate): $n of 3 ranks ok"
	[ "$n" -eq 3 ] || diag "$out"
done
left=$(leftovers)
[ -z "$left" ]
ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
done_testing
