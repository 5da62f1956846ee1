#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# params-docs.sh - every key the agent knows is documented.
#
# etc/rmad.conf and the KEYS section of rmad.conf(5) are generated from
# the parameter table, but they are checked-in text and can go stale.
# Asking the built agent for its key names (rmad --show-config=names)
# tests what actually ships rather than what the table says, and also
# catches documented keys the agent no longer has.
#
# Environment: RMAD, the agent binary (default ./rmad); srcdir, the
# source tree (set by automake; default .).

RMAD=${RMAD:-./rmad}
srcdir=${srcdir:-.}
conf=$srcdir/etc/rmad.conf
man=$srcdir/man/rmad.conf.5

if [ ! -x "$RMAD" ]; then
	echo "1..0 # SKIP no agent binary at $RMAD"
	exit 0
fi

names=$("$RMAD" --show-config=names 2>/dev/null)
rc=$?
if [ $rc -ne 0 ] || [ -z "$names" ]; then
	echo "1..1"
	echo "not ok 1 - $RMAD --show-config=names failed (exit $rc)"
	exit 1
fi
mapfile -t keys <<<"$names"
n=${#keys[@]}

echo "1..$((2 * n + 3))"
t=0
fail=0
# ok STATUS DESCRIPTION: STATUS is an exit code, 0 passes.
ok() {
	t=$((t + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $t - $2"
	else
		echo "not ok $t - $2"
		fail=1
	fi
}

bad=0
for k in "${keys[@]}"; do
	[[ $k =~ ^[a-z][a-z0-9_]*$ ]] || bad=1
done
ok $bad "$RMAD --show-config=names printed $n well-formed key names"

for k in "${keys[@]}"; do
	# commented-out default line or an active setting
	grep -Eq "^#? *${k} *=" "$conf" 2>/dev/null
	ok $? "$k in etc/rmad.conf"
	grep -Fxq ".B $k" "$man" 2>/dev/null
	ok $? "$k in man/rmad.conf.5"
done

known=$(printf '%s\n' "${keys[@]}")

extra=$(sed -nE 's/^# ([a-z][a-z0-9_]*) = .*/\1/p' "$conf" 2>/dev/null |
	grep -Fvx -e "$known")
[ -z "$extra" ]
ok $? "no unknown keys in etc/rmad.conf${extra:+: ${extra//$'\n'/ }}"

extra=$(sed -n '/^\.\\" BEGIN KEYS/,/^\.\\" END KEYS/s/^\.B //p' \
	"$man" 2>/dev/null | grep -Fvx -e "$known")
[ -z "$extra" ]
ok $? "no unknown keys in man/rmad.conf.5${extra:+: ${extra//$'\n'/ }}"

exit $fail
