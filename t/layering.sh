#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# layering.sh - the tree's layering holds:
#  - no file under agent/, shared/ or proto/ includes the library's
#    public header rmad.h (the ABI is proto/rmad_abi.h);
#  - every agent/*.c is in the layer table below, and includes only the
#    headers of modules at its layer or below;
#  - in the built agent, no module calls a function of a module above it
#    or beside it (from the objects' symbol tables), so the module graph
#    has no cycle.
# doc/design.md maps the same layers.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 3

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
	"rma_type"			# RMA: derived target types, their cache
	"rma_target"			# RMA: lock granting and apply
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
declare -A rank
for i in "${!layers[@]}"; do
	for m in ${layers[$i]}; do rank[$m]=$i; done
done

cd "$top_srcdir" || bail "no source tree"
bad=$(grep -lE '#include *[<"](\.\./client/)?rmad\.h[>"]' \
	agent/*.[ch] shared/*.[ch] proto/*.h 2>/dev/null | tr '\n' ' ')
ok "$([ -z "$bad" ]; echo $?)" "agent/, shared/ and proto/ do not include rmad.h"
[ -z "$bad" ] || diag "these include rmad.h (use rmad_abi.h): $bad"

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
done_testing
