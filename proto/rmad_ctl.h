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

#define RMAD_CTL_MAGIC	0x4c54434461726dULL	/* "rmaDCTL" */

enum {
	RMAD_CTL_REGISTER = 1,		/* client -> agent */
	RMAD_CTL_REGISTER_REPLY = 2,	/* agent -> client, + 2 fds */
	RMAD_CTL_DEREGISTER = 3,	/* client -> agent, clean goodbye */
	RMAD_CTL_STATUS = 10,		/* rmadctl -> agent */
	RMAD_CTL_STOP = 11,		/* rmadctl -> agent */
	RMAD_CTL_RELOAD = 12,		/* rmadctl -> agent */
	RMAD_CTL_TEXT_REPLY = 13,	/* agent -> rmadctl: text/JSON */
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

#endif
