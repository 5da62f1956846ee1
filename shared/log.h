/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h - leveled logging shared by the agent and librmad.
 *
 * Messages go to stderr.  When stderr is the systemd journal
 * (JOURNAL_STREAM matches it) each line carries a <N> priority prefix so
 * the journal keeps the level.  Logging never fails and never aborts.
 */
#ifndef RMAD_LOG_H
#define RMAD_LOG_H

enum rmad_log_level {
	RMAD_LOG_ERROR = 0,
	RMAD_LOG_WARN = 1,
	RMAD_LOG_INFO = 2,
	RMAD_LOG_DEBUG = 3,
};

/* Set once at startup (and on reload); "who" prefixes every line. */
void rmad_log_init(const char *who, int level);
void rmad_log_set_level(int level);
int rmad_log_get_level(void);
/* Parse "error|warn|info|debug" or 0..3; returns level or -1. */
int rmad_log_parse_level(const char *s);

void rmad_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define rmad_err(...)	rmad_log(RMAD_LOG_ERROR, __VA_ARGS__)
#define rmad_warn(...)	rmad_log(RMAD_LOG_WARN, __VA_ARGS__)
#define rmad_info(...)	rmad_log(RMAD_LOG_INFO, __VA_ARGS__)
#define rmad_dbg(...)						\
	do {							\
		if (rmad_log_get_level() >= RMAD_LOG_DEBUG)	\
			rmad_log(RMAD_LOG_DEBUG, __VA_ARGS__);	\
	} while (0)

#endif
