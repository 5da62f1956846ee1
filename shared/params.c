/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * params.c - parser, overrides and printers for the RMAD_PARAMS table.
 *
 * Everything here is driven by a descriptor array generated from the
 * table, so adding a key to params.h is the whole job.  Parsing is
 * strict (no trailing junk, no silent wrap-around, no clamping): a typo
 * in a config file must stop the agent with a message naming the line,
 * not leave it running with a value nobody asked for.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "rmad_abi.h"
#include "log.h"
#include "params.h"

enum ptype { PT_BOOL, PT_INT, PT_SIZE, PT_STRING, PT_LEVEL };

struct pdesc {
	const char *name;
	enum ptype type;
	const char *def;
	unsigned int flags;
	long long min, max;
	const char *help;
	size_t off;
};

#define PDESC(n, t, d, fl, mn, mx, h)					\
	{ #n, PT_##t, d, fl, mn, mx, h, offsetof(struct rmad_params, n) },

static const struct pdesc pdesc[RMAD_NPARAMS] = {
	RMAD_PARAMS(PDESC)
};

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const char *const src_names[] = { "default", "file", "env", "set" };

/* A parsed value, before it is committed to the struct. */
union pval {
	int b;
	long i;
	uint64_t z;
	int lvl;
	const char *s;
};

static void *pfield(struct rmad_params *p, int i)
{
	return (char *)p + pdesc[i].off;
}

static const void *cpfield(const struct rmad_params *p, int i)
{
	return (const char *)p + pdesc[i].off;
}

static int find_key(const char *key)
{
	for (int i = 0; i < RMAD_NPARAMS; i++)
		if (!strcmp(pdesc[i].name, key))
			return i;
	return -1;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	       c == '\f' || c == '\v';
}

/* Digits only, no sign, no blanks, no wrap-around. */
static int parse_u64(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *q = s;

	if (*q < '0' || *q > '9')
		return -1;
	for (; *q >= '0' && *q <= '9'; q++) {
		unsigned int d = (unsigned int)(*q - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*end = q;
	return 0;
}

static int parse_long(const char *s, long *out)
{
	bool neg = false;
	const char *end;
	uint64_t mag;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (parse_u64(s, &mag, &end) < 0 || *end)
		return -1;
	if (neg) {
		if (mag > (uint64_t)LONG_MAX + 1)
			return -1;
		*out = mag == (uint64_t)LONG_MAX + 1 ? LONG_MIN : -(long)mag;
	} else {
		if (mag > (uint64_t)LONG_MAX)
			return -1;
		*out = (long)mag;
	}
	return 0;
}

static int parse_size(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int shift = 0;

	if (parse_u64(s, &v, &end) < 0)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (shift && end[1])
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* 1048576 -> "1m": sizes read back the way people write them. */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char suf[] = "gmk";
	static const int shift[] = { 30, 20, 10 };

	for (int i = 0; i < 3 && v; i++) {
		if (!(v & ((UINT64_C(1) << shift[i]) - 1))) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v >> shift[i]), suf[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* What a good value looks like, for error messages and the docs. */
static void describe(int i, char *buf, size_t len)
{
	const struct pdesc *d = &pdesc[i];
	char lo[24], hi[24];

	switch (d->type) {
	case PT_BOOL:
		snprintf(buf, len, "true, false, yes, no, on, off, 1 or 0");
		break;
	case PT_INT:
		if (d->flags & RMAD_P_POW2)
			snprintf(buf, len, "a power of two in %lld..%lld",
				 d->min, d->max);
		else
			snprintf(buf, len, "integer %lld..%lld",
				 d->min, d->max);
		break;
	case PT_SIZE:
		fmt_size(lo, sizeof(lo), (uint64_t)d->min);
		fmt_size(hi, sizeof(hi), (uint64_t)d->max);
		snprintf(buf, len,
			 "size %s..%s, suffix k, m or g for 1024^n", lo, hi);
		break;
	case PT_STRING:
		snprintf(buf, len, "string of at most %d characters",
			 RMAD_PARAM_STRMAX - 1);
		break;
	case PT_LEVEL:
		snprintf(buf, len, "error, warn, info or debug");
		break;
	}
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void bad_value(int i, const char *val, char *err, size_t errlen)
{
	char want[160];

	describe(i, want, sizeof(want));
	/* a long string would push the useful part out of err */
	set_err(err, errlen, "bad value '%.64s%s' for '%s' (expected %s)",
		val, strlen(val) > 64 ? "..." : "", pdesc[i].name, want);
}

static int parse_value(int i, const char *val, union pval *v)
{
	const struct pdesc *d = &pdesc[i];

	switch (d->type) {
	case PT_BOOL:
		return parse_bool(val, &v->b);
	case PT_INT:
		if (parse_long(val, &v->i) < 0 || v->i < d->min ||
		    v->i > d->max)
			return -1;
		if ((d->flags & RMAD_P_POW2) && !is_pow2((uint64_t)v->i))
			return -1;
		return 0;
	case PT_SIZE:
		if (parse_size(val, &v->z) < 0 || v->z < (uint64_t)d->min ||
		    v->z > (uint64_t)d->max)
			return -1;
		if ((d->flags & RMAD_P_POW2) && !is_pow2(v->z))
			return -1;
		return 0;
	case PT_STRING:
		if (strlen(val) >= RMAD_PARAM_STRMAX)
			return -1;
		v->s = val;
		return 0;
	case PT_LEVEL:
		v->lvl = rmad_log_parse_level(val);
		return v->lvl < 0 ? -1 : 0;
	}
	return -1;
}

static void store(struct rmad_params *p, int i, const union pval *v)
{
	void *f = pfield(p, i);

	switch (pdesc[i].type) {
	case PT_BOOL:
		*(int *)f = v->b;
		break;
	case PT_INT:
		*(long *)f = v->i;
		break;
	case PT_SIZE:
		*(uint64_t *)f = v->z;
		break;
	case PT_STRING:
		/* zero the tail so whole-struct copies compare cleanly */
		memset(f, 0, RMAD_PARAM_STRMAX);
		memcpy(f, v->s, strlen(v->s));
		break;
	case PT_LEVEL:
		*(int *)f = v->lvl;
		break;
	}
}

static int set_idx(struct rmad_params *p, int i, const char *val,
		   enum rmad_param_src src, char *err, size_t errlen)
{
	union pval v;

	if (parse_value(i, val, &v) < 0) {
		bad_value(i, val, err, errlen);
		return RMAD_ERR_ARG;
	}
	store(p, i, &v);
	p->src[i] = (unsigned char)src;
	return 0;
}

void rmad_params_defaults(struct rmad_params *p)
{
	char err[256];

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < RMAD_NPARAMS; i++)
		if (set_idx(p, i, pdesc[i].def, RMAD_PSRC_DEFAULT, err,
			    sizeof(err)) < 0)
			/* a bug in params.h; t/test_params catches it */
			rmad_err("built-in default: %s", err);
}

int rmad_params_set(struct rmad_params *p, const char *key, const char *val,
		    char *err, size_t errlen)
{
	int i;

	if (!p || !key || !val) {
		set_err(err, errlen, "missing key or value");
		return RMAD_ERR_ARG;
	}
	i = find_key(key);
	if (i < 0) {
		set_err(err, errlen, "unknown key '%.64s'", key);
		return RMAD_ERR_ARG;
	}
	return set_idx(p, i, val, RMAD_PSRC_SET, err, errlen);
}

static char *trim(char *s)
{
	char *e;

	while (is_space(*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_space(e[-1]))
		*--e = '\0';
	return s;
}

/*
 * Split one line in place into key and value.  Returns 1 for a line
 * with nothing on it, 0 for key/value, -1 with msg set when malformed.
 */
static int split_line(char *line, char **key, char **val, const char **msg)
{
	char *s = trim(line), *eq, *v, *q;

	if (!*s || *s == '#')
		return 1;
	eq = strchr(s, '=');
	if (!eq) {
		*msg = "expected 'key = value'";
		return -1;
	}
	*eq = '\0';
	*key = trim(s);
	if (!**key) {
		*msg = "missing key before '='";
		return -1;
	}
	v = eq + 1;
	while (is_space(*v))
		v++;
	if (*v == '"') {
		/* no escapes: the value is everything up to the next quote */
		q = strchr(v + 1, '"');
		if (!q) {
			*msg = "unterminated quote";
			return -1;
		}
		*q = '\0';
		*val = v + 1;
		for (q++; is_space(*q); q++)
			;
		if (*q && *q != '#') {
			*msg = "junk after closing quote";
			return -1;
		}
		return 0;
	}
	/* '#' is a comment only where it starts a word, so "a#b" survives */
	for (q = v; *q; q++) {
		if (*q == '#' && (q == v || is_space(q[-1]))) {
			*q = '\0';
			break;
		}
	}
	*val = trim(v);
	return 0;
}

int rmad_params_load_file(struct rmad_params *p, const char *path,
			  char *err, size_t errlen)
{
	struct rmad_params tmp;
	char *line = NULL, *key, *val, msg[320];
	const char *why;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	FILE *f;

	if (!p || !path) {
		set_err(err, errlen, "missing config file path");
		return RMAD_ERR_ARG;
	}
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR)
			return 1;
		set_err(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return RMAD_ERR_ARG;
	}
	/* a half-applied file is worse than none: work on a copy */
	tmp = *p;
	for (;;) {
		ssize_t n = getline(&line, &cap, f);
		int r;

		if (n < 0)
			break;
		lineno++;
		if ((size_t)n != strlen(line)) {
			set_err(err, errlen, "%s:%d: NUL byte in line", path,
				lineno);
			rc = RMAD_ERR_ARG;
			break;
		}
		r = split_line(line, &key, &val, &why);
		if (r > 0)
			continue;
		if (r < 0) {
			set_err(err, errlen, "%s:%d: %s", path, lineno, why);
			rc = RMAD_ERR_ARG;
			break;
		}
		r = find_key(key);
		if (r < 0) {
			set_err(err, errlen, "%s:%d: unknown key '%.64s'", path,
				lineno, key);
			rc = RMAD_ERR_ARG;
			break;
		}
		if (set_idx(&tmp, r, val, RMAD_PSRC_FILE, msg,
			    sizeof(msg)) < 0) {
			set_err(err, errlen, "%s:%d: %s", path, lineno, msg);
			rc = RMAD_ERR_ARG;
			break;
		}
	}
	if (!rc && ferror(f)) {
		set_err(err, errlen, "%s: read error after line %d", path,
			lineno);
		rc = RMAD_ERR_ARG;
	}
	free(line);
	fclose(f);
	if (!rc)
		*p = tmp;
	return rc;
}

int rmad_params_load_env(struct rmad_params *p, char *err, size_t errlen)
{
	struct rmad_params tmp;
	char var[64], msg[320];

	if (!p) {
		set_err(err, errlen, "missing params");
		return RMAD_ERR_ARG;
	}
	tmp = *p;
	for (int i = 0; i < RMAD_NPARAMS; i++) {
		const char *val;
		size_t j, k = 0;

		k = (size_t)snprintf(var, sizeof(var), "RMAD_");
		for (j = 0; pdesc[i].name[j] && k + 1 < sizeof(var); j++) {
			char c = pdesc[i].name[j];

			var[k++] = (c >= 'a' && c <= 'z') ? c - 'a' + 'A' : c;
		}
		var[k] = '\0';
		val = getenv(var);
		if (!val)
			continue;
		if (set_idx(&tmp, i, val, RMAD_PSRC_ENV, msg,
			    sizeof(msg)) < 0) {
			set_err(err, errlen, "environment variable %s: %s", var,
				msg);
			return RMAD_ERR_ARG;
		}
	}
	*p = tmp;
	return 0;
}

static bool field_equal(const struct rmad_params *a,
			const struct rmad_params *b, int i)
{
	switch (pdesc[i].type) {
	case PT_BOOL:
	case PT_LEVEL:
		return *(const int *)cpfield(a, i) ==
		       *(const int *)cpfield(b, i);
	case PT_INT:
		return *(const long *)cpfield(a, i) ==
		       *(const long *)cpfield(b, i);
	case PT_SIZE:
		return *(const uint64_t *)cpfield(a, i) ==
		       *(const uint64_t *)cpfield(b, i);
	case PT_STRING:
		return !strcmp(cpfield(a, i), cpfield(b, i));
	}
	return false;
}

static size_t field_size(int i)
{
	switch (pdesc[i].type) {
	case PT_BOOL:
	case PT_LEVEL:
		return sizeof(int);
	case PT_INT:
		return sizeof(long);
	case PT_SIZE:
		return sizeof(uint64_t);
	case PT_STRING:
		return RMAD_PARAM_STRMAX;
	}
	return 0;
}

int rmad_params_apply_reload(struct rmad_params *cur,
			     const struct rmad_params *fresh)
{
	int changed = 0;

	if (!cur || !fresh)
		return 0;
	for (int i = 0; i < RMAD_NPARAMS; i++) {
		if (!(pdesc[i].flags & RMAD_P_RELOAD))
			continue;
		if (!field_equal(cur, fresh, i)) {
			memcpy(pfield(cur, i), cpfield(fresh, i),
			       field_size(i));
			changed++;
		}
		cur->src[i] = fresh->src[i];
	}
	return changed;
}

/* A value as a config file would spell it; strings bare or quoted. */
static void fmt_value(const struct rmad_params *p, int i, char *buf,
		      size_t len, bool quote)
{
	const void *f = cpfield(p, i);
	const char *s;
	int lvl;

	switch (pdesc[i].type) {
	case PT_BOOL:
		snprintf(buf, len, "%s", *(const int *)f ? "true" : "false");
		break;
	case PT_INT:
		snprintf(buf, len, "%ld", *(const long *)f);
		break;
	case PT_SIZE:
		fmt_size(buf, len, *(const uint64_t *)f);
		break;
	case PT_LEVEL:
		lvl = *(const int *)f;
		snprintf(buf, len, "%s",
			 lvl >= 0 && lvl <= 3 ? level_names[lvl] : "?");
		break;
	case PT_STRING:
		s = f;
		/* quote what the parser would otherwise trim or cut */
		if (quote && (!*s || strpbrk(s, " \t#\"") || *s == '"'))
			snprintf(buf, len, "\"%s\"", s);
		else
			snprintf(buf, len, "%s", s);
		break;
	}
}

static void print_text(const struct rmad_params *p, FILE *f)
{
	char val[RMAD_PARAM_STRMAX + 8];
	int w = 0;

	for (int i = 0; i < RMAD_NPARAMS; i++)
		if ((int)strlen(pdesc[i].name) > w)
			w = (int)strlen(pdesc[i].name);
	for (int i = 0; i < RMAD_NPARAMS; i++) {
		unsigned int s = p->src[i];

		fmt_value(p, i, val, sizeof(val), true);
		fprintf(f, "%-*s = %-12s  # %s\n", w, pdesc[i].name, val,
			s < 4 ? src_names[s] : "?");
	}
}

/* Word-wrap text to width columns, each line started with prefix. */
static void wrap(FILE *f, const char *prefix, const char *text, int width)
{
	const char *s = text;

	while (*s) {
		const char *end = s, *brk = NULL, *e;
		int col = (int)strlen(prefix);

		while (*end && (col < width || !brk)) {
			if (*end == ' ')
				brk = end;
			end++;
			col++;
		}
		if (!*end)
			brk = end;
		/* a roff line must not start with a control character */
		if (!*prefix && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		/* a break after two blanks leaves no blank at the end */
		e = brk;
		while (e > s && e[-1] == ' ')
			e--;
		fprintf(f, "%s%.*s\n", prefix, (int)(e - s), s);
		s = brk;
		while (*s == ' ')
			s++;
	}
}

/* "Integer 0..60000000, default 20000; reloaded on SIGHUP." */
static void describe_doc(int i, char *buf, size_t len)
{
	const struct pdesc *d = &pdesc[i];
	char lo[24], hi[24], def[RMAD_PARAM_STRMAX + 8];
	const char *rl = (d->flags & RMAD_P_RELOAD) ?
		"reloaded on SIGHUP" : "read at start only";

	if (d->type == PT_STRING && !*d->def)
		snprintf(def, sizeof(def), "empty");
	else
		snprintf(def, sizeof(def), "%s", d->def);
	switch (d->type) {
	case PT_BOOL:
		snprintf(buf, len, "Boolean, default %s; %s.", def, rl);
		break;
	case PT_INT:
		snprintf(buf, len, "Integer %lld..%lld%s, default %s; %s.",
			 d->min, d->max,
			 (d->flags & RMAD_P_POW2) ? " (a power of two)" : "",
			 def, rl);
		break;
	case PT_SIZE:
		fmt_size(lo, sizeof(lo), (uint64_t)d->min);
		fmt_size(hi, sizeof(hi), (uint64_t)d->max);
		snprintf(buf, len,
			 "Size %s..%s (suffix k, m or g for 1024^n), "
			 "default %s; %s.", lo, hi, def, rl);
		break;
	case PT_STRING:
		snprintf(buf, len, "String, default %s; %s.", def, rl);
		break;
	case PT_LEVEL:
		snprintf(buf, len,
			 "Log level (error, warn, info or debug), default "
			 "%s; %s.", def, rl);
		break;
	}
}

static void print_conf(FILE *f)
{
	static const char *const head =
		"# rmad.conf - configuration of the rmad agent and of the\n"
		"# librmad clients on this node.\n"
		"#\n"
		"# Format: one \"key = value\" per line; '#' starts a comment\n"
		"# at the start of a line or after whitespace; a value may be\n"
		"# wrapped in double quotes.  Sizes take a k, m or g suffix\n"
		"# (1024^n).  An unknown key or a bad value stops the agent\n"
		"# with a message naming the file and line.\n"
		"#\n"
		"# Precedence, lowest first: built-in defaults < this file\n"
		"# < RMAD_<KEY> environment variables (the key upper-cased,\n"
		"# e.g. RMAD_SPIN_US) < window hints for the keys a window\n"
		"# may override.\n"
		"#\n"
		"# SIGHUP makes the agent read this file again; only keys\n"
		"# marked \"reloaded on SIGHUP\" take the new value, the\n"
		"# others need a restart.  `rmad --show-config` prints the\n"
		"# values in effect and where each came from.  See\n"
		"# rmad.conf(5).\n"
		"#\n"
		"# Every key is listed below, commented out at its default.\n";
	struct rmad_params def;
	char line[512], val[RMAD_PARAM_STRMAX + 8];

	rmad_params_defaults(&def);
	fputs(head, f);
	for (int i = 0; i < RMAD_NPARAMS; i++) {
		fputc('\n', f);
		wrap(f, "# ", pdesc[i].help, 72);
		describe_doc(i, line, sizeof(line));
		wrap(f, "# ", line, 72);
		fmt_value(&def, i, val, sizeof(val), true);
		fprintf(f, "# %s = %s\n", pdesc[i].name, val);
	}
}

/* Escape roff's escape character; everything else in our text is safe. */
static void roff_escape(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	for (; *s && k + 3 < len; s++) {
		if (*s == '\\') {
			buf[k++] = '\\';
			buf[k++] = 'e';
		} else {
			buf[k++] = *s;
		}
	}
	buf[k] = '\0';
}

/* roff wants each sentence to start a line, to space sentences right. */
static void wrap_sentences(FILE *f, char *text, int width)
{
	char *s = text, *dot;

	while ((dot = strstr(s, ". ")) != NULL) {
		dot[1] = '\0';
		wrap(f, "", s, width);
		for (s = dot + 2; *s == ' '; s++)
			;
	}
	wrap(f, "", s, width);
}

static void print_man(FILE *f)
{
	char line[512], esc[1024];

	for (int i = 0; i < RMAD_NPARAMS; i++) {
		fprintf(f, ".TP\n.B %s\n", pdesc[i].name);
		roff_escape(pdesc[i].help, esc, sizeof(esc));
		wrap_sentences(f, esc, 72);
		fputs(".br\n", f);
		describe_doc(i, line, sizeof(line));
		roff_escape(line, esc, sizeof(esc));
		wrap(f, "", esc, 72);
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void print_json(const struct rmad_params *p, FILE *f)
{
	fputs("{\n", f);
	for (int i = 0; i < RMAD_NPARAMS; i++) {
		const void *v = cpfield(p, i);
		int lvl;

		fprintf(f, "  \"%s\": ", pdesc[i].name);
		switch (pdesc[i].type) {
		case PT_BOOL:
			fputs(*(const int *)v ? "true" : "false", f);
			break;
		case PT_INT:
			fprintf(f, "%ld", *(const long *)v);
			break;
		case PT_SIZE:
			fprintf(f, "%llu",
				(unsigned long long)*(const uint64_t *)v);
			break;
		case PT_STRING:
			json_string(f, v);
			break;
		case PT_LEVEL:
			lvl = *(const int *)v;
			json_string(f, lvl >= 0 && lvl <= 3 ?
				    level_names[lvl] : "?");
			break;
		}
		fputs(i + 1 < RMAD_NPARAMS ? ",\n" : "\n", f);
	}
	fputs("}\n", f);
}

void rmad_params_print(const struct rmad_params *p, FILE *f,
		       enum rmad_params_fmt fmt)
{
	struct rmad_params def;

	if (!f)
		return;
	if (!p) {
		rmad_params_defaults(&def);
		p = &def;
	}
	switch (fmt) {
	case RMAD_PARAMS_FMT_TEXT:
		print_text(p, f);
		break;
	case RMAD_PARAMS_FMT_CONF:
		print_conf(f);
		break;
	case RMAD_PARAMS_FMT_MAN:
		print_man(f);
		break;
	case RMAD_PARAMS_FMT_JSON:
		print_json(p, f);
		break;
	}
}

int rmad_params_count(void)
{
	return RMAD_NPARAMS;
}

const char *rmad_params_name(int i)
{
	if (i < 0 || i >= RMAD_NPARAMS)
		return NULL;
	return pdesc[i].name;
}
