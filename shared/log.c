/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - leveled logging to stderr or the journal.
 *
 * One formatted write per line keeps lines whole when several processes
 * share a terminal.  Errors and warnings are limited to LOG_BURST lines
 * a second, and those of one call site (one format) to LOG_SITE_BURST:
 * a flood (a hostile peer's packets refused one by one, a stuck
 * window's operations) costs a few lines and a count, not a write per
 * packet and the journal's space, and leaves room for the other sites'
 * lines of the same second; the count is said with the next line that
 * passes.  Sites are found in a small table by their format's address
 * (four places each): beyond four other formats in a second, one
 * format shares a budget.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_BURST	200		/* error and warning lines a second */
#define LOG_SITE_BURST	50		/* ... of one format */
#define LOG_SITES	64

/* per call site: its format, the second it counts in, its lines then */
static struct log_site {
	const char *fmt;
	long sec;
	unsigned int lines;
} log_sites[LOG_SITES];

static char log_who[48] = "rmad";
/* the second the limit counts in, the lines in it, and those dropped */
static long log_sec;
static unsigned int log_lines, log_dropped;
static int log_level = RMAD_LOG_WARN;
static int log_journal;

static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%lu:%lu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return st.st_dev == dev && st.st_ino == ino;
}

void rmad_log_init(const char *who, int level)
{
	if (who)
		snprintf(log_who, sizeof(log_who), "%s", who);
	rmad_log_set_level(level);
	log_journal = stderr_is_journal();
}

void rmad_log_set_level(int level)
{
	if (level < RMAD_LOG_ERROR)
		level = RMAD_LOG_ERROR;
	if (level > RMAD_LOG_DEBUG)
		level = RMAD_LOG_DEBUG;
	log_level = level;
}

int rmad_log_get_level(void)
{
	return log_level;
}

int rmad_log_parse_level(const char *s)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	if (!s)
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcasecmp(s, names[i]))
			return i;
	if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
		return s[0] - '0';
	return -1;
}

/* Whether a line of format fmt is within its site's budget for second
 * sec (counts are relaxed: threads racing on a slot may let a line or
 * two more through, never fewer). */
static int site_passes(const char *fmt, long sec)
{
	uintptr_t h = (uintptr_t)fmt;
	struct log_site *st = NULL;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ull;
	/* its slot: one of four, the first of this second with its
	 * format or not yet used this second; past four other formats,
	 * the last is shared */
	for (int i = 0; i < 4; i++) {
		st = &log_sites[((h >> 40) + (uintptr_t)i) % LOG_SITES];
		if (__atomic_load_n(&st->sec, __ATOMIC_RELAXED) != sec) {
			__atomic_store_n(&st->sec, sec, __ATOMIC_RELAXED);
			__atomic_store_n(&st->fmt, fmt, __ATOMIC_RELAXED);
			__atomic_store_n(&st->lines, 0, __ATOMIC_RELAXED);
			break;
		}
		if (__atomic_load_n(&st->fmt, __ATOMIC_RELAXED) == fmt)
			break;
	}
	return __atomic_add_fetch(&st->lines, 1, __ATOMIC_RELAXED) <=
	       LOG_SITE_BURST;
}

void rmad_log(int level, const char *fmt, ...)
{
	/* syslog priorities for the journal: err, warning, info, debug */
	static const int prio[] = { 3, 4, 6, 7 };
	static const char *const tag[] = { "error", "warn", "info", "debug" };
	char line[1024];
	va_list ap;
	int n;

	if (level > log_level || level < 0)
		return;
	if (level <= RMAD_LOG_WARN) {
		struct timespec ts;
		unsigned int dropped = 0;

		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		if (__atomic_exchange_n(&log_sec, (long)ts.tv_sec,
					__ATOMIC_RELAXED) != (long)ts.tv_sec) {
			__atomic_store_n(&log_lines, 0, __ATOMIC_RELAXED);
			dropped = __atomic_exchange_n(&log_dropped, 0,
						      __ATOMIC_RELAXED);
		}
		if (!site_passes(fmt, (long)ts.tv_sec) ||
		    __atomic_add_fetch(&log_lines, 1, __ATOMIC_RELAXED) >
		    LOG_BURST) {
			__atomic_add_fetch(&log_dropped, 1, __ATOMIC_RELAXED);
			return;
		}
		if (dropped)
			rmad_log(RMAD_LOG_WARN, "%u more errors and warnings "
				 "were not logged (over %d a second, or %d of "
				 "one kind)", dropped, LOG_BURST,
				 LOG_SITE_BURST);
	}
	if (log_journal)
		n = snprintf(line, sizeof(line), "<%d>%s: ", prio[level],
			     log_who);
	else
		n = snprintf(line, sizeof(line), "%s[%d]: %s: ", log_who,
			     (int)getpid(), tag[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nowhere left to report it */
	}
}
