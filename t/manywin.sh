#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# manywin.sh - windows limited by memory only (t/prog_manywin): 10,000
# windows alive at once in one process, and 2,000 across 2 ranks on 2
# virtual nodes, each working (put and get on a few), all freed, and the
# agent's and the process's descriptors and mappings back where they
# were (no descriptor per window); max_windows as a per-user quota: the
# window past it is refused with RMAD_ERR_NOMEM on every rank, and the
# agent goes on serving the windows made.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 4
pm="$top_builddir/t/prog_manywin"
out=$(RMAD_IDLE_EXIT_MS=200 run_bounded 120 "$pm" 10000 2>&1)
ranks_ok "1 process, 10000 windows" 1 "$out" $? ": ok"
echo "$out" | grep "round [0-9]*, windows" | sed 's/^/# /'
out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider shm -np 2 \
	"$pm" 2000 2>&1)
ranks_ok "shm, 2 vnodes, 2 ranks, 2000 windows" 2 "$out" $? ": ok"
echo "$out" | grep "round [0-9]*, windows" | sed 's/^/# /'
out=$(run_bounded 120 "$RMAD_RUN" -q --set max_windows=40 --vnodes 2 \
	--provider shm -np 2 "$pm" 0 quota 40 2>&1)
ranks_ok "max_windows=40: the 41st window refused on every rank (RMAD_ERR_NOMEM), the others served" \
	2 "$out" $? ": ok"
ok_clean
done_testing
