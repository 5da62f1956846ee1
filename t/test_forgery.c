/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_forgery.c - a victim and an attacker on one agent, each attached
 * through the control socket like librmad, in two jobs (and, when the
 * shell test runs the attacker as another user, as two users).
 *
 *   test_forgery victim SOCKET DIR
 *	attaches as job "victim", writes a marker into every op element
 *	and its whole staging area, completes NOPS no-ops, writes
 *	DIR/victim.ready, waits for DIR/attacker.done, then checks that
 *	its counters moved by its own ops only and its marker is intact.
 *   test_forgery attacker SOCKET DIR
 *	attaches as job "attacker", waits for DIR/victim.ready, then
 *	looks for the victim's marker in every byte it can read in its
 *	own address space (its segment, the header, everything mapped),
 *	pushes every index that names another client slot's element in
 *	the agent's numbering, and checks that each was dropped.
 *
 * Each prints "PASS text" or "FAIL text" lines for the shell's TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "atomics.h"
#include "counter.h"
#include "pool.h"
#include "ring.h"
#include "rmad_abi.h"
#include "rmad_ctl.h"
#include "rawclient.h"
#include "rmad_shm.h"
#include "util.h"

#define NOPS	16

/*
 * 16 bytes no other process writes: found anywhere, it leaked. Made at
 * run time from a masked constant, so that the binary itself (its
 * .rodata, immediates in its code) never holds them and the one copy in
 * the attacker is this array, which the scan skips.
 */
static const char marker_masked[16] = "\x25\x0c\x13\x19\x0e\x13\x17\x77"
	"\x09\x1f\x19\x08\x1f\x0e\x5b\x5a";
static char marker[16];

static void marker_make(void)
{
	for (size_t i = 0; i < sizeof(marker); i++)
		((volatile char *)marker)[i] = marker_masked[i] ^ 0x5a;
}

static int fails;

static void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", cond ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	fails += !cond;
}

static uint32_t take(void)
{
	struct rmad_pool_view v = {
		.base = (char *)seg + h->off_ops,
		.stride = sizeof(struct rmad_op_elem),
		.n = rmad_shm_nops_client(h),
	};

	return rmad_pool_get(&me->op_free, &v);
}

static void path_in(char *out, size_t len, const char *dir, const char *f)
{
	snprintf(out, len, "%s/%s", dir, f);
}

static int wait_file(const char *p, int secs)
{
	for (int i = 0; i < secs * 100; i++) {
		if (access(p, F_OK) == 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

static int victim(const char *dir)
{
	uint32_t nops = rmad_shm_nops_client(h), idx[NOPS];
	uint8_t *stage = rmad_shm_staging_at(seg, h, 0);
	uint64_t local0, sync0;
	char p[4096];
	int fd, intact = 1;

	/* the secret everywhere an attacker could look for it */
	for (uint32_t i = 0; i < nops; i++) {
		struct rmad_op_elem *e = rmad_shm_op_at(seg, h, i);

		memcpy(e->data, marker, sizeof(marker));
	}
	for (uint64_t o = 0; o + sizeof(marker) <= h->staging_size;
	     o += sizeof(marker))
		memcpy(stage + o, marker, sizeof(marker));
	local0 = rmad_counter_read(me, RMAD_CNT_LOCAL);
	sync0 = rmad_counter_read(me, RMAD_CNT_SYNC);
	for (int k = 0; k < NOPS; k++) {
		struct rmad_op_elem *e;

		idx[k] = take();
		e = rmad_shm_op_at(seg, h, idx[k]);
		e->opcode = RMAD_OPC_NOOP;
		e->flags = RMAD_OPF_KEEP;
		e->owner = reg.client;
		e->inline_len = sizeof(marker);
		push(idx[k]);
	}
	check(wait_cnt(RMAD_CNT_LOCAL, local0 + NOPS),
	      "victim: its %d ops completed", NOPS);
	path_in(p, sizeof(p), dir, "victim.ready");
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	path_in(p, sizeof(p), dir, "attacker.done");
	check(wait_file(p, 60), "victim: the attacker finished");
	usleep(100000);
	check(rmad_counter_read(me, RMAD_CNT_LOCAL) == local0 + NOPS &&
	      rmad_counter_read(me, RMAD_CNT_REMOTE) == local0 + NOPS &&
	      rmad_counter_read(me, RMAD_CNT_SYNC) == sync0,
	      "victim: its counters moved by its own %d ops only "
	      "(local %llu, sync %llu)", NOPS,
	      (unsigned long long)(rmad_counter_read(me, RMAD_CNT_LOCAL) -
				   local0),
	      (unsigned long long)(rmad_counter_read(me, RMAD_CNT_SYNC) -
				   sync0));
	for (uint64_t o = 0; o + sizeof(marker) <= h->staging_size;
	     o += sizeof(marker))
		intact &= !memcmp(stage + o, marker, sizeof(marker));
	for (uint32_t i = 0; i < nops; i++)
		intact &= !memcmp(rmad_shm_op_at(seg, h, i)->data, marker,
				  sizeof(marker));
	check(intact, "victim: its op elements and staging area are "
	      "untouched");
	return fails != 0;
}

/* Every readable byte of this process, searched for the marker. */
/*
 * Read [lo, hi) of our own address space through process_vm_readv, so
 * that a page that faults (a file mapping past its end, a guard page)
 * is skipped instead of killing us. Returns the marker hits in it.
 */
static long scan_range(unsigned long lo, unsigned long hi, char *buf,
		       size_t cap)
{
	long hits = 0;
	pid_t self = getpid();

	for (unsigned long a = lo; a < hi; ) {
		size_t want = hi - a < cap ? hi - a : cap;
		struct iovec l = { buf, want }, r = { (void *)a, want };
		ssize_t got = process_vm_readv(self, &l, 1, &r, 1, 0);

		if (got <= 0) {		/* skip the faulting page */
			a = (a | 4095) + 1;
			continue;
		}
		for (size_t o = 0; o + sizeof(marker) <= (size_t)got; o++)
			if (buf[o] == marker[0] &&
			    (const char *)(a + o) != (const char *)marker &&
			    !memcmp(buf + o, marker, sizeof(marker)))
				hits++;
		/* overlap so a marker across two reads is seen */
		a += (size_t)got > sizeof(marker) ?
			(size_t)got - sizeof(marker) + 1 : (size_t)got;
	}
	return hits;
}

static long scan_memory(long *regions)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t cap = 1 << 20;
	char line[512], *buf;
	long hits = 0;

	*regions = 0;
	if (!f)
		return -1;
	buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 ||
		    perm[0] != 'r' || strstr(line, "[vvar]") ||
		    strstr(line, "[vsyscall]"))
			continue;
		(*regions)++;
		/* the scan buffer holds copies of what it read: skip it */
		if (lo <= (unsigned long)buf && (unsigned long)buf < hi) {
			hits += scan_range(lo, (unsigned long)buf, buf, cap);
			hits += scan_range((unsigned long)buf + cap, hi, buf,
					   cap);
		} else {
			hits += scan_range(lo, hi, buf, cap);
		}
	}
	munmap(buf, cap);
	fclose(f);
	return hits;
}

/*
 * The agent's status report, as rmadctl asks for it, on a connection of
 * its own: another user must find no client or job of the victim in it
 * (the agent's own user, root here, sees everything by design).
 */
static void status_check(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rmad_ctl_hdr q = {
		.magic = RMAD_CTL_MAGIC, .abi_version = RMAD_ABI_VERSION,
		.type = RMAD_CTL_STATUS,
	};
	static char buf[65536];
	ssize_t n = -1;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    send(fd, &q, sizeof(q), 0) == (ssize_t)sizeof(q))
		n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (fd >= 0)
		close(fd);
	if (n < (ssize_t)sizeof(q)) {
		check(0, "attacker: the agent answers a status request");
		return;
	}
	buf[n] = '\0';
	if (getuid() == 0)
		check(strstr(buf + sizeof(q), "victim-") != NULL,
		      "attacker: status as the agent's own user lists every "
		      "client");
	else
		check(strstr(buf + sizeof(q), "victim-") == NULL &&
		      strstr(buf + sizeof(q), "attacker-") != NULL,
		      "attacker: status as another user lists its own "
		      "clients and jobs only, nothing of the victim");
}

static int attacker(const char *sock_path, const char *dir)
{
	uint32_t per = h->per_client, pushed = 0;
	uint64_t local0 = rmad_counter_read(me, RMAD_CNT_LOCAL);
	char p[4096];
	long regions, hits;
	int fd;

	path_in(p, sizeof(p), dir, "victim.ready");
	check(wait_file(p, 60), "attacker: the victim is attached");
	/* the scan has teeth: it finds one copy planted in our heap */
	{
		char *plant = malloc(64);

		memcpy(plant + 8, marker, sizeof(marker));
		__asm__ volatile("" : : "r"(plant) : "memory");
		hits = scan_memory(&regions);
		check(hits == 1, "attacker: the scan finds a copy planted in "
		      "its heap (%ld found)", hits);
		memset(plant, 0, 64);
		__asm__ volatile("" : : "r"(plant) : "memory");
		free(plant);
	}
	hits = scan_memory(&regions);
	check(hits == 0, "attacker: no byte of the victim's in any of its "
	      "%ld readable mappings (%ld found)", regions, hits);
	/*
	 * Every index naming another slot's element in the agent's
	 * numbering, and a few beyond: the agent reads an index as one of
	 * the pusher's own segment, so each is dropped.
	 */
	for (uint32_t c = 1; c < h->max_clients; c++)
		for (uint32_t l = 0; l < per; l += per / 8 + 1) {
			push(c * per + l);
			pushed++;
		}
	push(0xffffffffu);
	push(0x80000000u);
	pushed += 2;
	/* then one good op of ours: the agent went past all of them */
	{
		uint32_t i = take();
		struct rmad_op_elem *e = rmad_shm_op_at(seg, h, i);

		e->opcode = RMAD_OPC_NOOP;
		e->flags = 0;
		push(i);
	}
	check(wait_cnt(RMAD_CNT_LOCAL, local0 + 1) &&
	      rmad_counter_read(me, RMAD_CNT_LOCAL) == local0 + 1,
	      "attacker: %u indices of other clients' elements dropped, "
	      "its own op done", pushed);
	status_check(sock_path);
	path_in(p, sizeof(p), dir, "attacker.done");
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	return fails != 0;
}

int main(int argc, char **argv)
{
	char nsp[64];
	int err;

	alarm(120);
	marker_make();
	if (argc < 4) {
		fprintf(stderr, "usage: test_forgery victim|attacker SOCKET "
			"DIR\n");
		return 2;
	}
	snprintf(nsp, sizeof(nsp), "%s-%d", argv[1], (int)getpid());
	err = raw_attach(argv[2], nsp);
	check(err == 0, "%s: attached as client %u (uid %u)", argv[1],
	      reg.client, (unsigned)getuid());
	if (err)
		return 1;
	return !strcmp(argv[1], "victim") ? victim(argv[3]) :
	       attacker(argv[2], argv[3]);
}
