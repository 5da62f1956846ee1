/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hints.h - window hint strings, "key=value,key=value".
 *
 * Hints are promises the application makes about how it will use a
 * window (no locks, one accumulate op, ...) and per-window sizes that
 * override rmad.conf.  A hint only ever lets the runtime do less work,
 * so an unknown key is ignored (with a warning) for portability, but a
 * malformed string is an error: silently dropping a promise the
 * application meant to make would hide a typo forever.
 */
#ifndef RMAD_HINTS_H
#define RMAD_HINTS_H

/* accumulate_ordering bits */
#define RMAD_ACC_ORDER_RAR	1
#define RMAD_ACC_ORDER_RAW	2
#define RMAD_ACC_ORDER_WAR	4
#define RMAD_ACC_ORDER_WAW	8
#define RMAD_ACC_ORDER_ALL	15

/* accumulate_ops */
#define RMAD_ACC_OPS_NONE		0	/* not given */
#define RMAD_ACC_OPS_SAME_OP		1
#define RMAD_ACC_OPS_SAME_OP_NO_OP	2

#define RMAD_HINT_POOL_MAX	1048576
#define RMAD_HINT_SLOTS_MAX	65536

struct rmad_hints {
	int no_locks;
	int same_size;
	int same_disp_unit;
	int alloc_shared_noncontig;	/* rmad_win_allocate_shared */
	unsigned int acc_ordering;	/* RMAD_ACC_ORDER_*; default all */
	int acc_ops;			/* RMAD_ACC_OPS_* */
	/* per-window sizes; -1 when not given (rmad.conf applies) */
	long op_pool;			/* 0..RMAD_HINT_POOL_MAX */
	long target_pool;		/* 0..RMAD_HINT_POOL_MAX */
	long slots;			/* 1..RMAD_HINT_SLOTS_MAX */
	unsigned int ignored;		/* unknown keys seen */
};

/* No hints: every promise off, full ordering, sizes from rmad.conf. */
void rmad_hints_defaults(struct rmad_hints *h);

/*
 * Parse s (NULL or "" means no hints) into *h, starting from the
 * defaults, so the result depends on s alone.  Returns 0, or
 * RMAD_ERR_HINT for a malformed string, leaving *h unchanged.
 */
int rmad_hints_parse(const char *s, struct rmad_hints *h);
/* The same, over the values already in *h: the keys s gives change. */
int rmad_hints_apply(const char *s, struct rmad_hints *h);

#endif
