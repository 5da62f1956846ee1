/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tap.h - a tiny Test Anything Protocol emitter for rmad's C tests.
 *
 * plan(n), ok(cond, fmt, ...), diag(fmt, ...), skip(n, why), done_testing().
 * Output goes to stdout; automake's tap-driver.sh reads it.  alarm_after(s)
 * arms SIGALRM so a hung test fails with a message instead of stalling CI.
 */
#ifndef RMAD_TAP_H
#define RMAD_TAP_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_fail, tap_planned;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_fail++;
	return cond;
}

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
	fflush(stdout);
}

static inline int done_testing(void)
{
	if (!tap_planned)
		printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_fail ? 1 : 0;
}

static void tap_alarm(int sig)
{
	static const char msg[] = "Bail out! test timed out\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing else to do */
	}
	_exit(1);
}

/* A hang fails the test with a message: call first thing in main(). */
static inline void alarm_after(unsigned int seconds)
{
	signal(SIGALRM, tap_alarm);
	alarm(seconds);
}

#endif
