/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad_shm.h - the shared-memory ABI between librmad and the node's agent.
 *
 * Every client has a segment of its own, and sees no other: a client can
 * map, read and write only its own submission ring, free list, op
 * elements, staging area and counters, and nothing of any other client
 * (another job's, another user's) is in any memory it can map.  The
 * agent maps all of them.  Two kinds of memfd:
 *
 *   the header       struct rmad_shm_hdr, one per agent: the layout and
 *                    agent_flags.  Sealed (F_SEAL_FUTURE_WRITE) after
 *                    the agent mapped it: clients can map it read-only
 *                    only, so no client can move what the agent
 *                    publishes there.
 *   a client segment one per attach, client_seg_size bytes, each region
 *                    on a 4 KiB boundary:
 *                      struct rmad_shm_client, then its ring
 *                      op elements: op_pool_size lend slots, then
 *                        client_op_pool reserved elements
 *                      staging area: staging_size bytes
 *
 * Everything is addressed by offsets and indices, never pointers.  The
 * agent maps client slot c's segment at c * client_stride in one
 * reservation, so the same accessors serve both sides: a client uses
 * its own segment as slot 0, and op element index i names element
 * i % per_client of slot i / per_client (a client's indices are below
 * per_client).  The agent trusts nothing a client can write: it reads
 * each op element once into its own memory before checking it, and an
 * op belongs to the client whose ring it came from, never to what the
 * element says.  The static_asserts at the end pin every size and
 * offset; changing any of them means bumping RMAD_ABI_VERSION.
 *
 * Op elements come from two levels: each client pops from its own list
 * (its reserved elements plus any the agent lent it), and only the agent
 * lends: the global pool is a budget of op_pool_size elements, private
 * to the agent, and lending one to client c hands c one of its own lend
 * slots, up to a fair share (want_ops).  The agent keeps the owner of
 * every element privately, so it can take back all a dead client held.
 * A window's op pool (the op_pool hint) is lend slots reserved to the
 * client (RMAD_OPC_OPS_RESERVE); they come back to the client's list
 * and the client sorts them out to their window.
 *
 * Synchronization:
 *   header          agent writes; clients read (read-only mapping)
 *   ring, sq_tail   client threads push (MPMC); the agent pops
 *   sq_head         agent publishes; clients read
 *   counters, futex agent advances and wakes; clients read and wait
 *   waiters,        clients write; the agent reads
 *   want_ops
 *   free list       client threads pop and push (tagged CAS); the agent
 *                   pushes, and pops only to reclaim lent elements
 *   op element      the client writes it, then pushes its index; the
 *                   agent reads it once, and writes only `status` (and
 *                   results in the staging area) until it completes
 */
#ifndef RMAD_SHM_H
#define RMAD_SHM_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define RMAD_SHM_VERSION	1	/* first byte of the segment */
#define RMAD_ABI_VERSION	16	/* client<->agent ABI (segment + ctl) */
#define RMAD_SHM_MAGIC		0x314d4853444d4152ULL	/* "RMADSHM1" */
#define RMAD_CACHELINE		64
#define RMAD_SHM_ALIGN		4096
#define RMAD_NIL		0xffffffffu	/* "no element" index */

/* hdr->agent_flags bits */
#define RMAD_AGENT_NEED_WAKEUP	0x1u	/* agent sleeps: kick the doorbell */
#define RMAD_AGENT_STOPPING	0x2u	/* agent is shutting down */
/* event-driven (it shares its core with clients): waiting clients sleep
 * at once instead of spinning for client_spin_us */
#define RMAD_AGENT_EVENT	0x4u

/*
 * A free list of pool elements: a Treiber stack whose head packs the
 * top index (low 32 bits) with a tag (high 32 bits) bumped on every
 * update, so a pop that raced with pop+push of the same element (ABA)
 * fails its compare-and-swap.
 */
struct rmad_shm_freelist {
	uint64_t head;			/* (tag << 32) | index, RMAD_NIL if empty */
	uint32_t count;			/* approximate: for stats only */
	uint32_t pad[13];
};
static_assert(sizeof(struct rmad_shm_freelist) == RMAD_CACHELINE,
	      "freelist is one cache line");

struct rmad_shm_hdr {
	/* 0: identity, written once by the agent before any client maps it */
	uint8_t version;		/* RMAD_SHM_VERSION */
	uint8_t pad0[3];
	uint32_t abi_version;		/* RMAD_ABI_VERSION */
	uint64_t magic;			/* RMAD_SHM_MAGIC */
	uint64_t seg_size;
	uint32_t max_clients;
	uint32_t ring_entries;		/* power of two */
	uint32_t op_pool_size;		/* global op elements */
	uint32_t client_op_pool;	/* op elements reserved per client */
	uint32_t pad1[2];
	uint64_t staging_size;		/* bytes per client */
	uint64_t client_seg_size;	/* bytes of one client segment */
	uint64_t client_stride;		/* client segments apart (agent) */
	uint64_t off_ops;		/* in a client segment */
	uint32_t per_client;		/* op elements of a client segment */
	uint32_t type_blob_max;		/* bytes of a derived type that ops
					 * may carry (RMAD_OPF_TTYPE); 0: the
					 * agent takes none */
	uint32_t type_chunk_max;	/* packed bytes of one chunk of such
					 * an op: an accumulate's type that
					 * mixes basic types is at most this */
	uint32_t pad3[3];
	uint64_t off_staging;		/* in a client segment */
	uint32_t node;			/* this agent's node index */
	uint32_t nnodes;		/* agents in the mesh */
	int32_t agent_pid;
	int32_t agent_core;		/* -1 when not pinned */
	/* 128: agent state that clients poll, on its own line */
	uint32_t agent_flags;		/* RMAD_AGENT_* */
	uint32_t sleep_epoch;		/* bumped before each NEED_WAKEUP: a
					 * client process rings once per
					 * epoch, not once per op */
	uint32_t pad2[14];
};

/* rmad_shm_client.state */
enum {
	RMAD_CLIENT_FREE = 0,
	RMAD_CLIENT_ACTIVE = 1,
	RMAD_CLIENT_DEAD = 2,
};

/* Completion counters: they only ever grow. */
enum {
	RMAD_CNT_LOCAL = 0,		/* ops complete at the origin */
	RMAD_CNT_REMOTE = 1,		/* ops complete at the target */
	RMAD_CNT_SYNC = 2,		/* sync tickets done (barrier, ping) */
	RMAD_CNT_FREED = 3,		/* op elements returned to the pools */
	RMAD_NCNT = 4,
};

/* One submission ring slot (Vyukov's bounded MPMC queue cell). */
struct rmad_ring_slot {
	uint32_t seq;			/* producer/consumer handshake */
	uint32_t op;			/* op element index */
};
static_assert(sizeof(struct rmad_ring_slot) == 8, "ring slot size");

/*
 * A client's block.  The agent writes identity and counters; producers
 * (any client thread) write sq_tail and the ring; the agent keeps its own
 * copy of the consumer head and only publishes it in sq_head.
 */
struct rmad_shm_client {
	/* line 0: identity, written by the agent at attach */
	uint32_t state;			/* RMAD_CLIENT_* */
	uint32_t gen;			/* bumped at every attach of the slot */
	int32_t pid;
	int32_t rank;
	uint32_t job;			/* agent's job slot */
	/* written by the client (librmad-mpi): the MPI windows this
	 * process made, served by rmad and by MPI (rmadctl status shows
	 * them; nothing else reads them) */
	uint32_t mpi_rmad;
	uint32_t mpi_fallback;
	uint32_t pad0[9];
	/* line 1: producers' reservation counter */
	uint32_t sq_tail;
	uint32_t pad1[15];
	/* line 2: consumer position, published by the agent */
	uint32_t sq_head;
	uint32_t pad2[15];
	/* line 3: completion counters, written by the agent */
	uint64_t cnt[RMAD_NCNT];
	uint32_t futex;			/* bumped to wake its sleepers */
	uint32_t want_ops;		/* client's list ran dry: refill it */
	uint32_t waiters[RMAD_NCNT];	/* >0: client threads sleep on futex
					 * for that counter */
	uint32_t pad3[2];
	/* line 4: this client's reserved op elements */
	struct rmad_shm_freelist op_free;
	/* line 5..: ring_entries x struct rmad_ring_slot */
	struct rmad_ring_slot ring[];
};

/* Op element opcodes. */
enum {
	RMAD_OPC_NOOP = 1,		/* completed by the agent at once */
	RMAD_OPC_PING = 2,		/* round trip to the agent of `target` */
	RMAD_OPC_BARRIER = 3,		/* job-wide barrier, `ticket` = epoch */
	/*
	 * RMA to a target on another node.  `win` is the window block,
	 * `ticket` the window key, `tdisp` in the target's disp units,
	 * `count` elements of `dtype`; the origin data is inline
	 * (RMAD_OPF_INLINE) or at address `origin_off` in the client, and
	 * results go to address `result_addr` in the client.
	 */
	RMAD_OPC_PUT = 4,
	RMAD_OPC_GET = 5,		/* result at origin_off */
	RMAD_OPC_ACC = 6,
	RMAD_OPC_GACC = 7,		/* also fetch_and_op */
	RMAD_OPC_CAS = 8,		/* inline: origin value, then compare */
	/*
	 * Synchronization.  LOCK and LOCK_ALL carry the lock type, the
	 * assert bits and the window's hints in `lock` (struct
	 * rmad_op_lock); the others use no field but `target`.
	 */
	RMAD_OPC_LOCK = 9,
	RMAD_OPC_UNLOCK = 10,		/* KEEP|SYNC: done when released */
	RMAD_OPC_LOCK_ALL = 11,
	RMAD_OPC_UNLOCK_ALL = 12,	/* KEEP|SYNC */
	RMAD_OPC_FLUSH = 13,		/* KEEP|SYNC, target or -1 for all */
	RMAD_OPC_FLUSH_LOCAL = 14,	/* KEEP|SYNC, target or -1 for all */
	/*
	 * A window's op pool (the op_pool hint), KEEP|SYNC.  OPS_RESERVE
	 * asks for `count` global elements reserved to this client: the
	 * agent writes the number granted (uint32_t, maybe 0) at the start
	 * of the client's staging area and the indices after it.  While
	 * reserved, an element always comes back to the client's list.
	 * OPS_RETURN gives back `count` reserved elements whose indices
	 * (uint32_t) the client wrote at the start of its staging area.
	 */
	RMAD_OPC_OPS_RESERVE = 15,
	RMAD_OPC_OPS_RETURN = 16,
	/* KEEP|SYNC: done when every per-target lock called so far in the
	 * epoch is granted (before a same-node lock is taken) */
	RMAD_OPC_LOCK_WAIT = 17,
	/*
	 * KEEP|SYNC, with `lock` as for LOCK_ALL (lock.assert: the fence's
	 * RMAD_MODE_* bits): complete the epoch's ops (unless NOPRECEDE),
	 * then the barrier over the window's members; done when it
	 * releases.  The origin is then in a fence epoch (none after
	 * NOSUCCEED).
	 */
	RMAD_OPC_FENCE = 18,
	/*
	 * Post/start/complete/wait with members on other nodes (client
	 * pscw.c).  START (lock.assert: RMAD_MODE_NOCHECK or 0) opens an
	 * access epoch: an op to a target waits in the agent for that
	 * target's post.  COMPLETE with `target` >= 0 completes the
	 * epoch's ops at that target, then sends it the complete notice;
	 * COMPLETE with target -1 (KEEP|SYNC, after those) ends the epoch.
	 * POST sends the post notice to origin `target`.
	 */
	RMAD_OPC_START = 19,
	RMAD_OPC_COMPLETE = 20,
	RMAD_OPC_POST = 21,
	RMAD_OPC_MAX
};

/* Op element flags. */
#define RMAD_OPF_KEEP	0x1		/* the client frees it after reading
					 * status; otherwise the agent does */
#define RMAD_OPF_SYNC	0x2		/* completion bumps RMAD_CNT_SYNC */
#define RMAD_OPF_INLINE	0x4		/* origin data is in `data` */
#define RMAD_OPF_STAGED	0x8		/* origin_off and result_addr are
					 * offsets in the client's staging
					 * area, not addresses (the agent
					 * cannot reach the client's memory) */
#define RMAD_OPF_TBYTES	0x10		/* `tdisp` is in bytes, not disp
					 * units (a piece of a derived type) */
#define RMAD_OPF_TTYPE	0x20		/* the target layout is a derived
					 * type (struct rmad_op_ttype in
					 * `data`); `count` instances of it,
					 * origin data packed */

#define RMAD_OP_INLINE	48

/* rmad_op_lock.acc_ordering: the accumulate_ordering hint was given */
#define RMAD_LOCKF_ORDER	0x100u

/* LOCK and LOCK_ALL: the lock, and the window's hints for the agent. */
struct rmad_op_lock {
	uint32_t type;			/* RMAD_LOCK_* */
	uint32_t assert;		/* RMAD_MODE_* */
	uint32_t target_pool;		/* hint; 0: rmad.conf's */
	uint32_t slots;			/* hint; 0: rmad.conf's win_slots */
	uint32_t acc_ordering;		/* RMAD_LOCKF_ORDER | the bits, or 0 */
	uint32_t pad;
};

/*
 * An operation element.  The client fills it, then pushes its index;
 * from then on only the agent writes it until completion (status, then
 * the counter with release ordering).
 */
struct rmad_op_elem {
	uint32_t next;			/* free-list / op-list link */
	uint16_t opcode;		/* RMAD_OPC_* */
	uint16_t flags;			/* RMAD_OPF_* */
	uint32_t owner;			/* client slot that posted it */
	uint32_t owner_gen;		/* that slot's generation */
	uint32_t win;
	int32_t target;			/* rank */
	uint32_t dtype;
	uint32_t op;
	uint64_t count;
	uint64_t tdisp;
	uint64_t origin_off;		/* staging offset, when not inline */
	uint64_t ticket;
	int32_t status;			/* 0 or RMAD_ERR_*, written by the agent */
	uint32_t inline_len;
	uint64_t result_addr;		/* GACC/CAS: result buffer */
	union {
		uint8_t data[RMAD_OP_INLINE];	/* inline origin data */
		struct rmad_op_lock lock;	/* LOCK, LOCK_ALL */
	};
};
/*
 * RMAD_OPF_TTYPE: where the target type's wire form (shared/dtree.h)
 * lies in the client's memory.  The agent reads it when it takes the op;
 * the client keeps it until the op completes.
 */
struct rmad_op_ttype {
	uint64_t blob_addr;
	uint32_t blob_len;		/* at most hdr.type_blob_max */
	uint32_t pad;
};
_Static_assert(sizeof(struct rmad_op_ttype) <= RMAD_OP_INLINE,
	       "rmad_op_ttype fits the inline area");
_Static_assert(sizeof(struct rmad_op_lock) <= RMAD_OP_INLINE,
	       "rmad_op_lock fits the inline area");

/*
 * The control page at the start of every rank's window memory (the
 * memfd; for a created window, the memfd holds the page alone): the lock word that same-node clients take with atomics and
 * that the agent takes for remote origins, and which clients hold it
 * shared, so the agent can release a dead client's locks.  The window
 * memory the application sees starts RMAD_WIN_CTL_SIZE bytes in.
 */
#define RMAD_WIN_CTL_SIZE	8192
/* the most members of a window on one node: max_clients's bound */
#define RMAD_WIN_MAX_LOCAL	4096
#define RMAD_LW_EXCL		0x80000000u	/* held exclusive */
#define RMAD_LW_SLEEPERS	0x40000000u	/* futex waiters: wake on release */
#define RMAD_LW_QUEUED		0x20000000u	/* agent queue: kick its doorbell */
#define RMAD_LW_VALUE		0x0000ffffu	/* shared holders, or the owner */
#define RMAD_LW_AGENT		0xffffu		/* exclusive owner: the agent */
#define RMAD_ACC_AGENT		0xffffffffu	/* acc_lock held by the agent */

/*
 * shared_by[slot]: where a same-node client stands with a shared lock, so
 * that its agent can undo a dead client's count.  INTENT is written
 * before the CAS that takes the count and RELEASING before the one that
 * gives it back: a client killed between the two leaves a byte that says
 * "maybe", and the agent settles it by recounting the holders.
 */
#define RMAD_SB_NONE		0
#define RMAD_SB_HELD		1
#define RMAD_SB_INTENT		2
#define RMAD_SB_RELEASING	3

/*
 * The fence barrier of a window whose members are all on one node, in
 * the control page of its lowest-ranked member: arrivals count up in
 * bar_count, the last one resets it and bumps bar_gen (a futex word,
 * woken only when bar_sleepers says someone sleeps on it);
 * bar_failed is set by the agent when a member dies, and wakes them.
 */
#define RMAD_WIN_CTL_NAME	128	/* RMAD_MAX_OBJECT_NAME */
#define RMAD_ACC_SLOTS		1024	/* client slots with an acc_small count */
struct rmad_win_ctl {
	uint32_t lock;			/* RMAD_LW_* */
	uint32_t bar_count;
	uint32_t bar_gen;
	uint32_t bar_failed;
	uint32_t bar_sleepers;		/* waiters on bar_gen's futex */
	/* post/start/complete/wait, this member's side (client/pscw.c) */
	uint32_t pscw_done;		/* completes received, as a target */
	uint32_t pscw_sleepers;		/* waiters on pscw_done's futex */
	uint32_t post_gen;		/* bumped when a bit of posted[] is set */
	uint32_t post_sleepers;		/* waiters on post_gen's futex */
	/* a created window: accumulates read, combine and write back the
	 * member's memory under this word (0 free, client slot + 1, or
	 * RMAD_ACC_AGENT), so that they stay atomic per element against
	 * each other whoever applies them */
	uint32_t acc_lock;
	/* bulk accumulates (shared/accword.h): set by the holder of
	 * acc_lock while it combines with plain loads and stores */
	uint32_t acc_big;
	/* bulk accumulates: 1 + the highest client slot that ever entered
	 * a small accumulate here (raised, never lowered, before that
	 * slot's acc_small count); a bulk scans the counts below it only.
	 * Written by members: read once, bounded by max_clients */
	uint32_t acc_small_hi;
	/* set by the agent while it waits for acc_lock, cleared once it
	 * holds it: a member about to take the word lets it in first, for
	 * a bounded while (client/peer.c), so that a client taking the
	 * word over and over does not starve the agent */
	uint32_t acc_want;
	/* set by the agent once this member's process died: its same-node
	 * peers fail every access and synchronization on it (their own
	 * loads and stores would find its memory still there) */
	uint32_t dead;
	uint32_t pad[2];
	/* bit i: the same-node member of local index i (its place among
	 * the node's members of the window, by rank) posted to us */
	uint32_t posted[RMAD_WIN_MAX_LOCAL / 32];
	uint8_t shared_by[RMAD_WIN_MAX_LOCAL];	/* RMAD_SB_*, by slot */
	/* rmad_win_set_name's name, for rmadctl: written by the member,
	 * read by its agent (copied, bounded, sanitized: any peer of the
	 * node can write this page) */
	char name[RMAD_WIN_CTL_NAME];
	/* bulk accumulates (shared/accword.h): how many threads of the
	 * same-node client of that slot apply a small accumulate with CPU
	 * atomics (slots from RMAD_ACC_SLOTS up take acc_lock instead) */
	uint16_t acc_small[RMAD_ACC_SLOTS];
	uint8_t pad2[RMAD_WIN_CTL_SIZE - 64 - RMAD_WIN_MAX_LOCAL / 8 -
		     RMAD_WIN_MAX_LOCAL - RMAD_WIN_CTL_NAME -
		     2 * RMAD_ACC_SLOTS];
};

/*
 * A dynamic window's member: its memfd holds, after the control page,
 * the regions it attached, sorted by address, which its agent writes
 * under a sequence lock (seq odd while it rewrites) for same-node peers
 * to check their accesses against.  A peer holds busy[its slot] while
 * it looks a region up and reaches into it; a detaching member waits
 * for every busy byte to clear after its agent took the region out, so
 * no access runs on memory it is about to free.
 */
#define RMAD_DYN_MAX		4096	/* regions attached per member */
struct rmad_dyn_region {
	uint64_t addr;
	uint64_t size;
};
struct rmad_win_dyn {
	uint32_t seq;
	uint32_t n;
	uint32_t pad[14];
	uint8_t busy[RMAD_WIN_MAX_LOCAL];
	struct rmad_dyn_region r[RMAD_DYN_MAX];
};
#define RMAD_WIN_DYN_SIZE	((sizeof(struct rmad_win_dyn) + 4095) / 4096 * 4096)

/*
 * The pieces the agent and the client both need to find their way.  seg
 * is the agent's reservation of every client segment, or a client's own
 * segment (its slot is then 0 and its indices are below per_client).
 */
static inline struct rmad_shm_client *
rmad_shm_client_at(void *seg, const struct rmad_shm_hdr *h, uint32_t i)
{
	return (struct rmad_shm_client *)((char *)seg +
					  (uint64_t)i * h->client_stride);
}

/* Client slot i's staging area (staging_size bytes). */
static inline uint8_t *
rmad_shm_staging_at(void *seg, const struct rmad_shm_hdr *h, uint32_t i)
{
	return (uint8_t *)seg + (uint64_t)i * h->client_stride +
	       h->off_staging;
}

/* Op element i: element i % per_client of client segment i / per_client. */
static inline struct rmad_op_elem *
rmad_shm_op_at(void *seg, const struct rmad_shm_hdr *h, uint32_t i)
{
	uint32_t c = i / h->per_client;

	return (struct rmad_op_elem *)((char *)seg +
				       (uint64_t)c * h->client_stride +
				       h->off_ops) + (i - c * h->per_client);
}

/* Op elements of one client segment: lend slots, then reserved ones. */
static inline uint32_t rmad_shm_nops_client(const struct rmad_shm_hdr *h)
{
	return h->per_client;
}

/* Op element indices of every client segment (the agent's view). */
static inline uint32_t rmad_shm_nops(const struct rmad_shm_hdr *h)
{
	return h->per_client * h->max_clients;
}

static_assert(offsetof(struct rmad_shm_hdr, version) == 0, "hdr.version");
static_assert(offsetof(struct rmad_shm_hdr, abi_version) == 4, "hdr.abi");
static_assert(offsetof(struct rmad_shm_hdr, magic) == 8, "hdr.magic");
static_assert(offsetof(struct rmad_shm_hdr, seg_size) == 16, "hdr.seg_size");
static_assert(offsetof(struct rmad_shm_hdr, staging_size) == 48, "hdr.stg");
static_assert(offsetof(struct rmad_shm_hdr, client_seg_size) == 56, "hdr.cs");
static_assert(offsetof(struct rmad_shm_hdr, per_client) == 80, "hdr.per");
static_assert(offsetof(struct rmad_shm_hdr, off_staging) == 104, "hdr.offs");
static_assert(offsetof(struct rmad_shm_hdr, node) == 112, "hdr.node");
static_assert(offsetof(struct rmad_shm_hdr, agent_flags) == 128, "hdr.flags");
static_assert(offsetof(struct rmad_shm_hdr, sleep_epoch) == 132, "hdr.epoch");
static_assert(sizeof(struct rmad_shm_hdr) == 192, "hdr size");
static_assert(offsetof(struct rmad_shm_client, sq_tail) == 64, "cl.tail");
static_assert(offsetof(struct rmad_shm_client, sq_head) == 128, "cl.head");
static_assert(offsetof(struct rmad_shm_client, cnt) == 192, "cl.cnt");
static_assert(offsetof(struct rmad_shm_client, futex) == 224, "cl.futex");
static_assert(offsetof(struct rmad_shm_client, waiters) == 232, "cl.wait");
static_assert(offsetof(struct rmad_shm_client, op_free) == 256, "cl.op_free");
static_assert(offsetof(struct rmad_shm_client, ring) == 320, "cl.ring");
static_assert(sizeof(struct rmad_shm_client) == 320, "client size");
static_assert(offsetof(struct rmad_op_elem, tdisp) == 40, "op.tdisp");
static_assert(offsetof(struct rmad_op_elem, status) == 64, "op.status");
static_assert(offsetof(struct rmad_op_elem, result_addr) == 72, "op.res");
static_assert(offsetof(struct rmad_op_elem, data) == 80, "op.data");
static_assert(sizeof(struct rmad_win_ctl) == RMAD_WIN_CTL_SIZE, "win ctl");
static_assert(sizeof(struct rmad_op_elem) == 128, "op size");

#endif /* RMAD_SHM_H */
