/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sbuf.c - the bounded string builder (shared/sbuf.c): an append
 * that does not fit leaves the buffer as it was and sets over, rewind
 * takes an entry back, a list keeps its reserve free, and the JSON and
 * terminal escapes turn any bytes into valid output.
 */
#include <string.h>

#include "sbuf.h"
#include "tap.h"

static char mem[65];

static struct sbuf fresh(size_t lim)
{
	struct sbuf b = { mem, 0, lim, 0 };

	memset(mem, 'x', sizeof(mem));
	mem[0] = '\0';
	return b;
}

int main(void)
{
	struct sbuf b;
	size_t mark, full;

	alarm_after(10);
	plan(16);
	b = fresh(8);
	sbuf_printf(&b, "%d-%s", 12, "ab");
	ok(b.len == 5 && !strcmp(mem, "12-ab") && !b.over, "printf appends");
	sbuf_printf(&b, "%s", "long");
	ok(b.over && b.len == 5 && !strcmp(mem, "12-ab"),
	   "an append that does not fit is taken back whole");
	sbuf_putc(&b, 'z');
	ok(b.len == 5, "nothing is appended once over");
	sbuf_rewind(&b, 2);
	ok(!b.over && !strcmp(mem, "12"), "rewind undoes and clears over");
	sbuf_printf(&b, "%s", "345678");
	ok(b.len == 8 && !b.over, "the limit itself fits");
	sbuf_putc(&b, '9');
	ok(b.over && b.len == 8 && mem[8] == '\0', "putc past the limit sets over");

	b = fresh(64);
	sbuf_printf(&b, "%s", "0123456789");
	full = sbuf_list_begin(&b, 40);
	ok(b.lim == 24 && full == 64, "a list leaves its reserve free");
	mark = b.len;
	sbuf_printf(&b, "%s", "abcdefghijklmnopq");
	ok(b.over, "an entry past the list's limit does not fit");
	sbuf_rewind(&b, mark);
	b.lim = full;
	sbuf_printf(&b, "%s", "abcdefghijklmnopq");
	ok(!b.over && b.len == 27, "after the list, the reserve is there");
	b = fresh(64);
	b.len = 30;
	full = sbuf_list_begin(&b, 40);
	ok(b.lim == 30, "a reserve larger than what is left: the list gets nothing");

	b = fresh(64);
	sbuf_json_str(&b, "a\"b\\c\n\x01", 64);
	ok(!strcmp(mem, "\"a\\\"b\\\\c\\u000a\\u0001\""), "JSON escapes: %s", mem);
	b = fresh(64);
	sbuf_json_str(&b, "\xc3\xa9\xff\xe0\x80\x80", 64);
	ok(!strcmp(mem, "\"\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\""),
	   "JSON keeps well-formed UTF-8, replaces the rest: %s", mem);
	b = fresh(64);
	sbuf_json_str(&b, NULL, 64);
	ok(!strcmp(mem, "null"), "JSON of NULL is null");
	b = fresh(64);
	sbuf_text_str(&b, "ok\x1b[2J\x7f\xc2\x85\xc3\xa9", 64);
	ok(!strcmp(mem, "ok?[2J??\xc3\xa9"), "terminal: controls become '?': %s", mem);
	b = fresh(64);
	sbuf_text_str(&b, "", 64);
	ok(!strcmp(mem, "-"), "terminal: empty is '-'");
	ok(sbuf_utf8_seq((const unsigned char *)"\xf4\x90\x80\x80", 4) == 0 &&
	   sbuf_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4) == 4 &&
	   sbuf_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3) == 0,
	   "UTF-8: past U+10FFFF and surrogates are malformed");
	return done_testing();
}
