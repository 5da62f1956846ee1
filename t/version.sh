#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# version.sh - an agent refuses a client of another ABI version, and
# keeps serving.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
start_agent ver "$T_TMP/agent.log"
wait_for "[ -S '$(sock_of ver)' ]" 10 || bail "agent did not start"
run_bounded 30 "$top_builddir/t/test_version" "$(sock_of ver)"
