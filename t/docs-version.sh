#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# docs-version.sh - the release number is the same everywhere it is
# said: configure.ac's AC_INIT (through config.h) is the one source;
# rmad --version, the pkg-config files, every man page's footer, NEWS
# and debian/changelog must agree (tools/set-version.sh writes them).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 5
v=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$v" ] || bail "no PACKAGE_VERSION in $top_builddir/config.h"

out=$("$top_builddir/rmad" --version 2>&1)
ok "$(echo "$out" | grep -qw -- "$v"; echo $?)" "rmad --version says $v"

bad=
for pc in "$top_builddir"/*.pc; do
	grep -qx "Version: $v" "$pc" || bad="$bad $(basename "$pc")"
done
ok "$([ -z "$bad" ]; echo $?)" "the pkg-config files say $v"
[ -z "$bad" ] || diag "not $v:$bad"

bad=
for m in "$top_srcdir"/man/*.[1-8]; do
	grep -q '^\.TH' "$m" || continue	# a .so link
	grep -q "^\.TH [^ ]* [0-9] [0-9-]* \"rmad $v\"" "$m" ||
		bad="$bad $(basename "$m")"
done
ok "$([ -z "$bad" ]; echo $?)" "every man page's footer says rmad $v"
[ -z "$bad" ] || diag "run tools/set-version.sh $v; these do not say it:$bad"

ok "$(grep -q "^## $v " "$top_srcdir/NEWS"; echo $?)" "NEWS has a section for $v"
ok "$(head -1 "$top_srcdir/debian/changelog" | grep -qF "rmad ($v)"; echo $?)" \
	"debian/changelog starts with $v"
done_testing
