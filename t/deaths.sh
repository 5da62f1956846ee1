#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# deaths.sh - the death matrix (t/prog_deaths.c): a rank SIGKILLed
# before or during operations on it, on its own node and from another
# vnode, over shm and tcp;ofi_rxm, on allocated and created windows.
# Every call and synchronization on the dead rank must fail with
# RMAD_ERR_PROC_FAILED (never succeed, never hang) within the bound
# rmad(7) gives, the survivors keep the data their epochs completed,
# both agents live on, and a fresh job on the same agents works
# afterwards.  Then an MPI program under librmad-mpi: MPI_Put +
# MPI_Win_unlock to a dead rank is an error class.  make check runs a
# representative subset (about a minute); DEATHS_FULL=1, as make soak
# sets it, runs every mode on both providers and both window flavors;
# DEATHS_RUNS='PROVIDER MODE [FLAVOR]|...' picks some by hand.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
prog="$top_builddir/t/prog_deaths"
fresh="$top_builddir/t/prog_rma"
if [ -n "${DEATHS_RUNS:-}" ]; then
	# by hand: DEATHS_RUNS='shm before|tcp;ofi_rxm during'
	IFS='|' read -r -a runs <<<"$DEATHS_RUNS"
elif [ "${DEATHS_FULL:-0}" = 1 ]; then
	runs=()
	for f in allocate create; do
		for p in shm 'tcp;ofi_rxm'; do
			for m in before during fence pscw alone; do
				runs+=("$p $m $f")
			done
		done
	done
else
	runs=("shm before" "shm during" "shm pscw"
	      "tcp;ofi_rxm before" "tcp;ofi_rxm during" "tcp;ofi_rxm fence"
	      "tcp;ofi_rxm alone" "tcp;ofi_rxm during create")
fi
mpid="$top_builddir/t/mpi/mpi_deaths"
mpilib="$top_builddir/.libs/librmad-mpi.so"
plan $((${#runs[@]} * 4 + 2))
export OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_orte_abort_on_non_zero_status=0

# the checks each survivor must pass, by mode
want() {
	case "$1" in
	before)
		echo "the barrier fails"
		echo "lock, get 8 B, unlock fails"
		echo "lock, put 8 B, flush, unlock fails"
		echo "lock, accumulate, unlock fails"
		echo "lock, fetch_and_op, flush, unlock fails"
		echo "lock, get 64 KiB, unlock fails"
		echo "lock, 2 puts of 64 MiB, unlock fails"
		echo "lock_all, put, flush, unlock_all fails"
		echo "fence, put, fence fails"
		echo "start, put, complete fails"
		echo "post, wait fails"
		;;
	during)
		echo "on the victim while it dies fail"
		echo "lock, get 8 B, unlock fails"
		echo "lock, 2 puts of 64 MiB, unlock fails"
		echo "fence, put, fence fails"
		echo "post, wait fails"
		;;
	alone)
		echo "64 MiB puts on the victim while it dies fail"
		echo "lock, get 8 B, unlock fails"
		echo "lock, 2 puts of 64 MiB, unlock fails"
		echo "fence, put, fence fails"
		echo ": ok: done"
		return
		;;
	fence) echo "a fence the victim dies in fails" ;;
	pscw) echo "the dying rank fails" ;;
	esac
	echo "survivors keep their data"
	echo ": ok: done"
}

n=0
for r in "${runs[@]}"; do
	# PROVIDER MODE [FLAVOR]: allocated windows, or created ones
	# (RMAD_T_FLAVOR, t/prog.h: the process's own memory, reached by
	# process_vm_readv/writev, large transfers pulled by the target)
	read -r prov mode flavor <<<"$r"
	flavor=${flavor:-allocate}
	export RMAD_T_FLAVOR=$flavor
	n=$((n + 1))
	sess=dm$n
	# two vnode agents that outlive one job, as rmad-run starts them
	# (patient heartbeats: what dies here is a rank, never a node, and
	# a loaded host must not make one node declare the other dead)
	mpirun -np 2 --bind-to none "$RMAD" --foreground --session "$sess" \
		--vnodes 2 --owner-pid $$ --set "provider=$prov" \
		--set fabric_node=127.0.0.1 --set log_level=info \
		--set heartbeat_timeout_ms=20000 \
		</dev/null >"$T_TMP/agents$n.log" 2>&1 &
	T_PIDS+=($!)
	wait_for "[ -S '$(sock_of "$sess" 0)' ] && [ -S '$(sock_of "$sess" 1)' ]" 30 ||
		diag "agents of $sess did not come up: $(cat "$T_TMP/agents$n.log")"
	read -r a0 <"$T_RUNDIR/$sess/agent-0.pid"
	read -r a1 <"$T_RUNDIR/$sess/agent-1.pid"
	# job NP PROG [ARGS...]
	job() {
		local np=$1
		shift
		RMAD_SESSION=$sess RMAD_VNODES=2 run_bounded 150 mpirun -np "$np" \
			--bind-to none -x RMAD_SESSION -x RMAD_VNODES \
			-x RMAD_RUNDIR -x RMAD_AGENT_PATH -x RMAD_CONF \
			-x RMAD_SPIN_US -x RMAD_T_FLAVOR "$@" 2>&1
	}
	np=4 nsurv=3
	[ "$mode" = alone ] && np=2 nsurv=1
	out=$(job "$np" "$prog" "$mode")
	miss=""
	while IFS= read -r w; do
		k=$(echo "$out" | grep -F ": ok: " | grep -cF -- "$w")
		[ "$k" -eq "$nsurv" ] || miss="$miss [$w: $k of $nsurv]"
	done < <(want "$mode")
	[ -z "$miss" ] && ! echo "$out" | grep -q "FAIL\|Sanitizer\|runtime error:"
	ok $? "$prov, $flavor windows, rank dead $mode: every survivor's check passed${miss:+, missing:$miss}"
	if [ -n "$miss" ] || echo "$out" | grep -q "FAIL\|Sanitizer\|runtime error:"; then
		diag "$out"
		diag "$(grep -v ': info: ' "$T_TMP/agents$n.log" | tail -n 30)"
	fi
	kill -0 "$a0" && kill -0 "$a1"
	ok $? "$prov, $mode: both agents alive after the death"
	out=$(job 4 "$fresh")
	ranks_ok "$prov, $mode: a fresh job on the same agents" 4 "$out" $? ": ok"
	# (and no sanitizer report, in an ASan build: tools/sanitize.sh)
	grep -q "segfault\|crash\|SIGSEGV\|SIGBUS\|Sanitizer\|runtime error:" \
		"$T_TMP/agents$n.log"
	[ $? -ne 0 ]
	ok $? "$prov, $mode: no crash in the agents' log"
	kill -TERM "$a0" "$a1" 2>/dev/null
	wait_for "! kill -0 $a0 2>/dev/null && ! kill -0 $a1 2>/dev/null" 10
done
# through librmad-mpi: MPI_Put + MPI_Win_unlock to a dead rank
unset RMAD_T_FLAVOR
# (not in a sanitizer build: its library cannot go into an MPI program
# that was built without the runtime)
if [ -x "$mpid" ] && [ -r "$mpilib" ] &&
	! ldd "$mpilib" 2>/dev/null | grep -q "libasan\|libtsan"; then
	out=$(RMAD_MPI_LIB="$mpilib" \
		LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		run_bounded 120 "$RMAD_RUN" -q --mpi --vnodes 2 \
		--provider 'tcp;ofi_rxm' --set heartbeat_timeout_ms=20000 \
		-np 4 "$mpid" 2>&1)
	n=$(echo "$out" | grep -c "ok: MPI_Put+unlock to the dead rank fails")
	[ "$n" -eq 3 ]
	ok $? "MPI: put + unlock to a dead rank returns an error class on $n of 3 survivors"
	[ "$n" -eq 3 ] || diag "$out"
else
	ok 0 "# SKIP librmad-mpi or t/mpi/mpi_deaths not built, or a sanitizer build"
fi
ok_clean
done_testing
