/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot.h - agent bootstrap: the agents of one session form a mesh.
 *
 * Agents started by a launcher (mpirun, srun) learn their node index and
 * the fabric addresses of all other agents through PMIx.  Without a
 * launcher, or for an agent embedded in a client, the mesh has one node.
 */
#ifndef RMAD_AGENT_BOOT_H
#define RMAD_AGENT_BOOT_H

#include <stddef.h>
#include <stdint.h>

struct rmad_boot {
	int self;		/* this agent's node index */
	int n;			/* agents in the mesh */
	void *addrs;		/* n * addrlen bytes, node order */
	size_t addrlen;
	uint64_t (*keys)[2];	/* n tag keys in node order, or NULL */
	char nspace[256];	/* PMIx namespace of the agents, "" alone */
	int pmix_initialized;
};

/* Exchange fabric addresses among the agents through PMIx (put, commit,
 * fence collecting data, get); with tags, each agent also draws a key
 * for its messages' tags (rmad_fabric_set_auth) and publishes it beside
 * its address, and b->keys holds them all.  No PMIx server, or a job of
 * one, gives a 1-agent mesh (keys NULL).  Returns 0, RMAD_ERR_ARG,
 * RMAD_ERR_NOMEM or RMAD_ERR_BOOTSTRAP; on error *b holds nothing to
 * free. */
int rmad_boot_pmix(const void *myaddr, size_t addrlen, int tags,
		   struct rmad_boot *b);

/* A 1-agent mesh without touching PMIx at all: an agent embedded in a
 * client may still see the client's PMIX_* variables. */
int rmad_boot_single(const void *myaddr, size_t addrlen, struct rmad_boot *b);

/* A second fence among the agents, the startup barrier once everything
 * is ready; a no-op for a 1-agent mesh. */
int rmad_boot_fence(struct rmad_boot *b);

/* Frees addrs and keys, and calls PMIx_Finalize if rmad_boot_pmix initialized it. */
void rmad_boot_free(struct rmad_boot *b);

#endif
