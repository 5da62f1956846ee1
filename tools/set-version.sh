#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/set-version.sh VERSION [DATE] - make a release: write VERSION
# into configure.ac's AC_INIT (the one place the build takes it from:
# config.h, rmad --version, the pkg-config files) and into the footer
# of every man page, dated DATE (default today).  t/docs-version.sh
# fails when a man page, NEWS or debian/changelog does not say the
# version configure.ac says.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 VERSION [YYYY-MM-DD]" >&2; exit 2; }
v=$1
d=${2:-$(date -u +%F)}
cd "$(dirname "$0")/.."
sed -i "s/^AC_INIT(\[rmad\], \[[^]]*\]/AC_INIT([rmad], [$v]/" configure.ac
for m in man/*.[1-8]; do
	grep -q '^\.TH' "$m" || continue	# a .so link
	sed -i -E "s/^(\.TH [^ ]+ [0-9]) [0-9-]+ \"rmad [^\"]*\"/\1 $d \"rmad $v\"/" "$m"
done
grep -q "^## $v" NEWS || echo "NEWS has no section for $v: write one" >&2
head -1 debian/changelog | grep -q "($v)" ||
	echo "debian/changelog does not start with $v: add an entry (dch -v $v)" >&2
grep -n AC_INIT configure.ac
