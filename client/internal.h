/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - librmad's private state: the bootstrap view of the job
 * and the attachment to the node's agent.
 */
#ifndef RMAD_CLIENT_INTERNAL_H
#define RMAD_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "params.h"
#include "rmad.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"

/* What the launcher (or its absence) tells us about the job. */
struct rmad_bootinfo {
	int rank, size;
	int local_rank, local_size;
	int vnodes;			/* >0: virtual nodes, agent per vnode */
	int vnode;			/* our vnode, -1 when not vnodes */
	int pmix;			/* PMIx_Init succeeded */
	int singleton;			/* no launcher */
	char nspace[RMAD_NSPACE_MAX];
	char session[64];		/* "" until chosen */
	int session_given;		/* from RMAD_SESSION */
};

struct rmad_client {
	int initialized;
	struct rmad_params p;
	struct rmad_bootinfo b;
	int sock;
	int doorbell;
	void *seg;
	size_t seg_size;
	struct rmad_shm_hdr *hdr;
	struct rmad_shm_client *me;
	uint32_t slot;
	struct rmad_ctl_register_reply reg;
	pthread_mutex_t sync_lock;	/* serializes sync tickets */
	uint64_t sync_issued;		/* tickets handed out */
	uint64_t barrier_epoch;
	int dead;			/* the agent is gone */
};

extern struct rmad_client rmad_cl;

/* group.c: member count (RMAD_ERR_ARG for a dead handle), i-th member */
int rmad_group_members(rmad_group_t g, int *n);
int rmad_group_rank(rmad_group_t g, int i);
uint64_t rmad_group_hash(rmad_group_t g);

/* boot.c */
int rmad_boot_client(struct rmad_bootinfo *b);
void rmad_boot_client_fini(struct rmad_bootinfo *b);

/* attach.c */
int rmad_attach(struct rmad_client *c);
void rmad_detach(struct rmad_client *c);
int rmad_agent_alive(void *arg);
int rmad_op_alloc(struct rmad_client *c, uint32_t *idx);
void rmad_op_free(struct rmad_client *c, uint32_t idx);
int rmad_op_submit(struct rmad_client *c, uint32_t idx);
/* Submit a KEEP|SYNC op and wait for its status. */
int rmad_sync_op(struct rmad_client *c, uint16_t opcode, int32_t target,
		 uint64_t ticket);

#endif
