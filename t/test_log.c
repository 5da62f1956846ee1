/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_log.c - the log's flood limit (shared/log.c): of a burst of
 * warnings, at most LOG_SITE_BURST a second of one format and
 * LOG_BURST of all are written, so another format's line of the same
 * second passes; the next line after that second says how many were
 * not; info lines are not limited.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tap.h"

/* Lines in file f that contain s. */
static int count(const char *f, const char *s)
{
	char line[2048];
	FILE *fp = fopen(f, "r");
	int n = 0;

	while (fp && fgets(line, sizeof(line), fp))
		n += strstr(line, s) != NULL;
	if (fp)
		fclose(fp);
	return n;
}

int main(void)
{
	char path[] = "/tmp/rmad-test-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct timespec pause = { 1, 200 * 1000 * 1000 };
	int w, s;

	alarm_after(30);
	plan(6);
	if (fd < 0 || saved < 0 || dup2(fd, STDERR_FILENO) < 0) {
		ok(0, "a file for stderr");
		return 1;
	}
	rmad_log_init("test", RMAD_LOG_INFO);
	for (int k = 0; k < 1000; k++)
		rmad_warn("flood %d", k);
	rmad_warn("another kind");
	for (int k = 0; k < 1000; k++)
		rmad_warn(k & 1 ? "odd %d" : "even %d", k);
	for (int k = 0; k < 300; k++)
		rmad_info("info %d", k);
	nanosleep(&pause, NULL);
	rmad_warn("after the pause");
	dup2(saved, STDERR_FILENO);
	w = count(path, "flood ");
	ok(w >= 50 && w <= 100, "%d of 1000 warnings of one kind in a burst "
	   "written (50 a second)", w);
	ok(count(path, "another kind") == 1, "a warning of another kind in "
	   "the same second passes");
	w = count(path, "odd ") + count(path, "even ");
	ok(w >= 100 && w <= 400, "%d of 1000 warnings of two kinds written "
	   "(50 a second each, 200 in all)", w);
	s = count(path, "more errors and warnings were not logged");
	ok(s >= 1, "the next line says how many were not (%d such lines)",
	   s);
	ok(count(path, "after the pause") == 1, "a warning after the second "
	   "passes");
	ok(count(path, "info ") == 300, "info lines are not limited");
	unlink(path);
	return done_testing();
}
