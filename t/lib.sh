# SPDX-License-Identifier: BSD-3-Clause
# t/lib.sh - shared by the shell tests: TAP output, bounded commands, a
# private run directory per test, and cleanup of every process and file
# a test started, whatever way it ends.

set -u

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${RMAD:=$top_builddir/rmad}"
: "${RMAD_RUN:=$top_builddir/rmad-run}"
export RMAD_AGENT_PATH="$RMAD"
export RMAD_CONF=/nonexistent

# Open MPI as root, on loopback, with more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_btl=self,tcp
export PMIX_MCA_gds=hash

# Tests on 2 shared cores: idle agents must sleep soon.
export RMAD_SPIN_US=${RMAD_SPIN_US:-2000}
export RMAD_CONNECT_TIMEOUT_MS=${RMAD_CONNECT_TIMEOUT_MS:-15000}
export RMAD_FABRIC_NODE=127.0.0.1

T_RUNDIR=$(mktemp -d /tmp/rmad-t.XXXXXX)
export RMAD_RUNDIR="$T_RUNDIR"
T_TMP="$T_RUNDIR/tmp"
mkdir -p "$T_TMP"
: >"$T_RUNDIR/.start"	# when this test began (the directory's own
			# time moves as files come and go)
T_N=0
T_FAIL=0
T_PIDS=()

plan() { echo "1..$1"; }
ok() {
	# ok CONDITION-STATUS DESCRIPTION
	local st=$1
	shift
	T_N=$((T_N + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $T_N - $*"
	else
		echo "not ok $T_N - $*"
		T_FAIL=$((T_FAIL + 1))
	fi
}
diag() { echo "# $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
bail() { echo "Bail out! $*"; exit 1; }
done_testing() { exit $((T_FAIL > 0)); }

# run_bounded SECONDS CMD...: a hang is a failure, never a stuck run
run_bounded() {
	local s=$1
	shift
	timeout --kill-after=5 "$s" "$@"
}

# start_agent SESSION LOGFILE [ARGS...]: an agent in the background
start_agent() {
	local session=$1 log=$2
	shift 2
	"$RMAD" --foreground --session "$session" "$@" >"$log" 2>&1 &
	T_PIDS+=($!)
	AGENT_PID=$!
}

# wait_for COND-COMMAND SECONDS
wait_for() {
	local cmd=$1 s=$2 i
	for ((i = 0; i < s * 20; i++)); do
		eval "$cmd" && return 0
		sleep 0.05
	done
	return 1
}

sock_of() { echo "$T_RUNDIR/$1/agent${2:+-$2}.sock"; }

# leftovers: what rmad left after the jobs of this test ended, one word
# each: a process started under this run directory, a session directory,
# a libfabric shm region made since the test began whose pid is gone.
# Empty when everything was cleaned up.  (Agents this test started with
# start_agent are in T_PIDS and not counted.)
# ranks_ok WHAT NP OUT RC [PATTERN]: one point, passed when the job's
# status RC is 0 and NP ranks printed a line matching PATTERN (default
# ": ok$"); the output goes to the diagnostics otherwise.
ranks_ok() {
	local what=$1 np=$2 out=$3 rc=$4 pat=${5:-": ok\$"} n
	n=$(echo "$out" | grep -c -- "$pat")
	[ "$rc" -eq 0 ] && [ "$n" -eq "$np" ]
	ok $? "$what: $n of $np ranks passed (rc $rc)"
	[ "$n" -eq "$np" ] || diag "$out"
}

# rogue_mesh SESSION PORTSEED MODE [AGENT-ARG...]: agents 0 and 1 of a
# keyless static mesh of three over tcp;ofi_rxm, with the AGENT-ARGs
# (node 2's agent is not started; pids in
# MESH_PIDS), and t/test_rogue MODE $T_TMP/job -t 50, plain libfabric
# bound to node 2's address, playing node 2 to both (ROGUE_PID, output
# in $T_TMP/rogue.out); then one point: both up, the rogue taken for
# node 2.  rogue_mesh_end stops them and checks that nothing is left.
rogue_mesh() {
	local sess=$1 seed=$2 mode=$3 base k mesh
	shift 3
	base=$((20000 + ($$ + seed) % 20000))
	mesh="127.0.0.1:$base,127.0.0.1:$((base + 1)),127.0.0.1:$((base + 2))"
	MESH_PIDS=()
	for k in 0 1; do
		start_agent "$sess" "$T_TMP/agent$k.log" --vnodes 3 \
			--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
			--set "mesh_self=$k" --set log_level=info \
			--set heartbeat_ms=100 --set heartbeat_timeout_ms=1500 \
			--set heartbeat_confirm_ms=0 --set heartbeat_idle_ms=0 "$@"
		MESH_PIDS[$k]=$AGENT_PID
	done
	"$top_builddir/t/test_rogue" "$mode" "$T_TMP/job" -t 50 -n 2 \
		-b $((base + 2)) "127.0.0.1:$base" "127.0.0.1:$((base + 1))" \
		>"$T_TMP/rogue.out" 2>&1 &
	ROGUE_PID=$!
	# up K N: agent K's log says that node N is up
	up() { grep -q ": node $2: up$" "$T_TMP/agent$1.log" 2>/dev/null; }
	wait_for 'up 0 1 && up 1 0 && up 0 2 && up 1 2' 20
	ok $? "nodes 0 and 1 up, and the rogue taken for node 2 by both"
}

rogue_mesh_end() {
	local sess=$1
	kill -TERM "${MESH_PIDS[@]}" 2>/dev/null
	wait_for '! kill -0 ${MESH_PIDS[0]} 2>/dev/null && ! kill -0 ${MESH_PIDS[1]} 2>/dev/null' 10
	"$RMAD" --session "$sess" --sweep >/dev/null 2>&1
	ok_clean
}

# ok_clean: one point, passed when nothing of rmad's is left (the
# embedded agents get 10 s to exit idle_exit_ms after their last client)
ok_clean() {
	local left
	wait_for '[ -z "$(leftovers)" ]' 10
	left=$(leftovers)
	[ -z "$left" ]
	ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
}

leftovers() {
	local f p out="" d
	for f in /proc/[0-9]*/environ; do
		grep -qs "RMAD_RUNDIR=$T_RUNDIR" "$f" 2>/dev/null || continue
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
		case " ${T_PIDS[*]} " in *" $p "*) continue ;; esac
		# only rmad's own: agents and rmad-run, not this shell's helpers
		grep -qs -e rmad -e prog_ "/proc/$p/cmdline" &&
			out="$out process:$p"
	done
	for d in "$T_RUNDIR"/*/; do
		[ "$d" = "$T_TMP/" ] && continue
		[ -d "$d" ] && out="$out dir:$(basename "$d")"
	done
	for f in /dev/shm/[0-9]*:*; do
		[ -e "$f" ] && [ "$f" -nt "$T_RUNDIR/.start" ] || continue
		p=${f#/dev/shm/}
		p=${p%%:*}
		kill -0 "$p" 2>/dev/null || out="$out shm:${f#/dev/shm/}"
	done
	echo "${out# }"
}

t_cleanup() {
	local p
	for p in "${T_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${T_PIDS[@]}"; do
		for ((i = 0; i < 50; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	# agents started by clients (embedded) or left by rmad-run
	pkill -KILL -f -- "$T_RUNDIR" 2>/dev/null
	for f in /proc/[0-9]*/environ; do
		if grep -qs "RMAD_RUNDIR=$T_RUNDIR" "$f" 2>/dev/null; then
			p=${f#/proc/}
			p=${p%/environ}
			[ "$p" != "$$" ] && kill -KILL "$p" 2>/dev/null
		fi
	done
	# reap them: a zombie still answers kill -0
	for p in "${T_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	# libfabric shm regions (/dev/shm/PID:...) of agents killed above:
	# made since this test began, by a process of ours that is gone (not
	# another user's: t/rmad-run.sh checks that agents leave those, and
	# another test may be at it)
	for f in /dev/shm/[0-9]*:*; do
		[ -e "$f" ] && [ -O "$f" ] && [ "$f" -nt "$T_RUNDIR/.start" ] ||
			continue
		p=${f#/dev/shm/}
		p=${p%%:*}
		kill -0 "$p" 2>/dev/null || rm -f "$f"
	done
	# T_KEEP=DIR: a failed test's logs stay, under DIR, for a post-mortem
	if [ -n "${T_KEEP:-}" ] && [ "$T_FAIL" -gt 0 ]; then
		mkdir -p "$T_KEEP" &&
			cp -r "$T_TMP" "$T_KEEP/$(basename "$0" .sh).$$" 2>/dev/null
	fi
	rm -rf "$T_RUNDIR"
}
trap t_cleanup EXIT
