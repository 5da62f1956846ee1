/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_version.c - an agent refuses a client that speaks another ABI.
 *
 * Speaks the control socket directly: a REGISTER with the wrong ABI
 * version must get RMAD_ERR_VERSION and no file descriptors; a message
 * with a bad magic must be dropped; and a well-formed REGISTER must still
 * work afterwards (the agent kept serving).
 *
 * usage: test_version SOCKET
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rmad_abi.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "tap.h"
#include "util.h"

static int conn(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	return fd;
}

static long do_reg(const char *path, uint32_t abi, uint64_t magic,
		   struct rmad_ctl_register_reply *r, int *nfds)
{
	struct rmad_ctl_register m;
	int fds[4], fd = conn(path);
	long n;

	*nfds = 0;
	if (fd < 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.h.magic = magic;
	m.h.abi_version = abi;
	m.h.type = RMAD_CTL_REGISTER;
	m.rank = 0;
	m.size = 1;
	m.local_size = 1;
	snprintf(m.nspace, sizeof(m.nspace), "test-version-%d", (int)getpid());
	rmad_send_msg(fd, &m, sizeof(m), NULL, 0);
	*nfds = 4;
	memset(r, 0, sizeof(*r));
	n = rmad_recv_msg(fd, r, sizeof(*r), fds, nfds);
	for (int i = 0; i < *nfds; i++)
		close(fds[i]);
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	struct rmad_ctl_register_reply r;
	long n;
	int nfds;

	alarm_after(30);
	plan(5);
	if (argc < 2) {
		diag("usage: test_version SOCKET");
		return 1;
	}
	n = do_reg(argv[1], RMAD_ABI_VERSION + 1, RMAD_CTL_MAGIC, &r, &nfds);
	ok(n == (long)sizeof(r) && r.status == RMAD_ERR_VERSION,
	   "ABI %d refused with RMAD_ERR_VERSION (status %d)",
	   RMAD_ABI_VERSION + 1, r.status);
	ok(nfds == 0, "no descriptors handed to a mismatched client");
	n = do_reg(argv[1], RMAD_ABI_VERSION, 0x1234, &r, &nfds);
	ok(n <= 0 && nfds == 0, "bad magic: connection dropped, no reply");
	n = do_reg(argv[1], RMAD_ABI_VERSION, RMAD_CTL_MAGIC, &r, &nfds);
	ok(n == (long)sizeof(r) && r.status == 0,
	   "a good client still attaches (status %d)", r.status);
	ok(nfds == 3, "and gets the header, its segment and the doorbell");
	return done_testing();
}
