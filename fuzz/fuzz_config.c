/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_config.c - the parsers of configuration and hints: a config file
 * (rmad_params_load_file, through a memfd), a KEY=VALUE setting
 * (rmad_params_set, as --set and RMAD_<KEY> use it) and a hint string
 * (rmad_hints_parse).  The first byte picks which.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hints.h"
#include "log.h"
#include "params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct rmad_params p;
	struct rmad_hints h;
	char err[256], *s, *eq;

	if (!init) {
		rmad_log_init("fuzz", RMAD_LOG_ERROR);
		init = 1;
	}
	if (size < 1)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	rmad_params_defaults(&p);
	switch (data[0] % 3) {
	case 0: {
		int fd = memfd_create("fuzz.conf", MFD_CLOEXEC);
		char path[64];

		if (fd >= 0 && write(fd, data + 1, size - 1) ==
		    (ssize_t)(size - 1)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			rmad_params_load_file(&p, path, err, sizeof(err));
		}
		if (fd >= 0)
			close(fd);
		break;
	}
	case 1:
		eq = strchr(s, '=');
		if (eq) {
			*eq = '\0';
			rmad_params_set(&p, s, eq + 1, err, sizeof(err));
		}
		break;
	case 2:
		rmad_hints_parse(s, &h);
		break;
	}
	free(s);
	return 0;
}
