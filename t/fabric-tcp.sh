#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fabric-tcp.sh - the agent transport over libfabric's tcp;ofi_rxm.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
run_bounded 90 "$top_builddir/t/fabric_pingpong" -p 'tcp;ofi_rxm'
