/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dtype.c - datatype sizes, the MPI-3.1 op x type matrix, every
 * allowed reduction against a reference computed here, compare-and-swap,
 * unaligned operands, and per-element atomicity of rmad_acc_apply under
 * multi-process contention on shared memory.
 */
#include <complex.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmad_abi.h"
#include "dtype.h"
#include "tap.h"

#define N	8		/* elements per reduction check */
#define NPROC	4
#define ROUNDS	200000		/* 20000 overlapped too little to catch a lost CAS */

static const char *const tname[] = {
	"NULL", "BYTE", "CHAR", "INT", "LONG", "INT8", "INT16", "INT32",
	"INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FLOAT", "DOUBLE",
	"SHORT", "LONG_LONG", "SIGNED_CHAR", "UNSIGNED_CHAR", "UNSIGNED_SHORT",
	"UNSIGNED", "UNSIGNED_LONG", "UNSIGNED_LONG_LONG", "WCHAR", "C_BOOL",
	"LONG_DOUBLE", "C_FLOAT_COMPLEX", "C_DOUBLE_COMPLEX",
	"C_LONG_DOUBLE_COMPLEX", "FLOAT_INT", "DOUBLE_INT", "LONG_INT",
	"2INT", "SHORT_INT", "LONG_DOUBLE_INT", "2FLOAT", "2DOUBLE", "FLOAT128",
	"C_FLOAT128_COMPLEX",
};
static const char *const oname[] = {
	"0", "SUM", "PROD", "MIN", "MAX", "BAND", "BOR", "BXOR", "LAND",
	"LOR", "LXOR", "REPLACE", "NO_OP", "MINLOC", "MAXLOC",
};

static const char *tn(uint32_t t)
{
	return t < sizeof(tname) / sizeof(tname[0]) ? tname[t] : "bad";
}

static const char *on(uint32_t o)
{
	return o < sizeof(oname) / sizeof(oname[0]) ? oname[o] : "bad";
}

/* ------------------------------------------- what MPI-3.1 5.9.2 says */

/* with CHAR and BYTE, as Open MPI and MPICH take them */
static int is_cint(uint32_t t)
{
	return t == RMAD_INT || t == RMAD_LONG || t == RMAD_CHAR ||
	       t == RMAD_BYTE ||
	       (t >= RMAD_INT8 && t <= RMAD_UINT64) ||
	       (t >= RMAD_SHORT && t <= RMAD_UNSIGNED_LONG_LONG);
}

static int is_float(uint32_t t)
{
	return t == RMAD_FLOAT || t == RMAD_DOUBLE;
}

/* wider than 8 bytes: applied under the member's accumulate lock */
static int is_wide(uint32_t t)
{
	return t == RMAD_LONG_DOUBLE || t == RMAD_C_DOUBLE_COMPLEX ||
	       t == RMAD_C_LONG_DOUBLE_COMPLEX || t == RMAD_DOUBLE_INT ||
	       t == RMAD_LONG_INT || t == RMAD_LONG_DOUBLE_INT ||
	       t == RMAD_2DOUBLE || t == RMAD_FLOAT128 ||
	       t == RMAD_C_FLOAT128_COMPLEX;
}

static int is_pair(uint32_t t)
{
	return t == RMAD_FLOAT_INT || t == RMAD_2INT || t == RMAD_SHORT_INT ||
	       t == RMAD_DOUBLE_INT || t == RMAD_LONG_INT ||
	       t == RMAD_LONG_DOUBLE_INT || t == RMAD_2FLOAT ||
	       t == RMAD_2DOUBLE;
}

static int is_complex(uint32_t t)
{
	return t == RMAD_C_FLOAT_COMPLEX || t == RMAD_C_DOUBLE_COMPLEX ||
	       t == RMAD_C_LONG_DOUBLE_COMPLEX ||
	       t == RMAD_C_FLOAT128_COMPLEX;
}

static int want_op(uint32_t t, uint32_t op)
{
	if (t < 1 || t > 38)
		return RMAD_ERR_TYPE;
	switch (op) {
	case RMAD_SUM: case RMAD_PROD:
		return is_cint(t) || is_float(t) || is_complex(t) ||
		       t == RMAD_LONG_DOUBLE || t == RMAD_FLOAT128 ? 0 :
		       RMAD_ERR_OP;
	case RMAD_MIN: case RMAD_MAX:
		return is_cint(t) || is_float(t) || t == RMAD_LONG_DOUBLE ||
		       t == RMAD_FLOAT128 ? 0 : RMAD_ERR_OP;
	case RMAD_BAND: case RMAD_BOR: case RMAD_BXOR:
		return is_cint(t) ? 0 : RMAD_ERR_OP;
	case RMAD_LAND: case RMAD_LOR: case RMAD_LXOR:
		return is_cint(t) || t == RMAD_C_BOOL ? 0 : RMAD_ERR_OP;
	case RMAD_MINLOC: case RMAD_MAXLOC:
		return is_pair(t) ? 0 : RMAD_ERR_OP;
	case RMAD_REPLACE: case RMAD_NO_OP:
		return 0;
	default:
		return RMAD_ERR_OP;
	}
}

static const uint32_t type_ids[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
				     12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
				     22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
				     32, 33, 34, 35, 36, 37, 38, 39, 99 };
#define NTYPE_IDS	(sizeof(type_ids) / sizeof(type_ids[0]))

static void check_sizes(void)
{
	static const size_t want[] = {
		0, 1, sizeof(char), sizeof(int), sizeof(long), 1, 2, 4, 8,
		1, 2, 4, 8, sizeof(float), sizeof(double),
		sizeof(short), sizeof(long long), 1, 1, sizeof(short),
		sizeof(unsigned), sizeof(long), sizeof(long long), 4, 1,
		sizeof(long double), 8, 16, 32, 8, 16, 16, 8, 8, 32, 8, 16,
		16, 32,
	};

	for (size_t k = 0; k < NTYPE_IDS; k++) {
		uint32_t t = type_ids[k];
		size_t w = t <= 38 ? want[t] : 0;

		ok(rmad_dtype_size(t) == w, "size of type %u (%s) is %zu (%zu)",
		   t, tn(t), w, rmad_dtype_size(t));
	}
}

static void check_matrix(void)
{
	for (size_t k = 0; k < NTYPE_IDS; k++) {
		uint32_t t = type_ids[k];
		int good = 1;

		for (uint32_t op = 0; op <= 15; op++) {
			int got = rmad_op_check(t, op), w = want_op(t, op);

			if (got != w) {
				diag("op_check(%s, %s) = %d, want %d", tn(t),
				     on(op), got, w);
				good = 0;
			}
		}
		ok(good, "op x type matrix row for type %u (%s), ops 0..15",
		   t, tn(t));
	}
}

static void check_cas_matrix(void)
{
	int good = 1;

	for (size_t k = 0; k < NTYPE_IDS; k++) {
		uint32_t t = type_ids[k];
		size_t sz = rmad_dtype_size(t);
		int w = sz && sz <= 16 ? 0 : RMAD_ERR_TYPE;

		if (rmad_cas_check(t) != w) {
			diag("cas_check(%u %s) = %d, want %d", t, tn(t),
			     rmad_cas_check(t), w);
			good = 0;
		}
	}
	ok(good, "cas_check: every type of at most 16 bytes");
}

/* ---------------------------------------------- reference reductions */

/* Integers: wrapping arithmetic on the unsigned bits. */
#define REF_INT(NAME, T, U)						\
static T NAME##_ref(T a, T b, uint32_t op)				\
{									\
	uint64_t x = (U)a, y = (U)b;					\
									\
	switch (op) {							\
	case RMAD_SUM:		return (T)(U)(x + y);			\
	case RMAD_PROD:		return (T)(U)(x * y);			\
	case RMAD_MIN:		return a < b ? a : b;			\
	case RMAD_MAX:		return a > b ? a : b;			\
	case RMAD_BAND:		return (T)(U)(x & y);			\
	case RMAD_BOR:		return (T)(U)(x | y);			\
	case RMAD_BXOR:		return (T)(U)(x ^ y);			\
	case RMAD_LAND:		return (T)(a && b);			\
	case RMAD_LOR:		return (T)(a || b);			\
	case RMAD_LXOR:		return (T)(!a != !b);			\
	case RMAD_REPLACE:	return b;				\
	default:		return a;				\
	}								\
}

/* Floats: C arithmetic; MIN/MAX take src when src < dst / src > dst. */
#define REF_FLT(NAME, T, U)						\
static T NAME##_ref(T a, T b, uint32_t op)				\
{									\
	switch (op) {							\
	case RMAD_SUM:		return a + b;				\
	case RMAD_PROD:		return a * b;				\
	case RMAD_MIN:		return b < a ? b : a;			\
	case RMAD_MAX:		return b > a ? b : a;			\
	case RMAD_REPLACE:	return b;				\
	default:		return a;				\
	}								\
}

/*
 * Every allowed op on N elements: aligned dst with the result fetched to
 * an unaligned buffer from an unaligned src, aligned dst without result,
 * and an unaligned dst; all must give the reference values.
 */
#define UNPAREN(...)	__VA_ARGS__
#define ACC_CHECK(...)	ACC_CHECK_(__VA_ARGS__)
#define ACC_CHECK_(NAME, T, U, ID, REF, D0, S0)				\
REF(NAME, T, U)								\
static void NAME##_acc(void)						\
{									\
	const T d0[N] = { UNPAREN D0 }, s0[N] = { UNPAREN S0 };		\
									\
	for (uint32_t op = 1; op <= RMAD_NO_OP; op++) {			\
		union { uint64_t al; unsigned char b[N * 8 + 16]; }	\
			sb, rb, ub;					\
		T exp[N], d[N], d2[N];					\
		int good;						\
									\
		if (rmad_op_check(ID, op))				\
			continue;					\
		for (int i = 0; i < N; i++)				\
			exp[i] = NAME##_ref(d0[i], s0[i], op);		\
		memcpy(d, d0, sizeof(d));				\
		memcpy(d2, d0, sizeof(d2));				\
		memcpy(ub.b + 1, d0, sizeof(d0));			\
		memcpy(sb.b + 1, s0, sizeof(s0));			\
		memset(rb.b, 0xa5, sizeof(rb.b));			\
		rmad_acc_apply(d, op == RMAD_NO_OP ? NULL : sb.b + 1,	\
			       rb.b + 1, ID, op, N);			\
		rmad_acc_apply(d2, sb.b + 1, NULL, ID, op, N);		\
		good = !memcmp(d, exp, sizeof(exp)) &&			\
		       !memcmp(d2, exp, sizeof(exp)) &&			\
		       !memcmp(rb.b + 1, d0, sizeof(d0)) &&		\
		       rb.b[0] == 0xa5 &&				\
		       rb.b[1 + sizeof(d0)] == 0xa5;			\
		memset(rb.b, 0xa5, sizeof(rb.b));			\
		rmad_acc_apply(ub.b + 1, sb.b + 1, rb.b + 1, ID, op, N);	\
		good &= !memcmp(ub.b + 1, exp, sizeof(exp)) &&		\
			!memcmp(rb.b + 1, d0, sizeof(d0));		\
		ok(good, "acc_apply %s %s on %d elements", tn(ID),	\
		   on(op), N);						\
	}								\
}

/* dst and src values: wraparound at both ends, signs, zeros for LAND */
#define IVALS(MINV, MAXV, T)						\
	(MAXV, MINV, 0, 7, (T)-1, 100, 0, (T)-100),			\
	(1, (T)-1, 5, 0, (T)-1, (T)-100, 0, 3)

ACC_CHECK(i8, int8_t, uint8_t, RMAD_INT8, REF_INT,
	  IVALS(INT8_MIN, INT8_MAX, int8_t))
ACC_CHECK(i16, int16_t, uint16_t, RMAD_INT16, REF_INT,
	  IVALS(INT16_MIN, INT16_MAX, int16_t))
ACC_CHECK(i32, int32_t, uint32_t, RMAD_INT32, REF_INT,
	  IVALS(INT32_MIN, INT32_MAX, int32_t))
ACC_CHECK(i64, int64_t, uint64_t, RMAD_INT64, REF_INT,
	  IVALS(INT64_MIN, INT64_MAX, int64_t))
ACC_CHECK(u8, uint8_t, uint8_t, RMAD_UINT8, REF_INT,
	  IVALS(0, UINT8_MAX, uint8_t))
ACC_CHECK(u16, uint16_t, uint16_t, RMAD_UINT16, REF_INT,
	  IVALS(0, UINT16_MAX, uint16_t))
ACC_CHECK(u32, uint32_t, uint32_t, RMAD_UINT32, REF_INT,
	  IVALS(0, UINT32_MAX, uint32_t))
ACC_CHECK(u64, uint64_t, uint64_t, RMAD_UINT64, REF_INT,
	  IVALS(0, UINT64_MAX, uint64_t))
ACC_CHECK(int, int, unsigned int, RMAD_INT, REF_INT,
	  IVALS(INT_MIN, INT_MAX, int))
ACC_CHECK(long, long, unsigned long, RMAD_LONG, REF_INT,
	  IVALS(LONG_MIN, LONG_MAX, long))
ACC_CHECK(byte, unsigned char, unsigned char, RMAD_BYTE, REF_INT,
	  (0xf0, 0x0f, 0, 0xff, 0xaa, 1, 0x80, 0x5a),
	  (0xff, 0xff, 0, 0x0f, 0x55, 1, 0x81, 0xa5))
ACC_CHECK(chr, char, unsigned char, RMAD_CHAR, REF_INT,
	  ('a', 'b', 0, 'z', 127, 1, '0', 'Q'),
	  ('x', 0, 'c', 'z', 1, 127, '9', 'q'))
ACC_CHECK(flt, float, uint32_t, RMAD_FLOAT, REF_FLT,
	  (1.5f, -2.25f, 0.0f, 3.0f, 100.0f, -0.5f, 1e30f, 8.0f),
	  (2.0f, 0.25f, -1.0f, 3.0f, -100.0f, -0.5f, 1e30f, 0.125f))
ACC_CHECK(dbl, double, uint64_t, RMAD_DOUBLE, REF_FLT,
	  (1.5, -2.25, 0.0, 3.0, 100.0, -0.5, 1e300, 8.0),
	  (2.0, 0.25, -1.0, 3.0, -100.0, -0.5, 1e300, 0.125))

/* Hand-computed spot checks, so the reference above is not the only
 * judge of wraparound, signedness and logical results. */
#define SPOT(T, ID, OP, A, B, WANT, DESC)				\
	do {								\
		T d_ = (A), s_ = (B), r_ = 0, w_ = (WANT);		\
									\
		rmad_acc_apply(&d_, &s_, &r_, ID, OP, 1);		\
		ok(!memcmp(&d_, &w_, sizeof(T)) && !memcmp(&r_, &(T){ A }, \
		   sizeof(T)), "%s", DESC);				\
	} while (0)

static void check_spots(void)
{
	SPOT(int8_t, RMAD_INT8, RMAD_SUM, 127, 1, -128,
	     "INT8 SUM 127 + 1 wraps to -128");
	SPOT(uint8_t, RMAD_UINT8, RMAD_SUM, 255, 2, 1,
	     "UINT8 SUM 255 + 2 wraps to 1");
	SPOT(uint8_t, RMAD_UINT8, RMAD_PROD, 200, 2, 144,
	     "UINT8 PROD 200 * 2 wraps to 144");
	SPOT(uint16_t, RMAD_UINT16, RMAD_PROD, 65535, 65535, 1,
	     "UINT16 PROD 65535 * 65535 wraps to 1");
	SPOT(int64_t, RMAD_INT64, RMAD_SUM, INT64_MAX, 1, INT64_MIN,
	     "INT64 SUM INT64_MAX + 1 wraps to INT64_MIN");
	SPOT(long, RMAD_LONG, RMAD_PROD, LONG_MAX, 2, -2,
	     "LONG PROD LONG_MAX * 2 wraps to -2");
	SPOT(int, RMAD_INT, RMAD_PROD, INT_MIN, -1, INT_MIN,
	     "INT PROD INT_MIN * -1 wraps to INT_MIN");
	SPOT(int32_t, RMAD_INT32, RMAD_MIN, 1, -1, -1,
	     "INT32 MIN(1, -1) is -1 (signed)");
	SPOT(uint32_t, RMAD_UINT32, RMAD_MIN, 1, UINT32_MAX, 1,
	     "UINT32 MIN(1, 0xffffffff) is 1 (unsigned)");
	SPOT(int16_t, RMAD_INT16, RMAD_MAX, -5, 3, 3,
	     "INT16 MAX(-5, 3) is 3");
	SPOT(uint16_t, RMAD_UINT16, RMAD_MAX, 3, 65535, 65535,
	     "UINT16 MAX(3, 65535) is 65535");
	SPOT(int8_t, RMAD_INT8, RMAD_MAX, -1, 1, 1,
	     "INT8 MAX(-1, 1) is 1 (signed)");
	SPOT(uint8_t, RMAD_UINT8, RMAD_MAX, 255, 1, 255,
	     "UINT8 MAX(255, 1) is 255 (unsigned)");
	SPOT(int, RMAD_INT, RMAD_LAND, 5, 2, 1, "INT LAND(5, 2) is 1");
	SPOT(int, RMAD_INT, RMAD_LAND, 5, 0, 0, "INT LAND(5, 0) is 0");
	SPOT(uint64_t, RMAD_UINT64, RMAD_LOR, 0, 1ull << 40, 1,
	     "UINT64 LOR(0, 2^40) is 1");
	SPOT(int32_t, RMAD_INT32, RMAD_LXOR, 5, 2, 0,
	     "INT32 LXOR(5, 2) is 0");
	SPOT(int32_t, RMAD_INT32, RMAD_LXOR, 0, -7, 1,
	     "INT32 LXOR(0, -7) is 1");
	SPOT(unsigned char, RMAD_BYTE, RMAD_BXOR, 0xf0, 0xff, 0x0f,
	     "BYTE BXOR 0xf0 ^ 0xff is 0x0f");
	SPOT(uint32_t, RMAD_UINT32, RMAD_BAND, 0xff00ff00u, 0x0ff00ff0u,
	     0x0f000f00u, "UINT32 BAND");
	SPOT(float, RMAD_FLOAT, RMAD_MIN, 1.5f, -2.0f, -2.0f,
	     "FLOAT MIN(1.5, -2) is -2");
	SPOT(float, RMAD_FLOAT, RMAD_MAX, 1.5f, -2.0f, 1.5f,
	     "FLOAT MAX(1.5, -2) is 1.5");
	SPOT(double, RMAD_DOUBLE, RMAD_SUM, 0.5, 0.25, 0.75,
	     "DOUBLE SUM 0.5 + 0.25 is 0.75");
	SPOT(double, RMAD_DOUBLE, RMAD_PROD, -3.0, 0.5, -1.5,
	     "DOUBLE PROD -3 * 0.5 is -1.5");
	SPOT(char, RMAD_CHAR, RMAD_REPLACE, 'a', 'b', 'b',
	     "CHAR REPLACE");
	SPOT(double, RMAD_DOUBLE, RMAD_NO_OP, 2.5, 9.0, 2.5,
	     "DOUBLE NO_OP leaves dst alone and fetches it");
	SPOT(short, RMAD_SHORT, RMAD_SUM, 30000, 10000, (short)-25536,
	     "SHORT SUM wraps");
	SPOT(unsigned long long, RMAD_UNSIGNED_LONG_LONG, RMAD_MAX, 5ull,
	     ~0ull, ~0ull, "UNSIGNED_LONG_LONG MAX");
	SPOT(_Bool, RMAD_C_BOOL, RMAD_LXOR, 1, 1, 0, "C_BOOL LXOR");
	{
		float _Complex a = 1.0f + 2.0f * I, b = 3.0f - 1.0f * I,
			       res = 0;

		rmad_acc_apply(&a, &b, &res, RMAD_C_FLOAT_COMPLEX, RMAD_PROD,
			       1);
		ok(crealf(a) == 5.0f && cimagf(a) == 5.0f &&
		   crealf(res) == 1.0f, "C_FLOAT_COMPLEX PROD (1+2i)(3-i)");
	}
	{
		struct { int v, i; } d[3] = { { 5, 2 }, { 5, 2 }, { 5, 2 } },
			s[3] = { { 4, 9 }, { 5, 1 }, { 6, 0 } };

		rmad_acc_apply(d, s, NULL, RMAD_2INT, RMAD_MINLOC, 3);
		ok(d[0].v == 4 && d[0].i == 9 && d[1].v == 5 && d[1].i == 1 &&
		   d[2].v == 5 && d[2].i == 2,
		   "2INT MINLOC: smaller value, or smaller index on a tie");
	}
	{
		struct { float v; int i; } d = { 1.5f, 3 }, s = { 2.5f, 7 };
		struct { short v; int i; } e = { 7, 1 }, t = { 7, 0 };

		rmad_acc_apply(&d, &s, NULL, RMAD_FLOAT_INT, RMAD_MAXLOC, 1);
		rmad_acc_apply(&e, &t, NULL, RMAD_SHORT_INT, RMAD_MAXLOC, 1);
		ok(d.v == 2.5f && d.i == 7 && e.v == 7 && e.i == 0,
		   "FLOAT_INT and SHORT_INT MAXLOC");
	}
	/* the wide types (plain, under the caller's accumulate lock) */
	{
		int agree = 1;

		for (uint32_t t = 0; t <= 35; t++)
			agree &= rmad_dtype_wide(t) == is_wide(t);
		ok(agree, "rmad_dtype_wide: exactly the types over 8 bytes");
	}
	{
		long double a[2] = { 1.5L, -2.0L }, b[2] = { 0.25L, 3.0L },
			    r[2] = { 0, 0 };

		rmad_acc_apply(a, b, r, RMAD_LONG_DOUBLE, RMAD_SUM, 2);
		ok(a[0] == 1.75L && a[1] == 1.0L && r[0] == 1.5L &&
		   r[1] == -2.0L, "LONG_DOUBLE SUM, old values fetched");
		rmad_acc_apply(a, b, NULL, RMAD_LONG_DOUBLE, RMAD_MAX, 2);
		ok(a[0] == 1.75L && a[1] == 3.0L, "LONG_DOUBLE MAX");
	}
	{
		double _Complex a = 1.0 + 2.0 * I, b = 3.0 - 1.0 * I;
		long double _Complex c = 2.0L + 1.0L * I, d = 2.0L - 1.0L * I;

		rmad_acc_apply(&a, &b, NULL, RMAD_C_DOUBLE_COMPLEX, RMAD_PROD,
			       1);
		rmad_acc_apply(&c, &d, NULL, RMAD_C_LONG_DOUBLE_COMPLEX,
			       RMAD_SUM, 1);
		ok(creal(a) == 5.0 && cimag(a) == 5.0 && creall(c) == 4.0L &&
		   cimagl(c) == 0.0L,
		   "C_DOUBLE_COMPLEX PROD, C_LONG_DOUBLE_COMPLEX SUM");
	}
	{
		struct { double v; int i; } d[2] = { { 5, 2 }, { 5, 2 } },
			s[2] = { { 4, 9 }, { 5, 1 } };
		struct { long v; int i; } e = { 7, 3 }, t = { 9, 4 };
		struct { long double v; int i; } f = { 1, 5 }, u = { 1, 2 },
			fr = { 0, 0 };

		rmad_acc_apply(d, s, NULL, RMAD_DOUBLE_INT, RMAD_MINLOC, 2);
		rmad_acc_apply(&e, &t, NULL, RMAD_LONG_INT, RMAD_MAXLOC, 1);
		rmad_acc_apply(&f, &u, &fr, RMAD_LONG_DOUBLE_INT, RMAD_MINLOC,
			       1);
		ok(d[0].v == 4 && d[0].i == 9 && d[1].v == 5 && d[1].i == 1 &&
		   e.v == 9 && e.i == 4 && f.v == 1 && f.i == 2 &&
		   fr.v == 1 && fr.i == 5,
		   "DOUBLE_INT MINLOC, LONG_INT MAXLOC, LONG_DOUBLE_INT "
		   "MINLOC on a tie, with the old value fetched");
	}
	{
		/* Fortran's pairs: the index is a value of the same type */
		struct { float v, i; } a[3] = { { 2, 7 }, { 2, 7 }, { 1, 1 } },
			b[3] = { { 3, 9 }, { 2, 5 }, { 1, 0.5f } },
			ar[3] = { { 0, 0 } };
		struct { double v, i; } c[3] = { { 2, 7 }, { 2, 7 }, { 1, 1 } },
			d[3] = { { 1, 9 }, { 2, 5 }, { 3, 2.5 } };

		rmad_acc_apply(a, b, ar, RMAD_2FLOAT, RMAD_MAXLOC, 3);
		rmad_acc_apply(c, d, NULL, RMAD_2DOUBLE, RMAD_MINLOC, 3);
		ok(a[0].v == 3 && a[0].i == 9 && a[1].v == 2 && a[1].i == 5 &&
		   a[2].v == 1 && a[2].i == 0.5f && ar[0].v == 2 &&
		   ar[0].i == 7 && ar[2].i == 1 &&
		   c[0].v == 1 && c[0].i == 9 && c[1].v == 2 && c[1].i == 5 &&
		   c[2].v == 1 && c[2].i == 1,
		   "2FLOAT MAXLOC, 2DOUBLE MINLOC (ties to the smaller "
		   "index), with the old values fetched");
		ok(rmad_dtype_size(RMAD_2FLOAT) == 8 &&
		   !rmad_dtype_wide(RMAD_2FLOAT) &&
		   rmad_dtype_size(RMAD_2DOUBLE) == 16 &&
		   rmad_dtype_wide(RMAD_2DOUBLE) &&
		   rmad_op_check(RMAD_2FLOAT, RMAD_SUM) &&
		   !rmad_op_check(RMAD_2DOUBLE, RMAD_MAXLOC),
		   "2FLOAT is 8 bytes and atomic, 2DOUBLE 16 and wide; "
		   "MINLOC and MAXLOC only");
	}
#ifdef __SIZEOF_FLOAT128__
	{
		/* binary128: 1 + 2^-100 is exact there, not in x87's 64
		 * mantissa bits, so a long double would lose it */
		__float128 a[2] = { 1, 3 }, b[2] = { 0x1p-100Q, 2 }, r[2];
		struct { __float128 re, im; } c = { 1, 2 }, d = { 3, -1 };

		rmad_acc_apply(a, b, r, RMAD_FLOAT128, RMAD_SUM, 2);
		ok(a[0] - 1 == 0x1p-100Q && a[1] == 5 && r[0] == 1 &&
		   r[1] == 3, "FLOAT128 SUM keeps 113 bits, old values "
		   "fetched");
		a[1] = 3;
		rmad_acc_apply(&a[1], &b[1], NULL, RMAD_FLOAT128, RMAD_MIN, 1);
		rmad_acc_apply(&c, &d, NULL, RMAD_C_FLOAT128_COMPLEX,
			       RMAD_PROD, 1);
		ok(a[1] == 2 && c.re == 5 && c.im == 5,
		   "FLOAT128 MIN, C_FLOAT128_COMPLEX PROD");
	}
#endif
}

/* Calls the precondition forbids must change nothing and not crash. */
static void check_refused(void)
{
	int32_t d[2] = { 7, 8 }, s[2] = { 1, 2 }, r[2] = { -1, -1 };
	int32_t c = 'a', cs = 'b', cr = 0;	/* a wchar_t */
	double x = 1.0, xs = 2.0, xr = 0.0;
	long double q[4] = { 1, 0, 2, 0 }, qs[2] = { 3, 4 }, qr[2] = { 0, 0 };

	rmad_acc_apply(d, s, r, RMAD_INT32, 0, 2);
	rmad_acc_apply(d, s, r, RMAD_INT32, RMAD_MINLOC, 2);
	rmad_acc_apply(d, s, r, RMAD_INT32, 15, 2);
	rmad_acc_apply(d, s, r, 0, RMAD_SUM, 2);
	rmad_acc_apply(d, s, r, 35, RMAD_SUM, 2);
	rmad_acc_apply(d, s, r, RMAD_DOUBLE_INT, RMAD_SUM, 1);
	rmad_acc_apply(d, s, r, 99, RMAD_REPLACE, 2);
	rmad_acc_apply(d, NULL, r, RMAD_INT32, RMAD_SUM, 2);
	rmad_acc_apply(&c, &cs, &cr, RMAD_WCHAR, RMAD_SUM, 1);
	rmad_acc_apply(&c, &cs, &cr, RMAD_WCHAR, RMAD_BAND, 1);
	rmad_acc_apply(&x, &xs, &xr, RMAD_DOUBLE, RMAD_BXOR, 1);
	rmad_acc_apply(&x, &xs, &xr, RMAD_DOUBLE, RMAD_LAND, 1);
	ok(d[0] == 7 && d[1] == 8 && r[0] == -1 && r[1] == -1 && c == 'a' &&
	   cr == 0 && x == 1.0 && xr == 0.0,
	   "acc_apply with a forbidden type/op changes nothing");
	/* 32 bytes: two of them do not fit an op element's inline area */
	rmad_cas_apply(q, qs, q, qr, RMAD_LONG_DOUBLE_INT);
	rmad_cas_apply(d, s, d, r, 99);
	ok(q[0] == 1 && qr[0] == 0 && d[0] == 7 && r[0] == -1,
	   "cas_apply on LONG_DOUBLE_INT, bad id changes nothing");
	/* bitwise, as Open MPI compares: the wide path too */
	rmad_cas_apply(&x, &xs, &x, &xr, RMAD_DOUBLE);
	rmad_cas_apply(q, qs, q, qr, RMAD_LONG_DOUBLE);
	ok(x == 2.0 && xr == 1.0 && q[0] == 3 && qr[0] == 1,
	   "cas_apply on DOUBLE and LONG_DOUBLE swaps an equal value");
}

/* ----------------------------------------------------- compare & swap */

static void check_cas(void)
{
	for (uint32_t t = 1; t <= RMAD_DTYPE_MAX; t++) {
		size_t es = rmad_dtype_size(t);
		union { uint64_t al; unsigned char b[24]; } dst, ud, src, cmp,
			res;
		unsigned char v1[8], v2[8], v3[8];
		int good = 1;

		if (rmad_cas_check(t))
			continue;
		memset(v1, 0x11, sizeof(v1));
		memset(v2, 0x82, sizeof(v2));
		memcpy(v3, v1, sizeof(v3));
		v3[0] ^= 0x40;		/* differs from v1 in one bit only */

		/* aligned dst; src, cmp, result unaligned */
		memcpy(dst.b, v1, es);
		memcpy(src.b + 1, v2, es);
		memcpy(cmp.b + 1, v1, es);
		rmad_cas_apply(dst.b, src.b + 1, cmp.b + 1, res.b + 1, t);
		good &= !memcmp(dst.b, v2, es) && !memcmp(res.b + 1, v1, es);
		memcpy(cmp.b + 1, v3, es);
		rmad_cas_apply(dst.b, src.b + 1, cmp.b + 1, res.b + 1, t);
		good &= !memcmp(dst.b, v2, es) && !memcmp(res.b + 1, v2, es);
		rmad_cas_apply(dst.b, v1, v2, NULL, t);
		good &= !memcmp(dst.b, v1, es);
		ok(good, "cas_apply %s: swaps on match, fetches on mismatch",
		   tn(t));

		/* unaligned dst: same results, not atomic */
		memcpy(ud.b + 1, v1, es);
		rmad_cas_apply(ud.b + 1, v2, v1, res.b, t);
		good = !memcmp(ud.b + 1, v2, es) && !memcmp(res.b, v1, es);
		rmad_cas_apply(ud.b + 1, v1, v3, res.b, t);
		good &= !memcmp(ud.b + 1, v2, es) && !memcmp(res.b, v2, es);
		ok(good, "cas_apply %s on an unaligned dst", tn(t));
	}
}

/* Unaligned dst through the same entry point as aligned ones. */
static void check_unaligned(void)
{
	union { uint64_t al; unsigned char b[40]; } u;
	int64_t a[3] = { 10, -20, INT64_MAX }, one[3] = { 1, 1, 1 }, r[3];
	int64_t w[3] = { 11, -19, INT64_MIN };
	double x = 1.25, y = 0.5, xr;

	memcpy(u.b + 3, a, sizeof(a));
	rmad_acc_apply(u.b + 3, one, r, RMAD_INT64, RMAD_SUM, 3);
	ok(!memcmp(u.b + 3, w, sizeof(w)) && !memcmp(r, a, sizeof(a)),
	   "INT64 SUM of 3 elements at dst+3");
	memcpy(u.b + 5, &x, sizeof(x));
	rmad_acc_apply(u.b + 5, &y, &xr, RMAD_DOUBLE, RMAD_MAX, 1);
	rmad_acc_apply(u.b + 5, &y, NULL, RMAD_DOUBLE, RMAD_PROD, 1);
	memcpy(&x, u.b + 5, sizeof(x));
	ok(x == 0.625 && xr == 1.25, "DOUBLE MAX then PROD at dst+5");
}

/* ------------------------------------------------------- atomicity */

struct arena {
	uint32_t ready;			/* children at the start line */
	int64_t i64sum;
	double dsum;
	int64_t i64max;
	double dmax;
	int32_t i32min;
	int8_t i8sum;
	uint16_t u16sum[4];
	uint32_t seen[NPROC * ROUNDS];	/* how often each old value came */
};

static void child(struct arena *a, int p)
{
	static const uint16_t inc[4] = { 1, 2, 3, 4 };
	int bad = 0;

	/* start together, so the updates really overlap */
	__atomic_fetch_add(&a->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&a->ready, __ATOMIC_ACQUIRE) < NPROC)
		;
	for (int k = 0; k < ROUNDS; k++) {
		int64_t one = 1, old = -1, v = (int64_t)k * NPROC + p;
		int32_t neg = (int32_t)-v;
		int8_t b1 = 1;
		double d1 = 1.0, dv = (double)v;

		rmad_acc_apply(&a->i64sum, &one, &old, RMAD_INT64, RMAD_SUM,
			       1);
		if (old >= 0 && old < NPROC * ROUNDS)
			__atomic_fetch_add(&a->seen[old], 1, __ATOMIC_RELAXED);
		else
			bad = 1;
		rmad_acc_apply(&a->dsum, &d1, NULL, RMAD_DOUBLE, RMAD_SUM, 1);
		rmad_acc_apply(&a->i64max, &v, NULL, RMAD_INT64, RMAD_MAX, 1);
		rmad_acc_apply(&a->dmax, &dv, NULL, RMAD_DOUBLE, RMAD_MAX, 1);
		rmad_acc_apply(&a->i32min, &neg, NULL, RMAD_INT32, RMAD_MIN,
			       1);
		rmad_acc_apply(&a->i8sum, &b1, NULL, RMAD_INT8, RMAD_SUM, 1);
		rmad_acc_apply(a->u16sum, inc, NULL, RMAD_UINT16, RMAD_SUM, 4);
	}
	_exit(bad);
}

static void check_atomic(void)
{
	struct arena *a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const int64_t total = (int64_t)NPROC * ROUNDS;
	pid_t pids[NPROC];
	int exited = 1, once = 1, u16 = 1;

	if (!ok(a != MAP_FAILED, "shared page mapped"))
		return;
	a->i8sum = -100;
	for (int p = 0; p < NPROC; p++) {
		pids[p] = fork();
		if (pids[p] == 0)
			child(a, p);
	}
	for (int p = 0; p < NPROC; p++) {
		int st;

		if (pids[p] < 0 || waitpid(pids[p], &st, 0) != pids[p] ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			exited = 0;
	}
	ok(exited, "%d children ran %d rounds each and exited cleanly",
	   NPROC, ROUNDS);
	ok(a->i64sum == total, "INT64 SUM: %lld (want %lld)",
	   (long long)a->i64sum, (long long)total);
	for (int64_t i = 0; i < total; i++)
		once &= a->seen[i] == 1;
	ok(once, "INT64 SUM fetched every old value 0..%lld exactly once",
	   (long long)total - 1);
	ok(a->dsum == (double)total, "DOUBLE SUM: %.1f (want %lld)", a->dsum,
	   (long long)total);
	ok(a->i64max == total - 1, "INT64 MAX: %lld (want %lld)",
	   (long long)a->i64max, (long long)total - 1);
	ok(a->dmax == (double)(total - 1), "DOUBLE MAX: %.1f (want %lld)",
	   a->dmax, (long long)total - 1);
	ok(a->i32min == -(total - 1), "INT32 MIN: %d (want %lld)", a->i32min,
	   (long long)-(total - 1));
	ok(a->i8sum == (int8_t)(uint8_t)(total - 100),
	   "INT8 SUM wraps: %d (want %d)", a->i8sum,
	   (int8_t)(uint8_t)(total - 100));
	for (int i = 0; i < 4; i++)
		u16 &= a->u16sum[i] == (uint16_t)(total * (i + 1));
	ok(u16, "UINT16 SUM of 4 elements: %u %u %u %u", a->u16sum[0],
	   a->u16sum[1], a->u16sum[2], a->u16sum[3]);
	munmap(a, sizeof(*a));
}

int main(void)
{
	alarm_after(60);
	check_sizes();
	check_matrix();
	check_cas_matrix();
	i8_acc();
	i16_acc();
	i32_acc();
	i64_acc();
	u8_acc();
	u16_acc();
	u32_acc();
	u64_acc();
	int_acc();
	long_acc();
	byte_acc();
	chr_acc();
	flt_acc();
	dbl_acc();
	check_spots();
	check_refused();
	check_cas();
	check_unaligned();
	check_atomic();
	return done_testing();
}
