#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# load.sh - a healthy node is never declared dead, whatever its load.  A
# 2-vnode job over tcp;ofi_rxm (t/prog_load: large strided puts and
# accumulates, exact totals checked) runs under each kind of load in
# turn, LOAD_SECONDS in all (10 in make check, 300 in make soak):
#  - bulk: the job's traffic alone;
#  - cpu: a spinning process at nice -19 on every core (more weight
#    than the agents and ranks, which get a few % of a core);
#  - mem: a process that writes every page of LOAD_MEM_MIB (2048) again
#    and again;
#  - stop: each agent stopped (SIGSTOP) for 1 s and resumed, in turn;
#  - all: the four at once.
# Each job must end with every rank ok, no "declared dead" in its
# output and nodes_dead 0 in both agents' statistics, with the default
# heartbeat settings.  The longest wait for an echo (hb_gap_max_us) and
# between two timer runs (tick_gap_max_us) of each load are reported
# as diagnostics.  LOAD_PROVIDERS (a comma-separated list) adds shm.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
secs=${LOAD_SECONDS:-10}
mib=${LOAD_MEM_MIB:-2048}
loads=(bulk cpu mem stop all)
provs=("tcp;ofi_rxm")
[ -n "${LOAD_PROVIDERS:-}" ] && IFS=, read -r -a provs <<<"$LOAD_PROVIDERS"
per=$((secs / ${#loads[@]}))
[ "$per" -ge 1 ] || per=1
plan $((3 * ${#loads[@]} * ${#provs[@]} + 1))
prog=$top_builddir/t/prog_load
hog=$top_builddir/t/prog_hog
ctl=$top_builddir/rmadctl
ncpu=$(nproc)
# a stat of vnode V's agent in session S (JSON key K)
stat() {
	"$ctl" -s "$1" --vnode "$2" --json stats 2>/dev/null |
		sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
}
n=0
for prov in "${provs[@]}"; do
	for load in "${loads[@]}"; do
		n=$((n + 1))
		s=ld$n
		d=$T_TMP/$s
		mkdir -p "$d"
		run_bounded $((per * 4 + 120)) "$RMAD_RUN" -q --vnodes 2 \
			--provider "$prov" --session "$s" -np 2 "$prog" \
			"$per" "$d" >"$d/out" 2>&1 &
		rpid=$!
		hogs=()
		if wait_for "[ -e '$d/ready' ]" 60; then
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
			case $load in stop | all)
				end=$((SECONDS + per))
				while [ "$SECONDS" -lt "$end" ] &&
					[ ! -e "$d/end" ]; do
					for v in 0 1; do
						read -r p <"$T_RUNDIR/$s/agent-$v.pid" ||
							continue
						kill -STOP "$p"
						sleep 1
						kill -CONT "$p"
						sleep 0.3
					done
				done ;;
			esac
		fi
		wait_for "[ -e '$d/end' ]" $((per * 4 + 60))
		for p in "${hogs[@]}"; do
			kill "$p" 2>/dev/null
			wait "$p" 2>/dev/null
		done
		gaps="" dead=0
		for v in 0 1; do
			g=$(stat "$s" $v hb_gap_max_us)
			t=$(stat "$s" $v tick_gap_max_us)
			k=$(stat "$s" $v nodes_dead)
			u=$(stat "$s" $v nodes_suspect)
			gaps="$gaps agent $v: echo gap ${g:-?} us, timer gap ${t:-?} us, ${u:-?} suspect;"
			[ "${k:-1}" -eq 0 ] || dead=1
		done
		: >"$d/go"
		wait "$rpid"
		rc=$?
		out=$(cat "$d/out")
		ranks_ok "$prov, $load" 2 "$out" "$rc" ": ok ("
		! grep -q "declared dead" "$d/out"
		ok $? "$prov, $load: no node declared dead"
		[ "$dead" -eq 0 ]
		ok $? "$prov, $load: nodes_dead 0 in both agents:$gaps"
		diag "$prov, $load ($per s):$gaps"
	done
done
left=$(leftovers)
[ -z "$left" ]
ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
done_testing
