/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util.c - clocks, run-directory paths and fd passing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rmad_abi.h"
#include "util.h"

uint64_t rmad_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rmad_strlcpy(char *dst, const char *src, size_t n)
{
	size_t k = strnlen(src, n - 1);

	memcpy(dst, src, k);
	dst[k] = '\0';
}

/* /run/user/<uid>, when it is a directory of ours: systemd's */
static int run_user_dir(char *out, size_t len)
{
	struct stat st;
	int n = snprintf(out, len, "/run/user/%u", (unsigned)getuid());

	return n > 0 && (size_t)n < len && lstat(out, &st) == 0 &&
	       S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
	       !(st.st_mode & 077);
}

int rmad_session_dir(const char *rundir, const char *session, char *out,
		     size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char sess[128], ru[64];
	int n;

	rmad_sanitize(session, sess, sizeof(sess));
	if (rundir && *rundir)
		n = snprintf(out, len, "%s/%s", rundir, sess);
	else if (xdg && *xdg)
		n = snprintf(out, len, "%s/rmad/%s", xdg, sess);
	else if (run_user_dir(ru, sizeof(ru)))
		n = snprintf(out, len, "%s/rmad/%s", ru, sess);
	else
		n = snprintf(out, len, "/tmp/rmad-%u/%s", (unsigned)getuid(),
			     sess);
	return n < 0 || (size_t)n >= len ? RMAD_ERR_ARG : 0;
}

int rmad_user_uid(const char *name, uid_t *uid)
{
	char buf[4096], *end;
	struct passwd pw, *r = NULL;
	unsigned long v;

	if (!name || !*name)
		return RMAD_ERR_ARG;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (!*end && !errno && v < (unsigned long)(uid_t)-1) {
		*uid = (uid_t)v;
		return 0;
	}
	if (getpwnam_r(name, &pw, buf, sizeof(buf), &r) || !r)
		return RMAD_ERR_ARG;
	*uid = r->pw_uid;
	return 0;
}

int rmad_dir_trusted(const char *dir, uid_t owner, int private, char *msg,
		     size_t len)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	uid_t me = getuid();
	struct stat st;
	int e;

	if (fd < 0) {
		e = errno;
		snprintf(msg, len, "run directory %s: %s%s", dir, strerror(e),
			 e == ELOOP || e == ENOTDIR ?
			 " (a symbolic link or a file is not accepted)" : "");
		return e == ENOENT ? RMAD_ERR_AGENT : RMAD_ERR_PERM;
	}
	e = fstat(fd, &st);
	close(fd);
	if (e < 0) {
		snprintf(msg, len, "run directory %s: %s", dir,
			 strerror(errno));
		return RMAD_ERR_PERM;
	}
	if (st.st_uid != me && st.st_uid != owner) {
		if (owner != me)
			snprintf(msg, len, "run directory %s is owned by uid "
				 "%u, not by uid %u or the agent's uid %u "
				 "(mode %04o): refused", dir,
				 (unsigned)st.st_uid, (unsigned)me,
				 (unsigned)owner,
				 (unsigned)(st.st_mode & 07777));
		else
			snprintf(msg, len, "run directory %s is owned by uid "
				 "%u, not by uid %u (mode %04o): refused", dir,
				 (unsigned)st.st_uid, (unsigned)me,
				 (unsigned)(st.st_mode & 07777));
		return RMAD_ERR_PERM;
	}
	if ((st.st_mode & 022) || (private && (st.st_mode & 077))) {
		snprintf(msg, len, "run directory %s (owner uid %u) has mode "
			 "%04o; it must be %s: refused", dir,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 private ? "0700" : "writable by its owner only");
		return RMAD_ERR_PERM;
	}
	return 0;
}

int rmad_session_dir_check(const char *sdir, uid_t owner, int private,
			   int create, char *msg, size_t len)
{
	char base[4096];
	char *slash;
	int err;

	if (strlen(sdir) >= sizeof(base))
		return RMAD_ERR_ARG;
	memcpy(base, sdir, strlen(sdir) + 1);
	slash = strrchr(base, '/');
	if (!slash || slash == base)
		return RMAD_ERR_ARG;
	*slash = '\0';
	err = create ? rmad_mkdir_p(sdir) : 0;
	if (err < 0) {
		snprintf(msg, len, "cannot create run directory %s: %s", sdir,
			 strerror(-err));
		return RMAD_ERR_PERM;
	}
	/* the base first: whoever owns it could swap the session dir */
	err = rmad_dir_trusted(base, owner, private, msg, len);
	if (!err)
		err = rmad_dir_trusted(sdir, owner, private, msg, len);
	return err;
}

int rmad_mkdir_p(const char *dir)
{
	char tmp[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

void rmad_sanitize(const char *in, char *out, size_t len)
{
	size_t i;

	if (!len)
		return;
	for (i = 0; in && in[i] && i + 1 < len; i++) {
		char c = in[i];
		int okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			  c == '-';

		out[i] = okc ? c : '_';
	}
	out[i] = '\0';
	if (i == 0 || (out[0] == '.' && (i == 1 || out[1] == '.')))
		snprintf(out, len, "default");
}

int rmad_agent_sock_path(const char *sdir, int vnode, char *out, size_t len)
{
	int n;

	if (vnode >= 0)
		n = snprintf(out, len, "%s/agent-%d.sock", sdir, vnode);
	else
		n = snprintf(out, len, "%s/agent.sock", sdir);
	/* sun_path holds 108 bytes */
	return n < 0 || (size_t)n >= len || n >= 108 ? RMAD_ERR_ARG : 0;
}

int rmad_memfd_sealed(const char *name, uint64_t size, int more)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), e;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, RMAD_MEMFD_SEALS |
		  (more ? 0 : F_SEAL_SEAL)) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int rmad_memfd_seal(int fd, unsigned int extra)
{
	return fcntl(fd, F_ADD_SEALS, (int)extra | F_SEAL_SEAL) < 0 ? -errno
								    : 0;
}

int rmad_send_msg(int sock, const void *buf, size_t len, const int *fds,
		  int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * RMAD_MSG_MAXFDS)];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (nfds < 0 || nfds > RMAD_MSG_MAXFDS)
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	do {
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

long rmad_recv_msg(int sock, void *buf, size_t len, int *fds, int *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * RMAD_MSG_MAXFDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	int cap = nfds ? *nfds : 0, got = 0;
	ssize_t r;

	if (nfds)
		*nfds = 0;	/* callers may close what they got on error */
	do {
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		int n, *p;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		p = (int *)CMSG_DATA(cm);
		for (int i = 0; i < n; i++) {
			if (got < cap)
				fds[got++] = p[i];
			else
				close(p[i]);
		}
	}
	if (nfds)
		*nfds = got;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		if (nfds)
			*nfds = 0;
		return -EMSGSIZE;
	}
	return (long)r;
}
