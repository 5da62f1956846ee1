/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomics.h - the two named ordering primitives, after liburing.
 *
 * Every access to a field shared with another process goes through
 * load_acquire/store_release (or a liburcu uatomic/cmm operation), and
 * each call site says what it orders.  Full fences use rmad_smp_mb().
 */
#ifndef RMAD_ATOMICS_H
#define RMAD_ATOMICS_H

#include <urcu/arch.h>
#include <urcu/uatomic.h>

#define load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define load_relaxed(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define store_relaxed(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

/*
 * Full fence: every earlier load and store before every later one (the
 * Dekker pairs: a ring push and the agent's NEED_WAKEUP flag, a counter
 * and its waiters, a flush's completion).  On x86-64 a locked add of 0
 * to the top of the stack, as Linux's smp_mb() does: as strong as MFENCE
 * for ordinary write-back memory and cheaper on current cores.  MFENCE
 * also orders non-temporal stores and write-combining memory; rmad has
 * neither, and glibc's non-temporal copies end in their own SFENCE.
 * Elsewhere, liburcu's cmm_smp_mb().
 */
#if defined(__x86_64__)
#define rmad_smp_mb() \
	__asm__ __volatile__("lock; addl $0,(%%rsp)" ::: "memory", "cc")
#else
#define rmad_smp_mb()	cmm_smp_mb()
#endif

#endif
