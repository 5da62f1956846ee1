/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hints.c - parser for window hint strings.
 *
 * The string is walked in place as (pointer, length) slices, so parsing
 * allocates nothing and cannot fail for lack of memory.  Results go to a
 * local copy first: the caller's struct changes only on success.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "rmad_abi.h"
#include "log.h"
#include "hints.h"

struct slice {
	const char *s;
	size_t n;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static struct slice trim(const char *s, size_t n)
{
	struct slice t = { s, n };

	while (t.n && is_blank(*t.s)) {
		t.s++;
		t.n--;
	}
	while (t.n && is_blank(t.s[t.n - 1]))
		t.n--;
	return t;
}

static bool key_is(struct slice k, const char *lit)
{
	return k.n == strlen(lit) && !memcmp(k.s, lit, k.n);
}

static bool val_is(struct slice v, const char *lit)
{
	return v.n == strlen(lit) && !strncasecmp(v.s, lit, v.n);
}

static int parse_bool(struct slice v, int *out)
{
	if (val_is(v, "true"))
		*out = 1;
	else if (val_is(v, "false"))
		*out = 0;
	else
		return -1;
	return 0;
}

/* Plain decimal digits within [min, max]; no sign, no suffix. */
static int parse_range(struct slice v, long min, long max, long *out)
{
	long x = 0;

	if (!v.n)
		return -1;
	for (size_t i = 0; i < v.n; i++) {
		if (v.s[i] < '0' || v.s[i] > '9')
			return -1;
		x = x * 10 + (v.s[i] - '0');
		/* max is far below LONG_MAX / 10, so this stops overflow */
		if (x > max)
			return -1;
	}
	if (x < min)
		return -1;
	*out = x;
	return 0;
}

/* "none", or a '+'-joined subset of rar, raw, war, waw. */
static int parse_ordering(struct slice v, unsigned int *out)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} names[] = {
		{ "rar", RMAD_ACC_ORDER_RAR },
		{ "raw", RMAD_ACC_ORDER_RAW },
		{ "war", RMAD_ACC_ORDER_WAR },
		{ "waw", RMAD_ACC_ORDER_WAW },
	};
	unsigned int bits = 0;
	const char *p = v.s, *end = v.s + v.n;

	if (val_is(v, "none")) {
		*out = 0;
		return 0;
	}
	for (;;) {
		const char *plus = memchr(p, '+', (size_t)(end - p));
		const char *stop = plus ? plus : end;
		struct slice part = trim(p, (size_t)(stop - p));
		size_t j;

		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			if (val_is(part, names[j].name))
				break;
		if (j == sizeof(names) / sizeof(names[0]))
			return -1;
		bits |= names[j].bit;
		if (!plus)
			break;
		p = plus + 1;
	}
	*out = bits;
	return 0;
}

static int parse_ops(struct slice v, int *out)
{
	if (val_is(v, "same_op"))
		*out = RMAD_ACC_OPS_SAME_OP;
	else if (val_is(v, "same_op_no_op"))
		*out = RMAD_ACC_OPS_SAME_OP_NO_OP;
	else
		return -1;
	return 0;
}

/* One "key=value" item; returns 0 or -1 with *why set. */
static int parse_item(struct slice item, struct rmad_hints *h,
		      const char **why)
{
	const char *eq = memchr(item.s, '=', item.n);
	struct slice k, v;
	int rc;

	if (!eq) {
		*why = "missing '='";
		return -1;
	}
	k = trim(item.s, (size_t)(eq - item.s));
	v = trim(eq + 1, (size_t)(item.s + item.n - eq - 1));
	if (!k.n) {
		*why = "empty key";
		return -1;
	}
	*why = "bad value";
	if (key_is(k, "no_locks"))
		rc = parse_bool(v, &h->no_locks);
	else if (key_is(k, "same_size"))
		rc = parse_bool(v, &h->same_size);
	else if (key_is(k, "same_disp_unit"))
		rc = parse_bool(v, &h->same_disp_unit);
	else if (key_is(k, "alloc_shared_noncontig"))
		rc = parse_bool(v, &h->alloc_shared_noncontig);
	else if (key_is(k, "accumulate_ordering"))
		rc = parse_ordering(v, &h->acc_ordering);
	else if (key_is(k, "accumulate_ops"))
		rc = parse_ops(v, &h->acc_ops);
	else if (key_is(k, "op_pool"))
		rc = parse_range(v, 0, RMAD_HINT_POOL_MAX, &h->op_pool);
	else if (key_is(k, "target_pool"))
		rc = parse_range(v, 0, RMAD_HINT_POOL_MAX, &h->target_pool);
	else if (key_is(k, "slots"))
		rc = parse_range(v, 1, RMAD_HINT_SLOTS_MAX, &h->slots);
	else {
		/* another implementation's hint: portable code may pass it */
		rmad_warn("window hints: ignoring unknown key '%.*s'",
			  (int)k.n, k.s);
		h->ignored++;
		rc = 0;
	}
	return rc;
}

void rmad_hints_defaults(struct rmad_hints *h)
{
	if (!h)
		return;
	memset(h, 0, sizeof(*h));
	h->acc_ordering = RMAD_ACC_ORDER_ALL;
	h->acc_ops = RMAD_ACC_OPS_NONE;
	h->op_pool = -1;
	h->target_pool = -1;
	h->slots = -1;
}

int rmad_hints_parse(const char *s, struct rmad_hints *h)
{
	struct rmad_hints tmp;
	int err;

	if (!h)
		return RMAD_ERR_ARG;
	rmad_hints_defaults(&tmp);
	err = rmad_hints_apply(s, &tmp);
	if (!err)
		*h = tmp;
	return err;
}

int rmad_hints_apply(const char *s, struct rmad_hints *h)
{
	struct rmad_hints tmp;
	const char *p = s, *why;

	if (!h)
		return RMAD_ERR_ARG;
	tmp = *h;
	if (!s) {
		*h = tmp;
		return 0;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		struct slice item = trim(p, n);

		if (!item.n) {
			/* "" and a trailing comma are fine; ",," is not */
			if (!comma)
				break;
			rmad_warn("window hints: empty item in '%s'", s);
			return RMAD_ERR_HINT;
		}
		if (parse_item(item, &tmp, &why) < 0) {
			rmad_warn("window hints: %s in '%.*s'", why,
				  (int)item.n, item.s);
			return RMAD_ERR_HINT;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	*h = tmp;
	return 0;
}
