/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.h - the agent's configuration (options.c): command line,
 * rmad.conf, environment, --set; --show-config; reload.
 */
#ifndef RMAD_AGENT_OPTIONS_H
#define RMAD_AGENT_OPTIONS_H

#include "agent.h"

/* Defaults, then rmad.conf, the environment, the command line and
 * --set into a->p: 0, or the exit status (usage: 2).  *fg: --foreground;
 * *use_pmix: --pmix; *show: what to print and exit (NULL: run). */
int options_load(struct agent *a, int argc, char **argv, int *fg,
		 int *use_pmix, const char **show);
/* Print what show names (--show-config, --print-*, --sweep); the exit
 * status. */
int options_show(struct agent *a, const char *fmt);
/* SIGHUP: rmad.conf, the environment and --set again; the parameters
 * that may change at run time take the new values. */
void options_reload(struct agent *a);
/* The start time of process pid (/proc/PID/stat, field 22) in *start;
 * 0 when there is no such process (--owner-pid). */
int options_proc_start(unsigned long long *start, int pid);

#endif
