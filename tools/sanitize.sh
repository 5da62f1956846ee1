#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/sanitize.sh - the sanitizer stage of tools/test.sh: build rmad
# again with AddressSanitizer + UndefinedBehaviorSanitizer and run the
# multi-rank RMA, stress, kill, forged-join and hostile-client tests
# under it, then with ThreadSanitizer and run the multithreaded client
# test.  Each build is its own tree (_build-asan, _build-tsan).  Any
# sanitizer report fails the test that ran into it (halt_on_error);
# libpmix's own leaks are suppressed by tools/lsan.supp, nothing of
# rmad's.
#
# usage: tools/sanitize.sh [asan|tsan]...   (default: both)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(asan tsan)
rc=0
for s in "${stages[@]}"; do
	case $s in
	asan)
		flags=address,undefined
		tests="t/rma.sh t/fence.sh t/pscw.sh t/req.sh t/types.sh t/wincreate.sh t/dynamic.sh t/shared.sh t/stress.sh t/rma-kill.sh t/deaths.sh t/node-kill.sh t/client-kill.sh t/agent-kill.sh t/garbage.sh t/threads.sh t/accmix.sh t/accpull.sh t/tcache.sh t/acchold.sh t/rogue-win.sh t/rogue-job.sh t/hostile.sh t/admit.sh t/test_dtree t/test_accword"
		export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
		export LSAN_OPTIONS=suppressions=$top/tools/lsan.supp:print_suppressions=0
		export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
		;;
	tsan)
		flags=thread
		tests="t/threads.sh"
		export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
		# ThreadSanitizer slows the agents several times over, on
		# two loaded cores: seen to miss the 1.5 s heartbeat bound
		# once and declare each other dead (this test kills nothing)
		export RMAD_HEARTBEAT_TIMEOUT_MS=30000
		;;
	*) echo "sanitize: unknown stage '$s'" >&2; exit 2 ;;
	esac
	b=$top/_build-$s
	rm -rf "$b"
	mkdir -p "$b"
	echo "sanitize: $s: building with -fsanitize=$flags in $b" >&2
	if ! (cd "$b" && "$top/configure" --enable-sanitizers="$flags" \
		>/dev/null && make -j"$(nproc)" >/dev/null 2>"$b/build.err"); then
		echo "sanitize: $s: build failed" >&2
		tail -n 30 "$b/build.err" >&2
		rc=1
		continue
	fi
	echo "sanitize: $s: $tests" >&2
	(cd "$b" && timeout --kill-after=30 1200 make -j1 check TESTS="$tests") \
		>"$b/check.out" 2>&1 || rc=1
	unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS \
		RMAD_HEARTBEAT_TIMEOUT_MS
done
exit $rc
