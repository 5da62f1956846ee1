#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/release.sh - the release stage of tools/test.sh:
#  1. `make distcheck`: the tarball builds, runs its tests, installs and
#     uninstalls out of tree (the tests here are the unit tests and the
#     docs checks: the whole suite ran in _build already, and a second
#     run would double the stage's time; RELEASE_FULL=1 runs it all);
#  2. the Debian packages: dpkg-buildpackage -us -uc -b from the
#     tarball, and lintian with no error;
#  3. the packages installed on this machine: rmad --version, the
#     agent started as rmad.service starts it (by systemctl where
#     systemd runs, by hand where it does not) and a job of examples/
#     hello built from the installed -dev package run against it, the
#     README demo (rmad-run --vnodes 2) from the installed files; then
#     the packages purged, and nothing of them left behind.
# Step 3 needs root and runs only where no rmad package was installed
# before (it would remove it).  Results are TAP points in
# _build-release/t/release.trs, counted with the rest by tools/test.sh.
#
# usage: tools/release.sh; needs _build (tools/build.sh).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/_build-release
rm -rf "$out"
mkdir -p "$out/t"
trs=$out/t/release.trs
log=$out/t/release.log
: >"$trs"
: >"$log"
rc=0

point() {	# point PASS|FAIL|SKIP TEXT
	echo ":test-result: $1" >>"$trs"
	echo "$1: release: $2" | tee -a "$log"
	[ "$1" = FAIL ] && rc=1
	return 0
}
step() {	# step LOGNAME COMMAND...: run, output to $out/LOGNAME.log
	local name=$1
	shift
	"$@" >"$out/$name.log" 2>&1
	local r=$?
	[ $r -eq 0 ] || { echo "---- $name (rc $r), last lines:"; tail -n 30 "$out/$name.log"; } >>"$log"
	return $r
}

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top/_build/config.h")
[ -n "$version" ] || { point FAIL "no _build/config.h: run tools/build.sh first"; exit 1; }
tarball=$top/_build/rmad-$version.tar.gz

# 1. distcheck
quick="t/test_params t/test_hints t/test_ring t/test_pool t/test_dtype"
quick="$quick t/test_accword t/test_counter t/test_log t/test_sbuf t/test_types t/test_dtree"
quick="$quick t/params-docs.sh t/docs-version.sh t/layering.sh t/exports.sh"
if [ "${RELEASE_FULL:-0}" = 1 ]; then
	dc=(make -C "$top/_build" distcheck)
else
	dc=(make -C "$top/_build" distcheck "TESTS=$quick")
fi
if step distcheck timeout --kill-after=30 1200 "${dc[@]}" && [ -f "$tarball" ]; then
	point PASS "make distcheck: $(basename "$tarball") builds, tests, installs out of tree"
else
	point FAIL "make distcheck (see $out/distcheck.log)"
	echo "$(grep -c ':test-result: PASS' "$trs") passed, $(grep -c ':test-result: FAIL' "$trs") failed" >&2
	exit 1
fi

# 2. the Debian packages, from the tarball
if ! command -v dpkg-buildpackage >/dev/null || ! command -v lintian >/dev/null; then
	point SKIP "no dpkg-buildpackage or lintian (apt-get install devscripts debhelper lintian)"
	exit $rc
fi
src=$out/deb/rmad-$version
mkdir -p "$out/deb"
tar -C "$out/deb" -xzf "$tarball"
if (cd "$src" && step dpkg-buildpackage env DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	timeout --kill-after=30 1200 dpkg-buildpackage -us -uc -b); then
	point PASS "dpkg-buildpackage -us -uc -b: $(cd "$out/deb" && ls ./*.deb | tr '\n' ' ')"
else
	point FAIL "dpkg-buildpackage (see $out/dpkg-buildpackage.log)"
	exit 1
fi
changes=$(ls "$out"/deb/rmad_"${version}"_*.changes | head -1)
step lintian lintian --no-tag-display-limit "$changes"
if grep -q '^E:' "$out/lintian.log"; then
	point FAIL "lintian errors: $(grep -c '^E:' "$out/lintian.log") (see $out/lintian.log)"
	grep '^E:' "$out/lintian.log" >>"$log"
else
	point PASS "lintian: no error ($(grep -c '^W:' "$out/lintian.log") warnings)"
fi
grep '^[EW]:' "$out/lintian.log" >>"$log"

# 3. installed, used, removed
pkgs=(rmad librmad0 librmad-dev librmad-mpi0 librmad-mpich0)
if [ "$(id -u)" -ne 0 ]; then
	point SKIP "the package test installs packages: it needs root"
	exit $rc
fi
for p in "${pkgs[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		point SKIP "$p is installed already: the package test would remove it"
		exit $rc
	fi
done
debs=()
for p in "${pkgs[@]}"; do debs+=("$(ls "$out"/deb/"${p}"_"${version}"_*.deb)"); done
export DEBIAN_FRONTEND=noninteractive
if step install apt-get install -y --no-install-recommends "${debs[@]}"; then
	point PASS "the packages install (apt-get install ./*.deb)"
else
	point FAIL "apt-get install of the packages (see $out/install.log)"
	exit 1
fi
# shellcheck disable=SC2046
files_before=$(dpkg -L "${pkgs[@]}" 2>/dev/null | sort -u)

if /usr/bin/rmad --version 2>&1 | grep -qw "$version"; then
	point PASS "the installed rmad --version says $version"
else
	point FAIL "the installed rmad --version: $(/usr/bin/rmad --version 2>&1)"
fi
[ -f /etc/rmad/rmad.conf ] && dpkg-query -W -f='${Conffiles}' rmad | grep -q /etc/rmad/rmad.conf &&
	point PASS "/etc/rmad/rmad.conf is a conffile" ||
	point FAIL "/etc/rmad/rmad.conf is not a conffile of rmad"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
work=$out/work
mkdir -p "$work"
ex=/usr/share/doc/librmad-dev/examples
# shellcheck disable=SC2046
if step cc-hello cc -o "$work/hello" "$ex/hello.c" $(pkg-config --cflags --libs rmad); then
	point PASS "examples/hello builds from the installed -dev package (pkg-config rmad)"
else
	point FAIL "examples/hello from $ex with pkg-config rmad (see $out/cc-hello.log)"
fi

# the agent the way rmad.service starts it
session=default
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	how=systemctl
	systemctl daemon-reload
	step service-start systemctl start rmad.service
	agent_pid=$(systemctl show -p MainPID --value rmad.service)
else
	how="by hand (no systemd here)"
	mkdir -p /run/rmad
	/usr/bin/rmad --foreground --config /etc/rmad/rmad.conf --session $session \
		>"$out/agent.log" 2>&1 &
	agent_pid=$!
fi
for _ in $(seq 100); do
	/usr/bin/rmadctl -s $session status >/dev/null 2>&1 && break
	sleep 0.1
done
if [ -x "$work/hello" ] &&
	step job-hello timeout --kill-after=5 60 mpirun -np 2 --bind-to none \
		-x RMAD_SESSION=$session "$work/hello"; then
	point PASS "a 2-rank job of hello ran on the installed agent, started $how"
else
	point FAIL "hello on the installed agent, started $how (see $out/job-hello.log, $out/agent.log)"
fi
if [ "$how" = systemctl ]; then
	step service-stop systemctl stop rmad.service
else
	kill "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null
	/usr/bin/rmad --config /etc/rmad/rmad.conf --session $session --sweep >/dev/null 2>&1
	rmdir /run/rmad 2>/dev/null
fi
if step demo timeout --kill-after=5 120 /usr/bin/rmad-run --vnodes 2 -np 4 "$work/hello" &&
	grep -q . "$out/demo.log"; then
	point PASS "the demo from the installed files: rmad-run --vnodes 2 -np 4 hello"
else
	point FAIL "rmad-run --vnodes 2 -np 4 hello from the installed files (see $out/demo.log)"
fi

# removed: nothing of the packages is left
step purge apt-get purge -y "${pkgs[@]}"
left=
while read -r f; do
	[ -n "$f" ] || continue
	[ -d "$f" ] && continue		# shared directories (/usr/bin, ...)
	[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done <<<"$files_before"
[ -e /etc/rmad ] && left="$left /etc/rmad"
shm=$(find /dev/shm -maxdepth 1 -name 'rmad*' 2>/dev/null | tr '\n' ' ')
procs=$(pgrep -f '^/usr/bin/rmad( |$)' | tr '\n' ' ')
if [ -z "$left$shm$procs" ]; then
	point PASS "purged: no file, shared memory or agent process is left"
else
	point FAIL "left after purge: files:$left shm: $shm processes: $procs"
	[ -n "$procs" ] && pkill -f '^/usr/bin/rmad( |$)'
fi
echo "$(grep -c ':test-result: PASS' "$trs") passed, $(grep -c ':test-result: FAIL' "$trs") failed" >&2
exit $rc
