#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# barrier.sh - the hierarchical barrier (and pings to every rank) on one
# node and across 2 and 3 virtual nodes, over shm and tcp;ofi_rxm.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
pb="$top_builddir/t/prog_barrier"
for prov in shm 'tcp;ofi_rxm'; do
	for k in 1 2 3; do
		np=$((k + 2))
		if [ "$k" -eq 1 ]; then
			vn=()
			what="1 node"
		else
			vn=(--vnodes "$k")
			what="$k vnodes"
		fi
		out=$(run_bounded 120 "$RMAD_RUN" -q "${vn[@]}" --provider "$prov" \
			--session "bar$k" -np "$np" "$pb" -b 100 -p 100 2>&1)
		rc=$?
		n=$(echo "$out" | grep -c ": ok (node")
		[ $rc -eq 0 ] && [ "$n" -eq "$np" ]
		ok $? "$prov, $what, $np ranks: $n ranks passed (rc $rc)"
		[ "$n" -eq "$np" ] || diag "$out"
		nodes=$(echo "$out" | sed -n 's/.*(node \([0-9]*\)\/.*/\1/p' | sort -u | wc -l)
		[ "$nodes" -eq "$k" ] || diag "ranks spread over $nodes nodes, not $k"
	done
done
done_testing
