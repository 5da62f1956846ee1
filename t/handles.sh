#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# handles.sh - garbage, freed and foreign window and group handles are
# refused with RMAD_ERR_ARG, never dereferenced (one rank, its own
# embedded agent).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
RMAD_IDLE_EXIT_MS=200 run_bounded 60 "$top_builddir/t/prog_handles"
