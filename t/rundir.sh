#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rundir.sh - run-directory and agent identity rules: a client and an
# agent refuse a run directory that another user owns (squatted), that
# others may write, that others may read (private mode) or that is a
# symbolic link, with a message naming the owner and the mode; and a
# client refuses an agent that runs as another uid (SO_PEERCRED), saying
# so rather than "no agent".
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 9
prog="$top_builddir/t/prog_barrier"

# client RUNDIR: a singleton that would start its own agent there
client() {
	RMAD_RUNDIR=$1 RMAD_IDLE_EXIT_MS=200 RMAD_CONNECT_TIMEOUT_MS=5000 \
		run_bounded 30 "$prog" 2>&1
}
refused() {
	# refused WHAT OUTPUT RC PATTERN
	local what=$1 out=$2 rc=$3 pat=$4
	[ "$rc" -ne 0 ] && echo "$out" | grep -q -- "$pat" &&
		! echo "$out" | grep -q "no agent at"
	ok $? "$what"
	echo "$out" | grep -q -- "$pat" || diag "$out"
}

d=$T_TMP/mode777
mkdir -p "$d" && chmod 0777 "$d"
out=$(client "$d"); rc=$?
refused "a world-writable run directory is refused (rc $rc)" "$out" $rc \
	"has mode 0777"

d=$T_TMP/mode750
mkdir -p "$d" && chmod 0750 "$d"
out=$(client "$d"); rc=$?
refused "a group-readable run directory is refused in private mode" \
	"$out" $rc "must be 0700"

mkdir -p "$T_TMP/real" && chmod 0700 "$T_TMP/real"
ln -s "$T_TMP/real" "$T_TMP/link"
out=$(client "$T_TMP/link"); rc=$?
refused "a symbolic link is refused" "$out" $rc "symbolic link"

d=$T_TMP/mode777s
mkdir -p "$d" && chmod 0777 "$d"
out=$(RMAD_RUNDIR=$d run_bounded 20 "$RMAD" --foreground --session x 2>&1)
rc=$?
refused "the agent refuses it too (rc $rc)" "$out" $rc "has mode 0777"

if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	for i in 1 2 3 4 5; do
		ok 0 "# SKIP not root, or no user nobody: cannot make another user's directory"
	done
	done_testing
fi
nob=$(id -u nobody)

# squatted: another user made the directory first
d=$T_TMP/squat
mkdir -p "$d" && chmod 0700 "$d" && chown nobody "$d"
out=$(client "$d"); rc=$?
refused "a run directory owned by another user is refused" "$out" $rc \
	"owned by uid $nob"
out=$(RMAD_RUNDIR=$d run_bounded 20 "$RMAD" --foreground --session x 2>&1)
rc=$?
refused "by the agent too" "$out" $rc "owned by uid $nob"
# a squatted session directory inside our own run directory
d=$T_TMP/own
mkdir -p "$d/job" && chmod 0700 "$d" "$d/job" && chown nobody "$d/job"
out=$(RMAD_SESSION=job client "$d"); rc=$?
refused "a session directory owned by another user is refused" "$out" \
	$rc "owned by uid $nob"

# an agent of another uid listening in our own directory
d=$T_TMP/fake
mkdir -p "$d/job" && chmod 0700 "$d" "$d/job"
python3 - "$d/job/agent.sock" "$nob" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
os.setresgid(65534, 65534, 65534)
os.setresuid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
s.listen(8)          # SO_PEERCRED: the credentials at listen()
s.settimeout(20)
try:
    while True:
        c, _ = s.accept()
        time.sleep(1)
        c.close()
except Exception:
    pass
PY
T_PIDS+=($!)
wait_for "[ -S '$d/job/agent.sock' ]" 10
sleep 0.3
out=$(RMAD_SESSION=job RMAD_RUNDIR=$d RMAD_CONNECT_TIMEOUT_MS=5000 \
	run_bounded 30 "$prog" 2>&1)
rc=$?
refused "an agent running as another uid is refused (SO_PEERCRED)" "$out" \
	$rc "runs as uid $nob"
out=$(RMAD_SESSION=job RMAD_RUNDIR=$d RMAD_AGENT_USER=nobody \
	RMAD_CONNECT_TIMEOUT_MS=3000 run_bounded 30 "$prog" 2>&1)
! echo "$out" | grep -q "runs as uid"
ok $? "unless agent_user names it (then the handshake decides)"
done_testing
