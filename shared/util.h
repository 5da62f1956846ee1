/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util.h - small helpers shared by the agent and librmad: clocks, run
 * directory paths, sealed memfds, and Unix-socket messages with file
 * descriptors.
 */
#ifndef RMAD_UTIL_H
#define RMAD_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

uint64_t rmad_now_ns(void);

/* Copy with truncation, always NUL-terminated (n > 0). */
void rmad_strlcpy(char *dst, const char *src, size_t n);

/*
 * The directory that holds a session's files:
 * <rundir>/<session>/.  rundir is the configured one, else
 * $XDG_RUNTIME_DIR/rmad, else /run/user/<uid>/rmad when systemd made
 * /run/user/<uid>, else /tmp/rmad-<uid>.  Returns 0 or RMAD_ERR_ARG when
 * it does not fit.
 */
int rmad_session_dir(const char *rundir, const char *session, char *out,
		     size_t len);
/* A user name or a decimal uid to a uid: 0 or RMAD_ERR_ARG. */
int rmad_user_uid(const char *name, uid_t *uid);
/*
 * May dir be trusted?  It must be a directory, not a symbolic link,
 * owned by the caller's uid or by owner (the agent's uid), and writable
 * by its owner only; if private, mode 0700.  Returns 0, RMAD_ERR_AGENT
 * when it does not exist, or RMAD_ERR_PERM, with a message naming the
 * owner and the mode in msg.
 */
int rmad_dir_trusted(const char *dir, uid_t owner, int private, char *msg,
		     size_t len);
/* The same for a session directory and the run directory above it,
 * after creating them (mode 0700) if create is set. */
int rmad_session_dir_check(const char *sdir, uid_t owner, int private,
			   int create, char *msg, size_t len);
/* Create dir and its parents with mode 0700 (an existing dir is fine). */
int rmad_mkdir_p(const char *dir);
/* Keep [A-Za-z0-9._-] and map everything else to '_'. */
void rmad_sanitize(const char *in, char *out, size_t len);
/* Socket of agent `vnode` (-1: the node's only agent) in session dir. */
int rmad_agent_sock_path(const char *sdir, int vnode, char *out, size_t len);

/*
 * The seals every memfd that crosses between a client and its agent
 * carries: its size is fixed, so a mapping of it never faults beyond
 * its end (rmad(7), SECURITY).
 */
/* (the seals are <fcntl.h>'s) */
#define RMAD_MEMFD_SEALS	(F_SEAL_SHRINK | F_SEAL_GROW)
/*
 * A new memfd (close-on-exec) of size bytes, sealed with
 * RMAD_MEMFD_SEALS, and with F_SEAL_SEAL unless more seals are to come
 * (more): the descriptor, or a negative errno.
 */
int rmad_memfd_sealed(const char *name, uint64_t size, int more);
/* The last seals of a memfd made with more set: extra (F_SEAL_WRITE
 * once it is written, while nothing maps it writable) and F_SEAL_SEAL;
 * 0 or a negative errno. */
int rmad_memfd_seal(int fd, unsigned int extra);

/* Descriptors one control message carries at most: a window's same-node
 * peers go RMAD_WIN_PEERS_PER_MSG at a time. */
#define RMAD_MSG_MAXFDS	8

/* SOCK_SEQPACKET message with up to nfds descriptors (SCM_RIGHTS). */
int rmad_send_msg(int sock, const void *buf, size_t len, const int *fds,
		  int nfds);
/*
 * Receive one message; *nfds in: capacity, out: received (0 on every
 * error, so a caller may always close fds[0 .. *nfds)).  Returns bytes
 * (0 on hang-up) or a negative errno.  Extra descriptors beyond capacity
 * are closed; truncated messages are refused with -EMSGSIZE.
 */
long rmad_recv_msg(int sock, void *buf, size_t len, int *fds, int *nfds);

#endif
