#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# layering.sh - the tree's layering holds:
#  - no file under agent/, shared/ or proto/ includes the library's
#    public header rmad.h (the ABI is proto/rmad_abi.h) or any other
#    client header (client/*.h, by a path through the source tree);
#  - every agent/*.c is in the layer table below, and includes only the
#    headers of modules at its layer or below;
#  - in the built agent, no module calls a function of a module above it
#    or beside it (from the objects' symbol tables), so the module graph
#    has no cycle;
#  - every extern function of an agent module carries one of its
#    module's prefixes (the table below), and no static function of the
#    agent or of shared/ has the name of an agent module's extern one.
# doc/design.md maps the same layers.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 5

# The agent's modules, bottom up.  A module may include the headers of
# modules on lower lines (or of its own line), and call functions of
# modules on lower lines only.
layers=(
	"agent"				# struct agent: the context structs
	"stats"				# the statistics table and reports
	"crash"				# the report of a fatal signal
	"secret"			# random bytes, SipHash-2-4, key files
	"fabric_tag"			# message tags: keys, sessions, replays
	"fi_load"			# libfabric, loaded on first use
	"fabric_impl"			# the transport's state (a header)
	"fabric fabric_probe boot mesh pin sweep"	# libfabric, evidence of a death, PMIx, the static mesh, hwloc, dead agents' files
	"fabric_open"			# the transport's setup and teardown
	"fabric_rma"			# registrations, fi_write/fi_read
	"bell"				# doorbells between one host's agents
	"guard"				# the thread that raises a starved agent
	"am_batch am_held"		# AM: node aggregates; held packets, hand-off
	"am"				# active messages: send, receive, handlers
	"liveness"			# heartbeats, static mesh handshake, deaths
	"completion"			# op elements, lending, counters, wakeups
	"jobs_bar"			# the job-wide barrier
	"jobs"				# jobs, rank->node map, deaths, job packets
	"jobs_events jobs_ping"		# job packets, deaths, tick; rmad_ping
	"mem"				# alloc_mem regions
	"winmem"			# can a created window be reached
	"wintab"			# the tables of windows: hash, blocks, quotas
	"win_state"			# window objects: made, found, failed
	"win_join"			# windows across agents: their packets
	"windows"			# windows: the clients' create and free
	"winsync"			# fence barrier, PSCW notices
	"dynwin"			# dynamic windows' attached regions
	"rma_internal"			# RMA: what the layer's files share
	"rma_xfer"			# RMA: client memory I/O and sends
	"rma_type_apply"		# RMA: derived target types, the target side
	"rma_type"			# RMA: derived target types, their cache
	"rma_target"			# RMA: lock granting and apply
	"rma_pull_origin"		# RMA: pulled chunks, the origin side
	"rma_pull"			# RMA: accumulates the target reads
	"rma_oplist"			# RMA: origins, target elements, op lists
	"rma_pscw"			# RMA: post/start/complete/wait notices
	"rma_origin"			# RMA: routing and issuing ops
	"rma_win"			# RMA: sync state changes, fence
	"rma_progress"			# RMA: the seeds' basic routines
	"rma_pkt"			# RMA: packets from other agents
	"rma"				# RMA: entry points
	"ctl"				# rmadctl status
	"rings"				# submission rings: take, check, dispatch
	"clients"			# socket, attach, detach
	"schedule"			# scheduling class, polling sleeps
	"options"			# config: command line, rmad.conf, reload
	"loop"				# the progress loop, its events, the tick
	"main"				# start and stop
)
# Each module's prefixes: every extern function it defines starts with
# one of them.  The active-message layer's three files share am_, the
# windows layer's public lookups agent_win_; rma_progress.c also holds
# the seeds' ten basic routines under their own names.
declare -A prefix=(
	[stats]="agent_stats_" [crash]="crash_" [secret]="secret_"
	[fabric_tag]="fab_tags_" [fi_load]="rmad_fi_"
	[fabric]="rmad_fabric_ fab_" [fabric_probe]="rmad_fabric_"
	[fabric_open]="rmad_fabric_" [fabric_rma]="rmad_fabric_"
	[boot]="rmad_boot_" [mesh]="rmad_mesh_" [pin]="pin_" [sweep]="sweep_"
	[bell]="bell_" [guard]="guard_"
	[am_batch]="am_" [am_held]="am_" [am]="am_" [liveness]="liveness_"
	[completion]="completion_" [jobs_bar]="jobs_bar_"
	[jobs]="agent_job_ jobs_" [jobs_events]="jobs_events_"
	[jobs_ping]="jobs_ping_" [mem]="agent_mem_" [winmem]="winmem_"
	[wintab]="wintab_" [win_state]="agent_win_ win_state_"
	[win_join]="win_join_" [windows]="agent_win_" [winsync]="winsync_"
	[dynwin]="dynwin_" [rma_xfer]="xfer_" [rma_type]="ty_" [rma_type_apply]="ty_"
	[rma_target]="target_" [rma_pull_origin]="pull_" [rma_pull]="pull_" [rma_oplist]="oplist_"
	[rma_pscw]="pscw_" [rma_origin]="origin_" [rma_win]="rma_win_"
	[rma_progress]="rma_progress_ issue_ops_ cleanup_ make_rma_progress_"
	[rma_pkt]="rma_pkt_" [rma]="agent_rma_" [ctl]="ctl_"
	[rings]="rings_" [clients]="clients_" [schedule]="sched_"
	[options]="options_" [loop]="loop_" [main]="main"
)
declare -A rank
for i in "${!layers[@]}"; do
	for m in ${layers[$i]}; do rank[$m]=$i; done
done

cd "$top_srcdir" || bail "no source tree"
bad=$(grep -lE '#include *[<"]((\.\./)?client/[^">]*|rmad\.h)[>"]' \
	agent/*.[ch] shared/*.[ch] proto/*.h 2>/dev/null | tr '\n' ' ')
ok "$([ -z "$bad" ]; echo $?)" "agent/, shared/ and proto/ include neither rmad.h nor a client header"
[ -z "$bad" ] || diag "these include rmad.h or a client header (use rmad_abi.h): $bad"

msgs=()
for f in agent/*.c; do
	m=$(basename "$f" .c)
	if [ -z "${rank[$m]+x}" ]; then
		msgs+=("$f: not in the layer table of t/layering.sh; add it")
		continue
	fi
	while read -r h; do
		hm=$(basename "$h" .h)
		[ -e "agent/$hm.h" ] || continue	# not an agent header
		if [ -z "${rank[$hm]+x}" ]; then
			msgs+=("$f includes $h, which is not in the layer table")
		elif [ "${rank[$hm]}" -gt "${rank[$m]}" ]; then
			msgs+=("$f includes $h: $hm is above $m")
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
ok "$([ ${#msgs[@]} -eq 0 ]; echo $?)" "agent modules include only headers at or below their layer"
for x in "${msgs[@]}"; do diag "$x"; done

# Calls, from the built objects: an undefined symbol of one module that
# another module defines is a call into that module.
objs="$top_builddir/agent"
if ! ls "$objs"/rmad-*.o >/dev/null 2>&1 || ! command -v nm >/dev/null; then
	ok 0 "calls go downward # SKIP no agent objects or no nm"
	ok 0 "module prefixes # SKIP no agent objects or no nm"
	ok 0 "static names # SKIP no agent objects or no nm"
	done_testing
fi
declare -A def
for o in "$objs"/rmad-*.o; do
	m=$(basename "$o" .o); m=${m#rmad-}
	for s in $(nm --defined-only "$o" | awk '$2 == "T" {print $3}'); do
		def[$s]=$m
	done
done
msgs=()
for o in "$objs"/rmad-*.o; do
	m=$(basename "$o" .o); m=${m#rmad-}
	for s in $(nm -u "$o" | awk '{print $2}'); do
		d=${def[$s]:-}
		[ -n "$d" ] && [ "$d" != "$m" ] || continue
		if [ -z "${rank[$d]+x}" ] || [ -z "${rank[$m]+x}" ]; then
			msgs+=("$m calls $s in $d: a module missing from the layer table")
		elif [ "${rank[$d]}" -ge "${rank[$m]}" ]; then
			msgs+=("$m calls $s in $d, which is not below it")
		fi
	done
done
ok "$([ ${#msgs[@]} -eq 0 ]; echo $?)" "agent modules call only modules below them (no cycle)"
for x in "${msgs[@]}"; do diag "$x"; done

msgs=()
for s in "${!def[@]}"; do
	m=${def[$s]}
	if [ -z "${prefix[$m]+x}" ]; then
		msgs+=("$m: no prefix in t/layering.sh's table")
		continue
	fi
	good=0
	for p in ${prefix[$m]}; do
		case "$s" in "$p"*) good=1 ;; esac
	done
	[ $good -eq 1 ] || msgs+=("$m defines $s, without its prefix (${prefix[$m]})")
done
ok "$([ ${#msgs[@]} -eq 0 ]; echo $?)" "every extern agent function carries its module's prefix"
for x in "${msgs[@]}"; do diag "$x"; done

msgs=()
for o in "$objs"/rmad-*.o "$top_builddir"/shared/.libs/libshared_la-*.o; do
	[ -e "$o" ] || continue
	for s in $(nm --defined-only "$o" | awk '$2 == "t" {print $3}'); do
		[ -n "${def[$s]:-}" ] &&
			msgs+=("$(basename "$o"): static $s has the name of ${def[$s]}'s extern function")
	done
done
ok "$([ ${#msgs[@]} -eq 0 ]; echo $?)" "no static function has the name of an extern agent function"
for x in "${msgs[@]}"; do diag "$x"; done
done_testing
