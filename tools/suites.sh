#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/suites.sh - the conformance stage of tools/test.sh: MPICH's RMA
# test suite (test/mpi/rma) and OSU's one-sided benchmarks, from
# ../shared/suites beside the checkout (they are test inputs, never
# copied here), under `rmad-run --mpi` in strict mode, on one node and
# on 2 vnodes over tcp;ofi_rxm.  OSU's acc, fop and cas latency runs
# validate their results (-c), the others have no validation.
#
# A run fails on every test that plain Open MPI passes (the suite's
# baseline-ompi-default.tsv) and rmad does not, but one known loss, said
# as a SKIP point (judge: atomic_rmw_gacc on 2 vnodes, too slow); each
# run also prints its counts and what it passes beyond Open MPI.  Results are TAP points in
# _build-suites/t/suites.trs, counted with the rest by tools/test.sh.
# Without ../shared/suites the stage is skipped, with a message.
#
# mpichabi: both suites built with mpicc.mpich, for librmad-mpich, under
# rmad-run --mpi with MPICH's mpiexec, on one node (suites_mpich_abi).
#
# usage: tools/suites.sh [mpich|osu|mpichabi]... (default: all three);
# needs _build (tools/build.sh) and installs it into _build/_inst.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
suites=$(cd "$top/.." && pwd)/shared/suites
out=$top/_build-suites
which=("$@")
[ ${#which[@]} -gt 0 ] || which=(mpich osu mpichabi)
# mpichabi is suites_mpich_abi's, after the Open MPI runs
mpichabi=0
rest=()
for s in "${which[@]}"; do
	if [ "$s" = mpichabi ]; then mpichabi=1; else rest+=("$s"); fi
done
which=("${rest[@]}")
mkdir -p "$out/t"
trs=$out/t/suites.trs
: >"$trs"
log=$out/t/suites.log
: >"$log"

point() {	# point PASS|FAIL|SKIP TEXT
	echo ":test-result: $1" >>"$trs"
	echo "$1: suites: $2" | tee -a "$log"
}

if [ ! -d "$suites/mpich-rma" ] || [ ! -d "$suites/osu" ]; then
	echo "suites: $suites not found: the conformance stage is skipped" >&2
	point SKIP "no ../shared/suites beside the checkout"
	exit 0
fi
make -C "$top/_build" install >/dev/null 2>&1 || {
	point FAIL "make install into _build/_inst failed"
	exit 1
}
run=$top/_build/_inst/bin/rmad-run
export RMAD_MPI_STRICT=1
# librmad-mpi is built for Open MPI: its compiler, whatever mpicc names
export MPICC=${MPICC_SUITES:-mpicc.openmpi}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
# the agents of a run may not be found by another's clients
export RMAD_RUNDIR=$out/run
mkdir -p "$RMAD_RUNDIR"
chmod 700 "$RMAD_RUNDIR"
rc=0

# keys FILE: the PASS entries of a results file, one "name np args" a line
keys() {
	awk -F'\t' 'NR > 1 && $4 == "PASS" { print $1 " " $2 " " $3 }' "$1" |
		sort -u
}

# judge SUITE PLACE DIR: points for one run against Open MPI's baseline
judge() {
	local suite=$1 place=$2 dir=$3 base lost extra n p
	base=$suites/$suite/baseline-ompi-default.tsv
	if [ ! -s "$dir/results.tsv" ]; then
		point FAIL "$suite, $place: no results (see $dir)"
		rc=1
		return
	fi
	n=$(($(wc -l <"$dir/results.tsv") - 1))
	p=$(keys "$dir/results.tsv" | wc -l)
	lost=$(comm -23 <(keys "$base") <(keys "$dir/results.tsv"))
	# what is known to be lost, said as such (a SKIP point naming it):
	# on 2 vnodes atomic_rmw_gacc's 600,000 get_accumulate + flush
	# round trips through two agents on 2 shared cores run past the
	# 60 s limit (56 s at f7ba849 on a quiet machine, 4.7 s under
	# plain Open MPI's shared memory): the per-op cost of issue 66
	known=""
	[ "$suite/$place" = mpich-rma/2vnodes ] &&
		known=$(echo "$lost" | grep -x 'atomic_rmw_gacc 3 -')
	if [ -n "$known" ]; then
		point SKIP "$suite, $place: known loss, too slow: $known"
		lost=$(echo "$lost" | grep -vx 'atomic_rmw_gacc 3 -')
	fi
	extra=$(comm -13 <(keys "$base") <(keys "$dir/results.tsv") | wc -l)
	echo "suites: $suite, $place: $p of $n pass ($(keys "$base" | wc -l) under plain Open MPI; $extra beyond it)" |
		tee -a "$log"
	if [ -n "$lost" ]; then
		point FAIL "$suite, $place: loses what Open MPI passes: $(echo "$lost" | tr '\n' ';')"
		awk -F'\t' 'NR > 1 && $4 != "PASS" && $4 != "SKIP" { print "  " $1 " " $3 ": " $4 " " $6 }' \
			"$dir/results.tsv" | head -30 | tee -a "$log"
		rc=1
	else
		point PASS "$suite, $place: nothing ${known:+else }lost against Open MPI ($p of $n pass)"
	fi
}

# suites_mpich_abi: the MPICH-family build, librmad-mpich, judged by the
# same suites built with mpicc.mpich and run under rmad-run --mpi (which
# picks mpiexec.mpich from the programs' libmpich), strict, on one node
# only (CI time: plain MPICH's ranks busy-poll, 1789 s for its baseline).
# MPICH's RMA suite runs only the programs with an entry that plain
# MPICH passes (baseline-mpich.tsv: 167 of 200), every entry of theirs,
# with a 30 s cap; a run fails on each of those 167 that rmad does not
# pass.  OSU runs every combination with 20 iterations and sizes to
# 1 KiB, and must pass what every MPI passes here (Open MPI's baseline:
# all but the fork's fop/cas allocate crash, which MPICH 4.0.2 shares).
suites_mpich_abi() {
	local dir=$out/mpichabi-1node base only lost n p t0 launch
	base=$suites/mpich-rma/baseline-mpich.tsv
	if ! command -v mpicc.mpich >/dev/null 2>&1 ||
	   ! command -v mpiexec.mpich >/dev/null 2>&1 ||
	   [ ! -r "$top/_build/_inst/lib/librmad-mpich.so" ]; then
		point SKIP "mpichabi: no MPICH (mpicc.mpich, mpiexec.mpich) or no librmad-mpich"
		return
	fi
	t0=$(date +%s)
	mkdir -p "$dir"
	launch="$run -q --mpi --launcher mpich -np"
	only=$(keys "$base" | awk '{ print $1 }' | sort -u | paste -sd'|')
	MPICC=mpicc.mpich LAUNCH="$launch" OUTDIR="$dir/rma" \
		ONLY="^($only)\$" TIMEOUT_CAP=30 \
		bash "$suites/mpich-rma/run.sh" >"$dir/rma.log" 2>&1
	if [ ! -s "$dir/rma/results.tsv" ]; then
		point FAIL "mpich-rma, MPICH, 1node: no results (see $dir)"
		rc=1
	else
		n=$(keys "$base" | wc -l)
		p=$(comm -12 <(keys "$base") <(keys "$dir/rma/results.tsv") |
			wc -l)
		lost=$(comm -23 <(keys "$base") <(keys "$dir/rma/results.tsv"))
		echo "suites: mpich-rma, MPICH, 1node: $(keys "$dir/rma/results.tsv" | wc -l) pass; $p of the $n that plain MPICH passes" |
			tee -a "$log"
		if [ -n "$lost" ]; then
			point FAIL "mpich-rma, MPICH, 1node: loses what plain MPICH passes: $(echo "$lost" | tr '\n' ';')"
			rc=1
		else
			point PASS "mpich-rma, MPICH, 1node: nothing lost against plain MPICH ($p of $n)"
		fi
	fi
	MPICC=mpicc.mpich LAUNCH="$launch" OUTDIR="$dir/osu" MATRIX=static \
		OSU_ARGS="-m 1:1024 -i 20 -x 2" \
		bash "$suites/osu/run.sh" >"$dir/osu.log" 2>&1
	base=$suites/osu/baseline-ompi-default.tsv
	if [ ! -s "$dir/osu/results.tsv" ]; then
		point FAIL "osu, MPICH, 1node: no results (see $dir)"
		rc=1
	else
		p=$(keys "$dir/osu/results.tsv" | wc -l)
		lost=$(comm -23 <(keys "$base") <(keys "$dir/osu/results.tsv"))
		echo "suites: osu, MPICH, 1node: $p of 150 pass" | tee -a "$log"
		if [ -n "$lost" ]; then
			point FAIL "osu, MPICH, 1node: fails what runs elsewhere: $(echo "$lost" | tr '\n' ';')"
			rc=1
		else
			point PASS "osu, MPICH, 1node: $p of 150 run"
		fi
	fi
	echo "suites: mpichabi, 1node: $(($(date +%s) - t0)) s" | tee -a "$log"
}
# OSU's benchmarks: those run without validation, and those with (-c)
osu_a="osu_put_latency osu_get_latency osu_get_acc_latency osu_put_bw osu_get_bw osu_put_bibw"
osu_c="osu_acc_latency osu_fop_latency osu_cas_latency"

for s in "${which[@]}"; do
	for place in 1node 2vnodes; do
		launch="$run -q --mpi -np"
		[ "$place" = 2vnodes ] &&
			launch="$run -q --mpi --vnodes 2 --provider tcp;ofi_rxm -np"
		dir=$out/$s-$place
		t0=$(date +%s)
		case $s in
		mpich)
			# a hang is a failure at 60 s, as the harness has it
			LAUNCH="$launch" OUTDIR="$dir" TIMEOUT_CAP=60 \
				bash "$suites/mpich-rma/run.sh" >"$dir.log" 2>&1
			judge mpich-rma "$place" "$dir"
			;;
		osu)
			# -c (validation) where OSU has it: acc, fop, cas.
			# BENCHES: each run builds and probes (--help, a
			# launch each) only the benchmarks it runs
			LAUNCH="$launch" OUTDIR="$dir-a" \
				BENCHES="$osu_a" ONLY="^(${osu_a// /|}) " \
				bash "$suites/osu/run.sh" >"$dir.log" 2>&1
			LAUNCH="$launch" OUTDIR="$dir-c" \
				BENCHES="$osu_c" ONLY="^(${osu_c// /|}) " \
				OSU_ARGS="-m 1:4096 -i 100 -x 10 -c" \
				bash "$suites/osu/run.sh" >>"$dir.log" 2>&1
			mkdir -p "$dir"
			{ cat "$dir-a/results.tsv"
			  tail -n +2 "$dir-c/results.tsv"; } >"$dir/results.tsv"
			judge osu "$place" "$dir"
			# OSU's verdict is its exit status; a row whose
			# validation failed is a failure here
			bad=$(grep -l '^[0-9].*[[:space:]]failed' \
				"$dir-c"/logs/osu_*.log 2>/dev/null |
				sed 's|.*/||' | tr '\n' ' ')
			nv=$(grep -l '^[0-9].*[[:space:]]passed' \
				"$dir-c"/logs/osu_*.log 2>/dev/null | wc -l)
			if [ -n "$bad" ] || [ "$nv" -eq 0 ]; then
				point FAIL "osu, $place: validation failed in: ${bad:-(no run validated)}"
				rc=1
			else
				point PASS "osu, $place: $nv runs validated (-c), none failed"
			fi
			;;
		*) echo "suites: unknown suite '$s'" >&2; exit 2 ;;
		esac
		echo "suites: $s, $place: $(($(date +%s) - t0)) s" | tee -a "$log"
	done
done
[ "$mpichabi" = 1 ] && suites_mpich_abi
rm -rf "$RMAD_RUNDIR"
exit $rc
