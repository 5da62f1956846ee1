/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_tag.c - the tags of the messages between agents (fabric_tag.h):
 * keys, sessions, sealing a message and checking one.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rmad_abi.h"
#include "log.h"
#include "fabric_tag.h"

int fab_tags_init(struct fab_tags *t, int self, int n, const uint64_t *keys)
{
	memset(t, 0, sizeof(*t));
	t->key = calloc((size_t)n, sizeof(*t->key));
	t->peer = calloc((size_t)n, sizeof(*t->peer));
	if (!t->key || !t->peer) {
		free(t->key);
		free(t->peer);
		t->key = NULL;
		t->peer = NULL;
		return RMAD_ERR_NOMEM;
	}
	t->self = self;
	t->n = n;
	memcpy(t->key, keys, (size_t)n * sizeof(*t->key));
	for (int node = 0; node < n; node++) {
		t->peer[node].up = true;
		fab_tags_session(t, node, 0, 0);
	}
	return 0;
}

void fab_tags_fini(struct fab_tags *t)
{
	if (t->key)
		explicit_bzero(t->key, (size_t)t->n * sizeof(*t->key));
	if (t->peer)
		explicit_bzero(t->peer, (size_t)t->n * sizeof(*t->peer));
	free(t->key);
	free(t->peer);
	memset(t, 0, sizeof(*t));
}

/*
 * A session's keys, one per direction: derived from the sender's key,
 * the two nodes and the sender's incarnation, then the receiver's.
 */
void fab_tags_session(struct fab_tags *t, int node, uint64_t mine,
		      uint64_t theirs)
{
	struct fab_tag_peer *p = &t->peer[node];
	uint64_t w[3];

	p->sess = (mine == 0) == (theirs == 0);
	/* the same either way: mine and theirs swap at the other end */
	p->sess_id = (uint32_t)((mine ^ theirs) ^ ((mine ^ theirs) >> 32));
	p->tx_seq = 0;
	memset(&p->rx, 0, sizeof(p->rx));
	w[0] = (uint64_t)(uint32_t)t->self | (uint64_t)(uint32_t)node << 32;
	w[1] = mine;
	w[2] = theirs;
	secret_key_derive(t->key[t->self], w, p->tx_key);
	w[0] = (uint64_t)(uint32_t)node | (uint64_t)(uint32_t)t->self << 32;
	w[1] = theirs;
	w[2] = mine;
	secret_key_derive(t->key[node], w, p->rx_key);
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The tag of the len bytes at buf and the trailer up to its tag. */
static uint64_t tag_of(const uint64_t k[2], const struct fab_tag *h,
		       const char *buf, size_t len)
{
	return secret_siphash(k, (uint64_t)h->src | (uint64_t)h->dst << 32, buf,
			    len + offsetof(struct fab_tag, tag));
}

size_t fab_tags_seal(struct fab_tags *t, int node, char *buf, size_t len)
{
	struct fab_tag_peer *p = &t->peer[node];
	struct fab_tag h = { .src = (uint32_t)t->self, .dst = (uint32_t)node };
	const uint64_t *k;

	if (p->sess && p->up) {
		h.seq = FAB_SEQ_BOUND | ++p->tx_seq;
		h.sess = p->sess_id;
		k = p->tx_key;
	} else {
		uint64_t now = clock_ns() & ~FAB_SEQ_BOUND;

		h.seq = t->unb_seq = now > t->unb_seq ? now : t->unb_seq + 1;
		k = t->key[t->self];
	}
	memcpy(buf + len, &h, offsetof(struct fab_tag, tag));
	h.tag = tag_of(k, &h, buf, len);
	memcpy(buf + len, &h, sizeof(h));
	return len + sizeof(h);
}

enum fab_tag_verdict fab_tags_open(struct fab_tags *t, int from,
				   const char *buf, size_t len, int *src,
				   size_t *mlen)
{
	struct fab_tag h;
	struct fab_tag_peer *p;
	bool bound;
	uint64_t n;

	if (len < sizeof(h)) {
		rmad_warn("fabric: dropped a message of %zu bytes: too short "
			  "for its tag", len);
		return FAB_TAG_BAD;
	}
	*mlen = len - sizeof(h);
	memcpy(&h, buf + *mlen, sizeof(h));
	if (from == -1) {
		rmad_warn("fabric: dropped a message from no node of ours");
		return FAB_TAG_BAD;
	}
	if (h.dst != (uint32_t)t->self || h.src >= (uint32_t)t->n ||
	    (from >= 0 && h.src != (uint32_t)from)) {
		rmad_warn("fabric: dropped a message from node %d: its "
			  "trailer names node %u to node %u", from, h.src,
			  h.dst);
		return FAB_TAG_BAD;
	}
	p = &t->peer[h.src];
	bound = (h.seq & FAB_SEQ_BOUND) != 0;
	n = h.seq & ~FAB_SEQ_BOUND;
	if (bound && (!p->sess || h.sess != p->sess_id)) {
		/* of a session gone, or not yet ours: a restart */
		rmad_dbg("fabric: dropped a message from node %u: bound to a "
			 "session we do not have with it", h.src);
		return FAB_TAG_STALE;
	}
	if (h.zero || (!bound && h.sess) ||
	    tag_of(bound ? p->rx_key : t->key[h.src], &h, buf, *mlen) !=
	    h.tag) {
		rmad_warn("fabric: dropped a message from node %u: its tag "
			  "is wrong (not made with node %u's key%s)", h.src,
			  h.src, bound ? " for our session" : "");
		return FAB_TAG_BAD;
	}
	if (bound ? !secret_replay_take(&p->rx, n) : p->up && n <= p->unb_hi) {
		rmad_warn("fabric: dropped a message from node %u: its "
			  "number (%s %llu) was taken before: a replay",
			  h.src, bound ? "bound" : "unbound",
			  (unsigned long long)n);
		return FAB_TAG_BAD;
	}
	if (!bound && n > p->unb_hi)
		p->unb_hi = n;
	*src = (int)h.src;
	return bound ? FAB_TAG_FRESH : FAB_TAG_UNBOUND;
}
