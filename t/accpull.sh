#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# accpull.sh - large accumulates between virtual nodes (t/prog_accpull.c):
# the target's agent reads their operands with fi_read and combines them
# in bulk (rma_pull.c).  Exact totals where large and small accumulates
# from several origins meet, the order of a large REPLACE, small
# REPLACEs and a large SUM from one origin, MAX on doubles, flush then
# get under an exclusive lock, large get-accumulates (SUM, then NO_OP)
# whose results the target's agent writes back, and a fence epoch; over shm and
# tcp;ofi_rxm, with chunks smaller than the transfers (more than the
# agent keeps in flight), on created and dynamic windows, with operands
# in rmad_alloc_mem memory (read in place, no bounce copy), and with
# rdma_threshold = 0 (active messages instead, nothing read).  Last,
# that memory goes away under the read (t/prog_pullkill.c): its process
# dies, or frees it, right after posting, or frees it while the
# targets' agent is stopped (SIGSTOP), so that the reads it lent wait
# and it must be kept mapped (agent log, stat mem_kept); the agents go
# on, and a flush that succeeds means the targets got every byte.  The
# same for large gets from created windows, which the stopped agent
# writes into the freed memory once it continues.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 25
pr="$top_builddir/t/prog_accpull"
# run WHAT NP WANT ARGS...: every rank passes, and every rank's
# accumulates were read by their targets (WANT=some) or not (none)
run() {
	local what=$1 np=$2 want=$3 out rc n c
	shift 3
	out=$(run_bounded 180 "$RMAD_RUN" -q "$@" -np "$np" "$pr" 2 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok (node")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$(echo "$out" | head -40)"
	c=$(echo "$out" | sed -n 's/.* \([0-9]*\) chunks pulled.*/\1/p' |
		tr '\n' ' ')
	g=$(echo "$out" | sed -n 's/.* \([0-9]*\) gacc chunks written.*/\1/p' |
		tr '\n' ' ')
	# every rank's accumulates were read; the get-accumulates' results
	# written back where the next rank is on another node (some ranks)
	case $want in
	some) [ -n "$c" ] && ! echo " $c" | grep -q ' 0 ' &&
		[ -n "$(echo "$g" | tr -d ' 0')" ] ;;
	none) [ -n "$c" ] && [ -z "$(echo "$c$g" | tr -d ' 0')" ] ;;
	esac
	ok $? "$what: chunks read by the targets: $want ($c; gacc results written: $g)"
}
run "shm, 2 vnodes, 3 ranks" 3 some --vnodes 2 --provider shm
run "tcp;ofi_rxm, 3 vnodes, 3 ranks" 3 some --vnodes 3 \
	--provider 'tcp;ofi_rxm'
run "tcp;ofi_rxm, 2 vnodes, 64k chunks" 2 some --vnodes 2 \
	--provider 'tcp;ofi_rxm' --set rdma_chunk=64k
RMAD_T_FLAVOR=create run "created windows, shm, 2 vnodes, 64k chunks" 3 \
	some --vnodes 2 --provider shm --set rdma_chunk=64k
RMAD_T_FLAVOR=dynamic run "dynamic windows, tcp;ofi_rxm, 2 vnodes" 2 some \
	--vnodes 2 --provider 'tcp;ofi_rxm'
RMAD_T_MEM=alloc run "rmad_alloc_mem operands, tcp;ofi_rxm, 2 vnodes, 64k chunks" 3 \
	some --vnodes 2 --provider 'tcp;ofi_rxm' --set rdma_chunk=64k
RMAD_T_MEM=alloc run "rmad_alloc_mem operands, shm, 2 vnodes" 2 some \
	--vnodes 2 --provider shm
run "shm, 2 vnodes, rdma_threshold=0" 2 none --vnodes 2 --provider shm \
	--set rdma_threshold=0
pk="$top_builddir/t/prog_pullkill"
for prov in shm 'tcp;ofi_rxm'; do
	out=$(OMPI_MCA_orte_enable_recovery=1 \
		OMPI_MCA_orte_abort_on_non_zero_status=0 run_bounded 120 \
		"$RMAD_RUN" -q --vnodes 2 --provider "$prov" -np 4 "$pk" die 2>&1)
	n=$(echo "$out" | grep -c ": ok: region 2")
	[ "$n" -eq 3 ] && ! echo "$out" | grep -q FAIL
	ok $? "$prov: the origin dies as the target reads its memory: $n of 3 live ranks go on"
	[ "$n" -eq 3 ] || diag "$out"
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 --provider "$prov" \
		-np 4 "$pk" free 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok: region 2")
	f=$(echo "$out" | sed -n 's/.*: ok: flush \(-*[0-9]*\).*/\1/p')
	x=$(echo "$out" | grep -c ": ok: region 1 exact")
	[ "$rc" -eq 0 ] && [ "$n" -eq 4 ] && [ -n "$f" ] &&
		{ [ "$f" -ne 0 ] || [ "$x" -eq 3 ]; }
	ok $? "$prov: the origin frees the memory as the target reads it: flush ${f:-?}, $x of 3 targets exact, $n of 4 ranks go on (rc $rc)"
	[ "$n" -eq 4 ] || diag "$out"
	# the same with the targets' agent stopped from before the posts
	# until after the free: the chunks lent before the free are unread
	# when the memory goes, every time
	sess="pullstop-$$"
	pidf="$("$RMAD" --session "$sess" --print-run-dir)/agent-0.pid"
	out=$(run_bounded 120 "$RMAD_RUN" -q --session "$sess" --vnodes 2 \
		--provider "$prov" --set log_level=info -np 4 "$pk" stop \
		"$pidf" 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok: region 2")
	f=$(echo "$out" | sed -n 's/.*: ok: flush \(-*[0-9]*\).*/\1/p')
	x=$(echo "$out" | grep -c ": ok: region 1 exact")
	k=$(echo "$out" | grep -c "released while [0-9]* transfers use it in place: kept mapped")
	[ "$rc" -eq 0 ] && [ "$n" -eq 4 ] && [ -n "$f" ] && [ "$k" -ge 1 ] &&
		{ [ "$f" -ne 0 ] || [ "$x" -eq 3 ]; }
	ok $? "$prov: freed while its reads wait for a stopped agent: kept mapped ($k), flush ${f:-?}, $x of 3 targets exact, $n of 4 ranks go on (rc $rc)"
	[ "$n" -eq 4 ] && [ "$k" -ge 1 ] || diag "$(echo "$out" | grep -v ": info: " | tail -20)"
	# the mirror: large gets from created windows, whose bytes the
	# stopped agent writes into the freed memory after it continues
	out=$(run_bounded 120 "$RMAD_RUN" -q --session "$sess" --vnodes 2 \
		--provider "$prov" --set log_level=info -np 4 "$pk" getstop \
		"$pidf" 2>&1)
	rc=$?
	n=$(echo "$out" | grep -c ": ok: region 2")
	f=$(echo "$out" | sed -n 's/.*: ok: flush \(-*[0-9]*\).*/\1/p')
	k=$(echo "$out" | grep -c "released while [0-9]* transfers use it in place: kept mapped")
	[ "$rc" -eq 0 ] && [ "$n" -eq 4 ] && [ -n "$f" ] && [ "$k" -ge 1 ]
	ok $? "$prov: freed while the gets' writes wait for a stopped agent: kept mapped ($k), flush ${f:-?}, $n of 4 ranks go on (rc $rc)"
	[ "$n" -eq 4 ] && [ "$k" -ge 1 ] || diag "$(echo "$out" | grep -v ": info: " | tail -20)"
done
ok_clean
done_testing
