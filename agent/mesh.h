/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mesh.h - a static mesh of agents named by the configuration: the
 * agents that systemd starts, one per node, with the same list of
 * nodes (rmad(8), LAUNCH MODES).
 */
#ifndef RMAD_AGENT_MESH_H
#define RMAD_AGENT_MESH_H

#include <stddef.h>

#include "boot.h"

/* The most nodes a mesh may name. */
#define RMAD_MESH_MAX	65536

struct rmad_mesh_cfg {
	const char *list;	/* "host[:port],[v6addr]:port,..." or "" */
	const char *file;	/* a file of one entry a line, or "" */
	long port;		/* the port of entries without one */
	long self;		/* this agent's entry, or -1: find it */
};

/* Is a mesh configured (list or file given)? */
int rmad_mesh_configured(const struct rmad_mesh_cfg *c);

/*
 * Read the entries, resolve each to a socket address (IPv4, or IPv6:
 * one family for all), and find this agent's own: entry c->self, or the
 * one entry whose address is one of this host's (several such entries
 * need mesh_self).  Fills *b (n addresses of the family's struct
 * sockaddr_in or sockaddr_in6, in node order, and self) and the numeric
 * host and port to bind to.  0, RMAD_ERR_ARG (a
 * bad entry or a self that cannot be told, logged) or RMAD_ERR_NOMEM;
 * on error *b holds nothing to free.
 */
int rmad_mesh_load(const struct rmad_mesh_cfg *c, struct rmad_boot *b,
		   char *host, size_t hostlen, char *port, size_t portlen);

/* The mesh's tag key from the file at path (secret_key_load), as every
 * node's key in b->keys (rmad_fabric_set_auth): call after
 * rmad_mesh_load.  0, RMAD_ERR_ARG (logged) or RMAD_ERR_NOMEM. */
int rmad_mesh_keys(const char *path, struct rmad_boot *b);

/* Is the fabric address addr (len bytes) the socket address of entry
 * self of b?  A provider whose addresses are not (shm) cannot
 * form a static mesh. */
int rmad_mesh_check_self(const struct rmad_boot *b, const void *addr,
			 size_t len);

#endif
