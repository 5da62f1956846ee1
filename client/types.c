/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * types.c - derived datatypes (MPI-3.1 chapter 4): the constructors,
 * commit and free, size and extents, and what the operations need of a
 * type: its basic elements and where they lie.
 *
 * A type is the tree of its constructor calls: each node holds its
 * arguments and its child types (reference-counted, so a type may be
 * freed while a type built on it lives), never an exploded list of
 * blocks; a vector of a million blocks is one node.  Size, bounds and
 * true bounds are computed as the node is made.
 *
 * An operation uses the type's wire form and parsed tree
 * (shared/dtree.h, made once per type by rmad_type_tree): to another
 * node it travels as is, and on this node rmad_type_runs walks it into
 * contiguous runs of one basic type each, adjacent runs merged (a vector
 * of basic elements costs one run per block, a contiguous type one run;
 * the runs are those of one call, freed when it returns).
 *
 * Handles are generation-checked slots (handle.h), kind tag 0x9: a
 * predefined type is its small integer, a derived one a handle; a freed,
 * uncommitted or garbage handle is refused with RMAD_ERR_TYPE or _ARG.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dtree.h"
#include "dtype.h"
#include "handle.h"
#include "internal.h"

#define TYPE_MAGIC	0x74797065u	/* "type" */

enum { K_BASIC, K_CONTIG, K_VECTOR, K_INDEXED, K_STRUCT, K_RESIZED };

struct rmad_type_s {
	uint32_t magic;
	int refs;			/* the handle, and each parent */
	int committed;
	int kind;
	int count;
	int64_t blocklen;		/* K_VECTOR; K_INDEXED: if blens NULL */
	int64_t stride;			/* K_VECTOR: bytes */
	int64_t *blens;			/* K_INDEXED, K_STRUCT */
	int64_t *displs;		/* K_INDEXED, K_STRUCT: bytes */
	struct rmad_type_s *child;	/* K_CONTIG, K_VECTOR, K_INDEXED,
					 * K_RESIZED */
	struct rmad_type_s **kids;	/* K_STRUCT */
	uint32_t basic;			/* K_BASIC: the predefined id */
	uint32_t homog;			/* the one basic type, or 0: mixed */
	uint64_t size;			/* bytes of data */
	uint64_t nelem;			/* basic elements */
	int64_t lb, ub, tlb, tub;	/* bounds, true bounds */
	int empty;			/* no data: bounds are lb = ub = 0 */
	uintptr_t handle;
	/* its wire form and parsed tree (dtree.h), made on first use by
	 * an op (rmad_type_tree); tree_state 1 made, -1 it has none */
	uint8_t *blob;
	size_t blob_len;
	struct dtree *dt;
	int tree_state;
};

static struct handle_table type_handles = HANDLE_TABLE_INIT(HANDLE_TAG_TYPE);
static pthread_mutex_t type_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rmad_type_s basics[RMAD_DTYPE_MAX + 1];
static pthread_once_t basics_once = PTHREAD_ONCE_INIT;

static void basics_init(void)
{
	for (uint32_t i = 1; i <= RMAD_DTYPE_MAX; i++) {
		struct rmad_type_s *t = &basics[i];

		t->magic = TYPE_MAGIC;
		t->refs = INT_MAX / 2;	/* never freed */
		t->committed = 1;
		t->kind = K_BASIC;
		t->basic = t->homog = i;
		t->size = rmad_dtype_size(i);
		t->nelem = 1;
		t->ub = t->tub = (int64_t)t->size;
	}
}

/* The type of handle h: a predefined one, or a live derived one. */
static struct rmad_type_s *type_get(rmad_datatype_t h)
{
	struct rmad_type_s *t;

	pthread_once(&basics_once, basics_init);
	if (h >= 1 && h <= RMAD_DTYPE_MAX)
		return &basics[h];
	t = handle_get(&type_handles, (uintptr_t)h);
	return t && __atomic_load_n(&t->magic, __ATOMIC_RELAXED) ==
		    TYPE_MAGIC ? t : NULL;
}

static void type_put(struct rmad_type_s *t)
{
	if (!t || t->kind == K_BASIC)
		return;
	if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL))
		return;
	type_put(t->child);
	for (int i = 0; t->kids && i < t->count; i++)
		type_put(t->kids[i]);
	free(t->kids);
	free(t->blens);
	free(t->displs);
	free(t->blob);
	dtree_free(t->dt);
	t->magic = 0;
	free(t);
}

static void type_hold(struct rmad_type_s *t)
{
	if (t->kind != K_BASIC)
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

/* Bounds of `n` copies of c, the j-th at off + j * ext(c), merged into
 * t (which starts empty). */
static int add_bounds(struct rmad_type_s *t, const struct rmad_type_s *c,
		      int64_t off, int64_t n)
{
	int64_t ext = c->ub - c->lb, lo, hi, tlo, thi;

	if (n <= 0 || c->empty)
		return 0;
	/* lowest and highest of the n copies */
	lo = off + c->lb + (ext < 0 ? (n - 1) * ext : 0);
	hi = off + c->ub + (ext > 0 ? (n - 1) * ext : 0);
	tlo = off + c->tlb + (ext < 0 ? (n - 1) * ext : 0);
	thi = off + c->tub + (ext > 0 ? (n - 1) * ext : 0);
	if (t->empty) {
		t->lb = lo;
		t->ub = hi;
		t->tlb = tlo;
		t->tub = thi;
		t->empty = 0;
	} else {
		t->lb = lo < t->lb ? lo : t->lb;
		t->ub = hi > t->ub ? hi : t->ub;
		t->tlb = tlo < t->tlb ? tlo : t->tlb;
		t->tub = thi > t->tub ? thi : t->tub;
	}
	return 0;
}

/* data of n copies of c joins t */
static int add_data(struct rmad_type_s *t, const struct rmad_type_s *c,
		    int64_t n)
{
	if (n <= 0 || !c->nelem)
		return 0;
	if ((uint64_t)n > (1ull << 40) / (c->size ? c->size : 1))
		return RMAD_ERR_ARG;
	t->size += (uint64_t)n * c->size;
	t->nelem += (uint64_t)n * c->nelem;
	if (t->size > (1ull << 40))
		return RMAD_ERR_ARG;
	if (!t->homog && t->nelem == (uint64_t)n * c->nelem)
		t->homog = c->homog;	/* the first data */
	else if (t->homog != c->homog)
		t->homog = 0;
	return 0;
}

static struct rmad_type_s *type_alloc(int kind, int count)
{
	struct rmad_type_s *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->magic = TYPE_MAGIC;
	t->refs = 1;
	t->kind = kind;
	t->count = count;
	t->empty = 1;
	return t;
}

/* Hand t out as *out, or drop it on err. */
static int type_out(struct rmad_type_s *t, int err, rmad_datatype_t *out)
{
	if (!err && t->empty) {
		t->lb = t->ub = t->tlb = t->tub = 0;
	}
	if (!err)
		err = handle_new(&type_handles, t, &t->handle);
	if (err) {
		type_put(t);
		return err;
	}
	*out = (rmad_datatype_t)t->handle;
	return 0;
}

/* an old type to build on: live (committed or not) */
static struct rmad_type_s *old_type(rmad_datatype_t h)
{
	return type_get(h);
}

/* ------------------------------------------------------ constructors */

static int make_hvector(int count, int64_t blocklen, int64_t stride,
			rmad_datatype_t old, rmad_datatype_t *newtype,
			int kind)
{
	struct rmad_type_s *c = old_type(old), *t;
	int err = 0;

	if (!newtype || !c || count < 0 || blocklen < 0)
		return RMAD_ERR_ARG;
	t = type_alloc(kind, count);
	if (!t)
		return RMAD_ERR_NOMEM;
	type_hold(c);
	t->child = c;
	t->blocklen = blocklen;
	t->stride = stride;
	for (int i = 0; i < count && !err; i++) {
		err = add_bounds(t, c, (int64_t)i * stride, blocklen);
		if (!err)
			err = add_data(t, c, blocklen);
	}
	return type_out(t, err, newtype);
}

int rmad_type_contiguous(int count, rmad_datatype_t old,
			 rmad_datatype_t *newtype)
{
	struct rmad_type_s *c = old_type(old);

	if (!c)
		return RMAD_ERR_ARG;
	/* one block of count: a vector of 1 */
	return make_hvector(count < 0 ? -1 : 1, count, 0, old, newtype,
			    K_CONTIG);
}

int rmad_type_vector(int count, int blocklen, int stride, rmad_datatype_t old,
		     rmad_datatype_t *newtype)
{
	struct rmad_type_s *c = old_type(old);

	if (!c)
		return RMAD_ERR_ARG;
	return make_hvector(count, blocklen, (int64_t)stride * (c->ub - c->lb),
			    old, newtype, K_VECTOR);
}

int rmad_type_create_hvector(int count, int blocklen, ptrdiff_t stride,
			     rmad_datatype_t old, rmad_datatype_t *newtype)
{
	return make_hvector(count, blocklen, (int64_t)stride, old, newtype,
			    K_VECTOR);
}

/* indexed family: displs in bytes already; blens NULL: all blocklen */
static int make_indexed(int count, const int *blens, int blocklen,
			const int64_t *displs, struct rmad_type_s *c,
			rmad_datatype_t *newtype)
{
	struct rmad_type_s *t;
	int err = 0;

	if (!newtype || !c || count < 0 || (count && !displs) || blocklen < 0)
		return RMAD_ERR_ARG;
	t = type_alloc(K_INDEXED, count);
	if (!t)
		return RMAD_ERR_NOMEM;
	type_hold(c);
	t->child = c;
	t->blens = malloc(sizeof(*t->blens) * (size_t)(count ? count : 1));
	t->displs = malloc(sizeof(*t->displs) * (size_t)(count ? count : 1));
	if (!t->blens || !t->displs)
		err = RMAD_ERR_NOMEM;
	for (int i = 0; i < count && !err; i++) {
		int64_t bl = blens ? blens[i] : blocklen;

		if (bl < 0) {
			err = RMAD_ERR_ARG;
			break;
		}
		t->blens[i] = bl;
		t->displs[i] = displs[i];
		err = add_bounds(t, c, displs[i], bl);
		if (!err)
			err = add_data(t, c, bl);
	}
	return type_out(t, err, newtype);
}

/*
 * The indexed family: displacements in units of old's extent (idispl)
 * or in bytes (bdispl); blens NULL: every block blocklen long.
 */
static int indexed_from(int count, const int *blens, int blocklen,
			const int *idispl, const ptrdiff_t *bdispl,
			rmad_datatype_t old, rmad_datatype_t *newtype)
{
	struct rmad_type_s *c = old_type(old);
	int64_t *d;
	int err;

	if (!c || count < 0 || (count && !idispl && !bdispl))
		return RMAD_ERR_ARG;
	d = malloc(sizeof(*d) * (size_t)(count ? count : 1));
	if (!d)
		return RMAD_ERR_NOMEM;
	for (int i = 0; i < count; i++)
		d[i] = idispl ? (int64_t)idispl[i] * (c->ub - c->lb) :
				(int64_t)bdispl[i];
	err = make_indexed(count, blens, blocklen, d, c, newtype);
	free(d);
	return err;
}

int rmad_type_indexed(int count, const int *blocklens, const int *displs,
		      rmad_datatype_t old, rmad_datatype_t *newtype)
{
	if (count > 0 && !blocklens)
		return RMAD_ERR_ARG;
	return indexed_from(count, blocklens, 0, displs, NULL, old, newtype);
}

int rmad_type_create_hindexed(int count, const int *blocklens,
			      const ptrdiff_t *displs, rmad_datatype_t old,
			      rmad_datatype_t *newtype)
{
	if (count > 0 && !blocklens)
		return RMAD_ERR_ARG;
	return indexed_from(count, blocklens, 0, NULL, displs, old, newtype);
}

int rmad_type_create_indexed_block(int count, int blocklen, const int *displs,
				   rmad_datatype_t old,
				   rmad_datatype_t *newtype)
{
	return indexed_from(count, NULL, blocklen, displs, NULL, old,
			    newtype);
}

int rmad_type_create_hindexed_block(int count, int blocklen,
				    const ptrdiff_t *displs,
				    rmad_datatype_t old,
				    rmad_datatype_t *newtype)
{
	return indexed_from(count, NULL, blocklen, NULL, displs, old,
			    newtype);
}

int rmad_type_create_struct(int count, const int *blocklens,
			    const ptrdiff_t *displs,
			    const rmad_datatype_t *types,
			    rmad_datatype_t *newtype)
{
	struct rmad_type_s *t;
	int err = 0;

	if (!newtype || count < 0 ||
	    (count && (!blocklens || !displs || !types)))
		return RMAD_ERR_ARG;
	for (int i = 0; i < count; i++)
		if (!old_type(types[i]) || blocklens[i] < 0)
			return RMAD_ERR_ARG;
	t = type_alloc(K_STRUCT, count);
	if (!t)
		return RMAD_ERR_NOMEM;
	t->kids = calloc((size_t)(count ? count : 1), sizeof(*t->kids));
	t->blens = malloc(sizeof(*t->blens) * (size_t)(count ? count : 1));
	t->displs = malloc(sizeof(*t->displs) * (size_t)(count ? count : 1));
	if (!t->kids || !t->blens || !t->displs) {
		t->count = 0;
		return type_out(t, RMAD_ERR_NOMEM, newtype);
	}
	for (int i = 0; i < count && !err; i++) {
		struct rmad_type_s *c = old_type(types[i]);

		type_hold(c);
		t->kids[i] = c;
		t->blens[i] = blocklens[i];
		t->displs[i] = displs[i];
		err = add_bounds(t, c, displs[i], blocklens[i]);
		if (!err)
			err = add_data(t, c, blocklens[i]);
	}
	return type_out(t, err, newtype);
}

int rmad_type_create_resized(rmad_datatype_t old, ptrdiff_t lb,
			     ptrdiff_t extent, rmad_datatype_t *newtype)
{
	struct rmad_type_s *c = old_type(old), *t;

	if (!newtype || !c)
		return RMAD_ERR_ARG;
	t = type_alloc(K_RESIZED, 1);
	if (!t)
		return RMAD_ERR_NOMEM;
	type_hold(c);
	t->child = c;
	add_bounds(t, c, 0, 1);
	add_data(t, c, 1);
	t->empty = 0;
	t->tlb = c->empty ? 0 : c->tlb;
	t->tub = c->empty ? 0 : c->tub;
	t->lb = lb;
	t->ub = (int64_t)lb + extent;
	/* type_out must not reset these bounds */
	return type_out(t, 0, newtype);
}

int rmad_type_dup(rmad_datatype_t old, rmad_datatype_t *newtype)
{
	struct rmad_type_s *c = old_type(old), *t;
	int err;

	if (!newtype || !c)
		return RMAD_ERR_ARG;
	t = type_alloc(K_RESIZED, 1);
	if (!t)
		return RMAD_ERR_NOMEM;
	type_hold(c);
	t->child = c;
	add_bounds(t, c, 0, 1);
	err = add_data(t, c, 1);
	if (!c->empty) {
		t->lb = c->lb;
		t->ub = c->ub;
	}
	t->committed = c->committed;
	return type_out(t, err, newtype);
}

int rmad_type_create_subarray(int ndims, const int *sizes,
			      const int *subsizes, const int *starts,
			      int order, rmad_datatype_t old,
			      rmad_datatype_t *newtype)
{
	struct rmad_type_s *c = old_type(old);
	rmad_datatype_t cur = old, next;
	int64_t ext, full = 1, disp = 0;
	int err = 0;

	if (!newtype || !c || ndims < 1 || !sizes || !subsizes || !starts ||
	    (order != RMAD_ORDER_C && order != RMAD_ORDER_FORTRAN))
		return RMAD_ERR_ARG;
	for (int d = 0; d < ndims; d++)
		if (sizes[d] < 1 || subsizes[d] < 0 ||
		    subsizes[d] > sizes[d] || starts[d] < 0 ||
		    starts[d] > sizes[d] - subsizes[d])
			return RMAD_ERR_ARG;
	ext = c->ub - c->lb;
	/* innermost (fastest) dimension first: a vector per dimension */
	for (int k = 0; k < ndims && !err; k++) {
		int d = order == RMAD_ORDER_C ? ndims - 1 - k : k;

		err = rmad_type_create_hvector(subsizes[d], 1, full * ext, cur,
					       &next);
		if (k > 0)
			rmad_type_free(&cur);
		if (err)
			return err;
		cur = next;
		disp += (int64_t)starts[d] * full * ext;
		full *= sizes[d];
	}
	/* placed at its start in the full array, whose extent it has */
	{
		int bl = 1;
		ptrdiff_t dp = (ptrdiff_t)disp;
		rmad_datatype_t st;

		err = rmad_type_create_struct(1, &bl, &dp, &cur, &st);
		rmad_type_free(&cur);
		if (err)
			return err;
		err = rmad_type_create_resized(st, c->lb, (ptrdiff_t)(full * ext),
					       newtype);
		rmad_type_free(&st);
	}
	return err;
}

/* ------------------------------------------------------- life cycle */

int rmad_type_commit(rmad_datatype_t *type)
{
	struct rmad_type_s *t;

	if (!type || !(t = type_get(*type)))
		return RMAD_ERR_ARG;
	if (t->kind == K_BASIC)
		return RMAD_ERR_TYPE;	/* predefined: nothing to commit */
	__atomic_store_n(&t->committed, 1, __ATOMIC_RELEASE);
	return 0;
}

int rmad_type_free(rmad_datatype_t *type)
{
	struct rmad_type_s *t;

	if (!type || !(t = type_get(*type)) || t->kind == K_BASIC)
		return RMAD_ERR_ARG;
	pthread_mutex_lock(&type_lock);
	if (!handle_free(&type_handles, t->handle)) {
		pthread_mutex_unlock(&type_lock);
		return RMAD_ERR_ARG;
	}
	pthread_mutex_unlock(&type_lock);
	type_put(t);		/* types built on it keep it */
	*type = RMAD_DATATYPE_NULL;
	return 0;
}

int rmad_type_size(rmad_datatype_t type, size_t *size)
{
	struct rmad_type_s *t = type_get(type);

	if (!t || !size)
		return RMAD_ERR_ARG;
	*size = (size_t)t->size;
	return 0;
}

int rmad_type_get_extent(rmad_datatype_t type, ptrdiff_t *lb,
			 ptrdiff_t *extent)
{
	struct rmad_type_s *t = type_get(type);

	if (!t || !lb || !extent)
		return RMAD_ERR_ARG;
	*lb = (ptrdiff_t)t->lb;
	*extent = (ptrdiff_t)(t->ub - t->lb);
	return 0;
}

int rmad_type_get_true_extent(rmad_datatype_t type, ptrdiff_t *lb,
			      ptrdiff_t *extent)
{
	struct rmad_type_s *t = type_get(type);

	if (!t || !lb || !extent)
		return RMAD_ERR_ARG;
	*lb = (ptrdiff_t)t->tlb;
	*extent = (ptrdiff_t)(t->tub - t->tlb);
	return 0;
}

/* ---------------------------------------------------- for the ops */

struct runs {
	struct rmad_trun *r;
	size_t n, cap;
	int err;
};

/* dtree_walk's runs, merged where they abut */
static void emit(void *arg, int64_t off, uint64_t len, uint32_t basic)
{
	struct runs *rs = arg;
	struct rmad_trun *last = rs->n ? &rs->r[rs->n - 1] : NULL;

	if (!len || rs->err)
		return;
	if (last && last->basic == basic &&
	    last->off + (int64_t)last->len == off) {
		last->len += len;
		return;
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct rmad_trun *p;

		if (cap > RMAD_TRUNS_MAX) {
			rs->err = RMAD_ERR_NOMEM;
			return;
		}
		p = realloc(rs->r, sizeof(*p) * cap);
		if (!p) {
			rs->err = RMAD_ERR_NOMEM;
			return;
		}
		rs->r = p;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct rmad_trun){ off, len, basic };
}

/* ------------------------------------------------------ the tree */

/* t's wire form (dtree.h) into b; -1 when it is too deep to travel */
static int ser(struct dtree_wbuf *b, const struct rmad_type_s *t, int depth)
{
	if (depth > DTREE_OWN_DEPTH)
		return -1;
	switch (t->kind) {
	case K_BASIC:
		dtree_w_u8(b, DTREE_BASIC);
		dtree_w_u8(b, (uint8_t)t->basic);
		return 0;
	case K_CONTIG:
	case K_VECTOR:
		dtree_w_u8(b, DTREE_VECTOR);
		dtree_w_i64(b, t->count);
		dtree_w_i64(b, t->blocklen);
		dtree_w_i64(b, t->stride);
		return ser(b, t->child, depth + 1);
	case K_INDEXED:
	case K_STRUCT:
		dtree_w_u8(b, t->kind == K_INDEXED ? DTREE_INDEXED :
						     DTREE_STRUCT);
		dtree_w_i64(b, t->count);
		for (int i = 0; i < t->count; i++) {
			dtree_w_i64(b, t->blens[i]);
			dtree_w_i64(b, t->displs[i]);
		}
		if (t->kind == K_INDEXED)
			return ser(b, t->child, depth + 1);
		for (int i = 0; i < t->count; i++)
			if (ser(b, t->kids[i], depth + 1))
				return -1;
		return 0;
	case K_RESIZED:
		/* a resized type's bounds are its own; a dup's its child's,
		 * which an empty dup has none of */
		dtree_w_u8(b, DTREE_RESIZED);
		dtree_w_u8(b, !t->empty);
		dtree_w_i64(b, t->lb);
		dtree_w_i64(b, t->ub);
		return ser(b, t->child, depth + 1);
	}
	return -1;
}

struct rmad_type_s *rmad_type_tree(rmad_datatype_t type)
{
	struct rmad_type_s *t = type_get(type);
	struct dtree_wbuf b = { 0 };
	int st;

	if (!t || t->kind == K_BASIC ||
	    !__atomic_load_n(&t->committed, __ATOMIC_ACQUIRE))
		return NULL;
	/* made once: after that, no lock on the ops' path */
	st = __atomic_load_n(&t->tree_state, __ATOMIC_ACQUIRE);
	if (!st) {
		pthread_mutex_lock(&type_lock);
		st = t->tree_state;
		if (!st) {
			dtree_w_u32(&b, DTREE_MAGIC);
			if (ser(&b, t, 0) || b.err ||
			    dtree_parse_own(b.p, b.n, &t->dt)) {
				free(b.p);
				st = -1;
			} else {
				t->blob = b.p;
				t->blob_len = b.n;
				st = 1;
			}
			/* release: the tree before the state that says so */
			__atomic_store_n(&t->tree_state, st, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&type_lock);
	}
	if (st < 0)
		return NULL;
	type_hold(t);
	return t;
}

const struct dtree *rmad_tree_of(const struct rmad_type_s *t,
				 const uint8_t **blob, size_t *len)
{
	if (blob)
		*blob = t->blob;
	if (len)
		*len = t->blob_len;
	return t->dt;
}

void rmad_type_release(struct rmad_type_s *t)
{
	type_put(t);
}

int rmad_type_check(rmad_datatype_t type)
{
	struct rmad_type_s *t = type_get(type);

	if (!t)
		return RMAD_ERR_TYPE;
	return __atomic_load_n(&t->committed, __ATOMIC_ACQUIRE) ?
	       0 : RMAD_ERR_TYPE;
}

int rmad_type_runs(rmad_datatype_t type, int count, struct rmad_trun **out,
		   size_t *n, uint64_t *nbytes, int64_t *lo, int64_t *hi)
{
	struct rmad_type_s *t = type_get(type), *h = NULL;
	struct runs rs = { 0 };

	*out = NULL;
	*n = 0;
	if (!t || !__atomic_load_n(&t->committed, __ATOMIC_ACQUIRE) ||
	    count < 0)
		return RMAD_ERR_TYPE;
	if ((uint64_t)count * t->size > (1ull << 40))
		return RMAD_ERR_ARG;
	if (t->kind == K_BASIC) {
		if (count)
			emit(&rs, 0, (uint64_t)count * t->size, t->basic);
	} else {
		h = rmad_type_tree(type);
		if (!h)
			return RMAD_ERR_TYPE;
		dtree_walk(h->dt, (uint64_t)count, 0,
			   (uint64_t)count * h->dt->size, emit, &rs);
		type_put(h);
	}
	if (rs.err) {
		free(rs.r);
		return rs.err;
	}
	*lo = 0;
	*hi = 0;
	for (size_t k = 0; k < rs.n; k++) {
		if (!k || rs.r[k].off < *lo)
			*lo = rs.r[k].off;
		if (!k || rs.r[k].off + (int64_t)rs.r[k].len > *hi)
			*hi = rs.r[k].off + (int64_t)rs.r[k].len;
	}
	*nbytes = (uint64_t)count * t->size;
	*out = rs.r;
	*n = rs.n;
	return 0;
}
