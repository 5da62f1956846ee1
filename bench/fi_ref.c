/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_ref.c - the floors rmad is measured against (BENCHMARKS.md):
 *
 *  - raw libfabric on the provider the agents use: latency of one
 *    fi_write plus its completion, and bandwidth with 64 writes in
 *    flight, between two processes on this host (a fork; addresses and
 *    memory keys go through a socketpair).  Progress is manual, so the
 *    target busy-polls its CQ the whole time, as a dedicated agent would.
 *  - the round trip of a message (fi_send, answered by the target with
 *    fi_send of the same size) up to 4 KiB: what an operation that needs
 *    the target's answer (a put+flush) costs at least on that provider.
 *  - with --floor, the same-node floor: memcpy bandwidth and the round
 *    trip of a cache line between two cores (two pinned threads).
 *
 * Output is CSV with rmad-bench's columns, so bench/compare can put the
 * rows next to rmad's.  The target checks the data of the last write of
 * every size.  usage: fi_ref [-p shm|tcp] [-s SIZES] [-i N] [--floor]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define MAX_SIZE (4u << 20)
#define WINDOW 64
#define MSG_MAX 4096	/* round-trip messages, after the write area */

struct fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	unsigned char *buf;
	void *desc;
	fi_addr_t peer;
};

/* what each side tells the other */
struct card {
	uint64_t base, key;
	size_t addrlen;
	char addr[256];
};

static const char *prov_arg = "shm";
static size_t sizes[32];
static int nsizes, iters = 1000, warmup = 100;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void fill(unsigned char *b, size_t n, size_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 31 + seed * 7 + 1);
}

static void row(const char *label, const char *test, const char *mode,
		size_t size, double *t, int n, int per, int bw, int ok)
{
	double p50, p90, p99;

	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	p50 = t[(n - 1) / 2] * 1e6 / per;
	p90 = t[(int)((n - 1) * 0.9)] * 1e6 / per;
	p99 = t[(int)((n - 1) * 0.99)] * 1e6 / per;
	printf("%s,fi,2,2,%s,%s,%s,%zu,-,%d,%.3f,%.3f,%.3f,", label,
	       strcmp(label, "floor") ? prov_arg : "-", test, mode, size, n,
	       p50, p90, p99);
	if (bw)
		printf("%.1f,,", size / p50);
	else
		printf(",,");
	printf("0,0,%s\n", ok ? "ok" : "FAIL");
	fflush(stdout);
}

static int fab_open(struct fab *f)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	const char *node = NULL;
	uint64_t flags = 0;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
		      FI_REMOTE_WRITE;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(prov_arg);
	if (strncmp(prov_arg, "shm", 3)) {
		node = "127.0.0.1";
		flags = FI_SOURCE;
	}
	ret = fi_getinfo(FI_VERSION(1, 9), node, NULL, flags, hints, &f->info);
	fi_freeinfo(hints);
	if (ret)
		return ret;
	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	ret = ret ? ret : fi_domain(f->fabric, f->info, &f->domain, NULL);
	ret = ret ? ret : fi_av_open(f->domain, &av_attr, &f->av, NULL);
	ret = ret ? ret : fi_cq_open(f->domain, &cq_attr, &f->cq, NULL);
	ret = ret ? ret : fi_endpoint(f->domain, f->info, &f->ep, NULL);
	ret = ret ? ret : fi_ep_bind(f->ep, &f->av->fid, 0);
	ret = ret ? ret : fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
	ret = ret ? ret : fi_enable(f->ep);
	if (ret)
		return ret;
	f->buf = aligned_alloc(4096, MAX_SIZE + 2 * MSG_MAX);
	if (!f->buf)
		return -FI_ENOMEM;
	memset(f->buf, 0, MAX_SIZE + 2 * MSG_MAX);
	ret = fi_mr_reg(f->domain, f->buf, MAX_SIZE + 2 * MSG_MAX,
			FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
			0, 0, 0, &f->mr, NULL);
	if (ret)
		return ret;
	if (f->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		ret = fi_mr_bind(f->mr, &f->ep->fid, 0);
		ret = ret ? ret : fi_mr_enable(f->mr);
	}
	f->desc = fi_mr_desc(f->mr);
	return ret;
}

static void fab_close(struct fab *f)
{
	if (f->mr)
		fi_close(&f->mr->fid);
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
	free(f->buf);
}

/* send my card, read the peer's, insert its address */
static int exchange(struct fab *f, int sock, struct card *peer)
{
	struct card me = { .key = fi_mr_key(f->mr) };
	int ret;

	if (f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		me.base = (uint64_t)(uintptr_t)f->buf;
	me.addrlen = sizeof(me.addr);
	ret = fi_getname(&f->ep->fid, me.addr, &me.addrlen);
	if (ret)
		return ret;
	if (write(sock, &me, sizeof(me)) != sizeof(me) ||
	    read(sock, peer, sizeof(*peer)) != sizeof(*peer))
		return -FI_EIO;
	ret = fi_av_insert(f->av, peer->addr, 1, &f->peer, 0, NULL);
	return ret == 1 ? 0 : -FI_EINVAL;
}

/* poll until n completions came in; the CQ is our only progress */
static int wait_cq(struct fab *f, int n)
{
	struct fi_cq_msg_entry e[WINDOW];
	struct fi_cq_err_entry err;

	while (n > 0) {
		ssize_t r = fi_cq_read(f->cq, e, WINDOW);

		if (r > 0) {
			n -= (int)r;
		} else if (r == -FI_EAVAIL) {
			fi_cq_readerr(f->cq, &err, 0);
			fprintf(stderr, "fi_ref: completion error %s\n",
				fi_strerror(err.err));
			return -FI_EIO;
		} else if (r != -FI_EAGAIN) {
			return (int)r;
		}
	}
	return 0;
}

static int post_write(struct fab *f, struct card *peer, size_t size,
		      struct fi_context2 *ctx)
{
	ssize_t r;

	do {
		r = fi_write(f->ep, f->buf, size, f->desc, f->peer, peer->base,
			     peer->key, ctx);
		if (r == -FI_EAGAIN)
			fi_cq_read(f->cq, NULL, 0);
	} while (r == -FI_EAGAIN);
	return (int)r;
}

static struct fi_context2 rctx, sctx;	/* round trips: receive, send */

static int post_recv(struct fab *f)
{
	ssize_t r;

	do {
		r = fi_recv(f->ep, f->buf + MAX_SIZE, MSG_MAX, f->desc,
			    FI_ADDR_UNSPEC, &rctx);
		if (r == -FI_EAGAIN)
			fi_cq_read(f->cq, NULL, 0);
	} while (r == -FI_EAGAIN);
	return (int)r;
}

static int post_send(struct fab *f, size_t size)
{
	ssize_t r;

	do {
		r = fi_send(f->ep, f->buf + MAX_SIZE + MSG_MAX, size, f->desc,
			    f->peer, &sctx);
		if (r == -FI_EAGAIN)
			fi_cq_read(f->cq, NULL, 0);
	} while (r == -FI_EAGAIN);
	return (int)r;
}

/*
 * The target: poll the CQ for the origin's sake, answer each message
 * with one of the same size, and between polls look
 * at the socket for "check size" (answered ok/not) or "quit".
 */
static int target(struct fab *f, int sock)
{
	struct fi_cq_msg_entry e[WINDOW];
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	unsigned char *want = malloc(MAX_SIZE);

	if (!want || post_recv(f))
		return 1;
	for (unsigned long k = 0;; k++) {
		uint64_t cmd;
		ssize_t r = fi_cq_read(f->cq, e, WINDOW);
		char ok;

		for (ssize_t j = 0; j < r; j++) {
			if (e[j].op_context != &rctx)
				continue;
			if (post_recv(f) || post_send(f, e[j].len)) {
				free(want);
				return 1;
			}
		}
		if (k % 256 || poll(&pfd, 1, 0) <= 0)
			continue;
		if (read(sock, &cmd, sizeof(cmd)) != sizeof(cmd) || !cmd)
			break;
		fill(want, cmd, cmd);
		ok = !memcmp(want, f->buf, cmd);
		memset(f->buf, 0, cmd);
		if (write(sock, &ok, 1) != 1)
			break;
	}
	free(want);
	return 0;
}

static int ask_check(int sock, size_t size)
{
	uint64_t cmd = size;
	char ok = 0;

	if (write(sock, &cmd, sizeof(cmd)) != sizeof(cmd) ||
	    read(sock, &ok, 1) != 1)
		return 0;
	return ok;
}

static int origin(struct fab *f, int sock, struct card *peer)
{
	static struct fi_context2 ctx[WINDOW];
	char label[64];
	double *t = calloc((size_t)iters + 1, sizeof(*t));
	int rc = 0;

	if (!t)
		return -FI_ENOMEM;
	snprintf(label, sizeof(label), "fi-%s", prov_arg);
	for (char *p = label; *p; p++)
		if (*p == ';')
			*p = '+';
	for (int s = 0; s < nsizes && !rc; s++) {
		size_t size = sizes[s];
		int n = size > 65536 ? (iters + 9) / 10 : iters;
		int w = size > 65536 ? (warmup + 9) / 10 : warmup, done = 0;

		fill(f->buf, size, size);
		for (int k = -w; k < n && !rc; k++) {
			double t0 = now();

			rc = post_write(f, peer, size, &ctx[0]);
			rc = rc ? rc : wait_cq(f, 1);
			if (k >= 0)
				t[done++] = now() - t0;
		}
		if (!rc)
			row(label, "put", "raw", size, t, done, 1, 0,
			    ask_check(sock, size));
		done = 0;
		for (int k = -w; k < n && !rc && size <= MSG_MAX; k++) {
			double t0 = now();

			/* the answer's receive, then the send: 2 completions */
			rc = post_recv(f);
			rc = rc ? rc : post_send(f, size);
			rc = rc ? rc : wait_cq(f, 2);
			if (k >= 0)
				t[done++] = now() - t0;
		}
		if (!rc && size <= MSG_MAX)
			row(label, "rtt", "raw", size, t, done, 1, 0, 1);
		if (size < 1024)
			continue;
		done = 0;
		for (int k = -w; k < n && !rc; k++) {
			double t0 = now();

			for (int j = 0; j < WINDOW && !rc; j++)
				rc = post_write(f, peer, size, &ctx[j]);
			rc = rc ? rc : wait_cq(f, WINDOW);
			if (k >= 0)
				t[done++] = now() - t0;
		}
		if (!rc)
			row(label, "put_bw", "raw", size, t, done, WINDOW, 1,
			    ask_check(sock, size));
	}
	free(t);
	return rc;
}

/* ---------------------------------------------------------- floors */

static volatile int line[16] __attribute__((aligned(64)));

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *ponger(void *arg)
{
	int n = *(int *)arg;

	pin(1);
	for (int i = 1; i <= n; i++) {
		while (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) != 2 * i - 1)
			;
		__atomic_store_n(&line[0], 2 * i, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int floors(void)
{
	int reps = 2000, rounds = 50;
	double *t = calloc((size_t)rounds, sizeof(*t));
	unsigned char *a = aligned_alloc(4096, MAX_SIZE);
	unsigned char *b = aligned_alloc(4096, MAX_SIZE);
	pthread_t th;
	int n = reps * rounds;

	if (!t || !a || !b)
		return 1;
	fill(a, MAX_SIZE, 1);
	memset(b, 0, MAX_SIZE);
	for (int s = 0; s < nsizes; s++) {
		size_t size = sizes[s];
		int per = size >= 65536 ? 4 : 256;

		if (size < 1024)
			continue;
		for (int r = 0; r < rounds; r++) {
			double t0 = now();

			for (int k = 0; k < per; k++) {
				memcpy(b, a, size);
				__asm__ __volatile__("" ::: "memory");
			}
			t[r] = now() - t0;
		}
		row("floor", "memcpy", "-", size, t, rounds, per, 1,
		    !memcmp(a, b, size));
	}
	/* a cache line bouncing between cores 0 and 1, timed in rounds */
	line[0] = 0;
	if (pthread_create(&th, NULL, ponger, &n))
		return 1;
	pin(0);
	for (int r = 0, i = 1; r < rounds; r++) {
		double t0 = now();

		for (int k = 0; k < reps; k++, i++) {
			__atomic_store_n(&line[0], 2 * i - 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) !=
			       2 * i)
				;
		}
		t[r] = now() - t0;
	}
	pthread_join(th, NULL);
	row("floor", "cacheline", "-", 64, t, rounds, reps, 0,
	    line[0] == 2 * n);
	free(a);
	free(b);
	free(t);
	return 0;
}

static int parse_sizes(char *list)
{
	char *save = NULL;

	nsizes = 0;
	for (char *s = strtok_r(list, ",", &save); s && nsizes < 32;
	     s = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (*end == 'K' || *end == 'k')
			v <<= 10;
		else if (*end == 'M' || *end == 'm')
			v <<= 20;
		if (!v || v > MAX_SIZE)
			return -1;
		sizes[nsizes++] = v;
	}
	return nsizes ? 0 : -1;
}

int main(int argc, char **argv)
{
	int floor_only = 0, sv[2], st = 0, rc;
	pid_t pid;

	for (size_t s = 1; s <= MAX_SIZE; s <<= 1)
		sizes[nsizes++] = s;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			prov_arg = argv[++i];
		else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			if (parse_sizes(argv[++i]))
				goto usage;
		} else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if ((!strcmp(argv[i], "-w") || !strcmp(argv[i], "-W")) &&
			 i + 1 < argc)
			warmup = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--floor"))
			floor_only = 1;
		else
			goto usage;
	}
	if (iters < 1 || warmup < 0)
		goto usage;
	if (!strcmp(prov_arg, "tcp"))
		prov_arg = "tcp;ofi_rxm";
	alarm(300);	/* whatever happens, this ends */
	if (floor_only)
		return floors();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	{
		struct fab f = { 0 };
		struct card peer;
		int mine = pid == 0 ? sv[1] : sv[0];

		rc = fab_open(&f);
		if (rc) {
			fprintf(stderr, "fi_ref: %s: %s\n", prov_arg,
				fi_strerror(-rc));
			if (pid == 0)
				_exit(1);
			kill(pid, SIGTERM);
			waitpid(pid, &st, 0);
			return 1;
		}
		rc = exchange(&f, mine, &peer);
		if (!rc && pid == 0) {
			rc = target(&f, mine);
			fab_close(&f);
			_exit(rc ? 1 : 0);
		}
		if (!rc)
			rc = origin(&f, mine, &peer);
		{
			uint64_t quit = 0;

			if (write(mine, &quit, sizeof(quit)) < 0)
				rc = rc ? rc : -FI_EIO;
		}
		waitpid(pid, &st, 0);
		fab_close(&f);
	}
	if (rc)
		fprintf(stderr, "fi_ref: %s\n", fi_strerror(-rc));
	return rc || st ? 1 : 0;
usage:
	fprintf(stderr, "usage: fi_ref [-p shm|tcp] [-s SIZES] [-i N] [-w|-W N] "
		"[--floor]\n");
	return 2;
}
