/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtype.c - predefined datatypes and the accumulate-family reductions.
 *
 * One table row per datatype id: element size, the ops MPI-3.1 allows on
 * it, whether compare_and_swap is, and the apply function.  The apply
 * functions are generated per C type by DEFINE_APPLY; each works on the
 * unsigned integer of the element's width (U), so that integer SUM and
 * PROD wrap without undefined behaviour and floats are updated through
 * their bit pattern.  Values are moved in and out of T with memcpy.
 *
 * Per element, with dst aligned: NO_OP is an atomic load, REPLACE an
 * exchange, integer SUM/BAND/BOR/BXOR the matching fetch-and-op, and
 * everything else (PROD, MIN, MAX, logical ops, float arithmetic) a
 * compare-exchange loop.  All are __ATOMIC_SEQ_CST and lock-free (checked
 * below), so they are atomic across processes sharing the memory.  An
 * unaligned dst element is read, combined and written back with memcpy:
 * not atomic (documented in dtype.h).
 */
#include <float.h>
#include <limits.h>
#include <string.h>
#include <wchar.h>

#include "rmad_abi.h"
#include "dtype.h"

/* A lock-based (libatomic) fallback would not be atomic across processes. */
#if __GCC_ATOMIC_CHAR_LOCK_FREE != 2 || __GCC_ATOMIC_SHORT_LOCK_FREE != 2 || \
	__GCC_ATOMIC_INT_LOCK_FREE != 2 || __GCC_ATOMIC_LONG_LOCK_FREE != 2 || \
	__GCC_ATOMIC_LLONG_LOCK_FREE != 2
#error "rmad needs lock-free 8- to 64-bit atomics"
#endif

#define SEQ	__ATOMIC_SEQ_CST

/* The new value of an element: old `o` op operand `s`, both as bits. */
#define DEFINE_COMBINE(NAME, T, U, FLT)					\
static U NAME##_comb(U o, U s, uint32_t op)				\
{									\
	T a, b, r;							\
									\
	memcpy(&a, &o, sizeof(a));					\
	memcpy(&b, &s, sizeof(b));					\
	switch (op) {							\
	case RMAD_SUM:							\
		if (!(FLT))						\
			return (U)(o + s);				\
		r = a + b;						\
		break;							\
	case RMAD_PROD:							\
		if (!(FLT))						\
			return (U)((uint64_t)o * (uint64_t)s);		\
		r = a * b;						\
		break;							\
	case RMAD_MIN:							\
		return b < a ? s : o;					\
	case RMAD_MAX:							\
		return b > a ? s : o;					\
	case RMAD_BAND:							\
		return (U)(o & s);					\
	case RMAD_BOR:							\
		return (U)(o | s);					\
	case RMAD_BXOR:							\
		return (U)(o ^ s);					\
	case RMAD_LAND:							\
		r = (T)(a != 0 && b != 0);				\
		break;							\
	case RMAD_LOR:							\
		r = (T)(a != 0 || b != 0);				\
		break;							\
	case RMAD_LXOR:							\
		r = (T)((a != 0) != (b != 0));				\
		break;							\
	case RMAD_REPLACE:						\
		return s;						\
	default:		/* RMAD_NO_OP */			\
		return o;						\
	}								\
	memcpy(&o, &r, sizeof(o));					\
	return o;							\
}

/*
 * Apply op to n elements of U, with NAME##_comb combining one; the old
 * values go to res.  FLT: no integer fetch-and-op fast paths (floats,
 * and the types combined by a function of our own: complex, pairs).
 */
#define DEFINE_APPLY_LOOP(NAME, U, FLT)					\
static void NAME##_apply(void *dst, const void *src, void *res,	\
			 uint32_t op, uint64_t n)			\
{									\
	for (uint64_t i = 0; i < n; i++) {				\
		char *d = (char *)dst + i * sizeof(U);			\
		U *p = (U *)(void *)d;					\
		U s = 0, o;						\
									\
		if (src)						\
			memcpy(&s, (const char *)src + i * sizeof(U),	\
			       sizeof(U));				\
		if ((uintptr_t)d % sizeof(U)) {	/* not atomic */	\
			U nv;						\
									\
			memcpy(&o, d, sizeof(U));			\
			nv = NAME##_comb(o, s, op);			\
			memcpy(d, &nv, sizeof(U));			\
		} else if (op == RMAD_NO_OP) {				\
			o = __atomic_load_n(p, SEQ);			\
		} else if (op == RMAD_REPLACE) {			\
			o = __atomic_exchange_n(p, s, SEQ);		\
		} else if (!(FLT) && op == RMAD_SUM) {			\
			o = __atomic_fetch_add(p, s, SEQ);		\
		} else if (!(FLT) && op == RMAD_BAND) {			\
			o = __atomic_fetch_and(p, s, SEQ);		\
		} else if (!(FLT) && op == RMAD_BOR) {			\
			o = __atomic_fetch_or(p, s, SEQ);		\
		} else if (!(FLT) && op == RMAD_BXOR) {			\
			o = __atomic_fetch_xor(p, s, SEQ);		\
		} else {						\
			o = __atomic_load_n(p, __ATOMIC_RELAXED);	\
			while (!__atomic_compare_exchange_n(p, &o,	\
					NAME##_comb(o, s, op), 0,	\
					SEQ, __ATOMIC_RELAXED))		\
				;					\
		}							\
		if (res)						\
			memcpy((char *)res + i * sizeof(U), &o,		\
			       sizeof(U));				\
	}								\
}

/* Apply for a C type T moved as the unsigned integer U of its width. */
#define DEFINE_APPLY(NAME, T, U, FLT)					\
_Static_assert(sizeof(T) == sizeof(U), #NAME ": T and U differ");	\
DEFINE_COMBINE(NAME, T, U, FLT)						\
DEFINE_APPLY_LOOP(NAME, U, FLT)

/* float _Complex: SUM and PROD */
static uint64_t cflt_comb(uint64_t o, uint64_t s, uint32_t op)
{
	float _Complex a, b, r;

	memcpy(&a, &o, sizeof(a));
	memcpy(&b, &s, sizeof(b));
	switch (op) {
	case RMAD_SUM:
		r = a + b;
		break;
	case RMAD_PROD:
		r = a * b;
		break;
	case RMAD_REPLACE:
		return s;
	default:
		return o;
	}
	memcpy(&o, &r, sizeof(o));
	return o;
}

/*
 * A pair { value; index } of 8 bytes, the index an int (2FLOAT: a
 * float): MINLOC keeps the smaller value and, on a tie, the smaller
 * index; MAXLOC the larger value, the same tie rule (MPI-3.1 5.9.4).
 */
#define DEFINE_PAIR(NAME, VT, IT)					\
struct NAME##_pair { VT v; IT i; };					\
_Static_assert(sizeof(struct NAME##_pair) == 8, #NAME " pair size");	\
static uint64_t NAME##_comb(uint64_t o, uint64_t s, uint32_t op)	\
{									\
	struct NAME##_pair a, b;					\
									\
	memcpy(&a, &o, sizeof(a));					\
	memcpy(&b, &s, sizeof(b));					\
	switch (op) {							\
	case RMAD_MINLOC:						\
		return b.v < a.v || (b.v == a.v && b.i < a.i) ? s : o;	\
	case RMAD_MAXLOC:						\
		return b.v > a.v || (b.v == a.v && b.i < a.i) ? s : o;	\
	case RMAD_REPLACE:						\
		return s;						\
	default:							\
		return o;						\
	}								\
}

DEFINE_PAIR(fltint, float, int)
DEFINE_PAIR(twoint, int, int)
DEFINE_PAIR(shortint, short, int)
DEFINE_PAIR(twoflt, float, float)
DEFINE_APPLY_LOOP(cflt, uint64_t, 1)
DEFINE_APPLY_LOOP(fltint, uint64_t, 1)
DEFINE_APPLY_LOOP(twoint, uint64_t, 1)
DEFINE_APPLY_LOOP(shortint, uint64_t, 1)
DEFINE_APPLY_LOOP(twoflt, uint64_t, 1)

/*
 * Types wider than 8 bytes: no lock-free atomic covers them, so their
 * apply is a plain read, combine and write, element by element; every
 * caller holds the target member's accumulate lock (rmad_dtype_wide).
 */
#define DEFINE_WIDE(NAME, T)						\
static void NAME##_apply(void *dst, const void *src, void *res,	\
			 uint32_t op, uint64_t n)			\
{									\
	for (uint64_t i = 0; i < n; i++) {				\
		T o, v;							\
									\
		memcpy(&o, (char *)dst + i * sizeof(T), sizeof(T));	\
		if (res)						\
			memcpy((char *)res + i * sizeof(T), &o,		\
			       sizeof(T));				\
		if (op == RMAD_NO_OP)					\
			continue;					\
		memcpy(&v, (const char *)src + i * sizeof(T),		\
		       sizeof(T));					\
		o = NAME##_comb(o, v, op);				\
		memcpy((char *)dst + i * sizeof(T), &o, sizeof(T));	\
	}								\
}

/* The ops every real and complex type takes, as cases of a switch on op
 * in a combiner of o (the target's) and s (the origin's). */
#define ARITH_CASES(o, s)						\
	case RMAD_SUM:							\
		return (o) + (s);					\
	case RMAD_PROD:							\
		return (o) * (s);					\
	case RMAD_REPLACE:						\
		return (s);						\
	default:							\
		return (o);

#define DEFINE_REAL_COMB(NAME, T)					\
static T NAME##_comb(T o, T s, uint32_t op)				\
{									\
	switch (op) {							\
	case RMAD_MIN:							\
		return s < o ? s : o;					\
	case RMAD_MAX:							\
		return s > o ? s : o;					\
	ARITH_CASES(o, s)						\
	}								\
}

/*
 * IEEE binary128 (Fortran's REAL*16): GCC's and clang's __float128,
 * in software on x86-64; where there is none, long double is binary128
 * (aarch64, ppc64le with -mabi=ieeelongdouble) or the type is refused.
 * Its complex is a pair of them, combined here.
 */
#if defined(__SIZEOF_FLOAT128__)
typedef __float128 f128_t;
#define HAVE_F128 1
#elif LDBL_MANT_DIG == 113
typedef long double f128_t;
#define HAVE_F128 1
#endif

DEFINE_REAL_COMB(ldbl, long double)
#ifdef HAVE_F128
DEFINE_REAL_COMB(f128, f128_t)
struct c128 { f128_t re, im; };
static struct c128 c128_comb(struct c128 o, struct c128 s, uint32_t op)
{
	struct c128 r = o;

	switch (op) {
	case RMAD_SUM:
		r.re = o.re + s.re;
		r.im = o.im + s.im;
		return r;
	case RMAD_PROD:
		r.re = o.re * s.re - o.im * s.im;
		r.im = o.re * s.im + o.im * s.re;
		return r;
	case RMAD_REPLACE:
		return s;
	default:
		return o;
	}
}
#endif

#define DEFINE_CPLX_COMB(NAME, T)					\
static T NAME##_comb(T o, T s, uint32_t op)				\
{									\
	switch (op) {							\
	ARITH_CASES(o, s)						\
	}								\
}

DEFINE_CPLX_COMB(cdbl, double _Complex)
DEFINE_CPLX_COMB(cldbl, long double _Complex)

/* the wide pairs { value; index }, MINLOC and MAXLOC as above */
#define DEFINE_WIDE_PAIR(NAME, VT, IT)					\
struct NAME##_pair { VT v; IT i; };					\
static struct NAME##_pair NAME##_comb(struct NAME##_pair a,		\
				      struct NAME##_pair b, uint32_t op) \
{									\
	switch (op) {							\
	case RMAD_MINLOC:						\
		return b.v < a.v || (b.v == a.v && b.i < a.i) ? b : a;	\
	case RMAD_MAXLOC:						\
		return b.v > a.v || (b.v == a.v && b.i < a.i) ? b : a;	\
	case RMAD_REPLACE:						\
		return b;						\
	default:							\
		return a;						\
	}								\
}

DEFINE_WIDE_PAIR(dblint, double, int)
DEFINE_WIDE_PAIR(longint, long, int)
DEFINE_WIDE_PAIR(ldblint, long double, int)
DEFINE_WIDE_PAIR(twodbl, double, double)
_Static_assert(sizeof(struct dblint_pair) == 16 &&
	       sizeof(struct longint_pair) == 16 &&
	       sizeof(struct ldblint_pair) == 32 &&
	       sizeof(struct twodbl_pair) == 16, "wide pair sizes");

DEFINE_WIDE(ldbl, long double)
#ifdef HAVE_F128
DEFINE_WIDE(f128, f128_t)
DEFINE_WIDE(c128, struct c128)
_Static_assert(sizeof(f128_t) == 16 && sizeof(struct c128) == 32,
	       "binary128 sizes");
#endif
DEFINE_WIDE(cdbl, double _Complex)
DEFINE_WIDE(cldbl, long double _Complex)
DEFINE_WIDE(dblint, struct dblint_pair)
DEFINE_WIDE(longint, struct longint_pair)
DEFINE_WIDE(ldblint, struct ldblint_pair)
DEFINE_WIDE(twodbl, struct twodbl_pair)

/* The types an atomic of their width covers: name, C type, the unsigned
 * type of its width, and whether it is a float (no fetch-and-op) */
#define ATOMIC_TYPES(X)							\
	X(u8, uint8_t, uint8_t, 0)					\
	X(u16, uint16_t, uint16_t, 0)					\
	X(u32, uint32_t, uint32_t, 0)					\
	X(u64, uint64_t, uint64_t, 0)					\
	X(i8, int8_t, uint8_t, 0)					\
	X(i16, int16_t, uint16_t, 0)					\
	X(i32, int32_t, uint32_t, 0)					\
	X(i64, int64_t, uint64_t, 0)					\
	X(int, int, unsigned int, 0)					\
	X(long, long, unsigned long, 0)					\
	X(flt, float, uint32_t, 1)					\
	X(dbl, double, uint64_t, 1)

ATOMIC_TYPES(DEFINE_APPLY)

/*
 * Bulk (accword.h): n elements combined with plain loads and stores,
 * which the compiler vectorizes, for a caller that excludes every other
 * accumulator of these elements.  Old values go to res first.  Integer
 * arithmetic wraps (done in U); the ops without a loop of their own
 * combine element by element with NAME##_comb, still plainly.
 */
/* -O2's very cheap cost model vectorizes no loop whose count is not
 * known: these are worth it (clang vectorizes them at -O2 already) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#define BULK_LOOP(U, EXPR)						\
	for (uint64_t i = 0; i < n; i++) {				\
		U a = d[i], b;						\
									\
		memcpy(&b, s + i * sizeof(U), sizeof(U));		\
		d[i] = (EXPR);						\
	}

/* AVX2 where the CPU has it (chosen once, at load, by an ifunc): twice
 * the elements per instruction of x86-64's baseline SSE2.  Not under
 * ThreadSanitizer, whose instrumented resolver would run before its
 * runtime is up (the program crashes at load). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BULK_NO_CLONES
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define BULK_NO_CLONES
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(BULK_NO_CLONES)
#if __has_attribute(target_clones)
#define BULK_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef BULK_CLONES
#define BULK_CLONES
#endif

#define DEFINE_BULK(NAME, T, U, FLT)					\
BULK_CLONES								\
static void NAME##_bulk(void *dst, const void *src, void *res,	\
			uint32_t op, uint64_t n)			\
{									\
	const unsigned char *s = src;					\
									\
	if (res)							\
		memcpy(res, dst, n * sizeof(U));			\
	if (op == RMAD_NO_OP)						\
		return;							\
	if (op == RMAD_REPLACE) {					\
		memmove(dst, src, n * sizeof(U));			\
		return;							\
	}								\
	if (FLT) {							\
		T *d = dst;						\
									\
		switch (op) {						\
		case RMAD_SUM:						\
			BULK_LOOP(T, a + b)				\
			return;						\
		case RMAD_PROD:						\
			BULK_LOOP(T, a * b)				\
			return;						\
		case RMAD_MIN:						\
			BULK_LOOP(T, b < a ? b : a)			\
			return;						\
		case RMAD_MAX:						\
			BULK_LOOP(T, b > a ? b : a)			\
			return;						\
		}							\
	} else {							\
		U *d = dst;						\
									\
		switch (op) {						\
		case RMAD_SUM:						\
			BULK_LOOP(U, (U)(a + b))			\
			return;						\
		case RMAD_PROD:						\
			BULK_LOOP(U, (U)((uint64_t)a * (uint64_t)b))	\
			return;						\
		case RMAD_BAND:						\
			BULK_LOOP(U, (U)(a & b))			\
			return;						\
		case RMAD_BOR:						\
			BULK_LOOP(U, (U)(a | b))			\
			return;						\
		case RMAD_BXOR:						\
			BULK_LOOP(U, (U)(a ^ b))			\
			return;						\
		case RMAD_MIN:						\
			BULK_LOOP(U, (T)b < (T)a ? b : a)		\
			return;						\
		case RMAD_MAX:						\
			BULK_LOOP(U, (T)b > (T)a ? b : a)		\
			return;						\
		}							\
	}								\
	{								\
		U *d = dst;						\
									\
		BULK_LOOP(U, NAME##_comb(a, b, op))			\
	}								\
}

ATOMIC_TYPES(DEFINE_BULK)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#define OP(o)		(1u << (o))
#define OPS_ANY		(OP(RMAD_REPLACE) | OP(RMAD_NO_OP))
#define OPS_BIT		(OP(RMAD_BAND) | OP(RMAD_BOR) | OP(RMAD_BXOR))
#define OPS_ARITH	(OP(RMAD_SUM) | OP(RMAD_PROD) | OP(RMAD_MIN) | \
			 OP(RMAD_MAX))
#define OPS_LOGIC	(OP(RMAD_LAND) | OP(RMAD_LOR) | OP(RMAD_LXOR))
#define OPS_INT		(OPS_ARITH | OPS_LOGIC | OPS_BIT | OPS_ANY)
#define OPS_FLOAT	(OPS_ARITH | OPS_ANY)
#define OPS_COMPLEX	(OP(RMAD_SUM) | OP(RMAD_PROD) | OPS_ANY)
#define OPS_PAIR	(OP(RMAD_MINLOC) | OP(RMAD_MAXLOC) | OPS_ANY)
#define OP_MAX		RMAD_MAXLOC

typedef void apply_fn(void *dst, const void *src, void *res, uint32_t op,
		      uint64_t n);

/* C's char: signed on x86-64, unsigned on aarch64 and POWER */
#if CHAR_MIN < 0
#define CHAR_APPLY	i8_apply
#define CHAR_BULK	i8_bulk
#else
#define CHAR_APPLY	u8_apply
#define CHAR_BULK	u8_bulk
#endif

static const struct dtype {
	size_t size;		/* 0: no such type */
	uint32_t ops;		/* OP(op) for every op allowed */
	int cas;		/* compare_and_swap allowed: every type
				 * whose two operands fit an op element's
				 * inline area (bitwise, as Open MPI's) */
	apply_fn *apply;
} dtypes[RMAD_DTYPE_MAX + 1] = {
	[RMAD_BYTE]   = { 1, OPS_INT, 1, u8_apply },
	[RMAD_CHAR]   = { sizeof(char), OPS_INT, 1, CHAR_APPLY },
	[RMAD_INT]    = { sizeof(int), OPS_INT, 1, int_apply },
	[RMAD_LONG]   = { sizeof(long), OPS_INT, 1, long_apply },
	[RMAD_INT8]   = { 1, OPS_INT, 1, i8_apply },
	[RMAD_INT16]  = { 2, OPS_INT, 1, i16_apply },
	[RMAD_INT32]  = { 4, OPS_INT, 1, i32_apply },
	[RMAD_INT64]  = { 8, OPS_INT, 1, i64_apply },
	[RMAD_UINT8]  = { 1, OPS_INT, 1, u8_apply },
	[RMAD_UINT16] = { 2, OPS_INT, 1, u16_apply },
	[RMAD_UINT32] = { 4, OPS_INT, 1, u32_apply },
	[RMAD_UINT64] = { 8, OPS_INT, 1, u64_apply },
	[RMAD_FLOAT]  = { sizeof(float), OPS_FLOAT, 1, flt_apply },
	[RMAD_DOUBLE] = { sizeof(double), OPS_FLOAT, 1, dbl_apply },
	[RMAD_SHORT]  = { sizeof(short), OPS_INT, 1, i16_apply },
	[RMAD_LONG_LONG] = { sizeof(long long), OPS_INT, 1, i64_apply },
	[RMAD_SIGNED_CHAR] = { 1, OPS_INT, 1, i8_apply },
	[RMAD_UNSIGNED_CHAR] = { 1, OPS_INT, 1, u8_apply },
	[RMAD_UNSIGNED_SHORT] = { sizeof(unsigned short), OPS_INT, 1,
				  u16_apply },
	[RMAD_UNSIGNED] = { sizeof(unsigned), OPS_INT, 1, u32_apply },
	[RMAD_UNSIGNED_LONG] = { sizeof(unsigned long), OPS_INT, 1,
				 u64_apply },
	[RMAD_UNSIGNED_LONG_LONG] = { sizeof(unsigned long long), OPS_INT, 1,
				      u64_apply },
	[RMAD_WCHAR]  = { sizeof(int32_t), OPS_ANY, 1, u32_apply },
	[RMAD_C_BOOL] = { sizeof(_Bool), OPS_LOGIC | OPS_ANY, 1, u8_apply },
	/* wider than any lock-free atomic: under the accumulate lock */
	[RMAD_LONG_DOUBLE] = { sizeof(long double), OPS_FLOAT, 1,
			       ldbl_apply },
	[RMAD_C_FLOAT_COMPLEX] = { sizeof(float _Complex), OPS_COMPLEX, 1,
				   cflt_apply },
	[RMAD_C_DOUBLE_COMPLEX] = { sizeof(double _Complex), OPS_COMPLEX, 1,
				    cdbl_apply },
	[RMAD_C_LONG_DOUBLE_COMPLEX] = { sizeof(long double _Complex),
					 OPS_COMPLEX, 0, cldbl_apply },
	[RMAD_FLOAT_INT] = { 8, OPS_PAIR, 1, fltint_apply },
	[RMAD_DOUBLE_INT] = { 16, OPS_PAIR, 1, dblint_apply },
	[RMAD_LONG_INT] = { 16, OPS_PAIR, 1, longint_apply },
	[RMAD_2INT]   = { 8, OPS_PAIR, 1, twoint_apply },
	[RMAD_SHORT_INT] = { 8, OPS_PAIR, 1, shortint_apply },
	[RMAD_LONG_DOUBLE_INT] = { 32, OPS_PAIR, 0, ldblint_apply },
	[RMAD_2FLOAT] = { 8, OPS_PAIR, 1, twoflt_apply },
	[RMAD_2DOUBLE] = { 16, OPS_PAIR, 1, twodbl_apply },
#ifdef HAVE_F128
	[RMAD_FLOAT128] = { 16, OPS_FLOAT, 1, f128_apply },
	[RMAD_C_FLOAT128_COMPLEX] = { 32, OPS_COMPLEX, 0, c128_apply },
#endif
};
_Static_assert(sizeof(wchar_t) == 4 && sizeof(long double) == 16 &&
	       sizeof(long) == 8, "the sizes the table assumes (LP64)");

static const struct dtype *dtype_of(uint32_t dtype)
{
	return dtype <= RMAD_DTYPE_MAX && dtypes[dtype].size ?
	       &dtypes[dtype] : NULL;
}

size_t rmad_dtype_size(uint32_t dtype)
{
	const struct dtype *t = dtype_of(dtype);

	return t ? t->size : 0;
}

int rmad_op_check(uint32_t dtype, uint32_t op)
{
	const struct dtype *t = dtype_of(dtype);

	if (!t)
		return RMAD_ERR_TYPE;
	if (op < 1 || op > OP_MAX || !(t->ops & OP(op)))
		return RMAD_ERR_OP;
	return 0;
}

int rmad_dtype_wide(uint32_t dtype)
{
	return rmad_dtype_size(dtype) > 8;
}

int rmad_cas_check(uint32_t dtype)
{
	const struct dtype *t = dtype_of(dtype);

	return t && t->cas ? 0 : RMAD_ERR_TYPE;
}

void rmad_acc_apply(void *dst, const void *src, void *result, uint32_t dtype,
		    uint32_t op, uint64_t count)
{
	if (rmad_op_check(dtype, op) || !dst || (!src && op != RMAD_NO_OP))
		return;
	/* a wide type's caller holds the accumulate lock: plain loops do */
	if (dtypes[dtype].size > 8 &&
	    !rmad_acc_apply_bulk(dst, src, result, dtype, op, count))
		return;
	dtypes[dtype].apply(dst, src, result, op, count);
}

/*
 * The complexes (of float and double here, of long double below): a SUM
 * is the SUM of the parts, and REPLACE and NO_OP move bytes, so the
 * parts' loops do them on 2n elements; PROD is a loop of C's complex product (the compiler's
 * inline product, with its rules for infinities and NaNs behind a
 * check), the same expression as the element code's, so the same bits.
 */
#define DEFINE_CBULK(NAME, PART, T)					\
static void NAME##_bulk(void *dst, const void *src, void *res,	\
			uint32_t op, uint64_t n)			\
{									\
	if (op == RMAD_PROD) {						\
		const unsigned char *s = src;				\
		T *d = dst;						\
									\
		if (res)						\
			memcpy(res, dst, n * sizeof(T));		\
		BULK_LOOP(T, a * b)					\
		return;							\
	}								\
	PART##_bulk(dst, src, res, op, 2 * n);				\
}

DEFINE_CBULK(cflt, flt, float _Complex)
DEFINE_CBULK(cdbl, dbl, double _Complex)

/*
 * long double (x87's 80 bits in 16 bytes on x86-64): no vector unit
 * takes it, but a plain loop still saves the per-element copies and
 * switch of its wide apply (7 ns an element; bench/acc_rate).  Its
 * complex's loops are DEFINE_CBULK's, as above.  Every caller excludes
 * the other accumulators already (wide types are always under the
 * accumulate lock), so rmad_acc_apply runs these too.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif
static void ldbl_bulk(void *dst, const void *src, void *res, uint32_t op,
		      uint64_t n)
{
	const unsigned char *s = src;
	long double *d = dst;

	if (res)
		memcpy(res, dst, n * sizeof(*d));
	switch (op) {
	case RMAD_NO_OP:
		return;
	case RMAD_REPLACE:
		memmove(dst, src, n * sizeof(*d));
		return;
	case RMAD_SUM:
		BULK_LOOP(long double, a + b)
		return;
	case RMAD_PROD:
		BULK_LOOP(long double, a * b)
		return;
	case RMAD_MIN:
		BULK_LOOP(long double, b < a ? b : a)
		return;
	case RMAD_MAX:
		BULK_LOOP(long double, b > a ? b : a)
		return;
	}
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

DEFINE_CBULK(cldbl, ldbl, long double _Complex)

static apply_fn *const bulks[RMAD_DTYPE_MAX + 1] = {
	[RMAD_BYTE] = u8_bulk, [RMAD_CHAR] = CHAR_BULK, [RMAD_INT] = int_bulk,
	[RMAD_LONG] = long_bulk, [RMAD_INT8] = i8_bulk,
	[RMAD_INT16] = i16_bulk, [RMAD_INT32] = i32_bulk,
	[RMAD_INT64] = i64_bulk, [RMAD_UINT8] = u8_bulk,
	[RMAD_UINT16] = u16_bulk, [RMAD_UINT32] = u32_bulk,
	[RMAD_UINT64] = u64_bulk, [RMAD_FLOAT] = flt_bulk,
	[RMAD_DOUBLE] = dbl_bulk, [RMAD_SHORT] = i16_bulk,
	[RMAD_LONG_LONG] = i64_bulk, [RMAD_SIGNED_CHAR] = i8_bulk,
	[RMAD_UNSIGNED_CHAR] = u8_bulk, [RMAD_UNSIGNED_SHORT] = u16_bulk,
	[RMAD_UNSIGNED] = u32_bulk, [RMAD_UNSIGNED_LONG] = u64_bulk,
	[RMAD_UNSIGNED_LONG_LONG] = u64_bulk, [RMAD_WCHAR] = u32_bulk,
	[RMAD_C_BOOL] = u8_bulk, [RMAD_C_FLOAT_COMPLEX] = cflt_bulk,
	[RMAD_C_DOUBLE_COMPLEX] = cdbl_bulk, [RMAD_LONG_DOUBLE] = ldbl_bulk,
	[RMAD_C_LONG_DOUBLE_COMPLEX] = cldbl_bulk,
};

int rmad_acc_apply_bulk(void *dst, const void *src, void *result,
			uint32_t dtype, uint32_t op, uint64_t count)
{
	if (rmad_op_check(dtype, op) || !dst || (!src && op != RMAD_NO_OP) ||
	    !bulks[dtype] || (uintptr_t)dst % dtypes[dtype].size)
		return -1;
	bulks[dtype](dst, src, result, op, count);
	return 0;
}

void rmad_acc_apply_excl(void *dst, const void *src, void *result,
			uint32_t dtype, uint32_t op, uint64_t count)
{
	if (rmad_acc_apply_bulk(dst, src, result, dtype, op, count))
		rmad_acc_apply(dst, src, result, dtype, op, count);
}

/* Compare-and-swap of one element of U, bitwise. */
#define DEFINE_CAS(U)							\
static void cas_##U(void *dst, const void *src, const void *cmp,	\
		    void *res)						\
{									\
	U s, o;								\
									\
	memcpy(&s, src, sizeof(U));					\
	memcpy(&o, cmp, sizeof(U));					\
	if ((uintptr_t)dst % sizeof(U)) {	/* not atomic */	\
		U c = o;						\
									\
		memcpy(&o, dst, sizeof(U));				\
		if (o == c)						\
			memcpy(dst, &s, sizeof(U));			\
	} else {							\
		/* on failure o becomes the current value */		\
		__atomic_compare_exchange_n((U *)dst, &o, s, 0, SEQ,	\
					    SEQ);			\
	}								\
	if (res)							\
		memcpy(res, &o, sizeof(U));				\
}

DEFINE_CAS(uint8_t)
DEFINE_CAS(uint16_t)
DEFINE_CAS(uint32_t)
DEFINE_CAS(uint64_t)

void rmad_cas_apply(void *dst, const void *src, const void *cmp, void *result,
		    uint32_t dtype)
{
	if (rmad_cas_check(dtype) || !dst || !src || !cmp)
		return;
	switch (dtypes[dtype].size) {
	case 1:
		cas_uint8_t(dst, src, cmp, result);
		break;
	case 2:
		cas_uint16_t(dst, src, cmp, result);
		break;
	case 4:
		cas_uint32_t(dst, src, cmp, result);
		break;
	case 8:
		cas_uint64_t(dst, src, cmp, result);
		break;
	default: {	/* wide: the caller holds the accumulate lock */
		uint8_t old[16];
		size_t n = dtypes[dtype].size;

		memcpy(old, dst, n);
		if (!memcmp(old, cmp, n))
			memcpy(dst, src, n);
		if (result)
			memcpy(result, old, n);
		break;
	}
	}
}
