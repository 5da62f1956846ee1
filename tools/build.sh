#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/build.sh - build rmad from scratch in _build/ (warnings are
# errors).  Used by demo.sh and test.sh.
set -eu
cd "$(dirname "$0")/.."
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
rm -rf _build
mkdir _build
cd _build
../configure --enable-werror --prefix="$PWD/_inst" >/dev/null
make -j"$(nproc)" >/dev/null
echo "built in $PWD" >&2
