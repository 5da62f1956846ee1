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
#include "rings.h"		/* rings_poll, rings_empty */

/* The client slots (max_clients, all free) and the list of registered
 * ones: 0, or RMAD_ERR_NOMEM; clients_free gives them back. */
int clients_alloc(struct agent *a);
void clients_free(struct agent *a);
int clients_listen(struct agent *a);
void clients_unlisten(struct agent *a);
void clients_accept_pending(struct agent *a);
void clients_drop_all(struct agent *a);
/* Close the connections that did not register within
 * register_timeout_ms (the agent's tick). */
void clients_tick(struct agent *a, uint64_t now);
/*
 * One message from client slot c's socket (n bytes, and a descriptor or
 * -1), checked and handled: the decoder of everything a client says on
 * the socket.  Takes ownership of rfd.
 */
void clients_msg(struct agent *a, uint32_t c, const void *msg, size_t n,
		      int rfd);
/* The largest message clients_msg() takes. */
size_t clients_msg_max(void);

#endif
