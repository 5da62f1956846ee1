#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/test.sh - the whole test suite from scratch: install the
# dependencies, build in _build/ and run `make check`, then the
# sanitizer stage (tools/sanitize.sh: ASan+UBSan over the multi-rank,
# stress and kill tests, TSan over the multithreaded client test, each
# in its own build), then the conformance stage (tools/suites.sh: MPICH's
# RMA suite and OSU's one-sided benchmarks from ../shared/suites, on one
# node and on 2 vnodes, judged against plain Open MPI's baselines), then
# the release stage (tools/release.sh: make distcheck, the Debian
# packages, lintian, and the packages installed, used and purged).
# Ends with a line "N passed, N failed" counting every TAP test point of
# all of them.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/deps.sh" || exit 1
bash "$top/tools/build.sh" || { echo "0 passed, 1 failed"; exit 1; }
cd "$top/_build"
# two tests at a time: they wait on jobs and timeouts far more than they
# compute (20-25 % of the two cores each); every test has its own run
# directory, sessions and ports (t/lib.sh)
timeout --kill-after=30 1800 make -j2 check
rc=$?
bash "$top/tools/sanitize.sh" || rc=1
bash "$top/tools/suites.sh" || rc=1
bash "$top/tools/release.sh" || rc=1
pass=0
fail=0
skip=0
for b in "$top/_build" "$top/_build-asan" "$top/_build-tsan" \
	"$top/_build-suites" "$top/_build-release"; do
	for trs in "$b"/t/*.trs; do
		[ -e "$trs" ] || continue
		p=$(grep -c '^:test-result: PASS' "$trs")
		x=$(grep -c '^:test-result: XFAIL' "$trs")
		f=$(grep -Ec '^:test-result: (FAIL|XPASS|ERROR)' "$trs")
		s=$(grep -c '^:test-result: SKIP' "$trs")
		pass=$((pass + p + x))
		fail=$((fail + f))
		skip=$((skip + s))
	done
	for log in "$b"/t/*.log; do
		if grep -q '^ERROR\|^FAIL' "${log%.log}.trs" 2>/dev/null; then
			echo "---- ${log#$top/}"
			tail -n 40 "$log"
		fi
	done
done
[ $rc -ne 0 ] && [ $fail -eq 0 ] && fail=1
echo "$pass passed, $fail failed, $skip skipped"
exit $rc
