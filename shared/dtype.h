/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtype.h - predefined datatypes and reduction ops of the accumulate
 * family (accumulate, get_accumulate, fetch_and_op, compare_and_swap).
 *
 * Datatype and op ids are the RMAD_* values of rmad.h (types 1..14, ops
 * 1..12).  Which op is allowed on which type follows MPI-3.1 5.9.2:
 *
 *   SUM PROD MIN MAX       C integer types, FLOAT, DOUBLE
 *   LAND LOR LXOR          C integer types
 *   BAND BOR BXOR          C integer types
 *   REPLACE NO_OP          every predefined type
 *   compare_and_swap       every type of at most 16 bytes (bitwise)
 *
 * The C integer types are INT, LONG, SHORT, LONG_LONG, SIGNED_CHAR, the
 * UNSIGNED_* types, INT8..INT64 and UINT8..UINT64, and, as Open MPI and
 * MPICH take them, CHAR (C's char, signed or not as the ABI says) and
 * BYTE (an unsigned byte).  WCHAR takes only REPLACE and NO_OP (and
 * compare_and_swap).  C_BOOL (logical)
 * takes LAND, LOR, LXOR and compare_and_swap; C_FLOAT_COMPLEX SUM and
 * PROD; the pair types FLOAT_INT, 2INT, SHORT_INT and 2FLOAT MINLOC and
 * MAXLOC.
 *
 * LONG_DOUBLE and FLOAT128 take the FLOAT ops, C_DOUBLE_COMPLEX,
 * C_LONG_DOUBLE_COMPLEX and C_FLOAT128_COMPLEX SUM and PROD,
 * DOUBLE_INT, LONG_INT, LONG_DOUBLE_INT and 2DOUBLE MINLOC and MAXLOC.
 * These types are wider than 8 bytes (rmad_dtype_wide): no lock-free atomic of their width exists, so
 * rmad_acc_apply updates them with plain loads and stores, and every
 * caller holds the target member's accumulate lock (acc_lock in its
 * control page) around it: same-node origins, the member itself and the
 * agent alike.
 *
 * rmad_acc_apply_bulk does the same with plain loads and stores, for a
 * caller that excludes every other accumulator of those elements
 * (accword.h's protocol, which keeps bulk and atomic appliers mutually
 * atomic per element).
 *
 * Synchronization table (same element, any processes sharing the memory;
 * wide types only under the accumulate lock):
 *   acc_apply || acc_apply : safe, atomic per element (dst aligned)
 *   acc_apply || cas_apply : safe, atomic per element (dst aligned)
 *   cas_apply || cas_apply : safe, atomic (dst aligned)
 * Each element is updated with one sequentially consistent lock-free CPU
 * atomic (fetch-and-op or a compare-exchange loop), never a lock.  A dst
 * that is not aligned to the element size is updated with plain memcpy:
 * correct on its own, but NOT atomic against concurrent updaters.  There
 * is no atomicity across elements.
 */
#ifndef RMAD_DTYPE_H
#define RMAD_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#define RMAD_DTYPE_MAX	38	/* highest predefined datatype id */

/* Bytes of one element; 0 if dtype is not a predefined type. */
size_t rmad_dtype_size(uint32_t dtype);

/* 0 if MPI-3.1 allows `op` on `dtype` in accumulate, get_accumulate and
 * fetch_and_op; RMAD_ERR_TYPE for a bad type id; RMAD_ERR_OP for a bad op
 * id or a forbidden combination. */
int rmad_op_check(uint32_t dtype, uint32_t op);

/* 1 if an accumulate on dtype must hold the member's accumulate lock
 * (wider than 8 bytes: rmad_acc_apply is plain, not atomic, for it). */
int rmad_dtype_wide(uint32_t dtype);

/* 0 if compare_and_swap is allowed on dtype, RMAD_ERR_TYPE otherwise. */
int rmad_cas_check(uint32_t dtype);

/*
 * For i in [0, count): if result != NULL, result[i] = old dst[i]; then
 * dst[i] = dst[i] op src[i].  REPLACE stores src[i]; NO_OP leaves dst
 * alone (src may then be NULL) and only fetches.  src and result need no
 * alignment.  Does nothing unless rmad_op_check(dtype, op) == 0.
 */
void rmad_acc_apply(void *dst, const void *src, void *result, uint32_t dtype,
		    uint32_t op, uint64_t count);

/*
 * rmad_acc_apply with plain loads and stores (vectorized loops), for a
 * caller that excludes every other accumulator of these elements
 * (accword.h's bulk mode): 0 when done, -1 when dtype has no bulk loop
 * or dst is not aligned to the element (then nothing was done: use
 * rmad_acc_apply).
 */
int rmad_acc_apply_bulk(void *dst, const void *src, void *result,
			uint32_t dtype, uint32_t op, uint64_t count);

/* For a caller that excludes every other accumulator of these elements:
 * the bulk loops where the type has them, else rmad_acc_apply. */
void rmad_acc_apply_excl(void *dst, const void *src, void *result,
			 uint32_t dtype, uint32_t op, uint64_t count);

/*
 * One element: *result = old *dst; if old equals *cmp bitwise, *dst =
 * *src.  src, cmp and result need no alignment.  Does nothing unless
 * rmad_cas_check(dtype) == 0.
 */
void rmad_cas_apply(void *dst, const void *src, const void *cmp, void *result,
		    uint32_t dtype);

#endif
