#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fabric-shm.sh - the agent transport over libfabric's shm provider.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
run_bounded 90 "$top_builddir/t/fabric_pingpong" -p shm
