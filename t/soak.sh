#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# soak.sh - `make soak`: SOAK_SECONDS (600) of mixed passive-target
# epochs on three windows across 2 vnodes (t/prog_stress.c with tiny
# pools, so the agents keep cleaning up), over shm then tcp;ofi_rxm,
# half the time each.  Every total must be exact, and each agent's RSS
# (checked by the program) and open descriptors (sampled here every 2
# seconds) must be as flat at the end as after the warm-up.  Not part of
# make check.  SOAK_PROVIDERS=shm (a comma-separated list) narrows it.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
secs=${SOAK_SECONDS:-600}
pr="$top_builddir/t/prog_stress"
tiny=(--set op_pool=2 --set client_op_pool=1 --set target_pool=1
	--set win_target_pool=1 --set win_slots=1 --set lock_queue=2)
n=0
provs=("shm" "tcp;ofi_rxm")
[ -n "${SOAK_PROVIDERS:-}" ] && IFS=, read -r -a provs <<<"$SOAK_PROVIDERS"
plan $((2 * ${#provs[@]}))
for prov in "${provs[@]}"; do
	n=$((n + 1))
	half=$((secs / ${#provs[@]}))
	warm=$((half / 10 < 20 ? half / 10 : 20))
	"$RMAD_RUN" -q --vnodes 2 --provider "$prov" "${tiny[@]}" \
		--session "sk$n" --timeout $((half * 2 + 120)) -np 4 "$pr" \
		-t "$half" >"$T_TMP/soak$n.out" 2>&1 &
	rpid=$!
	first=""
	last=""
	start=$SECONDS
	while kill -0 "$rpid" 2>/dev/null; do
		sleep 2
		fds=""
		for f in "$T_RUNDIR/sk$n"/agent-*.pid; do
			[ -f "$f" ] || continue
			read -r p <"$f"
			k=$(ls "/proc/$p/fd" 2>/dev/null | wc -l)
			[ "$k" -gt 0 ] || { fds=""; break; }	# ending
			fds="$fds $k"
		done
		[ -n "$fds" ] || continue
		# the first sample after the warm-up
		[ -z "$first" ] && [ $((SECONDS - start)) -ge "$warm" ] && first=$fds
		last=$fds
	done
	wait "$rpid"
	rc=$?
	k=$(grep -c ": ok (node" "$T_TMP/soak$n.out")
	rounds=$(sed -n 's/.*ok (node .*, \([0-9]*\) rounds).*/\1/p' "$T_TMP/soak$n.out" | head -n 1)
	[ "$rc" -eq 0 ] && [ "$k" -eq 4 ]
	ok $? "$prov: ${rounds:-?} rounds in $((SECONDS - start)) s, $k of 4 ranks exact, agent RSS flat or unchecked (rc $rc)"
	grep "RSS" "$T_TMP/soak$n.out" | sed 's/^/# /'
	[ "$k" -eq 4 ] || diag "$(tail -30 "$T_TMP/soak$n.out")"
	grow=$(awk -v a="$first" -v b="$last" 'BEGIN {
		n = split(a, x); m = split(b, y); g = 0
		for (i = 1; i <= n && i <= m; i++) if (y[i] - x[i] > g) g = y[i] - x[i]
		print g }')
	[ -n "$first" ] && [ "$grow" -le 2 ]
	ok $? "$prov: agents' open descriptors flat: [$first ] after warm-up, [$last ] at the end"
done
done_testing
