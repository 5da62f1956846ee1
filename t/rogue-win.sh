#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rogue-win.sh - a node that serves a rank of a job speaks in a window's
# creation only for the members on it (rmad(7), SECURITY).  Three agents
# of a keyless static mesh over tcp;ofi_rxm; node 2's agent is not
# started, and t/test_rogue -w, plain libfabric bound to node 2's
# address, plays node 2 as a node that serves rank 2 of a job of 3
# ranks (an insider that holds a rank).  Ranks 0 and 1 run
# t/prog_winjoin on nodes 0 and 1; rank 2, t/prog_pmixwait, waits.  The
# rogue joins the job with rank 2, then the window of all ranks at its
# root (node 0) with its own member and forged entries for members 0
# and 1, before the root's group is known there (rank 0 waits 600 ms
# before it makes the window) and again every 50 ms after.  The
# forged entries must all be dropped, node 1's own entry kept (it may
# come after the forged one), and the ranks' writes and reads land in
# each other's real windows; the rogue's joins once the table is made
# are dropped too, and so are its post notices before the window is
# ready that name another node's rank, or come a second time, and its
# joins of a second window that no member here made (its one rank can
# wait in one window's creation at a time).  (Before, the root took the forged entries
# that came before its group, lost node 1's as a repeat, and crashed on
# the hole in its table.)
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 6
sess=roguewin
rogue_mesh "$sess" 17000 -w
jobf=$T_TMP/job
rpid=$ROGUE_PID

# rank 2 is the rogue's: a PMIx client only, until ranks 0 and 1 are done
RMAD_SESSION=$sess RMAD_VNODES=3 run_bounded 60 mpirun \
	-x RMAD_SESSION -x RMAD_VNODES -x RMAD_RUNDIR -x RMAD_AGENT_PATH \
	-x RMAD_CONF -x RMAD_SPIN_US \
	-np 2 "$top_builddir/t/prog_winjoin" -d 600 : \
	-np 1 "$top_builddir/t/prog_pmixwait" "$jobf.done" 60 \
	>"$T_TMP/out" 2>&1 &
jpid=$!
wait_for "grep -q 'rank 0/3 of ' '$T_TMP/agent0.log'" 30
ns=$(sed -n 's/.*rank 0\/3 of \(.*\)$/\1/p' "$T_TMP/agent0.log" | head -1)
echo "$ns 3" >"$jobf.tmp" && mv "$jobf.tmp" "$jobf"
# both real ranks report (or the job ends), then rank 2 may go
wait_for "[ \$(grep -c '^rank [01]: ' '$T_TMP/out') -ge 2 ] || ! kill -0 $jpid 2>/dev/null" 50
: >"$jobf.done"
wait "$jpid"
rc=$?
[ "$rc" = 0 ] || diag "$(cat "$T_TMP/out")"
ranks_ok "ranks 0 and 1 write and read each other's windows" 2 \
	"$(cat "$T_TMP/out")" "$rc" ": ok ("
wait_for '! kill -0 $rpid 2>/dev/null' 10 || kill -KILL "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
rout=$(cat "$T_TMP/rogue.out")
diag "$rout"
echo "$rout" | grep -q "rogue: window [0-9a-f]* of job $ns: [1-9][0-9]* joins, table [1-9]"
ok $? "the rogue joined the job and the window, and got the table"
# said TEXT: how many lines of agent 0's (the root's) log have it
said() { grep -c -- "$1" "$T_TMP/agent0.log"; }
d0=$(said "dropped node 2's entry for member 0, which is on node 0")
d1=$(said "dropped node 2's entry for member 1, which is on node 1")
e=$(said "node 2 joined with more entries than it serves ranks (1)")
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] && [ "$e" -gt 0 ] &&
	[ "$(said "bad or repeated member [01]$")" = 0 ]
ok $? "the root dropped the forged entries ($d0, $d1; $e joins before its group, held to one entry) and no real one"
a=$(said "dropped a join from node 2 (its root is 0, and the table is made)")
p1=$(said "dropped a post notice from node 2 (origin 0, target 1) before it is ready, naming members")
p2=$(said "dropped a post notice from node 2 (origin 0, target 2) before it is ready, a second time")
w2=$(said "dropped node 2's join of a window none of our members made yet: 1 such windows from it (it serves 1 ranks)")
[ "$a" -gt 0 ] && [ "$p1" -gt 0 ] && [ "$p2" -gt 0 ] && [ "$w2" -gt 0 ]
ok $? "dropped: the joins that came once the table was made ($a), and before it, the forged post notices ($p1) and the repeated ones ($p2); the joins of a second window its one rank cannot wait in ($w2)"
rogue_mesh_end "$sess"
done_testing
