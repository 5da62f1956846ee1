/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clients.h - the client interface: the Unix socket, attach and detach,
 * and the submission rings (clients.c).
 */
#ifndef RMAD_AGENT_CLIENTS_H
#define RMAD_AGENT_CLIENTS_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "rings.h"		/* agent_poll_rings, agent_rings_empty */

/* The client slots (max_clients, all free) and the list of registered
 * ones: 0, or RMAD_ERR_NOMEM; agent_clients_free gives them back. */
int agent_clients_alloc(struct agent *a);
void agent_clients_free(struct agent *a);
int agent_listen(struct agent *a);
void agent_unlisten(struct agent *a);
void agent_accept_pending(struct agent *a);
void agent_drop_all_clients(struct agent *a);
/* Close the connections that did not register within
 * register_timeout_ms (the agent's tick). */
void agent_clients_tick(struct agent *a, uint64_t now);
/*
 * One message from client slot c's socket (n bytes, and a descriptor or
 * -1), checked and handled: the decoder of everything a client says on
 * the socket.  Takes ownership of rfd.
 */
void agent_client_msg(struct agent *a, uint32_t c, const void *msg, size_t n,
		      int rfd);
/* The largest message agent_client_msg() takes. */
size_t agent_client_msg_max(void);

#endif
