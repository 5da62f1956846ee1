#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fuzz.sh - the libFuzzer harnesses (fuzz/) for a bounded time each:
# the agent's decoders of client socket messages and op elements
# (fuzz_client), of packets from other agents (fuzz_wire), and the
# config and hint parsers (fuzz_config), under ASan and UBSan.  A crash,
# leak of a sanitizer report or a hang fails the test; the input that
# did it is kept in $top_builddir/fuzz-bin/crashes.  FUZZ_SECONDS (default
# 15) is the time per harness; `make fuzz` runs them for 300 s each.
# First each harness replays the inputs of fuzz/regress/HARNESS/: past
# findings, kept so that they stay fixed, and inputs that reach far
# (map-and-early-joins); they then seed its corpus.
# Skipped when clang has no libFuzzer runtime.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
secs=${FUZZ_SECONDS:-15}
bin="$top_builddir/fuzz-bin"
log=$(top_builddir="$top_builddir" bash "$top_srcdir/fuzz/build.sh" "$bin" 2>&1)
rc=$?
[ $rc -eq 77 ] && skip_all "$log"
harnesses=(fuzz_client fuzz_wire fuzz_config)
plan $((1 + 2 * ${#harnesses[@]}))
ok $rc "the harnesses build with clang and libFuzzer"
[ $rc -eq 0 ] || { diag "$log"; done_testing; }
mkdir -p "$bin/crashes"
for h in "${harnesses[@]}"; do
	corpus="$bin/corpus-$h"
	mkdir -p "$corpus"
	reg=("$top_srcdir/fuzz/regress/$h"/*)
	if [ -e "${reg[0]}" ]; then
		out=$(cd "$T_TMP" && ASAN_OPTIONS=detect_leaks=0 \
			UBSAN_OPTIONS=print_stacktrace=1 \
			run_bounded 60 "$bin/$h" -rss_limit_mb=2048 "${reg[@]}" 2>&1)
		rc=$?
		ok $rc "$h: the ${#reg[@]} past findings stay fixed"
		[ $rc -eq 0 ] || diag "$(echo "$out" | tail -n 40)"
		# and they seed the run: some reach far (a job's map made,
		# then windows) where an empty corpus would take long
		cp -n "${reg[@]}" "$corpus"/ 2>/dev/null
	else
		ok 0 "$h: no past findings to replay"
	fi
	out=$(cd "$T_TMP" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1 \
		run_bounded $((secs + 60)) "$bin/$h" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$bin/crashes/$h-" "$corpus" 2>&1)
	rc=$?
	runs=$(echo "$out" | sed -n 's/^Done \([0-9]*\) runs.*/\1/p')
	cov=$(echo "$out" | sed -n 's/.*DONE *cov: \([0-9]*\).*/\1/p')
	[ $rc -eq 0 ] && [ -n "$runs" ]
	ok $? "$h: ${runs:-?} inputs in ${secs}s, coverage ${cov:-?}, no finding (rc $rc)"
	[ $rc -eq 0 ] || diag "$(echo "$out" | grep -v '^#' | tail -n 40)"
done
done_testing
