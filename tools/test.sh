#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/test.sh - the whole test suite from scratch: install the
# dependencies, build in _build/ and run `make check`.  Ends with a line
# "N passed, N failed" counting every TAP test point.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/deps.sh" || exit 1
bash "$top/tools/build.sh" || { echo "0 passed, 1 failed"; exit 1; }
cd "$top/_build"
timeout --kill-after=30 1800 make -j1 check
rc=$?
pass=0
fail=0
skip=0
for trs in t/*.trs; do
	[ -e "$trs" ] || continue
	p=$(grep -c '^:test-result: PASS' "$trs")
	x=$(grep -c '^:test-result: XFAIL' "$trs")
	f=$(grep -Ec '^:test-result: (FAIL|XPASS|ERROR)' "$trs")
	s=$(grep -c '^:test-result: SKIP' "$trs")
	pass=$((pass + p + x))
	fail=$((fail + f))
	skip=$((skip + s))
done
for log in t/*.log; do
	if grep -q '^ERROR\|^FAIL' "${log%.log}.trs" 2>/dev/null; then
		echo "---- $log"
		tail -n 40 "$log"
	fi
done
[ $rc -ne 0 ] && [ $fail -eq 0 ] && fail=1
echo "$pass passed, $fail failed, $skip skipped"
exit $rc
