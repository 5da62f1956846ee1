#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tcache.sh - strided ops to another node through the agents' type cache
# (t/prog_tcache.c): put, accumulate, get_accumulate and get with six
# derived target types (one of them a struct of ints and doubles), each
# checked byte for byte against the same op done in place; each type sent to the target's agent once with the
# default cache, and again at every first use of a round when a cache
# of 2 slots is cycled through by the 6 types (eviction, then a miss
# that the origin's agent handles by sending the type again).  Over shm
# and tcp;ofi_rxm, and on a created window.  Then two indexed types of
# 3000 and 2500 blocks, whose definitions travel in several messages:
# sent once each, or at every use when type_cache_bytes holds only one.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
plan 7
pt="$top_builddir/t/prog_tcache"
run() {
	local what=$1 mode=$2 out rc
	shift 2
	out=$(run_bounded 120 "$RMAD_RUN" -q --vnodes 2 "$@" -np 2 "$pt" \
		"$mode" 2>&1)
	rc=$?
	ranks_ok "$what" 2 "$out" $rc
	echo "$out" | grep "types sent" | sed 's/^/# /'
}
run "shm, default cache: each type sent once" cached --provider shm
run "tcp;ofi_rxm, default cache" cached --provider 'tcp;ofi_rxm'
RMAD_TYPE_CACHE_ENTRIES=2 run "shm, 2 cache entries for 6 types: evicted, sent again" \
	evict --provider shm
RMAD_T_FLAVOR=create RMAD_TYPE_CACHE_ENTRIES=2 run \
	"created windows, tcp;ofi_rxm, 2 cache entries" evict \
	--provider 'tcp;ofi_rxm'
run "tcp;ofi_rxm, two types of 48 and 40 KB (definitions in pieces), cached" \
	big --provider 'tcp;ofi_rxm'
RMAD_TYPE_CACHE_BYTES=64k run \
	"shm, the same with type_cache_bytes = 64k: each evicts the other" \
	bigevict --provider shm
ok_clean
done_testing
