/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomics.h - the two named ordering primitives, after liburing.
 *
 * Every access to a field shared with another process goes through
 * load_acquire/store_release (or a liburcu uatomic/cmm operation), and
 * each call site says what it orders.  Full fences use liburcu's
 * cmm_smp_mb().
 */
#ifndef RMAD_ATOMICS_H
#define RMAD_ATOMICS_H

#include <urcu/arch.h>
#include <urcu/uatomic.h>

#define load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define load_relaxed(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define store_relaxed(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

#endif
