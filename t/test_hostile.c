/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hostile.c - a client that shrinks memory the agent maps
 * (t/hostile.sh).  It attaches through the control socket like librmad
 * (t/rawclient.h) and, by MODE:
 *
 *   segment   shrinks its client segment, from the REGISTER reply, to 0
 *             bytes: the agent reads its ring on every pass;
 *   allocate, create, dynamic
 *             hands the agent an unsealed memfd for a window of that
 *             flavor (rmad_win_allocate's memory, rmad_win_create's and
 *             rmad_win_create_dynamic's control page) and, if the agent
 *             takes it, shrinks it to 0 and asks for a status (the
 *             agent reads each window's name in its control page) and,
 *             for the dynamic one, attaches a region (the agent writes
 *             the region table after the control page); then the same
 *             with a sealed memfd, which it must take and which cannot
 *             shrink; and a plain file instead of a memfd;
 *   shared    makes a shared window (the agent's memfd) and a window of
 *             an explicit group (the agent's table memfd) and tries to
 *             shrink both;
 *   mem       registers unsealed rmad_alloc_mem memory, then sealed;
 *   register  (t/admit.sh) registers as rank 0 of the one-rank job
 *             SOCKET's third argument names, prints "registered" or
 *             "refused STATUS", and stays attached until the file
 *             DIR.done exists (30 s at most).
 *
 * Each outcome is a "PASS text" or "FAIL text" line; the shell test
 * then checks that the agent lives and serves a fresh job.
 *
 * usage: test_hostile MODE SOCKET DIR
 *        test_hostile register SOCKET NSPACE DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pool.h"
#include "rawclient.h"

static const char *sock_path, *dir;
static int fails;

static void say(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	fails += !ok;
}

static void hdr(struct rmad_ctl_hdr *m, uint16_t type)
{
	m->magic = RMAD_CTL_MAGIC;
	m->abi_version = RMAD_ABI_VERSION;
	m->type = type;
	m->flags = 0;
}

/* A memfd of len bytes, sealed at its size or not: the descriptor. */
static int memfd(size_t len, int sealed)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC |
			      (sealed ? MFD_ALLOW_SEALING : 0));

	if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
		return -1;
	if (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		return -1;
	return fd;
}

/*
 * The agent's answer to a request about key: its status (RMAD_ERR_AGENT
 * when the agent hung up).  A window's answer: the table's descriptor,
 * if one came along, in fds; and when it was made, its peers (ourselves,
 * as our one member) follow it, with their descriptors, also in fds (up
 * to 4 in all).
 */
static int answer(uint64_t key, int *fds, int *nfds)
{
	union {
		struct rmad_ctl_hdr h;
		struct rmad_ctl_win_reply r;
		struct rmad_ctl_win_peers p;
	} m;
	int got = 0, peers = -1, st = RMAD_ERR_AGENT;

	while (peers != 0) {
		int f[RMAD_MSG_MAXFDS], n = RMAD_MSG_MAXFDS;
		long len = rmad_recv_msg(sock, &m, sizeof(m), f, &n);

		if (len <= 0)
			return RMAD_ERR_AGENT;
		for (int i = 0; i < n; i++) {
			if (fds && got < 4)
				fds[got++] = f[i];
			else
				close(f[i]);
		}
		if (peers < 0 && m.h.type == RMAD_CTL_WIN_REPLY &&
		    m.r.key == key) {
			st = m.r.status;
			/* a create's answer (nlocal members) says how many
			 * peers follow; others have none */
			peers = st == 0 && fds ? m.r.nlocal : 0;
		} else if (peers > 0 && m.h.type == RMAD_CTL_WIN_PEERS &&
			   m.p.key == key) {
			peers -= m.p.count;
		}
	}
	if (nfds)
		*nfds = got;
	return st;
}

/* WIN_CREATE of one member (rank 0, all of its one-rank job, or the
 * explicit group {0} if group), retried while the job's map is made. */
static int win_create(uint64_t key, uint32_t flags, uint64_t size,
		      uint64_t addr, int fd, int group, int *fds, int *nfds)
{
	struct {
		struct rmad_ctl_win_create c;
		int32_t ranks[1];
	} m;
	int st = RMAD_ERR_SYNC, mine[4], n = 0;

	if (!fds) {
		fds = mine;
		nfds = &n;
	}
	for (int i = 0; i < 200 && st == RMAD_ERR_SYNC; i++) {
		memset(&m, 0, sizeof(m));
		hdr(&m.c.h, RMAD_CTL_WIN_CREATE);
		m.c.key = key;
		m.c.size = size;
		m.c.disp_unit = 1;
		m.c.flags = flags | (group ? 0 : RMAD_WINF_ALL);
		m.c.gsize = 1;
		m.c.addr = addr;
		if (i)
			usleep(20000);
		if (rmad_send_msg(sock, &m, sizeof(m.c) + (group ? 4 : 0),
				  fd >= 0 ? &fd : NULL, fd >= 0) < 0)
			return RMAD_ERR_AGENT;
		st = answer(key, fds, nfds);
	}
	if (fds == mine)
		for (int i = 0; i < n; i++)
			close(mine[i]);
	return st;
}

static void win_free(uint64_t key)
{
	struct rmad_ctl_win_free m = { .key = key };

	hdr(&m.h, RMAD_CTL_WIN_FREE);
	if (rmad_send_msg(sock, &m, sizeof(m), NULL, 0) == 0)
		answer(key, NULL, NULL);
}

/* A status from the agent, over a connection of its own (what rmadctl
 * status sends): 1 when it answered. */
static int status_answered(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rmad_ctl_hdr m;
	static char buf[64 * 1024];
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0), nfds = 0;
	long n;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (s >= 0)
			close(s);
		return 0;
	}
	hdr(&m, RMAD_CTL_STATUS);
	n = rmad_send_msg(s, &m, sizeof(m), NULL, 0) < 0 ? -1 :
	    rmad_recv_msg(s, buf, sizeof(buf), NULL, &nfds);
	close(s);
	return n > (long)sizeof(m);
}

/* Try to shrink fd to 0 bytes: 1 when the kernel refused. */
static int cannot_shrink(int fd)
{
	return ftruncate(fd, 0) < 0 && errno == EPERM;
}

static void mode_segment(void)
{
	uint64_t n0 = rmad_counter_read(me, RMAD_CNT_LOCAL);
	int seals = fcntl(segfd, F_GET_SEALS);

	say(seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) ==
	    (F_SEAL_SHRINK | F_SEAL_GROW),
	    "segment: the client segment is sealed at its size (seals %#x)",
	    seals);
	if (!cannot_shrink(segfd)) {
		/* our own ring is gone as well: nothing more to try */
		say(0, "segment: the client segment shrank to 0 bytes");
		sleep(1);
		return;
	}
	say(1, "segment: the client segment cannot shrink");
	if (ftruncate(segfd, (off_t)reg.seg_size * 2) < 0 && errno == EPERM)
		say(1, "segment: the client segment cannot grow");
	else
		say(0, "segment: the client segment grew");
	/* the ring still works */
	{
		struct rmad_pool_view v = {
			.base = (char *)seg + h->off_ops,
			.stride = sizeof(struct rmad_op_elem),
			.first = 0,
			.n = rmad_shm_nops_client(h),
		};
		uint32_t i = rmad_pool_get(&me->op_free, &v);
		struct rmad_op_elem *e = rmad_shm_op_at(seg, h, i);

		memset(e, 0, sizeof(*e));
		e->opcode = RMAD_OPC_NOOP;
		e->owner = reg.client;
		push(i);
		say(wait_cnt(RMAD_CNT_LOCAL, n0 + 1),
		    "segment: a no-op on the ring completes");
	}
}

static void mode_window(const char *kind)
{
	uint32_t flags = !strcmp(kind, "create") ? RMAD_WINF_CREATE :
			 !strcmp(kind, "dynamic") ?
			 RMAD_WINF_CREATE | RMAD_WINF_DYNAMIC : 0;
	uint64_t size = flags ? 0 : 65536;
	size_t len = RMAD_WIN_CTL_SIZE + (flags & RMAD_WINF_DYNAMIC ?
					  RMAD_WIN_DYN_SIZE : size);
	static char user[65536];
	uint64_t addr = 0;
	char path[512];
	int fd, st;

	if (!strcmp(kind, "create")) {
		size = sizeof(user);
		addr = (uint64_t)(uintptr_t)user;
	}
	/* unsealed: refused, or shrunk under the agent */
	fd = memfd(len, 0);
	st = win_create(0x100, flags, size, addr, fd, 0, NULL, NULL);
	if (st == 0) {
		struct rmad_ctl_win_attach at = { .key = 0x100 };

		say(0, "%s: an unsealed window memfd was taken", kind);
		if (ftruncate(fd, 0) == 0)
			say(0, "%s: and shrunk to 0 bytes under the agent",
			    kind);
		say(status_answered(), "%s: the agent answers a status "
		    "after the shrink", kind);
		if (flags & RMAD_WINF_DYNAMIC) {
			hdr(&at.h, RMAD_CTL_WIN_ATTACH);
			at.addr = (uint64_t)(uintptr_t)user;
			at.size = sizeof(user);
			st = rmad_send_msg(sock, &at, sizeof(at), NULL, 0) ?
			     RMAD_ERR_AGENT : answer(0x100, NULL, NULL);
			say(st != RMAD_ERR_AGENT, "%s: the agent answers an "
			    "attach after the shrink", kind);
		}
		win_free(0x100);
	} else {
		say(st == RMAD_ERR_PERM, "%s: an unsealed window memfd is "
		    "refused (status %d)", kind, st);
	}
	close(fd);

	/* a file, not a memfd: refused */
	snprintf(path, sizeof(path), "%s/hostile-%s.file", dir, kind);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && ftruncate(fd, (off_t)len) == 0) {
		st = win_create(0x101, flags, size, addr, fd, 0, NULL, NULL);
		say(st == RMAD_ERR_PERM, "%s: a plain file for window memory "
		    "is refused (status %d)", kind, st);
		if (!st)
			win_free(0x101);
	}
	if (fd >= 0)
		close(fd);
	unlink(path);

	/* sealed: taken, and the kernel keeps its size */
	fd = memfd(len, 1);
	st = win_create(0x102, flags, size, addr, fd, 0, NULL, NULL);
	say(st == 0, "%s: a sealed window memfd is taken (status %d)", kind,
	    st);
	say(cannot_shrink(fd), "%s: the sealed memfd cannot shrink", kind);
	say(status_answered(), "%s: the agent answers a status", kind);
	if (!st && (flags & RMAD_WINF_DYNAMIC)) {
		/* the agent writes the region table after the control page */
		struct rmad_ctl_win_attach at = { .key = 0x102 };

		hdr(&at.h, RMAD_CTL_WIN_ATTACH);
		at.addr = (uint64_t)(uintptr_t)user;
		at.size = sizeof(user);
		st = rmad_send_msg(sock, &at, sizeof(at), NULL, 0) ?
		     RMAD_ERR_AGENT : answer(0x102, NULL, NULL);
		say(st == 0, "%s: a region attaches (status %d)", kind, st);
		st = 0;
	}
	if (!st)
		win_free(0x102);
	close(fd);
}

/* 1 when each descriptor of fds is sealed and cannot shrink */
static int all_fixed(const int *fds, int n)
{
	int ok = n > 0;

	for (int i = 0; i < n; i++)
		ok &= cannot_shrink(fds[i]);
	return ok;
}

static void mode_shared(void)
{
	int fds[4], n = 0, st, fd;

	st = win_create(0x200, RMAD_WINF_SHARED, 65536, 0, -1, 0, fds, &n);
	say(st == 0 && n >= 1, "shared: a shared window is made, with the "
	    "agent's memfd (status %d, %d descriptors)", st, n);
	if (!st && n >= 1) {
		say(all_fixed(fds, n), "shared: the agent's memfd of the "
		    "shared window cannot shrink");
		say(status_answered(), "shared: the agent answers a status");
		win_free(0x200);
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);

	/* a window of an explicit group: its table comes as a memfd */
	n = 0;
	fd = memfd(RMAD_WIN_CTL_SIZE + 4096, 1);
	st = win_create(0x201, 0, 4096, 0, fd, 1, fds, &n);
	say(st == 0 && n >= 1, "shared: a window of a group is made, with "
	    "its table's memfd (status %d, %d descriptors)", st, n);
	if (!st && n >= 1) {
		/* the first descriptor is the table (WIN_REPLY's) */
		say(cannot_shrink(fds[0]), "shared: the agent's table "
		    "memfd cannot shrink");
		say(status_answered(), "shared: the agent answers a status");
		win_free(0x201);
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	close(fd);
}

static int mem_reg(void *base, size_t len, int fd)
{
	struct rmad_ctl_mem m = { .addr = (uint64_t)(uintptr_t)base,
				  .size = len };

	hdr(&m.h, RMAD_CTL_MEM_REG);
	if (rmad_send_msg(sock, &m, sizeof(m), &fd, 1) < 0)
		return RMAD_ERR_AGENT;
	return answer(m.addr, NULL, NULL);
}

static void mode_mem(void)
{
	size_t len = 65536;
	int fd = memfd(len, 0), st;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	st = mem_reg(p, len, fd);
	say(st == RMAD_ERR_PERM, "mem: unsealed rmad_alloc_mem memory is "
	    "refused (status %d)", st);
	if (!st && ftruncate(fd, 0) == 0)
		say(0, "mem: and shrunk to 0 bytes under the agent");
	close(fd);
	fd = memfd(len, 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	st = mem_reg(p, len, fd);
	say(st == 0, "mem: sealed rmad_alloc_mem memory is taken (status %d)",
	    st);
	say(cannot_shrink(fd), "mem: the sealed memfd cannot shrink");
	close(fd);
}

int main(int argc, char **argv)
{
	char ns[64];

	if (argc == 5 && !strcmp(argv[1], "register")) {
		char done[512];

		snprintf(done, sizeof(done), "%s.done", argv[4]);
		if (raw_attach(argv[2], argv[3])) {
			printf("refused %d\n", reg.status);
			return 1;
		}
		printf("registered\n");
		fflush(stdout);
		for (int i = 0; i < 300 && access(done, F_OK); i++)
			usleep(100000);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: test_hostile MODE SOCKET DIR\n");
		return 2;
	}
	sock_path = argv[2];
	dir = argv[3];
	snprintf(ns, sizeof(ns), "hostile-%s-%d", argv[1], (int)getpid());
	if (raw_attach(sock_path, ns)) {
		say(0, "%s: attach", argv[1]);
		return 1;
	}
	if (!strcmp(argv[1], "segment"))
		mode_segment();
	else if (!strcmp(argv[1], "shared"))
		mode_shared();
	else if (!strcmp(argv[1], "mem"))
		mode_mem();
	else
		mode_window(argv[1]);
	return fails ? 1 : 0;
}
