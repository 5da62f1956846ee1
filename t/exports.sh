#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# exports.sh - librmad exports exactly its documented functions: the
# dynamic symbols of the built library and the man/*.3 pages (aliases
# included) name the same set, and every name starts with rmad_.
# librmad-mpi, when built, exports MPI functions, each of them named in
# rmad-mpi(7), and librmad's own set (it carries the client), no more.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
lib="$top_builddir/.libs/librmad.so"
[ -e "$lib" ] || skip_all "no shared librmad built"
command -v nm >/dev/null || skip_all "no nm"
plan 5
nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDBRVi]$/ {print $3}' |
	sed 's/@.*//' | sort -u >"$T_TMP/exported"
for m in "$top_srcdir"/man/*.3; do
	basename "$m" .3
done | sort -u >"$T_TMP/documented"
extra=$(comm -23 "$T_TMP/exported" "$T_TMP/documented" | tr '\n' ' ')
ok "$([ -z "$extra" ]; echo $?)" "every exported symbol has a man page"
[ -z "$extra" ] || diag "exported but undocumented: $extra"
missing=$(comm -13 "$T_TMP/exported" "$T_TMP/documented" | tr '\n' ' ')
ok "$([ -z "$missing" ]; echo $?)" "every man(3) page names an exported function"
[ -z "$missing" ] || diag "documented but not exported: $missing"
bad=$(grep -v '^rmad_' "$T_TMP/exported" | tr '\n' ' ')
ok "$([ -z "$bad" ]; echo $?)" "every exported name starts with rmad_"
[ -z "$bad" ] || diag "outside the rmad_ namespace: $bad"
mlib="$top_builddir/.libs/librmad-mpi.so"
if [ -e "$mlib" ]; then
	nm -D --defined-only "$mlib" | awk '$2 ~ /^[TWDBRVi]$/ {print $3}' |
		sed 's/@.*//' | sort -u >"$T_TMP/mexported"
	grep -v '^MPI_' "$T_TMP/mexported" >"$T_TMP/mrmad"
	bad=$(diff "$T_TMP/mrmad" "$T_TMP/exported" | grep '^[<>]' |
		tr '\n' ' ')
	ok "$([ -z "$bad" ]; echo $?)" "librmad-mpi exports MPI functions and librmad's, no more"
	[ -z "$bad" ] || diag "librmad-mpi vs librmad (< only in librmad-mpi): $bad"
	bad=""
	while read -r f; do
		grep -q "^\.B $f\b\|\b$f\b" "$top_srcdir/man/rmad-mpi.7" ||
			bad="$bad $f"
	done < <(grep '^MPI_' "$T_TMP/mexported")
	ok "$([ -z "$bad" ]; echo $?)" "rmad-mpi(7) names every function librmad-mpi intercepts"
	[ -z "$bad" ] || diag "not in rmad-mpi(7):$bad"
else
	ok 0 "# SKIP librmad-mpi not built"
	ok 0 "# SKIP librmad-mpi not built"
fi
done_testing
