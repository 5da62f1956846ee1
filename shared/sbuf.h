/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbuf.h - a bounded string builder for reports (agent/ctl.c): appends
 * that do not fit set `over` and leave the buffer as it was, so every
 * entry is whole or absent, and string escapes for JSON and for
 * terminals that keep any input bytes (a client's job or window name)
 * from breaking the output.
 */
#ifndef RMAD_SBUF_H
#define RMAD_SBUF_H

#include <stddef.h>

struct sbuf {
	char *p;
	size_t len;	/* bytes written, without the NUL */
	size_t lim;	/* len may not pass this (p holds lim + 1 bytes) */
	int over;
};

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_putc(struct sbuf *b, char c);
/* Undo everything after mark, e.g. a list entry that did not fit. */
void sbuf_rewind(struct sbuf *b, size_t mark);
/*
 * Enter a list: its entries may use all but `reserve` bytes of what is
 * left, so the sections after it always fit.  Returns the limit to
 * restore (b->lim = it) when the list is done.
 */
size_t sbuf_list_begin(struct sbuf *b, size_t reserve);
/* Length of the well-formed UTF-8 sequence at s (n > 0 bytes left), or 0. */
size_t sbuf_utf8_seq(const unsigned char *s, size_t n);
/* A JSON string literal of str (at most max bytes of it); NULL: null. */
void sbuf_json_str(struct sbuf *b, const char *str, size_t max);
/*
 * str for a terminal: control characters (C0, DEL and C1) and malformed
 * UTF-8 become '?'; NULL or empty: '-'.
 */
void sbuf_text_str(struct sbuf *b, const char *str, size_t max);

#endif
