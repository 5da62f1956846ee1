#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# load.sh - a healthy node is never declared dead, whatever its load.  A
# 2-vnode job over tcp;ofi_rxm (t/prog_load: large strided puts and
# accumulates, exact totals checked) runs under each kind of load in
# turn, LOAD_SECONDS in all (10 in make check: one job through the
# five phases; 300 in make soak, LOAD_SEPARATE=1: a job of a minute for
# each):
#  - bulk: the job's traffic alone;
#  - cpu: a spinning process at nice -19 on every core (more weight
#    than the agents and ranks, which get a few % of a core);
#  - mem: a process that writes every page of LOAD_MEM_MIB (2048) again
#    and again;
#  - stop: each agent stopped (SIGSTOP) for 1 s and resumed, in turn;
#  - all: the four at once.
# Every job must end with every rank ok, no "declared dead" in its
# output and nodes_dead 0 in both agents' statistics, with the default
# heartbeat settings.  The longest wait for an echo (hb_gap_max_us) and
# between two timer runs (tick_gap_max_us) are reported after each
# phase (in one job: the worst so far).  LOAD_PROVIDERS (a
# comma-separated list) adds shm.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
secs=${LOAD_SECONDS:-10}
mib=${LOAD_MEM_MIB:-2048}
sep=${LOAD_SEPARATE:-0}
loads=(bulk cpu mem stop all)
provs=("tcp;ofi_rxm")
[ -n "${LOAD_PROVIDERS:-}" ] && IFS=, read -r -a provs <<<"$LOAD_PROVIDERS"
per=$((secs / ${#loads[@]}))
[ "$per" -ge 2 ] || per=2
njobs=1
[ "$sep" = 1 ] && njobs=${#loads[@]}
plan $(((2 * njobs + ${#loads[@]}) * ${#provs[@]} + 1))
prog=$top_builddir/t/prog_load
hog=$top_builddir/t/prog_hog
ctl=$top_builddir/rmadctl
ncpu=$(nproc)
# stat S V K: key K of vnode V's agent's statistics, session S
stat() {
	"$ctl" -s "$1" --vnode "$2" --json stats 2>/dev/null |
		sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
}
# phase LOAD S: LOAD for $per seconds on session S's job, then one
# point: neither agent declared a node dead, with the gaps seen
phase() {
	local load=$1 s=$2 hogs=() end p v c g t k u gaps="" dead=0
	case $load in cpu | all)
		for ((c = 0; c < ncpu; c++)); do
			nice -n -19 "$hog" cpu "$per" &
			hogs+=($!)
		done ;;
	esac
	case $load in mem | all)
		"$hog" mem "$mib" "$per" &
		hogs+=($!) ;;
	esac
	end=$((SECONDS + per))
	case $load in
	stop | all)
		while [ "$SECONDS" -lt "$end" ]; do
			for v in 0 1; do
				read -r p <"$T_RUNDIR/$s/agent-$v.pid" || continue
				kill -STOP "$p"
				sleep 1
				kill -CONT "$p"
				sleep 0.3
			done
		done ;;
	*)
		sleep "$per" ;;
	esac
	for p in "${hogs[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for v in 0 1; do
		g=$(stat "$s" $v hb_gap_max_us)
		t=$(stat "$s" $v tick_gap_max_us)
		k=$(stat "$s" $v nodes_dead)
		u=$(stat "$s" $v nodes_suspect)
		gaps="$gaps agent $v: echo gap ${g:-?} us, timer gap ${t:-?} us, ${u:-?} suspect;"
		[ "${k:-1}" -eq 0 ] || dead=1
	done
	[ "$dead" -eq 0 ]
	ok $? "$prov, $load ($per s): no node dead:$gaps"
}
n=0
for prov in "${provs[@]}"; do
	for ((j = 0; j < njobs; j++)); do
		n=$((n + 1))
		s=ld$n
		d=$T_TMP/$s
		mkdir -p "$d"
		if [ "$sep" = 1 ]; then
			mine=("${loads[$j]}")
		else
			mine=("${loads[@]}")
		fi
		run_bounded $((per * ${#mine[@]} * 4 + 120)) "$RMAD_RUN" -q \
			--vnodes 2 --provider "$prov" --session "$s" -np 2 \
			"$prog" $((per * ${#mine[@]})) "$d" >"$d/out" 2>&1 &
		rpid=$!
		if wait_for "[ -e '$d/ready' ]" 60; then
			for load in "${mine[@]}"; do
				phase "$load" "$s"
			done
		else
			for load in "${mine[@]}"; do
				ok 1 "$prov, $load: the job did not start"
			done
		fi
		wait_for "[ -e '$d/end' ]" $((per * ${#mine[@]} * 4 + 60))
		: >"$d/go"
		wait "$rpid"
		rc=$?
		out=$(cat "$d/out")
		ranks_ok "$prov, ${mine[*]}: the job" 2 "$out" "$rc" ": ok ("
		! grep -q "declared dead" "$d/out"
		ok $? "$prov, ${mine[*]}: no node declared dead in the job's output"
	done
done
left=$(leftovers)
[ -z "$left" ]
ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
done_testing
