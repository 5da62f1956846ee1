/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * map.c - MPI's constants and handles in rmad's terms.  Nothing is
 * passed through: every datatype, op, lock type, assert and error is
 * translated, and what has no translation is refused.
 *
 * Datatypes: the predefined ones come from a table; a derived type is
 * decoded once with MPI_Type_get_envelope/_get_contents into the rmad
 * constructors and kept in an attribute on the MPI type, whose delete
 * callback (MPI_Type_free) frees the rmad type, which rmad counts by
 * reference, so ops in flight keep it.  A small direct-mapped cache in
 * front of both keeps the lookup of an op's two types a few loads.
 * Only a committed type is decoded: one that is not is MPI_ERR_TYPE,
 * as in Open MPI (committed()), and a type once committed stays so.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmpi.h"

/* ---------------------------------------------------------- types */

struct tpair {
	MPI_Datatype m;
	rmad_datatype_t r;
};

struct rmpi_tslot rmpi_tcache[RMPI_TCACHE];
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static int tkey = MPI_KEYVAL_INVALID;
static MPI_Comm tcomm = MPI_COMM_NULL;	/* committed()'s */

static int predefined(MPI_Datatype t, rmad_datatype_t *out)
{
	static const struct tpair tab[] = {
		{ MPI_BYTE, RMAD_BYTE }, { MPI_CHAR, RMAD_CHAR },
		{ MPI_INT, RMAD_INT }, { MPI_LONG, RMAD_LONG },
		{ MPI_DOUBLE, RMAD_DOUBLE }, { MPI_FLOAT, RMAD_FLOAT },
		{ MPI_INT8_T, RMAD_INT8 }, { MPI_INT16_T, RMAD_INT16 },
		{ MPI_INT32_T, RMAD_INT32 }, { MPI_INT64_T, RMAD_INT64 },
		{ MPI_UINT8_T, RMAD_UINT8 }, { MPI_UINT16_T, RMAD_UINT16 },
		{ MPI_UINT32_T, RMAD_UINT32 }, { MPI_UINT64_T, RMAD_UINT64 },
		{ MPI_SHORT, RMAD_SHORT }, { MPI_LONG_LONG, RMAD_LONG_LONG },
		{ MPI_LONG_LONG_INT, RMAD_LONG_LONG },
		{ MPI_SIGNED_CHAR, RMAD_SIGNED_CHAR },
		{ MPI_UNSIGNED_CHAR, RMAD_UNSIGNED_CHAR },
		{ MPI_UNSIGNED_SHORT, RMAD_UNSIGNED_SHORT },
		{ MPI_UNSIGNED, RMAD_UNSIGNED },
		{ MPI_UNSIGNED_LONG, RMAD_UNSIGNED_LONG },
		{ MPI_UNSIGNED_LONG_LONG, RMAD_UNSIGNED_LONG_LONG },
		{ MPI_WCHAR, RMAD_WCHAR }, { MPI_C_BOOL, RMAD_C_BOOL },
		{ MPI_LONG_DOUBLE, RMAD_LONG_DOUBLE },
		{ MPI_C_FLOAT_COMPLEX, RMAD_C_FLOAT_COMPLEX },
		{ MPI_C_COMPLEX, RMAD_C_FLOAT_COMPLEX },
		{ MPI_C_DOUBLE_COMPLEX, RMAD_C_DOUBLE_COMPLEX },
		{ MPI_C_LONG_DOUBLE_COMPLEX, RMAD_C_LONG_DOUBLE_COMPLEX },
		{ MPI_FLOAT_INT, RMAD_FLOAT_INT },
		{ MPI_DOUBLE_INT, RMAD_DOUBLE_INT },
		{ MPI_LONG_INT, RMAD_LONG_INT }, { MPI_2INT, RMAD_2INT },
		{ MPI_SHORT_INT, RMAD_SHORT_INT },
		{ MPI_LONG_DOUBLE_INT, RMAD_LONG_DOUBLE_INT },
		/* C++'s, as C programs may name them too: bool is one byte
		 * on the ABIs rmad builds for, as _Bool is */
		{ MPI_CXX_BOOL, RMAD_C_BOOL },
		{ MPI_CXX_FLOAT_COMPLEX, RMAD_C_FLOAT_COMPLEX },
		{ MPI_CXX_DOUBLE_COMPLEX, RMAD_C_DOUBLE_COMPLEX },
		{ MPI_CXX_LONG_DOUBLE_COMPLEX, RMAD_C_LONG_DOUBLE_COMPLEX },
		/* packed bytes move as bytes; only REPLACE and NO_OP combine
		 * them, as CHAR's (BYTE's bit ops are not MPI's for them) */
		{ MPI_PACKED, RMAD_CHAR },
		/* the address-sized integers are int64_t on LP64 */
		{ MPI_AINT, RMAD_INT64 }, { MPI_OFFSET, RMAD_INT64 },
		{ MPI_COUNT, RMAD_INT64 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].m == t) {
			*out = tab[i].r;
			return 1;
		}
	return 0;
}

/* rmad's type of n-byte integers, reals or complexes (0: none) */
static rmad_datatype_t by_size(int cls, int n)
{
	switch (cls) {
	case 'i':
		return n == 1 ? RMAD_INT8 : n == 2 ? RMAD_INT16 :
		       n == 4 ? RMAD_INT32 : n == 8 ? RMAD_INT64 : 0;
	case 'r':	/* 16 bytes: Fortran's REAL*16, IEEE binary128 */
		return n == (int)sizeof(float) ? RMAD_FLOAT :
		       n == (int)sizeof(double) ? RMAD_DOUBLE :
		       n == 16 ? RMAD_FLOAT128 : 0;
	case 'c':
		return n == 2 * (int)sizeof(float) ? RMAD_C_FLOAT_COMPLEX :
		       n == 2 * (int)sizeof(double) ? RMAD_C_DOUBLE_COMPLEX :
		       n == 32 ? RMAD_C_FLOAT128_COMPLEX : 0;
	}
	return 0;
}

/*
 * The Fortran types, as C programs may use them: the named ones
 * (MPI_INTEGER, MPI_REAL8, ...) and the Fortran 90 parameterized ones
 * (MPI_Type_create_f90_*, which MPI calls predefined: never freed, and
 * whose envelope names the F90 combiner).  Each is mapped by its class
 * and its size in this MPI: an integer of 1, 2, 4 or 8 bytes, a real
 * of C's float or double or of 16 bytes (REAL*16, which gfortran and
 * ifort keep in IEEE binary128: rmad's FLOAT128, not x87's long
 * double), a complex of two of them.  LOGICAL (and Open MPI's LOGICAL1
 * to LOGICAL8) is an integer of its size whose logical ops are C's
 * (zero is false), as gfortran's and ifort's default .true. (1, -1)
 * read.  The pair types 2REAL and 2DOUBLE_PRECISION are rmad's 2FLOAT
 * or 2DOUBLE by their size.
 */
static int fortran(MPI_Datatype t, rmad_datatype_t *out)
{
	static const struct {
		MPI_Datatype m;
		int cls;
	} tab[] = {
		{ MPI_INTEGER, 'i' }, { MPI_LOGICAL, 'i' },
		{ MPI_INTEGER1, 'i' }, { MPI_INTEGER2, 'i' },
		{ MPI_INTEGER4, 'i' }, { MPI_INTEGER8, 'i' },
		{ MPI_REAL, 'r' }, { MPI_DOUBLE_PRECISION, 'r' },
		{ MPI_REAL4, 'r' }, { MPI_REAL8, 'r' },
		{ MPI_COMPLEX, 'c' }, { MPI_DOUBLE_COMPLEX, 'c' },
		{ MPI_COMPLEX8, 'c' }, { MPI_COMPLEX16, 'c' },
#ifdef MPI_REAL16
		{ MPI_REAL16, 'r' },
#endif
#ifdef MPI_COMPLEX32
		{ MPI_COMPLEX32, 'c' },
#endif
		{ MPI_CHARACTER, 'b' }, { MPI_2INTEGER, '2' },
		{ MPI_2REAL, 'p' }, { MPI_2DOUBLE_PRECISION, 'p' },
		/* Open MPI's LOGICAL kinds, where its Fortran has them */
#ifdef MPI_LOGICAL1
		{ MPI_LOGICAL1, 'i' },
#endif
#ifdef MPI_LOGICAL2
		{ MPI_LOGICAL2, 'i' },
#endif
#ifdef MPI_LOGICAL4
		{ MPI_LOGICAL4, 'i' },
#endif
#ifdef MPI_LOGICAL8
		{ MPI_LOGICAL8, 'i' },
#endif
	};
	int ni, na, nd, comb, n = 0, cls = 0;
	rmad_datatype_t r = 0;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]) && !cls; i++)
		if (tab[i].m == t && t != MPI_DATATYPE_NULL)
			cls = tab[i].cls;
	if (!cls) {
		PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
		cls = comb == MPI_COMBINER_F90_INTEGER ? 'i' :
		      comb == MPI_COMBINER_F90_REAL ? 'r' :
		      comb == MPI_COMBINER_F90_COMPLEX ? 'c' : 0;
		if (!cls)
			return 0;
	}
	PMPI_Type_size(t, &n);
	if (cls == 'b')
		r = n == 1 ? RMAD_CHAR : 0;
	else if (cls == '2')
		r = n == 2 * (int)sizeof(int) ? RMAD_2INT : 0;
	else if (cls == 'p')
		r = n == 2 * (int)sizeof(float) ? RMAD_2FLOAT :
		    n == 2 * (int)sizeof(double) ? RMAD_2DOUBLE : 0;
	else
		r = by_size(cls, n);
	if (!r)
		return 0;
	*out = r;
	return 1;
}

/* a type MPI counts as predefined: never decoded, never freed */
static int named(int comb)
{
	return comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
	       comb == MPI_COMBINER_F90_COMPLEX ||
	       comb == MPI_COMBINER_F90_INTEGER;
}

static const char *combiner_name(int c)
{
	switch (c) {
	case MPI_COMBINER_F90_REAL: return "F90_REAL of a size rmad lacks";
	case MPI_COMBINER_F90_COMPLEX:
		return "F90_COMPLEX of a size rmad lacks";
	case MPI_COMBINER_F90_INTEGER:
		return "F90_INTEGER of a size rmad lacks";
	case MPI_COMBINER_NAMED: return "a predefined type rmad lacks";
	default: return "an unknown combiner";
	}
}

static int decode(MPI_Datatype t, rmad_datatype_t *out, int depth);

/* The rmad type of an inner type that get_contents handed out; frees
 * that handle when it is derived, as MPI asks. */
static int inner(MPI_Datatype t, rmad_datatype_t *out, int depth)
{
	int ni, na, nd, comb, err;

	err = decode(t, out, depth + 1);
	PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	if (!named(comb))
		PMPI_Type_free(&t);
	return err;
}

/* A new rmad type for the derived MPI type t (uncommitted parts are
 * committed by the caller's commit of the whole). */
static int decode(MPI_Datatype t, rmad_datatype_t *out, int depth)
{
	int ni, na, nd, comb, err = RMAD_ERR_TYPE;
	int *iv = NULL;
	MPI_Aint *av = NULL;
	MPI_Datatype *dv = NULL;
	rmad_datatype_t *kids = NULL, old = 0;

	if (predefined(t, out) || fortran(t, out))
		return 0;
	if (depth > 64)
		return RMAD_ERR_TYPE;
	PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	if (named(comb)) {
		char name[MPI_MAX_OBJECT_NAME] = "";
		int len = 0;

		PMPI_Type_get_name(t, name, &len);
		rmpi_unmapped("datatype %s: %s", len ? name : "(unnamed)",
			      combiner_name(comb));
		return RMAD_ERR_TYPE;
	}
	iv = calloc((size_t)ni + 1, sizeof(*iv));
	av = calloc((size_t)na + 1, sizeof(*av));
	dv = calloc((size_t)nd + 1, sizeof(*dv));
	kids = calloc((size_t)nd + 1, sizeof(*kids));
	if (!iv || !av || !dv || !kids) {
		err = RMAD_ERR_NOMEM;
		goto out;
	}
	PMPI_Type_get_contents(t, ni, na, nd, iv, av, dv);
	for (int i = 0; i < nd; i++) {
		err = inner(dv[i], &kids[i], depth);
		if (err) {
			for (int j = i + 1; j < nd; j++)	/* release the rest */
				inner(dv[j], &old, 64);
			nd = i;
			goto out;
		}
	}
	old = nd ? kids[0] : 0;
	switch (comb) {
	case MPI_COMBINER_DUP:
		err = rmad_type_dup(old, out);
		break;
	case MPI_COMBINER_CONTIGUOUS:
		err = rmad_type_contiguous(iv[0], old, out);
		break;
	case MPI_COMBINER_VECTOR:
		err = rmad_type_vector(iv[0], iv[1], iv[2], old, out);
		break;
	case MPI_COMBINER_HVECTOR:
		err = rmad_type_create_hvector(iv[0], iv[1], av[0], old, out);
		break;
	case MPI_COMBINER_INDEXED:
		err = rmad_type_indexed(iv[0], iv + 1, iv + 1 + iv[0], old,
					out);
		break;
	case MPI_COMBINER_HINDEXED:
		err = rmad_type_create_hindexed(iv[0], iv + 1, av, old, out);
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		err = rmad_type_create_indexed_block(iv[0], iv[1], iv + 2, old,
						     out);
		break;
	case MPI_COMBINER_HINDEXED_BLOCK:
		err = rmad_type_create_hindexed_block(iv[0], iv[1], av, old,
						      out);
		break;
	case MPI_COMBINER_STRUCT:
		err = rmad_type_create_struct(iv[0], iv + 1, av, kids, out);
		break;
	case MPI_COMBINER_SUBARRAY: {
		int n = iv[0];

		err = rmad_type_create_subarray(n, iv + 1, iv + 1 + n,
						iv + 1 + 2 * n,
						iv[1 + 3 * n] == MPI_ORDER_C ?
						RMAD_ORDER_C : RMAD_ORDER_FORTRAN,
						old, out);
		break;
	}
	case MPI_COMBINER_RESIZED:
		err = rmad_type_create_resized(old, av[0], av[1], out);
		break;
	case MPI_COMBINER_DARRAY:
		err = rmpi_darray(iv, ni, old, out);
		if (err)
			rmpi_unmapped("datatype: a distributed array rmad "
				      "cannot lay out (%s)",
				      rmad_strerror(err));
		break;
	default:
		rmpi_unmapped("datatype combiner %s", combiner_name(comb));
		err = RMAD_ERR_TYPE;
		break;
	}
out:
	/* the parts: the new type holds its own references */
	for (int i = 0; i < nd; i++)
		if (kids[i] > (rmad_datatype_t)255)
			rmad_type_free(&kids[i]);
	free(iv);
	free(av);
	free(dv);
	free(kids);
	return err;
}

static int tdelete(MPI_Datatype t, int key, void *val, void *extra)
{
	rmad_datatype_t r = (rmad_datatype_t)val;
	unsigned int h = rmpi_thash(t);

	(void)key;
	(void)extra;
	pthread_mutex_lock(&tlock);
	for (unsigned int i = 0; i < RMPI_TCACHE; i++) {
		struct rmpi_tslot *s = &rmpi_tcache[(h + i) & (RMPI_TCACHE - 1)];

		if (__atomic_load_n(&s->m, __ATOMIC_ACQUIRE) == t) {
			__atomic_store_n(&s->m, (MPI_Datatype)0,
					 __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&tlock);
	if (rmpi.on && !rmpi.finalized)
		rmad_type_free(&r);
	return MPI_SUCCESS;
}

static void tcache_put(MPI_Datatype t, rmad_datatype_t r)
{
	unsigned int h = rmpi_thash(t);

	pthread_mutex_lock(&tlock);
	for (unsigned int i = 0; i < 8; i++) {
		struct rmpi_tslot *s = &rmpi_tcache[(h + i) & (RMPI_TCACHE - 1)];

		if (s->m == (MPI_Datatype)0) {
			s->r = r;
			__atomic_store_n(&s->m, t, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&tlock);
}

/*
 * Is the derived type t committed?  Open MPI has no query for it, but
 * its PMPI_Send checks what its one-sided calls check of a type first
 * (OMPI_CHECK_DATATYPE_FOR_SEND: not null, committed, valid), and a
 * send of nothing to MPI_PROC_NULL does nothing else: on a duplicate of
 * MPI_COMM_SELF whose errors return (rmpi_map_init), its answer is the
 * one MPI_Put would give, also when Open MPI's checks are off
 * (mpi_param_check = 0: yes).  MPICH checks the same at a count above 0.
 */
static int committed(MPI_Datatype t)
{
	static const long never_read[4];

	if (tcomm == MPI_COMM_NULL)
		return 1;
	/* MPICH checks only a count above 0 (abi.h) */
	return PMPI_Send(RMPI_COMMIT_PROBE_COUNT ? never_read : NULL,
			 RMPI_COMMIT_PROBE_COUNT, t, MPI_PROC_NULL, 0,
			 tcomm) == MPI_SUCCESS;
}

int rmpi_type_slow(MPI_Datatype t, rmad_datatype_t *out)
{
	unsigned int h = rmpi_thash(t);
	void *val;
	int flag = 0, err;

	for (unsigned int i = 0; i < 8; i++) {
		struct rmpi_tslot *s = &rmpi_tcache[(h + i) & (RMPI_TCACHE - 1)];

		if (__atomic_load_n(&s->m, __ATOMIC_ACQUIRE) == t) {
			*out = s->r;
			return 0;
		}
	}
	if (t == MPI_DATATYPE_NULL)
		return RMAD_ERR_TYPE;
	if (predefined(t, out) || fortran(t, out)) {
		tcache_put(t, *out);
		return 0;
	}
	PMPI_Type_get_attr(t, tkey, &val, &flag);
	if (flag) {
		*out = (rmad_datatype_t)val;
		tcache_put(t, *out);
		return 0;
	}
	if (!committed(t))
		return RMAD_ERR_TYPE;	/* not cached: it may be, later */
	err = decode(t, out, 0);
	if (!err)
		err = rmad_type_commit(out);
	if (err)
		return err;
	if (PMPI_Type_set_attr(t, tkey, (void *)*out) != MPI_SUCCESS) {
		rmad_type_free(out);
		return RMAD_ERR_INTERNAL;
	}
	tcache_put(t, *out);
	return 0;
}

/* ------------------------------------------------------------ ops */

int rmpi_op(MPI_Op op, rmad_op_t *out)
{
	static const struct {
		MPI_Op m;
		rmad_op_t r;
	} tab[] = {
		{ MPI_SUM, RMAD_SUM }, { MPI_REPLACE, RMAD_REPLACE },
		{ MPI_NO_OP, RMAD_NO_OP }, { MPI_PROD, RMAD_PROD },
		{ MPI_MIN, RMAD_MIN }, { MPI_MAX, RMAD_MAX },
		{ MPI_BAND, RMAD_BAND }, { MPI_BOR, RMAD_BOR },
		{ MPI_BXOR, RMAD_BXOR }, { MPI_LAND, RMAD_LAND },
		{ MPI_LOR, RMAD_LOR }, { MPI_LXOR, RMAD_LXOR },
		{ MPI_MINLOC, RMAD_MINLOC }, { MPI_MAXLOC, RMAD_MAXLOC },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].m == op) {
			*out = tab[i].r;
			return 0;
		}
	return RMAD_ERR_OP;		/* user-defined ops are not for RMA */
}

/*
 * op on the predefined type t, where the MPI refuses a pair that rmad's
 * type for t would take (rmad's types are the wider C ones): Fortran's
 * LOGICAL takes only the logical ops, its INTEGER (and INTEGER4) no
 * logical op, and PACKED and WCHAR only REPLACE and NO_OP, as Open
 * MPI's op tables have them (t/typeop.sh holds the two to each other).
 */
int rmpi_op_on(MPI_Op op, MPI_Datatype t, rmad_op_t *out)
{
	int err = rmpi_op(op, out);

	if (err || *out == RMAD_REPLACE || *out == RMAD_NO_OP)
		return err;
	if (t == MPI_PACKED || t == MPI_WCHAR)
		return RMAD_ERR_OP;
	if (t == MPI_LOGICAL)
		return *out == RMAD_LAND || *out == RMAD_LOR ||
		       *out == RMAD_LXOR ? 0 : RMAD_ERR_OP;
	if (t == MPI_INTEGER || t == MPI_INTEGER4)
		return *out == RMAD_LAND || *out == RMAD_LOR ||
		       *out == RMAD_LXOR ? RMAD_ERR_OP : 0;
	return 0;
}

/* ------------------------------------------------ asserts, locks */

int rmpi_assert(int a)
{
	int r = 0;

	if (a & MPI_MODE_NOCHECK)
		r |= RMAD_MODE_NOCHECK;
	if (a & MPI_MODE_NOSTORE)
		r |= RMAD_MODE_NOSTORE;
	if (a & MPI_MODE_NOPUT)
		r |= RMAD_MODE_NOPUT;
	if (a & MPI_MODE_NOPRECEDE)
		r |= RMAD_MODE_NOPRECEDE;
	if (a & MPI_MODE_NOSUCCEED)
		r |= RMAD_MODE_NOSUCCEED;
	if (a & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT |
		  MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
		return -1;		/* a bit MPI does not define */
	return r;
}

int rmpi_lock_type(int l, int *out)
{
	if (l == MPI_LOCK_SHARED)
		*out = RMAD_LOCK_SHARED;
	else if (l == MPI_LOCK_EXCLUSIVE)
		*out = RMAD_LOCK_EXCLUSIVE;
	else
		return RMPI_ERR_LOCKTYPE;
	return 0;
}

/* --------------------------------------------------------- errors */

/*
 * A dead process (RMAD_ERR_PROC_FAILED): MPI's own class where the MPI
 * library has one (MPI_ERR_PROC_FAILED of MPI 5, MPIX_ERR_PROC_FAILED
 * of ULFM: Open MPI 5, MPICH); otherwise a code of ours in class
 * MPI_ERR_OTHER whose string says what happened (rmpi_map_init), so
 * that MPI_Error_string tells a death from other failures.
 */
#ifndef RMPI_HAVE_PROC_FAILED
static int proc_failed = MPI_ERR_OTHER;
#endif

int rmpi_errclass(int e)
{
	switch (e) {
	case 0: return MPI_SUCCESS;
	case RMAD_ERR_ARG: return MPI_ERR_ARG;
	case RMAD_ERR_RANK: return MPI_ERR_RANK;
	case RMAD_ERR_DISP: return MPI_ERR_RMA_RANGE;
	case RMAD_ERR_TYPE: return MPI_ERR_TYPE;
	case RMAD_ERR_OP: return MPI_ERR_OP;
	case RMAD_ERR_SYNC: return MPI_ERR_RMA_SYNC;
	case RMAD_ERR_NOMEM: return MPI_ERR_NO_MEM;
	case RMAD_ERR_NOT_LOCAL: return MPI_ERR_RANK;
	case RMAD_ERR_PERM: return MPI_ERR_RMA_ATTACH;
	case RMAD_ERR_HINT: return MPI_ERR_INFO_VALUE;
	case RMAD_ERR_INTERNAL: return MPI_ERR_INTERN;
	case RMPI_ERR_COUNT: return MPI_ERR_COUNT;
	case RMPI_ERR_DISP: return MPI_ERR_DISP;
	case RMPI_ERR_LOCKTYPE: return MPI_ERR_LOCKTYPE;
	case RMPI_ERR_ASSERT: return MPI_ERR_ASSERT;
#ifdef RMPI_HAVE_PROC_FAILED
	case RMAD_ERR_PROC_FAILED: return RMPI_ERR_PROC_FAILED;
#else
	case RMAD_ERR_PROC_FAILED: return proc_failed;
#endif
	default: return MPI_ERR_OTHER;	/* agent, fabric, bootstrap */
	}
}

/* ------------------------------------------------- comms, groups */

int rmpi_group_world_ranks(MPI_Group g, int **world, int *n)
{
	MPI_Group wg;
	int *in, *w;

	PMPI_Group_size(g, n);
	in = malloc(sizeof(int) * (size_t)(*n + 1));
	w = malloc(sizeof(int) * (size_t)(*n + 1));
	if (!in || !w) {
		free(in);
		free(w);
		return RMAD_ERR_NOMEM;
	}
	for (int i = 0; i < *n; i++)
		in[i] = i;
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	PMPI_Group_translate_ranks(g, *n, in, wg, w);
	PMPI_Group_free(&wg);
	free(in);
	for (int i = 0; i < *n; i++)
		if (w[i] == MPI_UNDEFINED) {	/* a spawned process */
			free(w);
			return RMAD_ERR_RANK;
		}
	*world = w;
	return 0;
}

/* The job ranks of comm's members; *world NULL when they are 0..n-1. */
int rmpi_comm_world_ranks(MPI_Comm comm, int **world, int *n)
{
	MPI_Group g;
	int err, ident = 1, inter = 0;

	PMPI_Comm_test_inter(comm, &inter);
	if (inter) {
		rmpi_unmapped("window on an intercommunicator");
		return RMAD_ERR_ARG;
	}
	PMPI_Comm_group(comm, &g);
	err = rmpi_group_world_ranks(g, world, n);
	PMPI_Group_free(&g);
	if (err)
		return err;
	for (int i = 0; i < *n && ident; i++)
		ident = (*world)[i] == i;
	if (ident) {
		free(*world);
		*world = NULL;
	}
	return 0;
}

/* ----------------------------------------------------------- info */

static const char *const info_keys[] = {
	"no_locks", "accumulate_ordering", "accumulate_ops", "same_size",
	"same_disp_unit", "alloc_shared_noncontig",
};

/* A value rmad takes for info key i (MPI lets a hint be ignored: one
 * rmad would refuse is left out, with a notice). */
static int info_value_ok(size_t i, const char *v)
{
	char buf[MPI_MAX_INFO_VAL + 1], *save = NULL, *t;

	if (i == 1) {			/* accumulate_ordering */
		if (!strcmp(v, "none"))
			return 1;
		snprintf(buf, sizeof(buf), "%s", v);
		for (t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save))
			if (strcmp(t, "rar") && strcmp(t, "raw") &&
			    strcmp(t, "war") && strcmp(t, "waw"))
				return 0;
		return 1;
	}
	if (i == 2)			/* accumulate_ops */
		return !strcmp(v, "same_op") || !strcmp(v, "same_op_no_op");
	return !strcmp(v, "true") || !strcmp(v, "false");
}

/* The info keys rmad understands, as a hint string. */
int rmpi_info_hints(MPI_Info info, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	if (info == MPI_INFO_NULL)
		return 0;
	for (size_t i = 0; i < sizeof(info_keys) / sizeof(info_keys[0]);
	     i++) {
		char v[MPI_MAX_INFO_VAL + 1];
		int flag = 0, n;

		PMPI_Info_get(info, info_keys[i], MPI_MAX_INFO_VAL, v, &flag);
		if (!flag)
			continue;
		if (!info_value_ok(i, v)) {
			rmpi_notice("info %s=%s ignored (not a value rmad "
				    "knows)", info_keys[i], v);
			continue;
		}
		/* MPI writes the ordering list with commas, rmad with + */
		for (char *p = v; *p; p++)
			if (*p == ',')
				*p = '+';
		n = snprintf(buf + at, len - at, "%s%s=%s", at ? "," : "",
			     info_keys[i], v);
		if (n < 0 || (size_t)n >= len - at)
			return RMAD_ERR_HINT;
		at += (size_t)n;
	}
	return 0;
}

/* The hints in force as a new MPI_Info. */
int rmpi_hints_info(const char *hints, MPI_Info *info)
{
	char *s = strdup(hints ? hints : ""), *save = NULL, *kv;

	if (!s)
		return RMAD_ERR_NOMEM;
	PMPI_Info_create(info);
	for (kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq)
			continue;
		*eq = 0;
		for (char *p = eq + 1; *p; p++)
			if (*p == '+')
				*p = ',';
		PMPI_Info_set(*info, kv, eq + 1);
	}
	free(s);
	return 0;
}

/* ----------------------------------------------------------- life */

int rmpi_map_init(void)
{
	if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, tdelete, &tkey,
				    NULL) != MPI_SUCCESS)
		return RMAD_ERR_INTERNAL;
#ifndef RMPI_HAVE_PROC_FAILED
	{
		int c;

		/* collective in effect: every rank adds it, in the same
		 * order, so the code is the same everywhere */
		if (PMPI_Add_error_code(MPI_ERR_OTHER, &c) == MPI_SUCCESS &&
		    PMPI_Add_error_string(c, "a process of the operation "
					  "died (RMAD_ERR_PROC_FAILED)") ==
			    MPI_SUCCESS)
			proc_failed = c;
	}
#endif
	if (PMPI_Comm_dup(MPI_COMM_SELF, &tcomm) != MPI_SUCCESS ||
	    PMPI_Comm_set_errhandler(tcomm, MPI_ERRORS_RETURN) !=
	    MPI_SUCCESS)
		return RMAD_ERR_INTERNAL;
	return 0;
}

void rmpi_map_fini(void)
{
	if (tcomm != MPI_COMM_NULL)
		PMPI_Comm_free(&tcomm);
	tcomm = MPI_COMM_NULL;
	if (tkey != MPI_KEYVAL_INVALID)
		PMPI_Type_free_keyval(&tkey);
}
