/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbuf.c - the bounded string builder and its escapes (sbuf.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sbuf.h"

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->over)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->lim - b->len + 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n > b->lim - b->len) {
		/* take back the partial write: entries stay whole */
		b->p[b->len] = '\0';
		b->over = 1;
		return;
	}
	b->len += (size_t)n;
}

void sbuf_putc(struct sbuf *b, char c)
{
	if (b->over)
		return;
	if (b->len >= b->lim) {
		b->over = 1;
		return;
	}
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

/* Undo everything after mark, e.g. a list entry that did not fit. */
void sbuf_rewind(struct sbuf *b, size_t mark)
{
	b->len = mark;
	b->p[mark] = '\0';
	b->over = 0;
}

size_t sbuf_list_begin(struct sbuf *b, size_t reserve)
{
	size_t full = b->lim;

	b->lim = full - b->len > reserve ? full - reserve : b->len;
	return full;
}

/*
 * Length of the well-formed UTF-8 sequence at s (n bytes left), or 0.
 * Names come from clients and may hold any bytes; only well-formed
 * sequences are copied, so the JSON stays valid UTF-8.
 */
size_t sbuf_utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	if (len == 4 && (cp < 0x10000 || cp > 0x10ffff))
		return 0;
	return len;
}

/* A JSON string literal of s (at most max bytes of it). */
void sbuf_json_str(struct sbuf *b, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = str ? strnlen(str, max) : 0;

	if (!str) {
		sbuf_printf(b, "null");
		return;
	}
	sbuf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		size_t k = sbuf_utf8_seq(s + i, n - i);

		if (!k) {
			sbuf_printf(b, "\\ufffd");
			i++;
			continue;
		}
		if (s[i] == '"' || s[i] == '\\')
			sbuf_printf(b, "\\%c", s[i]);
		else if (s[i] < 0x20)
			sbuf_printf(b, "\\u%04x", s[i]);
		else
			for (size_t j = 0; j < k; j++)
				sbuf_putc(b, (char)s[i + j]);
		i += k;
	}
	sbuf_putc(b, '"');
}

/*
 * s for a terminal: control characters (C0, DEL and C1) and malformed
 * UTF-8 become '?', so a client's job name cannot drive the terminal or
 * break the table's lines.
 */
void sbuf_text_str(struct sbuf *b, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = str ? strnlen(str, max) : 0;

	if (!str || !n) {
		sbuf_putc(b, '-');
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t k = sbuf_utf8_seq(s + i, n - i);

		if (!k || s[i] < 0x20 || s[i] == 0x7f ||
		    (k == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0)) {
			sbuf_putc(b, '?');
			i += k ? k : 1;
			continue;
		}
		for (size_t j = 0; j < k; j++)
			sbuf_putc(b, (char)s[i + j]);
		i += k;
	}
}
