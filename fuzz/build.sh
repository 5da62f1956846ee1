#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fuzz/build.sh OUTDIR - build the libFuzzer harnesses with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer: fuzz_client (socket
# messages and op elements from clients), fuzz_wire (packets from other
# agents) and fuzz_config (config files, --set and hints).  They link
# the agent's real modules (every agent/*.c but main.c) and shared/.
# Needs clang and its libFuzzer runtime (Debian: clang,
# libfuzzer-14-dev); a configured build tree for config.h
# (top_builddir, default ../_build).  Exit status 77: no clang/libFuzzer.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/_build/fuzz-bin}
bld=${top_builddir:-$top/_build}
CC=${FUZZ_CC:-}
if [ -z "$CC" ]; then
	for c in clang clang-14 clang-15 clang-16; do
		command -v "$c" >/dev/null && { CC=$c; break; }
	done
fi
[ -n "$CC" ] || { echo "fuzz/build.sh: no clang" >&2; exit 77; }
[ -f "$bld/config.h" ] || { echo "fuzz/build.sh: no $bld/config.h (configure first)" >&2; exit 1; }
echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	"$CC" -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null ||
	{ echo "fuzz/build.sh: $CC has no libFuzzer runtime" >&2; exit 77; }
mkdir -p "$out"
pkgs="pmix libfabric hwloc libevent_core libevent_pthreads liburcu"
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-fno-omit-frame-pointer -pthread -include $bld/config.h -D_LGPL_SOURCE
	-DRMAD_SYSCONFDIR=\"/etc\" -DRMAD_BINDIR=\"/usr/bin\"
	-I$top -I$top/proto -I$top/shared -I$top/agent
	$(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lrt"
shared=$(ls "$top"/shared/*.c)
agent=$(ls "$top"/agent/*.c | grep -v '/main\.c$')
# shellcheck disable=SC2086
"$CC" $cflags "$top/fuzz/fuzz_config.c" $shared $libs -o "$out/fuzz_config"
for h in fuzz_client fuzz_wire; do
	# shellcheck disable=SC2086
	"$CC" $cflags "$top/fuzz/$h.c" $agent $shared $libs -o "$out/$h"
done
echo "fuzz harnesses in $out" >&2
