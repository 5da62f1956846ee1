/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hints.c - window hint string parsing.
 *
 * Good strings must set exactly what they name; every malformed string
 * must fail with RMAD_ERR_HINT and leave the caller's struct untouched,
 * since window creation relies on that to report the error cleanly.
 */
#include <string.h>

#include "rmad_abi.h"
#include "log.h"
#include "hints.h"
#include "tap.h"

static int is_default(const struct rmad_hints *h)
{
	struct rmad_hints d;

	rmad_hints_defaults(&d);
	return !memcmp(&d, h, sizeof(d));
}

/* A struct no parse would produce, to see that failures don't touch it. */
static void sentinel(struct rmad_hints *h)
{
	memset(h, 0x5a, sizeof(*h));
}

static void bad(const char *s)
{
	struct rmad_hints h, before;
	int rc;

	sentinel(&h);
	before = h;
	rc = rmad_hints_parse(s, &h);
	ok(rc == RMAD_ERR_HINT && !memcmp(&h, &before, sizeof(h)),
	   "malformed \"%s\" -> RMAD_ERR_HINT, struct unchanged (rc %d)", s,
	   rc);
}

static void good_ordering(const char *s, unsigned int want)
{
	struct rmad_hints h;
	int rc = rmad_hints_parse(s, &h);

	ok(rc == 0 && h.acc_ordering == want, "\"%s\" -> ordering %u (%u)",
	   s, want, h.acc_ordering);
}

int main(void)
{
	struct rmad_hints h;
	int rc;

	alarm_after(30);
	/* unknown-key and malformed warnings are expected noise here */
	rmad_log_init("test_hints", RMAD_LOG_ERROR);

	rmad_hints_defaults(&h);
	ok(!h.no_locks && !h.same_size && !h.same_disp_unit,
	   "defaults: no promises");
	ok(h.acc_ordering == (RMAD_ACC_ORDER_RAR | RMAD_ACC_ORDER_RAW |
			      RMAD_ACC_ORDER_WAR | RMAD_ACC_ORDER_WAW),
	   "defaults: full accumulate ordering");
	ok(h.acc_ops == 0 && h.op_pool == -1 && h.target_pool == -1 &&
	   h.slots == -1 && h.ignored == 0,
	   "defaults: ops and sizes not given");

	sentinel(&h);
	ok(rmad_hints_parse(NULL, &h) == 0 && is_default(&h),
	   "NULL means no hints");
	sentinel(&h);
	ok(rmad_hints_parse("", &h) == 0 && is_default(&h),
	   "\"\" means no hints");
	sentinel(&h);
	ok(rmad_hints_parse("  \t ", &h) == 0 && is_default(&h),
	   "blank string means no hints");
	ok(rmad_hints_parse("no_locks=true", NULL) == RMAD_ERR_ARG,
	   "NULL struct -> RMAD_ERR_ARG");

	rc = rmad_hints_parse(" no_locks = true, same_size=false,"
			      "same_disp_unit=TRUE ,accumulate_ordering="
			      "rar+waw,accumulate_ops=same_op_no_op,"
			      "op_pool=0,target_pool=1048576,slots=65536,", &h);
	ok(rc == 0, "full hint string with trailing comma parses (%d)", rc);
	ok(h.no_locks == 1 && h.same_size == 0 && h.same_disp_unit == 1,
	   "bools set");
	ok(h.acc_ordering == (RMAD_ACC_ORDER_RAR | RMAD_ACC_ORDER_WAW),
	   "accumulate_ordering=rar+waw");
	ok(h.acc_ops == 2, "accumulate_ops=same_op_no_op -> 2");
	ok(h.op_pool == 0 && h.target_pool == 1048576 && h.slots == 65536,
	   "pool and slot sizes at their limits");
	ok(h.ignored == 0, "nothing ignored");

	ok(rmad_hints_parse("accumulate_ops=same_op", &h) == 0 &&
	   h.acc_ops == 1, "accumulate_ops=same_op -> 1");
	ok(rmad_hints_parse("slots=1,target_pool=0", &h) == 0 &&
	   h.slots == 1 && h.target_pool == 0 && h.op_pool == -1,
	   "low limits; untouched sizes stay -1");
	ok(rmad_hints_parse("no_locks=true,no_locks=false", &h) == 0 &&
	   h.no_locks == 0, "a repeated key: the last one wins");
	good_ordering("accumulate_ordering=none", 0);
	good_ordering("accumulate_ordering=raw", RMAD_ACC_ORDER_RAW);
	good_ordering("accumulate_ordering=war + raw",
		      RMAD_ACC_ORDER_WAR | RMAD_ACC_ORDER_RAW);
	good_ordering("accumulate_ordering=rar+raw+war+waw",
		      RMAD_ACC_ORDER_RAR | RMAD_ACC_ORDER_RAW |
		      RMAD_ACC_ORDER_WAR | RMAD_ACC_ORDER_WAW);

	rc = rmad_hints_parse("foo=bar,no_locks=true,vendor_x=1", &h);
	ok(rc == 0 && h.ignored == 2 && h.no_locks == 1,
	   "unknown keys are counted and skipped (ignored %u)", h.ignored);
	ok(rmad_hints_parse("no_locks=true", &h) == 0 && h.ignored == 0,
	   "ignored starts from zero on each parse");

	bad("no_locks");
	bad("foo");
	bad("=true");
	bad(" = true");
	bad("no_locks=");
	bad("no_locks=yes");
	bad("no_locks=1");
	bad("same_size=truex");
	bad("same_disp_unit=false false");
	bad("accumulate_ordering=");
	bad("accumulate_ordering=rar+");
	bad("accumulate_ordering=+rar");
	bad("accumulate_ordering=rar++raw");
	bad("accumulate_ordering=rar+xyz");
	bad("accumulate_ordering=none+rar");
	bad("accumulate_ordering=rar,raw");
	bad("accumulate_ops=sum");
	bad("accumulate_ops=");
	bad("op_pool=-1");
	bad("op_pool=1048577");
	bad("op_pool=12abc");
	bad("op_pool=0x10");
	bad("op_pool=99999999999999999999999");
	bad("target_pool=");
	bad("target_pool=2000000");
	bad("slots=0");
	bad("slots=65537");
	bad("slots=+5");
	bad("no_locks=true,,same_size=true");
	bad("no_locks=true,,");
	bad(",");
	bad(",no_locks=true");
	bad("no_locks=true, ,same_size=true");

	return done_testing();
}
