/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_wire.c - the agent's decoder of packets from other agents
 * (am_recv and every handler in the table: jobs, barriers, windows,
 * RMA).  The agent believes it is node 0 of 4 and has two registered
 * clients, ranks 0 and 1 of a job of 3 whose rank 2 another node may
 * join (fuzz/regress/fuzz_wire/map-and-joins: node 1 does, then joins
 * windows and posts before any member here made them); the input is a sequence of packets, each 2 bytes of length
 * then the bytes, with the header's version and source node fixed up
 * when the length's top bit is set, and taken as outside any session
 * (with tags, only heartbeats are) when bit 14 is.
 */
#include <stdint.h>
#include <stdio.h>

#include "fake_agent.h"
#include "rmad_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent *a = fake_agent(4);
	static uint64_t buf[(sizeof(struct rmad_am_hdr) +
			     RMAD_AM_MAX_PAYLOAD) / 8 + 1];

	fake_client(a, 0, 0, 3);
	fake_client(a, 1, 1, 3);
	while (size >= 2) {
		uint16_t len;
		size_t k;

		memcpy(&len, data, 2);
		data += 2;
		size -= 2;
		k = (len & 0x7fff) % (sizeof(buf) + 1);
		if (k > size)
			k = size;
		memcpy(buf, data, k);
		data += k;
		size -= k;
		if ((len & 0x8000) && k >= sizeof(struct rmad_am_hdr)) {
			struct rmad_am_hdr *h = (struct rmad_am_hdr *)buf;

			h->version = RMAD_WIRE_VERSION;
			h->src_node %= 4;
			h->payload_len = (uint32_t)(k - sizeof(*h));
		}
		/* bit 14: as a packet outside any session (with tags) */
		am_recv(a, buf, k, RMAD_FABRIC_SRC_UNKNOWN,
			(len & 0x4000) ? 0 : RMAD_FABRIC_FRESH);
	}
	fake_progress(a);
	return 0;
}
