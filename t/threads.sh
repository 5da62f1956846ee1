#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# threads.sh - four threads of each client post operations and flush on
# one window at once (the seeds' "RMA + Threads" interleavings), four
# ranks on 2 vnodes, over shm and tcp;ofi_rxm: every total exact
# (t/prog_threads.c).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 2
prog="$top_builddir/t/prog_threads"
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 150 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 4 "$prog" 4 300 2>&1)
	n=$(echo "$out" | grep -c ": ok: 4 threads")
	[ "$n" -eq 4 ]
	ok $? "$prov: $n of 4 ranks exact with 4 threads posting and flushing"
	[ "$n" -eq 4 ] || diag "$out"
done
done_testing
