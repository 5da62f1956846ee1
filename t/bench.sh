#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench.sh - smoke pass of rmad-bench: every test runs a few iterations
# (--quick) and checks the data it moved, on one node and across 2
# virtual nodes over shm and tcp;ofi_rxm; the CSV and JSON outputs are
# checked for shape.  No number is judged here: benchmarks never fail
# on a number.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 17
rb="$top_builddir/rmad-bench"
# rows of a --quick run: 4 sizes x 2 modes x 4 ops, fop and cas x 2
# modes, 2 bandwidth tests x 2 sizes, mr_1, mr_all, post, 2 T x 2 modes
rows=47

"$rb" --help | grep -q -- "--quick"
ok $? "rmad-bench --help"

check() {
	local what=$1 out=$2 rc=$3 n bad
	n=$(echo "$out" | grep -c ' ok$')
	bad=$(echo "$out" | grep -c 'FAIL')
	[ "$rc" -eq 0 ] && [ "$n" -eq "$rows" ] && [ "$bad" -eq 0 ]
	ok $? "$what: $n of $rows rows checked their data (rc $rc)"
	[ "$n" -eq "$rows" ] && [ "$rc" -eq 0 ] || diag "$out"
}

out=$(run_bounded 60 "$RMAD_RUN" -q --timeout 50 -np 2 "$rb" --quick \
	--timeout 45 2>&1)
check "1 node, 2 ranks" "$out" $?
for prov in shm 'tcp;ofi_rxm'; do
	out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 --vnodes 2 \
		--provider "$prov" -np 2 "$rb" --quick --timeout 75 2>&1)
	check "$prov, 2 vnodes, 2 ranks" "$out" $?
done

# -m fence: every rank fences, the origin moves data; 3 ranks so that
# one rank only fences (4 sizes x 3 ops, fop, 2 async rows)
out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 --vnodes 2 --provider shm \
	-np 3 "$rb" --quick -t put,get,acc,fop,async -m fence -T 0,100 \
	--timeout 75 2>&1)
n=$(echo "$out" | grep -cE '^[a-z]+ +fence .* ok$')
[ "$n" -eq 15 ] && ! echo "$out" | grep -q FAIL
ok $? "-m fence, shm, 2 vnodes, 3 ranks: $n of 15 rows checked their data"
[ "$n" -eq 15 ] || diag "$out"

# -m pscw: the target posts and waits; 3 ranks, one of them idle
out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 --vnodes 2 --provider shm \
	-np 3 "$rb" --quick -t put,acc,async -s 8 -m pscw -T 0,100 \
	--timeout 75 2>&1)
n=$(echo "$out" | grep -cE '^[a-z]+ +pscw .* ok$')
[ "$n" -eq 4 ] && ! echo "$out" | grep -q FAIL
ok $? "-m pscw, shm, 2 vnodes, 3 ranks: $n of 4 rows checked their data"
[ "$n" -eq 4 ] || diag "$out"

# strided: vector datatypes at the target, pieces through the agents
out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 2 "$rb" --quick -t strided -s 8,512 \
	--timeout 75 2>&1)
n=$(echo "$out" | grep -cE '^v(put|get|acc) .* ok$')
[ "$n" -eq 6 ] && ! echo "$out" | grep -q FAIL
ok $? "-t strided, tcp;ofi_rxm, 2 vnodes: $n of 6 rows checked their data"
[ "$n" -eq 6 ] || diag "$out"

# -t apps: the halo exchange (every rank fences) and the rget overlap
# rows, 3 ranks over tcp;ofi_rxm (2 halo rows, 2 x 2 overlap rows)
out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 --vnodes 2 \
	--provider 'tcp;ofi_rxm' -np 3 "$rb" --quick -t apps -s 8,512 \
	--timeout 75 2>&1)
n=$(echo "$out" | grep -cE '^(halo|overlap) .* ok$')
[ "$n" -eq 6 ] && ! echo "$out" | grep -q FAIL &&
	[ "$(echo "$out" | grep -c '^# overlap .* hidden$')" -eq 2 ]
ok $? "-t apps, tcp;ofi_rxm, 2 vnodes, 3 ranks: $n of 6 rows checked their data"
[ "$n" -eq 6 ] || diag "$out"

# a created window's accumulates by a same-node peer, past one round of
# the peer's buffer (client/peer.c, ACC_ROUND) and not a multiple of it
out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 -np 2 "$rb" --quick \
	-w create -t acc,gacc -m lock,flush -s 4K,8K,300K,600K --timeout 75 2>&1)
n=$(echo "$out" | grep -cE '^g?acc +(lock|flush) .* ok$')
[ "$n" -eq 16 ] && ! echo "$out" | grep -q FAIL
ok $? "-w create, 1 node: $n of 16 large accumulate rows checked their data"
[ "$n" -eq 16 ] || diag "$out"

# -w: created and dynamic windows across 2 vnodes, shared on one node
# (8 B put, get, acc, fop and cas under lock and flush, a strided put)
for f in create dynamic shared; do
	if [ "$f" = shared ]; then
		vn=()
	else
		vn=(--vnodes 2 --provider 'tcp;ofi_rxm')
	fi
	out=$(run_bounded 90 "$RMAD_RUN" -q --timeout 80 "${vn[@]}" -np 2 \
		"$rb" --quick -w "$f" -t put,get,acc,fop,cas,vput -s 8 \
		--timeout 75 2>&1)
	n=$(echo "$out" | grep -cE '^[a-z]+ +(lock|flush) .* ok$')
	[ "$n" -eq 11 ] && ! echo "$out" | grep -q FAIL &&
		echo "$out" | grep -q "$f window"
	ok $? "-w $f: $n of 11 rows checked their data"
	[ "$n" -eq 11 ] || diag "$out"
done

# with -t mem (P9): a row per measure, KiB of growth, P in the ranks
# column; in the same run, so that the pass takes no longer
out=$(run_bounded 60 "$RMAD_RUN" -q --timeout 50 -np 2 "$rb" --quick \
	--tests put,fop,async,mem -T 0 --csv --timeout 45 2>/dev/null)
n=$(echo "$out" | grep -c ',ok$')
h=$(echo "$out" | head -1 | tr ',' '\n' | wc -l)
[ "$n" -eq 17 ] && [ "$h" -eq 18 ]
ok $? "--csv: $n rows, $h columns"
n=$(echo "$out" | grep -cE '^rmad,rmad,2,1,[^,]*,mem,(alloc|epoch|hwm|pss|agent),4096,.*,ok$')
[ "$n" -eq 5 ]
ok $? "-t mem, 2 ranks: $n of 5 rows"
[ "$n" -eq 5 ] || diag "$out"

out=$(run_bounded 60 "$RMAD_RUN" -q --timeout 50 -np 2 "$rb" --quick \
	--tests cas --json --timeout 45 2>/dev/null)
if command -v python3 >/dev/null; then
	echo "$out" | python3 -c 'import json,sys
d = json.load(sys.stdin)
assert d["failed"] == 0 and len(d["rows"]) == 2, d'
else
	echo "$out" | grep -q '"rows": \['
fi
ok $? "--json parses, 2 rows"

# the MPI twin (bench/mpi/mpi-bench.c) must build warning-free and print
# the same rows (and its 4 mem rows); Open MPI on one node uses osc/sm here
cc=mpicc.openmpi
command -v "$cc" >/dev/null || cc=mpicc
if "$cc" -showme:version >/dev/null 2>&1; then
	"$cc" -O2 -Wall -Wextra -Werror -o "$T_TMP/mpi-bench" \
		"$top_srcdir/bench/mpi/mpi-bench.c" 2>&1 | sed 's/^/# /'
	out=$(run_bounded 60 mpirun -np 2 "$T_TMP/mpi-bench" --quick \
		-t lat,post,async,mem -s 8 -T 0 --timeout 45 2>&1)
	n=$(echo "$out" | grep -c ' ok$')
	[ "$n" -eq 19 ] && ! echo "$out" | grep -q FAIL
	ok $? "mpi-bench under Open MPI: $n of 19 rows checked their data"
	[ "$n" -eq 19 ] || diag "$out"
	# (Open MPI's osc/sm has no dynamic windows: pt2pt)
	out=$(run_bounded 60 mpirun -np 2 --mca osc pt2pt "$T_TMP/mpi-bench" \
		--quick -w dynamic \
		-t put,fop -s 8 --timeout 45 2>&1)
	n=$(echo "$out" | grep -c ' ok$')
	[ "$n" -eq 4 ] && ! echo "$out" | grep -q FAIL
	ok $? "mpi-bench -w dynamic under Open MPI: $n of 4 rows"
	[ "$n" -eq 4 ] || diag "$out"
else
	ok 0 "# SKIP no Open MPI mpicc"
	ok 0 "# SKIP no Open MPI mpicc"
fi
done_testing
