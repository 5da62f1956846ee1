/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sweep.c - the agent lock, and the removal of what dead agents left:
 * shm regions in /dev/shm, sockets and pid files in the run directory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "rmad_abi.h"
#include "log.h"
#include "sweep.h"

int sweep_lock_take(const char *sock_path, int *fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t h = 1469598103934665603ull;
	socklen_t len;
	int s;

	for (const char *p = sock_path; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
			 "rmad-agent-%u-%016llx", (unsigned)getuid(),
			 (unsigned long long)h));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return RMAD_ERR_INTERNAL;
	if (bind(s, (struct sockaddr *)&sa, len) < 0) {
		int e = errno;

		close(s);
		return e == EADDRINUSE ? 1 : RMAD_ERR_INTERNAL;
	}
	*fd = s;
	return 0;
}

/* 1 when pid is gone, or a zombie (which no longer maps anything) */
static int pid_dead(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold anything, so the last ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

int sweep_shm(const char *dir, uid_t uid)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		const char *s = de->d_name;
		struct stat st;
		char *end;
		long pid;

		if (!isdigit((unsigned char)s[0]))
			continue;
		errno = 0;
		pid = strtol(s, &end, 10);
		if (errno || *end != ':' || pid <= 0 || pid > INT_MAX)
			continue;
		if (fstatat(dirfd(d), s, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != uid)
			continue;
		if (!pid_dead((pid_t)pid))
			continue;
		if (unlinkat(dirfd(d), s, 0) == 0) {
			rmad_info("removed %s/%s, left by dead pid %ld", dir, s,
				  pid);
			n++;
		}
	}
	closedir(d);
	return n;
}

/*
 * The agent stem of a session directory entry: "agent" or "agent-K" of
 * agent.sock, agent-K.sock, agent.pid, agent-K.pid (and the pid file's
 * temporary agent[-K].pid.PID).  0 and the stem in out, or -1.
 */
static int agent_stem(const char *name, char *out, size_t len)
{
	const char *p = name + 5;
	size_t n;

	if (strncmp(name, "agent", 5))
		return -1;
	if (*p == '-') {
		if (!isdigit((unsigned char)p[1]))
			return -1;
		for (p++; isdigit((unsigned char)*p); p++)
			;
	}
	if (strncmp(p, ".sock", 5) && strncmp(p, ".pid", 4))
		return -1;
	n = (size_t)(p - name);
	if (n + 1 > len)
		return -1;
	memcpy(out, name, n);
	out[n] = '\0';
	return 0;
}

/* the dead agents' files in one session directory; how many agents */
static int sweep_session(int dfd, const char *sdir)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	char done[64][32];
	int ndone = 0, n = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		char stem[32], sock[PATH_MAX], name[64];
		int fd, seen = 0, err;

		if (agent_stem(de->d_name, stem, sizeof(stem)))
			continue;
		for (int i = 0; i < ndone && !seen; i++)
			seen = !strcmp(done[i], stem);
		if (seen || ndone == 64)
			continue;
		memcpy(done[ndone++], stem, sizeof(stem));
		if ((size_t)snprintf(sock, sizeof(sock), "%s/%s.sock", sdir,
				     stem) >= sizeof(sock))
			continue;
		err = sweep_lock_take(sock, &fd);
		if (err)
			continue;	/* alive, or starting: its files */
		snprintf(name, sizeof(name), "%s.sock", stem);
		unlinkat(dirfd(d), name, 0);
		snprintf(name, sizeof(name), "%s.pid", stem);
		unlinkat(dirfd(d), name, 0);
		close(fd);
		rmad_info("removed the socket and pid file of dead agent %s/%s",
			  sdir, stem);
		n++;
	}
	/* the temporaries (agent[-K].sock.PID, .pid.PID) of agents that
	 * died before renaming them into place */
	rewinddir(d);
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		char *end;
		long pid;

		if (!dot || strncmp(de->d_name, "agent", 5) ||
		    (!strstr(de->d_name, ".sock.") &&
		     !strstr(de->d_name, ".pid.")))
			continue;
		errno = 0;
		pid = strtol(dot + 1, &end, 10);
		if (!errno && !*end && pid > 0 && pid <= INT_MAX &&
		    pid_dead((pid_t)pid))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	return n;
}

int sweep_rundir(const char *rundir, uid_t uid, int rmdirs)
{
	DIR *d = opendir(rundir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char sdir[PATH_MAX];
		struct stat st;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode) || st.st_uid != uid)
			continue;
		if ((size_t)snprintf(sdir, sizeof(sdir), "%s/%s", rundir,
				     de->d_name) >= sizeof(sdir))
			continue;
		fd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* only where a dead agent was: an empty directory may be
		 * one an agent is starting in (it makes it again if so) */
		if (sweep_session(fd, sdir) > 0) {
			n++;
			if (rmdirs)
				unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
	return n;
}
