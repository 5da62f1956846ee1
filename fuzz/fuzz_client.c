/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_client.c - the agent's decoders of what a client says: messages
 * on the Unix socket (clients_msg) and op elements pushed on its
 * submission ring (handle_op and everything it dispatches to).  The
 * input is a sequence of records, so the fuzzer can register, create
 * windows and then send ops on them:
 *
 *   byte 0: kind (low 2 bits) | client (bit 2) | fix-up (bit 3)
 *   kind 0: a socket message: 2 bytes of length, then the bytes; with
 *           fix-up the header's magic and ABI version are made right.
 *           WIN_CREATE and MEM_REG get a fresh memfd as their
 *           descriptor: sealed at its size as librmad's (rmad(7),
 *           SECURITY) with fix-up, unsealed (to be refused) without.
 *   kind 1: an op: 4 bytes of index, then up to one element's bytes,
 *           written to the element (index mod the segment's elements)
 *           of the client's own segment, and the raw index pushed on
 *           its ring; with fix-up the index is taken mod that size.
 *   kind 2: progress (the loop's turn).
 *   kind 3: the client slot is registered again if the agent dropped it.
 */
#include <stdint.h>
#include <stdio.h>

#include "fake_agent.h"
#include "util.h"

static size_t take(const uint8_t **p, size_t *n, void *out, size_t want)
{
	size_t k = want < *n ? want : *n;

	memcpy(out, *p, k);
	*p += k;
	*n -= k;
	return k;
}

static void ctl_record(struct agent *a, int c, int fix, const uint8_t **p,
		       size_t *n)
{
	static uint8_t buf[70000];
	uint16_t len = 0;
	size_t k;
	int rfd = -1;

	take(p, n, &len, sizeof(len));
	k = take(p, n, buf, len % (clients_msg_max() + 1));
	if (fix && k >= sizeof(struct rmad_ctl_hdr)) {
		struct rmad_ctl_hdr *h = (struct rmad_ctl_hdr *)buf;

		h->magic = RMAD_CTL_MAGIC;
		h->abi_version = RMAD_ABI_VERSION;
	}
	if (k >= sizeof(struct rmad_ctl_hdr)) {
		uint32_t t = ((struct rmad_ctl_hdr *)buf)->type;

		if ((t == RMAD_CTL_WIN_CREATE || t == RMAD_CTL_MEM_REG) &&
		    fix) {
			rfd = rmad_memfd_sealed("fuzz", 65536, 0);
			rfd = rfd < 0 ? -1 : rfd;
		} else if (t == RMAD_CTL_WIN_CREATE || t == RMAD_CTL_MEM_REG) {
			rfd = memfd_create("fuzz", MFD_CLOEXEC);
			if (rfd >= 0 && ftruncate(rfd, 65536) < 0) {
				close(rfd);
				rfd = -1;
			}
		}
	}
	/* STOP and RELOAD are for the agent's user: fine to let through,
	 * they only set flags that no loop reads here */
	clients_msg(a, (uint32_t)c, buf, k, rfd);
}

static void op_record(struct agent *a, int c, int fix, const uint8_t **p,
		      size_t *n)
{
	const struct rmad_shm_hdr *h = &a->lay;
	uint32_t per = h->per_client, idx = 0, tail;
	struct rmad_op_elem e;
	struct rmad_shm_client *sc;

	take(p, n, &idx, sizeof(idx));
	memset(&e, 0, sizeof(e));
	take(p, n, &e, sizeof(e));
	if (fix)
		idx %= per;
	if (!a->cl[c].registered)
		return;
	/* a client writes its own segment only */
	memcpy(rmad_shm_op_at(a->seg, h, (uint32_t)c * per + idx % per), &e,
	       sizeof(e));
	sc = rmad_shm_client_at(a->seg, h, (uint32_t)c);
	tail = sc->sq_tail;
	rmad_ring_push(sc->ring, h->ring_entries - 1, &tail, idx);
	sc->sq_tail = tail;
	rings_poll(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent *a = fake_agent(1);

	fake_client(a, 0, 0, 2);
	fake_client(a, 1, 1, 2);
	while (size > 0) {
		uint8_t b = *data++;
		int c = (b >> 2) & 1, fix = (b >> 3) & 1;

		size--;
		if (a->cl[c].fd < 0)
			fake_client(a, c, -1, 0);
		switch (b & 3) {
		case 0:
			ctl_record(a, c, fix, &data, &size);
			break;
		case 1:
			op_record(a, c, fix, &data, &size);
			break;
		case 2:
			fake_progress(a);
			break;
		case 3:
			fake_client(a, c, c, 2);
			break;
		}
		fake_drain(c);
	}
	fake_progress(a);
	return 0;
}
