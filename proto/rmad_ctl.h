/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad_ctl.h - messages on the Unix socket between a client and its agent.
 *
 * The socket is SOCK_SEQPACKET, so each message arrives whole.  A client
 * sends REGISTER first; the agent answers with its view of the node and,
 * on success, the segment memfd and the doorbell eventfd (SCM_RIGHTS).
 * The socket then stays open: its hang-up is how each side learns the
 * other died.  rmadctl speaks the same socket with the CTL_* requests.
 */
#ifndef RMAD_CTL_H
#define RMAD_CTL_H

#include <assert.h>
#include <stdint.h>

#include "rmad_abi.h"			/* struct rmad_stats */

#define RMAD_CTL_MAGIC	0x4c54434461726dULL	/* "rmaDCTL" */

enum {
	RMAD_CTL_REGISTER = 1,		/* client -> agent */
	RMAD_CTL_REGISTER_REPLY = 2,	/* agent -> client, + 2 fds */
	RMAD_CTL_DEREGISTER = 3,	/* client -> agent, clean goodbye */
	RMAD_CTL_WIN_CREATE = 4,	/* client -> agent, + window memfd */
	RMAD_CTL_WIN_REPLY = 5,		/* agent -> client */
	RMAD_CTL_WIN_PEERS = 6,		/* agent -> client, + memfds */
	RMAD_CTL_WIN_FREE = 7,		/* client -> agent */
	RMAD_CTL_MEM_REG = 8,		/* client -> agent, + memfd */
	RMAD_CTL_MEM_DEREG = 9,		/* client -> agent */
	RMAD_CTL_STATUS = 10,		/* rmadctl -> agent */
	RMAD_CTL_STOP = 11,		/* rmadctl -> agent */
	RMAD_CTL_RELOAD = 12,		/* rmadctl -> agent */
	RMAD_CTL_TEXT_REPLY = 13,	/* agent -> rmadctl: text/JSON */
	RMAD_CTL_WIN_STATS = 14,	/* client -> agent */
	RMAD_CTL_WIN_STATS_REPLY = 15,	/* agent -> client */
	/*
	 * client -> agent, struct rmad_ctl_mem: can the agent read our
	 * memory in place?  addr holds size (a magic value) for it to read;
	 * the answer is a WIN_REPLY keyed by addr, status 0 or
	 * RMAD_ERR_PERM (then the client stages its buffers).
	 */
	RMAD_CTL_CMA_PROBE = 16,
	/* client -> agent, struct rmad_ctl_win_attach: a dynamic window's
	 * member attaches or detaches a region; answered by a WIN_REPLY
	 * keyed by the window */
	RMAD_CTL_WIN_ATTACH = 17,
	RMAD_CTL_WIN_DETACH = 18,
};

struct rmad_ctl_hdr {
	uint64_t magic;
	uint32_t abi_version;
	uint16_t type;
	uint16_t flags;
};
static_assert(sizeof(struct rmad_ctl_hdr) == 16, "ctl hdr");

#define RMAD_NSPACE_MAX	256

struct rmad_ctl_register {
	struct rmad_ctl_hdr h;
	int32_t pid;
	int32_t rank;			/* rank in the job */
	int32_t size;			/* ranks in the job */
	int32_t local_rank;
	int32_t local_size;		/* ranks of the job on this agent */
	uint32_t pad;
	char nspace[RMAD_NSPACE_MAX];	/* job identity (PMIx namespace) */
};
static_assert(sizeof(struct rmad_ctl_register) == 16 + 24 + 256, "reg");

struct rmad_ctl_register_reply {
	struct rmad_ctl_hdr h;
	int32_t status;			/* 0 or RMAD_ERR_* */
	uint32_t client;		/* slot in the segment */
	uint32_t gen;
	uint32_t node;
	uint32_t nnodes;
	int32_t agent_pid;
	int32_t agent_core;
	uint32_t pad;
	uint64_t seg_size;
	char hostname[64];
	char provider[32];
	char session[64];
	char message[128];		/* why, when status != 0 */
};
static_assert(sizeof(struct rmad_ctl_register_reply) ==
	      16 + 32 + 8 + 64 + 32 + 64 + 128, "reg reply");

#define RMAD_CTL_FLAG_JSON 0x1

/*
 * Window creation (collective over a group).  The key names the window
 * in the job: the group's hash and how many windows this group made
 * before, so every member computes the same key.  ranks[] lists the
 * group in group order, unless flags has RMAD_WINF_ALL.
 *
 * Every memfd on this socket, either way (the segment, window memory
 * and control pages, a shared window's, a window's table, MEM_REG's),
 * is sealed at its size (RMAD_MEMFD_SEALS, shared/util.h): the agent
 * refuses one that is not with RMAD_ERR_PERM.
 */
#define RMAD_WINF_ALL		0x1	/* group is every rank of the job */
#define RMAD_WINF_DYNAMIC	0x4	/* rmad_win_create_dynamic (with
					 * CREATE): size 0, disp_unit 1, the
					 * memfd holds the control page and
					 * struct rmad_win_dyn */
#define RMAD_WINF_SHARED	0x8	/* rmad_win_allocate_shared: no memfd;
					 * the agent makes one for the node's
					 * members, control pages first, then
					 * the memory in group order */
#define RMAD_WINF_NONCONTIG	0x10	/* with SHARED: each member's memory
					 * page-aligned */
#define RMAD_WINF_CREATE	0x2	/* rmad_win_create: the memfd is the
					 * control page only; the window is
					 * the client's memory at addr */
#define RMAD_WIN_GROUP_MAX	16384	/* ranks in one create message */

struct rmad_ctl_win_create {
	struct rmad_ctl_hdr h;
	uint64_t key;
	uint64_t size;			/* bytes of this rank's window */
	int32_t disp_unit;
	uint32_t flags;			/* RMAD_WINF_* */
	int32_t gsize;			/* members */
	int32_t grank;			/* this rank's index in the group */
	uint64_t addr;			/* RMAD_WINF_CREATE: the window */
	int32_t ranks[];		/* gsize job ranks, or none */
};
static_assert(sizeof(struct rmad_ctl_win_create) == 56, "win create");

struct rmad_ctl_win_reply {
	struct rmad_ctl_hdr h;
	uint64_t key;
	int32_t status;			/* 0 or RMAD_ERR_* */
	uint32_t block;			/* window block in the segment */
	int32_t nlocal;			/* members on this node (peers sent) */
	int32_t uniform;		/* every member has the same size/unit */
	uint64_t usize;			/* uniform: every member's size */
	int32_t udisp;			/* uniform: every member's unit */
	int32_t meta;			/* 1: the table's memfd comes along */
};
static_assert(sizeof(struct rmad_ctl_win_reply) == 56, "win reply");

/*
 * The window's table, once per node: a memfd of gsize entries sorted by
 * rank that the agent sends with WIN_REPLY when the window is not
 * "every rank, same size and unit".  Clients map it read-only to check
 * ranks and bounds at the origin.
 */
struct rmad_win_meta {
	int32_t rank;			/* job rank */
	int32_t disp_unit;
	uint64_t size;			/* bytes */
};
static_assert(sizeof(struct rmad_win_meta) == 16, "win meta");

/* Same-node members, up to 8 per message, each with its memfd. */
#define RMAD_WIN_PEERS_PER_MSG	8
struct rmad_ctl_win_peer {
	int32_t rank;			/* job rank */
	int32_t disp_unit;
	uint64_t size;
	/* a created window: the member's process and where the window is
	 * in it (the memfd is then its control page only); a shared one:
	 * addr is where its memory starts in the node's memfd and pid the
	 * index of its control page there */
	uint64_t addr;
	int32_t pid;
	uint32_t flags;			/* RMAD_WINF_CREATE */
};
struct rmad_ctl_win_peers {
	struct rmad_ctl_hdr h;
	uint64_t key;
	int32_t count;
	int32_t pad;
	struct rmad_ctl_win_peer p[RMAD_WIN_PEERS_PER_MSG];
};
static_assert(sizeof(struct rmad_ctl_win_peers) == 32 + 8 * 32, "peers");

struct rmad_ctl_win_attach {
	struct rmad_ctl_hdr h;
	uint64_t key;			/* the window */
	uint64_t addr;
	uint64_t size;			/* attach only */
};
static_assert(sizeof(struct rmad_ctl_win_attach) == 40, "win attach");

struct rmad_ctl_win_free {
	struct rmad_ctl_hdr h;
	uint64_t key;
};
static_assert(sizeof(struct rmad_ctl_win_free) == 24, "win free");

/*
 * rmad_win_stats: the agent's counters for the asking client on one
 * window.  The reply carries a whole struct rmad_stats, whose layout is
 * therefore part of this ABI; the agent fills only the fields it counts
 * and leaves the others zero.
 */
struct rmad_ctl_win_stats {
	struct rmad_ctl_hdr h;
	uint64_t key;
};
static_assert(sizeof(struct rmad_ctl_win_stats) == 24, "win stats");

static_assert(sizeof(struct rmad_stats) == 472, "struct rmad_stats");
struct rmad_ctl_win_stats_reply {
	struct rmad_ctl_hdr h;
	uint64_t key;
	int32_t status;			/* 0 or RMAD_ERR_* */
	uint32_t pad;
	struct rmad_stats stats;
};
static_assert(sizeof(struct rmad_ctl_win_stats_reply) == 32 + 472,
	      "win stats reply");

/*
 * rmad_alloc_mem: memory the agent maps too, so it reads and writes it
 * in place.  addr is where the client mapped it (the agent's key for
 * it); the agent answers with a WIN_REPLY whose key is addr.
 */
struct rmad_ctl_mem {
	struct rmad_ctl_hdr h;
	uint64_t addr;
	uint64_t size;
};
static_assert(sizeof(struct rmad_ctl_mem) == 32, "mem reg");

#endif
