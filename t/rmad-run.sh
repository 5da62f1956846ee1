#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rmad-run.sh - the launcher: the demo output, bad arguments, and agents
# stopped (and their files removed) whether the job succeeds, fails or
# times out; a session name is never a pattern; killed agents leave
# nothing in /dev/shm; agents stop by themselves when rmad-run is killed
# with SIGKILL (--owner-pid).  Placement: with virtual nodes and no
# core to spare, each node's ranks go to its own cores, its agent's
# first (rmad --print-vnode-cores, an Open MPI rankfile that is removed
# after), where every rank of a node has a core; otherwise they float.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 21
# the agents themselves, not mpirun, whose command line holds theirs
count_agents() { pgrep -f -- "^[^ ]*/rmad --foreground --session $1( |\$)" | wc -l; }

out=$(run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session rr1 -np 4 \
	"$top_builddir/examples/hello" 2>&1)
ok $? "rmad-run --vnodes 2 -np 4 hello"
n=$(echo "$out" | grep -Ec "rank [0-3] of 4: node [01] of 2 .*agent pid [0-9]+ on core -?[0-9]+")
[ "$n" -eq 4 ]
ok $? "each rank prints its node, agent and core ($n)"
[ "$n" -eq 4 ] || diag "$out"
[ "$(count_agents rr1)" -eq 0 ] && [ ! -e "$T_RUNDIR/rr1" ]
ok $? "agents gone and run directory removed after success"

run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session rr2 -np 2 false >/dev/null 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ]
ok $? "a failing job's status comes back ($rc)"
[ "$(count_agents rr2)" -eq 0 ] && [ ! -e "$T_RUNDIR/rr2" ]
ok $? "agents stopped after a failed job"

run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session rr3 --timeout 2 -np 2 \
	sleep 30 >/dev/null 2>&1
rc=$?
[ $rc -eq 124 ]
ok $? "--timeout stops a hung job with status 124 ($rc)"
[ "$(count_agents rr3)" -eq 0 ]
ok $? "agents stopped after a timed-out job"

# a session name is not a pattern: cleaning up "rrx." leaves "rrxy" alone
start_agent rrxy "$T_TMP/rrxy.log"
wait_for "[ -S '$(sock_of rrxy)' ]" 10 || bail "agent rrxy did not start"
run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --session 'rrx.' -np 1 true \
	>"$T_TMP/rrx.out" 2>&1
ok $? "rmad-run --session 'rrx.' ran ($(tail -n 3 "$T_TMP/rrx.out"))"
sleep 0.5
kill -0 "$AGENT_PID" 2>/dev/null && [ -S "$(sock_of rrxy)" ]
ok $? "and left the agent of session rrxy alone"

# agents killed with SIGKILL under a job: rmad-run removes their shm
# regions, and nothing of them is left in /dev/shm or the process table
cat >"$T_TMP/killer.sh" <<EOF
#!/bin/bash
for f in "$T_RUNDIR"/rr5/agent-*.pid; do read -r p <"\$f"; echo "\$p"; done >"$T_TMP/killed"
for p in \$(cat "$T_TMP/killed"); do ls /dev/shm | grep -c "^\$p:"; done >"$T_TMP/regions"
kill -KILL \$(cat "$T_TMP/killed")
EOF
chmod +x "$T_TMP/killer.sh"
run_bounded 90 "$RMAD_RUN" -q --vnodes 2 --provider shm --session rr5 -np 1 \
	"$T_TMP/killer.sh" >"$T_TMP/rr5.out" 2>&1
n=$(awk '$1 > 0' "$T_TMP/regions" 2>/dev/null | wc -l)
[ "$(wc -l <"$T_TMP/killed" 2>/dev/null)" = 2 ] && [ "$n" -eq 2 ]
ok $? "two shm agents, each with a region in /dev/shm, killed with SIGKILL ($n)"
[ "$n" -eq 2 ] || diag "$(cat "$T_TMP/rr5.out")"
left=""
for p in $(cat "$T_TMP/killed" 2>/dev/null); do
	ls /dev/shm | grep -q "^$p:" && left="$left region:$p"
	kill -0 "$p" 2>/dev/null && left="$left process:$p"
done
[ -z "$left" ]
ok $? "rmad-run left no region and no process of them ($left)"
[ ! -e "$T_RUNDIR/rr5" ]
ok $? "and removed their run directory"

# an agent at start sweeps the regions of its user's dead processes, and
# leaves a live process's and another user's alone
true & dead=$!
wait $dead
: >"/dev/shm/$dead:0:0"
: >"/dev/shm/$$:0:0"
: >"/dev/shm/$dead:1:0"
chown nobody "/dev/shm/$dead:1:0" 2>/dev/null
start_agent rrsw "$T_TMP/rrsw.log"
wait_for "[ -S '$(sock_of rrsw)' ]" 10 || bail "agent rrsw did not start"
mine=$(stat -c %u "/dev/shm/$dead:1:0")
[ ! -e "/dev/shm/$dead:0:0" ] && [ -e "/dev/shm/$$:0:0" ] &&
	{ [ "$mine" = "$(id -u)" ] || [ -e "/dev/shm/$dead:1:0" ]; }
ok $? "an agent at start removes its user's dead pids' regions only"
rm -f "/dev/shm/$dead:0:0" "/dev/shm/$$:0:0" "/dev/shm/$dead:1:0"

# rmad-run killed outright: its agents see their owner gone and stop
"$RMAD_RUN" -q --vnodes 2 --session rr6 -np 2 sleep 60 >/dev/null 2>&1 &
rr=$!
wait_for '[ "$(count_agents rr6)" -eq 2 ] && [ -S "$T_RUNDIR/rr6/agent-1.sock" ]' 30
kill -KILL "$rr"
wait_for '[ "$(count_agents rr6)" -eq 0 ]' 15
n=$(count_agents rr6)
[ "$n" -eq 0 ]
ok $? "agents of a SIGKILLed rmad-run stop by themselves ($n left)"
# the application's mpirun is the killed script's to stop: do it here
pkill -f -- "RMAD_SESSION=rr6" 2>/dev/null
wait_for '! pgrep -f -- "RMAD_SESSION=rr6" >/dev/null' 15
pkill -KILL -f -- "--session rr6( |\$)" 2>/dev/null
rm -rf "$T_RUNDIR/rr6"
wait "$rr" 2>/dev/null

# placement.  cpus_of LIST: "1,0" -> "0 1" (sorted, one per word)
cpus_of() { tr ',' '\n' <<<"$1" | sort -n | tr '\n' ' ' | sed 's/ $//'; }
# the CPUs each rank of a job may run on, "rank R: LIST" per rank
placement() {
	mkdir -p "$T_TMP/rf"
	TMPDIR=$T_TMP/rf run_bounded 90 "$RMAD_RUN" -q --vnodes 2 -np "$1" \
		sh -c 'echo "rank $OMPI_COMM_WORLD_RANK: $(taskset -cp $$ | sed "s/.*: //")"' 2>&1
}
# expand "0-2,5" to "0 1 2 5"
expand() {
	local r out=()
	for r in ${1//,/ }; do
		case "$r" in
		*-*) out+=($(seq "${r%-*}" "${r#*-}")) ;;
		*) out+=("$r") ;;
		esac
	done
	echo "${out[*]}"
}
read -r -a all <<<"$("$RMAD" --print-vnode-cores 1)"
ncores=$(tr ',' ' ' <<<"${all[0]:-}" | wc -w)
read -r -a g <<<"$("$RMAD" --print-vnode-cores 2)"
good=1
[ "${#g[@]}" -eq 2 ] || good=0
for v in 0 1; do
	[ "${g[v]%%,*}" = "$((ncores - 1 - v % ncores))" ] || good=0
done
[ "$ncores" -lt 2 ] || [ "$(cpus_of "${g[0]},${g[1]}")" = "$(seq -s ' ' 0 $((ncores - 1)))" ] || good=0
ok $((1 - good)) "--print-vnode-cores 2: two nodes, each its agent's core first, every core once (${g[*]}; $ncores cores)"
out=$("$RMAD" --set core=0 --print-vnode-cores 2)
[ -z "$out" ]
ok $? "--print-vnode-cores prints nothing under a fixed core ('$out')"

spare=$("$RMAD" --print-rank-cpus 2)
ncpus=$(expand "$(taskset -cp $$ | sed 's/.*: //')" | wc -w)
if [ -n "$spare" ] && [ "$(expand "$spare" | wc -w)" -ge 2 ]; then
	ok 0 "# SKIP this host has cores to spare ($spare): ranks keep off the agents' cores"
	ok 0 "# SKIP this host has cores to spare"
	ok 0 "# SKIP this host has cores to spare"
elif [ "$ncpus" -ne "$ncores" ]; then
	ok 0 "# SKIP $ncpus CPUs on $ncores cores: logical core indices are not CPU numbers"
	ok 0 "# SKIP $ncpus CPUs on $ncores cores"
	ok 0 "# SKIP $ncpus CPUs on $ncores cores"
else
	out=$(placement 2)
	good=1
	for r in 0 1; do
		got=$(echo "$out" | sed -n "s/^rank $r: //p")
		[ "$(expand "$got")" = "$(cpus_of "${g[r]}")" ] || good=0
	done
	ok $((1 - good)) "2 vnodes, 2 ranks, no core to spare: each rank on its node's cores (${g[*]})"
	[ "$good" = 1 ] || diag "$out"
	out=$(placement 4)
	n=$(echo "$out" | grep -c "^rank [0-3]: ")
	if [ "$(tr ',' ' ' <<<"${g[0]}" | wc -w)" -lt 2 ]; then
		f=0
		for r in 0 1 2 3; do
			got=$(echo "$out" | sed -n "s/^rank $r: //p")
			[ "$(expand "$got" | wc -w)" -eq "$ncpus" ] && f=$((f + 1))
		done
		[ "$n" -eq 4 ] && [ "$f" -eq 4 ]
		ok $? "2 vnodes, 4 ranks on one core each: the ranks float ($f of $n)"
		[ "$f" -eq 4 ] || diag "$out"
	else
		ok 0 "# SKIP nodes of several cores: 4 ranks fit them"
	fi
	left=$(ls "$T_TMP/rf" 2>/dev/null | wc -l)
	[ "$left" -eq 0 ]
	ok $? "the rankfile is removed after the job ($left left)"
fi

run_bounded 10 "$RMAD_RUN" -np 0 true >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "bad arguments exit with status 2"
RMAD_AGENT_PATH=/nonexistent run_bounded 10 "$RMAD_RUN" -np 1 true >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "a missing agent binary is reported"
done_testing
