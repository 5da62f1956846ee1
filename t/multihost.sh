#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# multihost.sh - three hosts, as far as one machine can make them: each
# a network namespace with its own network stack, addresses and host
# name, on two networks (a bridge each): "ctl", which Open MPI's mpirun
# reaches its daemons over, and "fab", the fabric the agents talk over.
# On each host one agent of a static mesh, as systemd starts them: no
# vnodes and no mesh_self, so each finds its node by its own address,
# and a key file, so packets are tagged.  mpirun launches the jobs
# through its rsh path (an ip-netns-exec wrapper in place of ssh), so
# every host has its own daemon and PMIx server, as on a cluster.
#  - the three come up to each other, and a job of 6 ranks, 2 a host,
#    works (t/prog_rma);
#  - the fabric is cut between host B and the others in the middle of a
#    job of 3 ranks (t/prog_nodekill), while mpirun still reaches it:
#    a partition, not a death.  Nothing proves a death (no connection
#    is refused: nothing answers at all), so hosts A and C declare node 1
#    dead after heartbeat_confirm_ms (20 s), and every call that waits
#    on it returns RMAD_ERR_PROC_FAILED then (within 45 s);
#    B declares A and C dead, and its rank finishes;
#  - the link comes back: the agents shake hands anew and a job of 6
#    works again;
#  - the agents stop on SIGTERM and leave nothing behind.
# Needs root, ip(8) and network namespaces; skipped otherwise.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
command -v ip >/dev/null && command -v unshare >/dev/null ||
	skip_all "no ip(8) or unshare(1)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root for network namespaces"
net=10.237
ip -4 addr 2>/dev/null | grep -q "inet $net\." &&
	skip_all "$net.0.0/16 is in use on this host"
sfx=$(($$ % 10000))
hosts=(hA hB hC)
ns() { echo "rmh$sfx$1"; }	# the namespace of host $1 (hA: rmh123hA)
net_down() {
	local h
	for h in "${hosts[@]}"; do
		ip netns del "$(ns "$h")" 2>/dev/null
	done
	ip link del "rmc$sfx" 2>/dev/null
	ip link del "rmf$sfx" 2>/dev/null
}
trap 't_cleanup; net_down' EXIT
# the two bridges, and each host on both: eth0 on ctl (10.237.1.K), eth1
# on fab (10.237.2.K), K = 2, 3, 4; the machine itself is .1 on ctl
net_up() {
	local k=2 h n b
	ip link add "rmc$sfx" type bridge || return 1
	ip link add "rmf$sfx" type bridge || return 1
	ip addr add "$net.1.1/24" dev "rmc$sfx" || return 1
	ip link set "rmc$sfx" up && ip link set "rmf$sfx" up || return 1
	for h in "${hosts[@]}"; do
		n=$(ns "$h")
		ip netns add "$n" || return 1
		for b in c f; do
			ip link add "rm$b$sfx$h" type veth peer name \
				"eth$([ $b = c ] && echo 0 || echo 1)" \
				netns "$n" || return 1
			ip link set "rm$b$sfx$h" master "rm$b$sfx" up || return 1
		done
		ip -n "$n" addr add "$net.1.$k/24" dev eth0 &&
			ip -n "$n" addr add "$net.2.$k/24" dev eth1 &&
			ip -n "$n" link set lo up &&
			ip -n "$n" link set eth0 up &&
			ip -n "$n" link set eth1 up || return 1
		mkdir -m 700 "$T_TMP/$h" || return 1
		k=$((k + 1))
	done
}
net_up || skip_all "cannot make network namespaces, veth pairs and bridges here"
plan 34

port=7300
mesh="$net.2.2:$port,$net.2.3:$port,$net.2.4:$port"
key=$T_TMP/mesh.key
printf '0123456789abcdef0123456789ABCDEF\n' >"$key"
chmod 600 "$key"
# mpirun's ssh: "rsh HOST COMMAND..." runs COMMAND on that host, under
# its name and with its run directory
cat >"$T_TMP/rsh" <<EOF
#!/bin/bash
h=\$1
shift
exec ip netns exec "rmh$sfx\$h" unshare --uts bash -c \\
	"hostname \$h; export RMAD_RUNDIR=$T_TMP/\$h; \$*"
EOF
chmod +x "$T_TMP/rsh"

pids=()
# agent K [LOGSUFFIX]: the agent of host K (0: hA), as its unit starts it
agent() {
	local h=${hosts[$1]}
	RMAD_RUNDIR=$T_TMP/$h ip netns exec "$(ns "$h")" \
		env -u RMAD_FABRIC_NODE "$RMAD" --foreground --session mh \
		--set "provider=tcp;ofi_rxm" --set "mesh=$mesh" \
		--set "mesh_key_file=$key" --set log_level=info \
		>"$T_TMP/$h${2:-}.log" 2>&1 &
	pids[$1]=$!
	T_PIDS+=($!)
}
# ups K N [LOGSUFFIX]: host K's agent has seen N nodes come up
ups() {
	[ "$(grep -c ': node [0-9]*: up$' "$T_TMP/${hosts[$1]}${3:-}.log")" -ge "$2" ]
}
# job SLOTS PROG ARGS...: a job on the three hosts, SLOTS ranks each
job() {
	local s=$1
	shift
	RMAD_SESSION=mh run_bounded 120 mpirun -np $((3 * s)) \
		--host "hA:$s,hB:$s,hC:$s" --mca plm_rsh_agent "$T_TMP/rsh" \
		--mca oob_tcp_if_include "$net.1.0/24" \
		-x RMAD_SESSION -x RMAD_CONF -x RMAD_SPIN_US "$@" 2>&1
}

for k in 0 1 2; do
	agent $k
done
wait_for 'ups 0 2 && ups 1 2 && ups 2 2' 30
st=$?
ok $st "three agents on three hosts: up to each other"
[ $st -eq 0 ] || diag "$(cat "$T_TMP"/h?.log)"
for k in 0 1 2; do
	grep -q "mesh: node $k of 3 over tcp;ofi_rxm, packets tagged" \
		"$T_TMP/${hosts[$k]}.log"
	ok $? "host ${hosts[$k]} found itself in the mesh by its address: node $k, tagged"
done

out=$(job 2 "$top_builddir/t/prog_rma")
ranks_ok "a job of 6 ranks, 2 on each host" 6 "$out" $? ": ok (node"
for r in 0 3 5; do
	echo "$out" | grep -q "^rank $r: ok (node $((r / 2)) of 3"
	ok $? "rank $r ran on host ${hosts[$((r / 2))]}, node $((r / 2))"
done

# the partition: host B's fabric link goes down under a job of 3 ranks
# (rank r on node r), mpirun's network stays
d=$T_TMP/nk
mkdir -p "$d"
job 1 "$top_builddir/t/prog_nodekill" "$d" 45 >"$d/out" &
jpid=$!
if wait_for "[ -e '$d/ready' ]" 60; then
	ip link set "rmf${sfx}hB" down
	: >"$d/stopped"
fi
wait_for "[ -e '$d/done' ]" 120
wait_for 'grep -q "node 0: declared dead" "$T_TMP/hB.log" &&
	grep -q "node 2: declared dead" "$T_TMP/hB.log"' 30
ok $? "host B, cut off, declares nodes 0 and 2 dead"
: >"$d/killed"
wait "$jpid"
rc=$?
want=(
	"rank 1: ok: holds rank 2's lock"
	"rank 0: ok: lock rank 1 while node 1 lives"
	"rank 0: ok: flush to the silent node 1 fails"
	"rank 0: ok: unlock of the dead node's rank fails"
	"rank 0: ok: lock rank 2, held by the dead node's rank 1"
	"rank 0: ok: lock_all, put to rank 2, while node 1 is silent"
	"rank 0: ok: an epoch on the live node 2"
	"rank 0: ok: lazy lock_all that never reached node 1: all syncs"
	"rank 0: ok: w3 (lazy locks): flush_all covers the dead node"
	"rank 0: ok: w3 (lazy locks): a new lock_all on rank 2 works"
	"rank 0: ok: w4 (every member): flush_all covers the dead node"
	"rank 0: ok: w4 (every member): then a lock epoch on rank 2"
	"rank 0: ok: a new epoch on the dead node fails"
	"rank 0: ok: ping rank 1 fails"
	"rank 0: ok: ping rank 2 works"
	"rank 0: ok: the job's barrier fails"
	"rank 0: ok: a fence on a window of the dead node fails"
	"rank 2: ok: rank 0's put reached us after node 1 died"
)
for w in "${want[@]}"; do
	line=$(grep -F "$w" "$d/out" | head -n 1)
	[ -n "$line" ]
	ok $? "partition: ${line:-$w: missing}"
done
! grep -q "FAIL" "$d/out" && [ "$rc" -eq 0 ]
st=$?
ok $st "partition: the job ends, every rank with status 0 ($rc)"
[ $st -eq 0 ] || diag "$(cat "$d/out")"
for h in hA hC; do
	grep -q "node 1: declared dead" "$T_TMP/$h.log"
	ok $? "host $h declared node 1 dead"
done

# the link back: everyone up again (A and C each saw 2 ups before, B too)
ip link set "rmf${sfx}hB" up
wait_for 'ups 0 3 && ups 1 4 && ups 2 3' 60
st=$?
ok $st "the link back: the agents shake hands anew, all up"
[ $st -eq 0 ] || diag "$(grep -h 'node [0-9]*:' "$T_TMP"/h?.log)"
out=$(job 2 "$top_builddir/t/prog_rma")
ranks_ok "after the partition, a job of 6 ranks on the three hosts" 6 "$out" $? ": ok (node"

for k in 0 1 2; do
	kill -TERM "${pids[$k]}"
done
wait_for '! kill -0 ${pids[0]} 2>/dev/null && ! kill -0 ${pids[1]} 2>/dev/null && ! kill -0 ${pids[2]} 2>/dev/null' 10
ok $? "the three agents stop on SIGTERM"
left=$(leftovers)
for h in "${hosts[@]}"; do
	[ -e "$T_TMP/$h/mh" ] && left="$left dir:$h/mh"
done
[ -z "$left" ]
ok $? "nothing of rmad's left: no process, run directory or shm region ($left)"
done_testing
