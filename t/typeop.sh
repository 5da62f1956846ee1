#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# typeop.sh - the (datatype, op, call) table of t/mpi/mpi_typeop.c (every
# predefined type x every predefined op in MPI_Accumulate,
# MPI_Get_accumulate and MPI_Fetch_and_op, and every type in
# MPI_Compare_and_swap) under plain Open MPI and under librmad-mpi on one
# node and on 2 vnodes over shm and tcp;ofi_rxm: rmad accepts what Open
# MPI accepts, with the same bytes, and refuses what it refuses, with the
# same error class.
#
# Open MPI's own table is taken with osc pt2pt, which serves every pair
# but the MINLOC/MAXLOC of DOUBLE_INT, LONG_INT, SHORT_INT and
# LONG_DOUBLE_INT (it aborts: "datatype is currently unsupported"):
# those come from osc sm, one type a run.  Its MPI_Fetch_and_op checks
# no pair and crashes on one its MPI_Accumulate refuses, so the program
# (--guard-fop) does not run those there, and rmad must refuse them with
# the accumulate's class.  Two differences are rmad's, and expected:
#   X_cas  a compare_and_swap on a 32-byte type (LONG_DOUBLE_INT,
#          C_LONG_DOUBLE_COMPLEX): its two operands do not fit an op
#          element's inline area; rmad refuses it with MPI_ERR_TYPE;
#   SHORT_INT's compare_and_swap: Open MPI compares the packed compare
#          value with the unpacked target (the padding in between), so
#          equal values never swap; rmad compares the elements.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

lib="$top_builddir/.libs/librmad-mpi.so"
prog="$top_builddir/t/mpi/mpi_typeop"
[ -r "$lib" ] && [ -x "$prog" ] ||
	skip_all "librmad-mpi not built (configure found no Open MPI)"
export RMAD_MPI_LIB="$lib"
export LD_LIBRARY_PATH="$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
plan 5

expected="C_LONG_DOUBLE_COMPLEX/-/cas LONG_DOUBLE_INT/-/cas SHORT_INT/-/cas"
ref="$T_TMP/ref.txt"

# table FILE: a run's lines, one per case, keyed TYPE/OP/CALL
table() { grep -v '^END$' "$1" | sed 's/ fop unsafe / fop refused /' |
	awk '{ k = $1 "/" $2 "/" $3; $1 = $2 = $3 = ""; sub(/^ +/, "");
	       print k "\t" $0 }' | sort -t "$(printf '\t')" -k1,1 -u; }

# plain Open MPI
nopair="DOUBLE_INT:*:M*LOC LONG_INT:*:M*LOC SHORT_INT:*:M*LOC
	LONG_DOUBLE_INT:*:M*LOC"
# shellcheck disable=SC2086
run_bounded 120 mpirun --mca osc pt2pt -np 2 "$prog" --guard-fop $nopair \
	>"$T_TMP/pt2pt.out" 2>"$T_TMP/pt2pt.err"
: >"$T_TMP/sm.out"
for t in DOUBLE_INT LONG_INT SHORT_INT LONG_DOUBLE_INT; do
	run_bounded 60 mpirun --mca osc sm -np 2 "$prog" --guard-fop \
		--only=$t 2>>"$T_TMP/pt2pt.err" | grep 'M[AI][XN]LOC' \
		>>"$T_TMP/sm.out"
done
cat "$T_TMP/pt2pt.out" "$T_TMP/sm.out" >"$T_TMP/ompi.out"
table "$T_TMP/ompi.out" >"$ref"
n=$(wc -l <"$ref")
grep -q '^END$' "$T_TMP/pt2pt.out" && [ "$n" -gt 2000 ] &&
	[ "$(wc -l <"$T_TMP/sm.out")" -eq 24 ]
ok $? "plain Open MPI's table: $n cases"
[ "$n" -gt 2000 ] || sed 's/^/# /' "$T_TMP/pt2pt.err" | tail -20

# compare WHAT FILE: rmad's table against Open MPI's
compare() {
	local what=$1 got="$T_TMP/$2.tab" diffs
	table "$T_TMP/$2.out" >"$got"
	diffs=$(join -t "$(printf '\t')" -a 1 -e MISSING -o 0,1.2,2.2 \
		"$ref" "$got" | awk -F'\t' '$2 != $3 { print $1 }' |
		tr '\n' ' ' | sed 's/ $//')
	[ "$diffs" = "$expected" ] && grep -q '^END$' "$T_TMP/$2.out"
	ok $? "$what: the table matches Open MPI's but for the expected ($diffs)"
	if [ "$diffs" != "$expected" ]; then
		join -t "$(printf '\t')" -a 1 -e MISSING -o 0,1.2,2.2 "$ref" \
			"$got" | awk -F'\t' '$2 != $3 { print "# " $1 ": Open MPI " $2 "; rmad " $3 }' | head -40
		tail -5 "$T_TMP/$2.err" | sed 's/^/# /'
	fi
}

export RMAD_MPI_STRICT=1
run_bounded 180 "$RMAD_RUN" -q --mpi -np 2 "$prog" >"$T_TMP/r1.out" \
	2>"$T_TMP/r1.err"
compare "rmad-run --mpi, 1 node" r1
run_bounded 180 "$RMAD_RUN" -q --mpi --vnodes 2 --provider shm -np 2 \
	"$prog" >"$T_TMP/r2.out" 2>"$T_TMP/r2.err"
compare "rmad-run --mpi, 2 vnodes over shm" r2
run_bounded 180 "$RMAD_RUN" -q --mpi --vnodes 2 --provider 'tcp;ofi_rxm' \
	-np 2 "$prog" >"$T_TMP/r3.out" 2>"$T_TMP/r3.err"
compare "rmad-run --mpi, 2 vnodes over tcp;ofi_rxm" r3

# the refusals are MPI_ERR_OP for a pair, MPI_ERR_TYPE for a type
grep -q $'^CHAR/SUM/fop\tok ' "$T_TMP/r3.tab" &&
	grep -q $'^WCHAR/SUM/fop\trefused class=10$' "$T_TMP/r3.tab" &&
	grep -q $'^LOGICAL/BAND/acc\trefused class=10$' "$T_TMP/r3.tab"
ok $? "MPI_CHAR takes SUM in fetch_and_op; WCHAR SUM and LOGICAL BAND are MPI_ERR_OP"
done_testing
