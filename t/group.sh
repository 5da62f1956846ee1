#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# group.sh - groups on a 4-rank job (its own embedded agent).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
RMAD_IDLE_EXIT_MS=200 run_bounded 90 mpirun -np 4 -x RMAD_IDLE_EXIT_MS \
	-x RMAD_RUNDIR -x RMAD_AGENT_PATH "$top_builddir/t/prog_group"
