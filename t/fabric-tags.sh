#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fabric-tags.sh - the agent transport over tcp;ofi_rxm with every
# message tagged (rmad_fabric_set_auth, fabric_auth): the same checks as
# fabric-tcp.sh, each side under its own key, nothing rejected.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
run_bounded 90 "$top_builddir/t/fabric_pingpong" -p 'tcp;ofi_rxm' -a
