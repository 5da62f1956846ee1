/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawclient.h - a client that speaks to the agent directly, without
 * librmad, for the tests that must write what librmad never would
 * (t/test_garbage.c, t/test_forgery.c): attach over the socket, map the
 * header and the client's own segment, push ring entries and wait on
 * completion counters.  One such client per program, in these globals.
 */
#ifndef RMAD_T_RAWCLIENT_H
#define RMAD_T_RAWCLIENT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "counter.h"
#include "ring.h"
#include "rmad_abi.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "util.h"

static int sock = -1, bell = -1, hfd = -1;	/* hfd: the header's memfd */
static int segfd = -1;				/* our segment's memfd */
static void *seg;
static const struct rmad_shm_hdr *h;
static struct rmad_shm_client *me;
static struct rmad_ctl_register_reply reg;

/* Register as rank 0 of a one-rank job named nspace; 0 or -1. */
static int raw_attach(const char *path, const char *nspace)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rmad_ctl_register m;
	int fds[3], nfds = 3;

	sock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_REGISTER;
	m.size = 1;
	m.local_size = 1;
	snprintf(m.nspace, sizeof(m.nspace), "%s", nspace);
	if (rmad_send_msg(sock, &m, sizeof(m), NULL, 0) < 0 ||
	    rmad_recv_msg(sock, &reg, sizeof(reg), fds, &nfds) !=
		    (long)sizeof(reg) || reg.status || nfds != 3)
		return -1;
	h = mmap(NULL, RMAD_SHM_ALIGN, PROT_READ, MAP_SHARED, fds[0], 0);
	seg = mmap(NULL, reg.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fds[1], 0);
	segfd = fds[1];
	if (seg == MAP_FAILED || h == MAP_FAILED)
		return -1;
	hfd = fds[0];
	me = rmad_shm_client_at(seg, h, 0);
	bell = fds[2];
	return 0;
}

/* Push v onto our ring and ring the doorbell. */
static void push(uint32_t v)
{
	uint64_t one = 1;

	while (rmad_ring_push(me->ring, h->ring_entries - 1, &me->sq_tail,
			      v) < 0)
		usleep(1000);
	if (write(bell, &one, sizeof(one)) < 0) {
		/* the agent polls anyway */
	}
}

/* 1 once counter which reaches target, 0 after 10 s. */
static int wait_cnt(int which, uint64_t target)
{
	for (int i = 0; i < 10000; i++) {
		if (rmad_counter_read(me, which) >= target)
			return 1;
		usleep(1000);
	}
	return 0;
}

#endif
