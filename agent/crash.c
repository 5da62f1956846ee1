/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash.c - the agent's last words on a fatal signal.
 *
 * An agent that dies takes every client of its node with it, so its
 * death must say where it happened: the signal, the faulting address,
 * the pid, and a backtrace, on stderr (the log, or the journal), then
 * the signal again with its default action, so that the exit status,
 * a core dump and the kernel's log line stay what they would have been.
 *
 * The handler runs in a signal context, after anything: it calls only
 * write(2), backtrace() (warmed at install, so that its first call,
 * which loads libgcc's unwinder, is not made here) and
 * backtrace_symbols_fd(), and formats numbers itself.  It runs on an
 * alternate stack of its own, so that a crash from an overflowed stack
 * (or one that is too small for the unwinder) still reports.  A second
 * fatal signal while it runs gets the default action at once
 * (SA_RESETHAND).
 */
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

#define CRASH_STACK	(256 * 1024)
#define CRASH_FRAMES	64

static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static char crash_who[32] = "rmad";

static void put(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* v in base 10 or 16, no allocation, no locale */
static void put_num(unsigned long long v, int hex)
{
	char b[24], *p = b + sizeof(b) - 1;

	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v % (hex ? 16 : 10)];
		v /= hex ? 16 : 10;
	} while (v);
	if (hex)
		put("0x");
	put(p);
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGABRT: return "SIGABRT";
	default: return "signal";
	}
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	void *frames[CRASH_FRAMES];
	int n;

	(void)uc;
	put(crash_who);
	put("[");
	put_num((unsigned long long)getpid(), 0);
	put("]: error: fatal ");
	put(sig_name(sig));
	put(" (signal ");
	put_num((unsigned long long)sig, 0);
	put(", code ");
	put_num((unsigned long long)(unsigned)si->si_code, 0);
	if (si->si_code <= 0) {
		/* kill(2), raise(3), abort(3): no fault, a sender */
		put(") sent by pid ");
		put_num((unsigned long long)si->si_pid, 0);
	} else {
		put(") at address ");
		put_num((unsigned long long)(uintptr_t)si->si_addr, 1);
	}
	put("; the agent stops, and its clients with it.  Backtrace:\n");
	n = backtrace(frames, CRASH_FRAMES);
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	put(crash_who);
	put(": end of the crash report; please report it with the log\n");
	/* the handler was reset (SA_RESETHAND): die of it, as without us */
	signal(sig, SIG_DFL);
	raise(sig);
}

int crash_install(const char *who)
{
	static void *alt;
	stack_t ss = { 0 };
	struct sigaction sa;
	void *warm[4];

	if (who)
		rmad_strlcpy(crash_who, who, sizeof(crash_who));
	/* load the unwinder now, not in the handler */
	(void)backtrace(warm, 4);
	if (!alt)
		alt = malloc(CRASH_STACK);
	if (alt) {
		ss.ss_sp = alt;
		ss.ss_size = CRASH_STACK;
		if (sigaltstack(&ss, NULL) < 0)
			rmad_warn("crash report: no alternate signal stack");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		if (sigaction(crash_sigs[i], &sa, NULL) < 0)
			return RMAD_ERR_INTERNAL;
	return 0;
}
