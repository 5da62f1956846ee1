/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtree.h - a derived datatype as a tree that travels: the wire form of a
 * committed type (its constructor tree, never an exploded list of
 * blocks), the parser that rebuilds it with limits, and the walker that
 * visits the runs behind any range of the type's packed bytes.
 *
 * The client serializes a committed type once (client/types.c); the
 * origin agent parses it to check the op, the target agent parses it
 * once per cache slot (agent/rma_type.c) and then applies any chunk of a
 * packed stream by walking only that chunk's part of the tree: a vector
 * of a million blocks is one node, and a chunk in its middle costs a
 * division, not a scan.
 *
 * Wire form (native byte order; agents of one mesh share the ABI):
 *   blob   := u32 DTREE_MAGIC, node
 *   node   := u8 kind, then by kind
 *     BASIC    u8 basic
 *     VECTOR   i64 count, i64 blocklen, i64 stride (bytes), node
 *     INDEXED  i64 count, count x (i64 blocklen, i64 displ (bytes)), node
 *     STRUCT   i64 count, count x (i64 blocklen, i64 displ), count x node
 *     RESIZED  u8 explicit, i64 lb, i64 ub, node
 *              (explicit 0: a dup, whose bounds are the child's)
 * CONTIG is a VECTOR of one block; subarray, hindexed_block and the rest
 * are built from these by the client.
 *
 * Everything in a blob is untrusted: the parser checks every count,
 * length and bound (no overflow, depth and node limits), and computes
 * the size and the bounds itself, never taking them from the sender.
 */
#ifndef RMAD_DTREE_H
#define RMAD_DTREE_H

#include <stddef.h>
#include <stdint.h>

#define DTREE_MAGIC	0x31544452u	/* "RDT1" */

enum {
	DTREE_BASIC = 1,
	DTREE_VECTOR = 2,
	DTREE_INDEXED = 3,
	DTREE_STRUCT = 4,
	DTREE_RESIZED = 5,
};

#define DTREE_MAX_DEPTH		16	/* of a type that travels */
#define DTREE_TRAVEL_NODES	4096	/* ... its nodes */
#define DTREE_TRAVEL_BYTES	65536	/* ... its wire form */
#define DTREE_OWN_DEPTH		200	/* of a process's own types */
#define DTREE_MAX_COUNT		(1ll << 31)	/* blocks, block lengths */
#define DTREE_MAX_DISP		(1ll << 48)	/* |displacement|, |stride| */
#define DTREE_MAX_SIZE		(1ull << 40)	/* bytes of data */
/* |lb|, |ub| and their true kin: past any user address of a 64-bit
 * process (2^47 on x86-64, 2^48 with LA57 ... 2^52 on aarch64 at most),
 * so that a type of absolute addresses (MPI_BOTTOM, rmad_get_address)
 * is a type; far from int64 overflow in the sums of bounds */
#define DTREE_MAX_BOUND		(1ll << 53)

struct dtree {
	uint8_t kind;
	uint8_t dense;			/* one instance's data is one run of
					 * `homog`, in packed order, at dlo */
	uint8_t empty;			/* no bounds (lb = ub = 0) */
	uint8_t mixed;			/* data of more than one basic type */
	uint8_t depth;			/* levels, this node's included */
	uint32_t nodes;			/* nodes, this one's included */
	uint32_t basic;			/* BASIC */
	uint32_t homog;			/* the one basic type, or 0 */
	int64_t count;			/* blocks */
	int64_t blocklen;		/* VECTOR */
	int64_t stride;			/* VECTOR: bytes */
	int64_t *blens, *displs;	/* INDEXED, STRUCT */
	uint64_t *pfx;			/* INDEXED, STRUCT: packed bytes
					 * before block i (count + 1) */
	struct dtree *child;		/* VECTOR, INDEXED, RESIZED */
	struct dtree **kids;		/* STRUCT */
	uint64_t size;			/* bytes of data */
	uint64_t nelem;			/* basic elements */
	int64_t lb, ub, tlb, tub;	/* MPI's bounds and true bounds */
	int64_t dlo, dhi;		/* where data lies (size > 0) */
};

/* Parse a blob; 0, or RMAD_ERR_TYPE for a bad one, RMAD_ERR_NOMEM.
 * max_nodes bounds the tree (and with it the memory it takes). */
int dtree_parse(const void *blob, size_t len, unsigned max_nodes,
		struct dtree **out);
/* The same for a blob a process made of its own types: deeper trees,
 * no node limit (the limits of a blob that travels stay the caller's to
 * check: depth, size). */
int dtree_parse_own(const void *blob, size_t len, struct dtree **out);
void dtree_free(struct dtree *t);

static inline int64_t dtree_extent(const struct dtree *t)
{
	return t->ub - t->lb;
}

/*
 * Where `count` instances of t (the i-th at i * extent) put their data,
 * relative to the displacement: [*lo, *hi).  0, or RMAD_ERR_TYPE when the
 * span overflows.  Nothing (lo = hi = 0) when there is no data.
 */
int dtree_footprint(const struct dtree *t, uint64_t count, int64_t *lo,
		    int64_t *hi);

/* One run: `len` bytes of basic type `basic` at `off` from the
 * displacement, the next `len` bytes of the packed stream. */
typedef void (*dtree_run_fn)(void *arg, int64_t off, uint64_t len,
			     uint32_t basic);

/*
 * Visit, in packed order, the runs behind packed bytes [from, to) of
 * `count` instances of t.  Adjacent runs of one basic type are merged.
 * The caller keeps to <= count * t->size.
 */
void dtree_walk(const struct dtree *t, uint64_t count, uint64_t from,
		uint64_t to, dtree_run_fn fn, void *arg);

/*
 * Packed bytes [from, to) of `count` instances of t (the offsets relative
 * to mem) into packed[0 .. to - from), or back: dtree_walk's order, with
 * the copy loops of the common shapes (vectors, subarrays) inline.
 */
void dtree_pack(const struct dtree *t, uint64_t count, uint64_t from,
		uint64_t to, const void *mem, void *packed);
void dtree_unpack(const struct dtree *t, uint64_t count, uint64_t from,
		  uint64_t to, void *mem, const void *packed);

/* A growing buffer that a blob is written into. */
struct dtree_wbuf {
	uint8_t *p;
	size_t n, cap;
	int err;
};

void dtree_w_u8(struct dtree_wbuf *b, uint8_t v);
void dtree_w_u32(struct dtree_wbuf *b, uint32_t v);
void dtree_w_i64(struct dtree_wbuf *b, int64_t v);

/* A 64-bit content key of a blob (not cryptographic). */
uint64_t dtree_key(const void *blob, size_t len);

#endif
