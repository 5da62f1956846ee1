/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash.h - the agent's report of a fatal signal (crash.c).
 */
#ifndef RMAD_AGENT_CRASH_H
#define RMAD_AGENT_CRASH_H

/*
 * Report SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on stderr, then die
 * of the signal as without us.  Installed once the fabric's providers
 * are loaded, so that ours is the handler in force (libpsm2 installs
 * its own, which exits with status 1).  0, or RMAD_ERR_INTERNAL.
 */
int crash_install(const char *who);

#endif
