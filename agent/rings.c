/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rings.c - the clients' submission rings (below clients.c, which
 * attaches them): take the submitted ops off every client's ring, check
 * each (its index against the pool and its private owner record, its
 * opcode against the table) on a private copy, and hand it to the layer
 * that serves it (completion, the barrier, the ping, RMA); and whether
 * anything waits on the rings or for the agent.
 *
 * Clients are untrusted: the element is read once, into private memory,
 * before anything in it is checked; a bad submission fails that op (or
 * is dropped and counted) and never reaches the rest of the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "completion.h"
#include "jobs_bar.h"
#include "jobs_ping.h"
#include "rma.h"
#include "rings.h"
#include "atomics.h"
#include "counter.h"
#include "log.h"
#include "pool.h"
#include "ring.h"
#include "rmad_abi.h"
#include "trace.h"
#include "util.h"

#define RING_BATCH	256
/* slots taken, and their elements fetched, before the first is handled */
#define RING_GULP	32

static struct rmad_shm_client *shm_client(struct agent *a, uint32_t c)
{
	return rmad_shm_client_at(a->seg, &a->lay, c);
}

/*
 * One submitted op: checks, then dispatch.  The element is read once,
 * into private memory, before anything in it is checked: the client can
 * write the shared copy at any time, so nothing downstream reads it.
 */
static void handle_op(struct agent *a, uint32_t c, uint32_t i)
{
	const struct rmad_shm_hdr *h = &a->lay;
	struct rmad_op_elem snap, *e = &snap;
	uint16_t opc;

	if (completion_op_take(a, c, i)) {
		a->cl[c].bad_ops++;
		a->st.ops_bad++;
		rmad_warn("client %u (pid %d): bad op index %u dropped", c,
			  (int)a->cl[c].pid, i);
		return;
	}
	/* the ring's pop was an acquire: the element is complete */
	memcpy(&snap, rmad_shm_op_at(a->seg, h, i), sizeof(snap));
	completion_op_flags(a, i, snap.flags);
	opc = e->opcode;
	switch (opc) {
	case RMAD_OPC_NOOP:
		completion_op_done(a, c, i, 0);
		break;
	case RMAD_OPC_PING:
		jobs_ping_op(a, c, i, e);
		break;
	case RMAD_OPC_BARRIER:
		jobs_bar_op(a, c, i);
		break;
	case RMAD_OPC_OPS_RESERVE:
		completion_ops_reserve(a, c, i, e);
		break;
	case RMAD_OPC_OPS_RETURN:
		completion_ops_return(a, c, i, e);
		break;
	case RMAD_OPC_PUT:
	case RMAD_OPC_GET:
	case RMAD_OPC_ACC:
	case RMAD_OPC_GACC:
	case RMAD_OPC_CAS:
	case RMAD_OPC_LOCK:
	case RMAD_OPC_UNLOCK:
	case RMAD_OPC_LOCK_ALL:
	case RMAD_OPC_UNLOCK_ALL:
	case RMAD_OPC_FLUSH:
	case RMAD_OPC_FLUSH_LOCAL:
	case RMAD_OPC_LOCK_WAIT:
	case RMAD_OPC_FENCE:
	case RMAD_OPC_START:
	case RMAD_OPC_COMPLETE:
	case RMAD_OPC_POST:
		agent_rma_op(a, c, i, e);
		break;
	default:
		a->cl[c].bad_ops++;
		a->st.ops_bad++;
		rmad_warn("client %u: bad opcode %u", c, opc);
		completion_op_done(a, c, i, RMAD_ERR_ARG);
		break;
	}
}

static int client_waits(const struct rmad_shm_client *sc)
{
	uint32_t w = 0;

	for (int k = 0; k < RMAD_NCNT; k++)
		w |= load_relaxed(&sc->waiters[k]);
	return w != 0;
}

int rings_poll(struct agent *a)
{
	const struct rmad_shm_hdr *h = &a->lay;
	uint32_t mask = h->ring_entries - 1;
	int total = 0;

	/* a client released while its ops are handled leaves the list at
	 * once: read it afresh each turn */
	for (uint32_t li = 0; li < a->nlive; li++) {
		uint32_t c = a->live[li];
		struct agent_client *ac = &a->cl[c];
		struct rmad_shm_client *sc;
		uint32_t v, want;
		int n = 0;

		if (!ac->registered)
			continue;
		sc = shm_client(a, c);
		/*
		 * A client asks for elements after submitting the ops that
		 * used its last ones (release, paired here).  Those ops must
		 * be routed before refill_client looks for held ones to
		 * release, or they are held after it looked, and the client
		 * waits for elements that only its epoch's end would free.
		 */
		want = load_acquire(&sc->want_ops);
		while (n < RING_BATCH) {
			uint32_t got[RING_GULP], from = ac->head, k = 0;

			while (k < RING_GULP &&
			       rmad_ring_take(sc->ring, mask, &ac->head, &v)) {
				/* the client's index, in its own segment:
				 * where it came from says whose it is */
				got[k] = v < h->per_client ?
					 c * h->per_client + v : RMAD_NIL;
				/* its lines were last written on the
				 * client's core: ask for them all before
				 * the first is read */
				if (got[k] != RMAD_NIL) {
					const char *e = (const char *)
						rmad_shm_op_at(a->seg, h,
							       got[k]);

					__builtin_prefetch(e);
					__builtin_prefetch(e + 64);
				}
				k++;
			}
			if (!k)
				break;
			rmad_ring_release(sc->ring, mask, h->ring_entries,
					  from, ac->head);
			RMAD_TR(RMAD_TR_RING, k);
			for (uint32_t j = 0; j < k; j++)
				handle_op(a, c, got[j]);
			n += (int)k;
		}
		if (n)
			store_release(&sc->sq_head, ac->head);
		/* else after the rest; held ops go when none can be lent */
		if (want && n < RING_BATCH && completion_refill(a, c))
			agent_rma_unhold(a, c);
		/* it posted and runs on: its next operation usually comes
		 * soon, as after a wake (sched_idle_poll) */
		if (n && !client_waits(sc))
			a->woke = 1;
		total += n;
	}
	if (total)
		completion_flush_wakeups(a);
	return total;
}

int rings_empty(struct agent *a)
{
	const struct rmad_shm_hdr *h = &a->lay;

	for (uint32_t li = 0; li < a->nlive; li++) {
		uint32_t c = a->live[li];
		struct rmad_shm_client *sc;
		struct rmad_ring_slot *s;

		if (!a->cl[c].registered)
			continue;
		sc = shm_client(a, c);
		if (load_relaxed(&sc->want_ops))
			return 0;
		s = &sc->ring[a->cl[c].head & (h->ring_entries - 1)];
		/* acquire: pairs with a producer's publish */
		if (load_acquire(&s->seq) == a->cl[c].head + 1)
			return 0;
	}
	return 1;
}

/* 1 if every registered client has a thread asleep on a counter */
int rings_clients_waiting(struct agent *a)
{
	uint32_t seen = 0;

	for (uint32_t li = 0; li < a->nlive; li++) {
		uint32_t c = a->live[li];

		if (!a->cl[c].registered)
			continue;
		if (!client_waits(shm_client(a, c)))
			return 0;
		seen++;
	}
	return seen > 0;
}

