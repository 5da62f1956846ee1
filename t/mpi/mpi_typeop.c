/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_typeop.c - the (datatype, op, call) table: every predefined MPI
 * datatype with every predefined op in MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op, and every datatype in
 * MPI_Compare_and_swap, from rank 0 to rank 1's window.  One line per
 * case on rank 0's stdout:
 *
 *   TYPE OP CALL ok TARGET-HEX [RESULT-HEX]
 *   TYPE OP CALL refused ERROR-CLASS-NAME
 *
 * t/typeop.sh runs it under plain Open MPI and under librmad-mpi and
 * diffs the two tables: what one accepts the other accepts, with the
 * same bytes, and what one refuses the other refuses with the same
 * error class.  Knows nothing of rmad.
 */
#include <complex.h>
#include <fnmatch.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#define N	2	/* elements of an accumulate */
#define SLOT	64	/* bytes of one element's slot in the window */

struct ty {
	MPI_Datatype t;
	const char *name;
	char kind;	/* i signed, u unsigned, f/d/L reals, c/z/Z complexes,
			 * b bool, w wchar, B byte, p pairs (float_int...),
			 * (integers of the MPI's size for the type) */
};

static struct ty tys[] = {
	{ MPI_CHAR, "CHAR", 'i' },
	{ MPI_SIGNED_CHAR, "SIGNED_CHAR", 'i' },
	{ MPI_UNSIGNED_CHAR, "UNSIGNED_CHAR", 'u' },
	{ MPI_BYTE, "BYTE", 'B' },
	{ MPI_WCHAR, "WCHAR", 'w' },
	{ MPI_SHORT, "SHORT", 'i' },
	{ MPI_UNSIGNED_SHORT, "UNSIGNED_SHORT", 'u' },
	{ MPI_INT, "INT", 'i' },
	{ MPI_UNSIGNED, "UNSIGNED", 'u' },
	{ MPI_LONG, "LONG", 'i' },
	{ MPI_UNSIGNED_LONG, "UNSIGNED_LONG", 'u' },
	{ MPI_LONG_LONG, "LONG_LONG", 'i' },
	{ MPI_UNSIGNED_LONG_LONG, "UNSIGNED_LONG_LONG", 'u' },
	{ MPI_INT8_T, "INT8_T", 'i' },
	{ MPI_INT16_T, "INT16_T", 'i' },
	{ MPI_INT32_T, "INT32_T", 'i' },
	{ MPI_INT64_T, "INT64_T", 'i' },
	{ MPI_UINT8_T, "UINT8_T", 'u' },
	{ MPI_UINT16_T, "UINT16_T", 'u' },
	{ MPI_UINT32_T, "UINT32_T", 'u' },
	{ MPI_UINT64_T, "UINT64_T", 'u' },
	{ MPI_AINT, "AINT", 'i' },
	{ MPI_OFFSET, "OFFSET", 'i' },
	{ MPI_COUNT, "COUNT", 'i' },
	{ MPI_C_BOOL, "C_BOOL", 'b' },
	{ MPI_FLOAT, "FLOAT", 'f' },
	{ MPI_DOUBLE, "DOUBLE", 'd' },
	{ MPI_LONG_DOUBLE, "LONG_DOUBLE", 'L' },
	{ MPI_C_FLOAT_COMPLEX, "C_FLOAT_COMPLEX", 'c' },
	{ MPI_C_DOUBLE_COMPLEX, "C_DOUBLE_COMPLEX", 'z' },
	{ MPI_C_LONG_DOUBLE_COMPLEX, "C_LONG_DOUBLE_COMPLEX", 'Z' },
	{ MPI_FLOAT_INT, "FLOAT_INT", 'p' },
	{ MPI_DOUBLE_INT, "DOUBLE_INT", 'p' },
	{ MPI_LONG_INT, "LONG_INT", 'p' },
	{ MPI_2INT, "2INT", 'p' },
	{ MPI_SHORT_INT, "SHORT_INT", 'p' },
	{ MPI_LONG_DOUBLE_INT, "LONG_DOUBLE_INT", 'p' },
	{ MPI_PACKED, "PACKED", 'B' },
	{ MPI_INTEGER, "INTEGER", 'i' },
	{ MPI_LOGICAL, "LOGICAL", 'b' },
	{ MPI_REAL, "REAL", 'f' },
	{ MPI_DOUBLE_PRECISION, "DOUBLE_PRECISION", 'd' },
	{ MPI_COMPLEX, "COMPLEX", 'c' },
	{ MPI_DOUBLE_COMPLEX, "DOUBLE_COMPLEX", 'z' },
	{ MPI_CHARACTER, "CHARACTER", 'B' },
	{ MPI_INTEGER1, "INTEGER1", 'i' },
	{ MPI_INTEGER2, "INTEGER2", 'i' },
	{ MPI_INTEGER4, "INTEGER4", 'i' },
	{ MPI_INTEGER8, "INTEGER8", 'i' },
	{ MPI_REAL4, "REAL4", 'f' },
	{ MPI_REAL8, "REAL8", 'd' },
	{ MPI_COMPLEX8, "COMPLEX8", 'c' },
	{ MPI_COMPLEX16, "COMPLEX16", 'z' },
	{ MPI_2INTEGER, "2INTEGER", 'p' },
	{ MPI_2REAL, "2REAL", 'p' },
	{ MPI_2DOUBLE_PRECISION, "2DOUBLE_PRECISION", 'p' },
	{ MPI_CXX_BOOL, "CXX_BOOL", 'b' },
	{ MPI_CXX_FLOAT_COMPLEX, "CXX_FLOAT_COMPLEX", 'c' },
	{ MPI_CXX_DOUBLE_COMPLEX, "CXX_DOUBLE_COMPLEX", 'z' },
};

static const struct {
	MPI_Op op;
	const char *name;
} ops[] = {
	{ MPI_SUM, "SUM" }, { MPI_PROD, "PROD" }, { MPI_MIN, "MIN" },
	{ MPI_MAX, "MAX" }, { MPI_LAND, "LAND" }, { MPI_LOR, "LOR" },
	{ MPI_LXOR, "LXOR" }, { MPI_BAND, "BAND" }, { MPI_BOR, "BOR" },
	{ MPI_BXOR, "BXOR" }, { MPI_MINLOC, "MINLOC" },
	{ MPI_MAXLOC, "MAXLOC" }, { MPI_REPLACE, "REPLACE" },
	{ MPI_NO_OP, "NO_OP" },
};

/* bytes from one element to the next */
static int extent(const struct ty *ty)
{
	MPI_Aint lb, ext;

	MPI_Type_get_extent(ty->t, &lb, &ext);
	return (int)ext;
}

/* element i of type ty, holding the small integer v, at p */
static void set(const struct ty *ty, unsigned char *p, int v)
{
	int sz = extent(ty);

	memset(p, 0, (size_t)sz);
	switch (ty->kind) {
	case 'i': case 'u': case 'w': case 'B': case 'b':
		if (ty->kind == 'b')
			v = v & 1;
		MPI_Type_size(ty->t, &sz);
		if (sz == 1) { int8_t x = (int8_t)v; memcpy(p, &x, 1); }
		if (sz == 2) { int16_t x = (int16_t)v; memcpy(p, &x, 2); }
		if (sz == 4) { int32_t x = v; memcpy(p, &x, 4); }
		if (sz == 8) { int64_t x = v; memcpy(p, &x, 8); }
		break;
	case 'f': { float x = (float)v + 0.5f; memcpy(p, &x, 4); break; }
	case 'd': { double x = v + 0.5; memcpy(p, &x, 8); break; }
	case 'L': { long double x = v + 0.5L; memcpy(p, &x, 10); break; }
	case 'c': { float _Complex x = v + 0.5f + (v - 1) * I;
		memcpy(p, &x, 8); break; }
	case 'z': { double _Complex x = v + 0.5 + (v - 1) * I;
		memcpy(p, &x, 16); break; }
	case 'Z': { long double _Complex x = v + 0.5L + (v - 1) * I;
		memcpy(p, &x, 10); memcpy(p + 16, (char *)&x + 16, 10);
		break; }
	case 'p':
		if (ty->t == MPI_FLOAT_INT) {
			struct { float a; int b; } x = { (float)v, v + 1 };
			memcpy(p, &x, sizeof(x));
		} else if (ty->t == MPI_DOUBLE_INT) {
			struct { double a; int b; } x = { v, v + 1 };
			memcpy(p, &x.a, 8); memcpy(p + 8, &x.b, 4);
		} else if (ty->t == MPI_LONG_INT) {
			struct { long a; int b; } x = { v, v + 1 };
			memcpy(p, &x.a, 8); memcpy(p + 8, &x.b, 4);
		} else if (ty->t == MPI_2INT || ty->t == MPI_2INTEGER) {
			int x[2] = { v, v + 1 };
			memcpy(p, x, 8);
		} else if (ty->t == MPI_SHORT_INT) {
			struct { short a; int b; } x = { (short)v, v + 1 };
			memcpy(p, &x.a, 2); memcpy(p + 4, &x.b, 4);
		} else if (ty->t == MPI_LONG_DOUBLE_INT) {
			long double a = v;
			int b = v + 1;
			memcpy(p, &a, 10); memcpy(p + 16, &b, 4);
		} else if (ty->t == MPI_2REAL) {
			float x[2] = { (float)v, (float)v + 1 };
			memcpy(p, x, 8);
		} else if (ty->t == MPI_2DOUBLE_PRECISION) {
			double x[2] = { v, v + 1 };
			memcpy(p, x, 16);
		}
		break;
	}
}

/* the meaningful bytes of n elements at p, as hex */
static void hex(const struct ty *ty, const unsigned char *p, int n)
{
	int sz = extent(ty);

	for (int e = 0; e < n; e++, p += sz) {
		putchar(' ');
		for (int i = 0; i < sz; i++) {
			/* x87 long double: 6 bytes of padding each */
			if ((ty->kind == 'L' || ty->kind == 'Z' ||
			     ty->t == MPI_LONG_DOUBLE_INT) && (i % 16) >= 10)
				continue;
			if (ty->t == MPI_LONG_DOUBLE_INT && i >= 20)
				continue;
			/* the pairs' padding */
			if ((ty->t == MPI_DOUBLE_INT || ty->t == MPI_LONG_INT) &&
			    i >= 12)
				continue;
			if (ty->t == MPI_SHORT_INT && (i == 2 || i == 3))
				continue;
			printf("%02x", p[i]);
		}
	}
}

static void refused(const char *t, const char *o, const char *call, int rc)
{
	char s[MPI_MAX_ERROR_STRING];
	int cls = 0, len = 0;

	MPI_Error_class(rc, &cls);
	/* the class's name: the first words of its string */
	MPI_Error_string(cls, s, &len);
	printf("%s %s %s refused class=%d\n", t, o, call, cls);
}

/* "TYPE:CALL:OP" matches a pattern among the arguments (fnmatch(3)):
 * that case is not run.  A case that crashes an MPI cannot be
 * compared. */
static int skipped(int argc, char **argv, const char *type, const char *call,
		   const char *op)
{
	char k[128];

	snprintf(k, sizeof(k), "%s:%s:%s", type, call, op);
	for (int i = 1; i < argc; i++)
		if (strchr(argv[i], ':') && !fnmatch(argv[i], k, 0))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int rank, size, sz, acc_cls = 0, guard = 0;
	const char *only = NULL;
	unsigned char *base, org[SLOT * N], res[SLOT * N], cmp[SLOT];
	MPI_Win win;

	MPI_Init(&argc, &argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--guard-fop"))
			guard = 1;
		else if (!strncmp(argv[i], "--only=", 7))
			only = argv[i] + 7;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		if (!rank)
			fprintf(stderr, "mpi_typeop: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Win_allocate(SLOT * N, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
			 &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	for (size_t ti = 0; ti < sizeof(tys) / sizeof(tys[0]); ti++) {
		const struct ty *ty = &tys[ti];

		if (ty->t == MPI_DATATYPE_NULL || (only && strcmp(only, ty->name)))
			continue;
		sz = extent(ty);
		for (size_t oi = 0; oi <= sizeof(ops) / sizeof(ops[0]); oi++) {
			/* the calls: 0 acc, 1 get_acc, 2 fop; oi == n: cas */
			for (int call = 0; call < 3; call++) {
				const char *cn[] = { "acc", "getacc", "fop",
						     "cas" };
				int c = oi == sizeof(ops) / sizeof(ops[0]) ?
					3 : call;
				int rc = MPI_SUCCESS;

				if (c == 3 && call)
					break;
				if (skipped(argc, argv, ty->name, cn[c],
					    c == 3 ? "-" : ops[oi].name))
					continue;
				/* guard: a fetch_and_op whose pair the
				 * accumulate refused is not run (Open MPI
				 * checks the pair in MPI_Accumulate only,
				 * and its fetch_and_op then crashes) */
				if (c == 2)
					MPI_Bcast(&acc_cls, 1, MPI_INT, 0,
						  MPI_COMM_WORLD);
				if (c == 2 && acc_cls && guard &&
				    ops[oi].op != MPI_NO_OP) {
					if (rank == 0)
						printf("%s %s fop unsafe "
						       "class=%d\n", ty->name,
						       ops[oi].name, acc_cls);
					continue;
				}
				/* the target's fresh values: 5, 6 */
				MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
				memset(base, 0, SLOT * N);
				for (int e = 0; e < N; e++)
					set(ty, base + e * sz, 5 + e);
				MPI_Win_unlock(rank, win);
				MPI_Barrier(MPI_COMM_WORLD);
				if (rank == 0) {
					memset(org, 0, sizeof(org));
					memset(res, 0, sizeof(res));
					memset(cmp, 0, sizeof(cmp));
					for (int e = 0; e < N; e++)
						set(ty, org + e * sz, 3 - e);
					set(ty, cmp, 5);
					MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
					if (c == 0)
						rc = MPI_Accumulate(org, N, ty->t,
							1, 0, N, ty->t,
							ops[oi].op, win);
					else if (c == 1)
						rc = MPI_Get_accumulate(org, N,
							ty->t, res, N, ty->t, 1,
							0, N, ty->t, ops[oi].op,
							win);
					else if (c == 2)
						rc = MPI_Fetch_and_op(org, res,
							ty->t, 1, 0, ops[oi].op,
							win);
					else
						rc = MPI_Compare_and_swap(org,
							cmp, res, ty->t, 1, 0,
							win);
					MPI_Win_unlock(1, win);
				}
				MPI_Barrier(MPI_COMM_WORLD);
				/* rank 1 shows its window to rank 0 */
				if (rank == 1)
					MPI_Send(base, SLOT * N, MPI_BYTE, 0, 0,
						 MPI_COMM_WORLD);
				if (rank == 0) {
					unsigned char tb[SLOT * N];
					const char *on = c == 3 ? "-" :
							 ops[oi].name;

					MPI_Recv(tb, SLOT * N, MPI_BYTE, 1, 0,
						 MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					if (c == 0)
						MPI_Error_class(rc, &acc_cls);
					if (rc != MPI_SUCCESS) {
						refused(ty->name, on, cn[c], rc);
						continue;
					}
					printf("%s %s %s ok", ty->name, on,
					       cn[c]);
					hex(ty, tb, c >= 2 ? 1 : N);
					if (c)
						printf(" |"), hex(ty, res,
							c >= 2 ? 1 : N);
					putchar('\n');
				}
			}
		}
	}
	if (rank == 0)
		printf("END\n");	/* the table is whole */
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
