#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/deps.sh - install the Debian 12 packages rmad builds and tests
# with.  Does nothing when they are all present; needs root otherwise.
set -eu
pkgs=(build-essential autoconf automake libtool pkg-config
	libpmix-dev libfabric-dev libfabric-bin libhwloc-dev libevent-dev
	liburcu-dev openmpi-bin libopenmpi-dev procps groff-base iproute2 util-linux
	clang libfuzzer-14-dev debhelper lintian mpich libmpich-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
