/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_tag.h - the tags of the messages between agents (rmad.conf(5),
 * fabric_auth; rmad(7), ISOLATION): each node's key, our sessions with
 * the others, and the trailer that seals a message and is checked when
 * one comes in.  Pure logic over buffers: fabric.c puts it on the wire.
 *
 * Every tagged message ends in struct fab_tag: a sequence number, the
 * sender's node, the node it is for, a session's name, and SipHash-2-4
 * of both nodes (as one 64-bit word), the message and the trailer up to
 * the tag.
 *
 * A bound message (FAB_SEQ_BOUND set) goes under the key of its session,
 * which both ends derive from the sender's key, the two nodes and the
 * session's two incarnations (fab_tags_session), and names the session
 * by 32 bits of those, so that a message of a session gone (a peer
 * restarted) is told from a forged one; its sequence number counts from
 * 1 and is taken once (struct rmad_replay).  An unbound one (heartbeats
 * to a node that is not up, while two static mesh agents shake hands)
 * goes under the sender's key itself; its number is the sender's clock
 * in ns, and from a node that is up none is taken that is not newer than
 * the last.
 */
#ifndef RMAD_FABRIC_TAG_H
#define RMAD_FABRIC_TAG_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secret.h"

struct fab_tag {
	uint64_t seq;
	uint32_t src;
	uint32_t dst;
	uint32_t sess;		/* bound: the session's name */
	uint32_t zero;
	uint64_t tag;
};
#define FAB_TAG_LEN	sizeof(struct fab_tag)
static_assert(sizeof(struct fab_tag) == 32, "fab tag");
#define FAB_SEQ_BOUND	(1ull << 63)

/* One peer: our session with it. */
struct fab_tag_peer {
	bool sess;		/* set: messages to it go bound */
	bool up;		/* not down (rmad_fabric_set_down) */
	uint32_t sess_id;	/* the session's name (fab_tag.sess) */
	uint64_t tx_key[2], rx_key[2];	/* its keys, either way */
	uint64_t tx_seq;	/* the last bound number sent */
	struct rmad_replay rx;	/* bound numbers taken from it */
	uint64_t unb_hi;	/* the last unbound number taken from it */
};

struct fab_tags {
	int self, n;
	uint64_t (*key)[2];	/* each node's key */
	struct fab_tag_peer *peer;
	uint64_t unb_seq;	/* the last unbound number sent */
};

/* n nodes' keys (2 words each, node order; keys[self] is ours), every
 * peer up and in the session (0, 0).  0 or RMAD_ERR_NOMEM. */
int fab_tags_init(struct fab_tags *t, int self, int n, const uint64_t *keys);
/* Forget the keys (zeroed) and sessions. */
void fab_tags_fini(struct fab_tags *t);

/*
 * Our session with node: the incarnation we hold of it (mine) and the
 * one it holds of us (theirs); both 0 is a session (keys that are new at
 * each launch), one of them 0 is none.  Numbers count anew.
 */
void fab_tags_session(struct fab_tags *t, int node, uint64_t mine,
		      uint64_t theirs);

/* Append the trailer to the len bytes at buf (which has room for it)
 * for node: bound if in session and up, else unbound.  The new length. */
size_t fab_tags_seal(struct fab_tags *t, int node, char *buf, size_t len);

/* What fab_tags_open found. */
enum fab_tag_verdict {
	FAB_TAG_FRESH,		/* bound to our session, number new */
	FAB_TAG_UNBOUND,	/* unbound, under its sender's key */
	FAB_TAG_STALE,		/* bound to a session we do not have */
	FAB_TAG_BAD,		/* wrong: logged */
};

/*
 * Check the trailer of the len bytes at buf: for us, from a node of ours
 * (from, the one the provider names: -1 where none of ours sent it,
 * below -1 where it names none), and tagged under that
 * node's key or our session's with it, with a number not taken before.
 * FRESH or UNBOUND with *src, the sender, and *mlen, the message's
 * length without the trailer.
 */
enum fab_tag_verdict fab_tags_open(struct fab_tags *t, int from,
				   const char *buf, size_t len, int *src,
				   size_t *mlen);

#endif
