/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prog_manywin.c - many windows alive at once (t/manywin.sh).
 *
 * usage: prog_manywin N [quota Q]
 *
 * Every rank makes N windows of 64 bytes over the whole job (allocated;
 * every eighth one created over heap memory), all alive at once; puts
 * to the right neighbour and gets back on a few of them (the first, the
 * last and every 997th) with exact results; then frees them all.  Before,
 * in between and after, it reads its agent's and its own descriptor and
 * mapping counts and resident memory (/proc; the agent is the peer of
 * the process's Unix socket to it): nothing may hold a descriptor per
 * window, and after the free the descriptors and mappings are back
 * where they were.  Twice: the second round may leave the agent's
 * memory no larger than the first left it (no leak; the heap keeps what
 * it got).  Prints the time to make and to free a window and the memory
 * per window of the agent and of the process.
 *
 * With "quota Q" (an agent with max_windows=Q), the (Q+1)-th window is
 * refused with RMAD_ERR_NOMEM on every rank, the windows made still
 * work, and after one free one more can be made again.
 *
 * Each rank prints "rank R: ok ..." or "rank R: FAIL ..." lines.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prog.h"

static int rank, size, fails;

#define WSIZE	64

struct usage {
	long fds, maps, rss_kb;
};

static long count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void usage_of(pid_t pid, struct usage *u)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	u->fds = count_dir(path);
	u->maps = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		u->maps += strchr(line, '\n') != NULL;
	if (f)
		fclose(f);
	u->rss_kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			u->rss_kb = atol(line + 6);
	if (f)
		fclose(f);
}

/* The agent: the process at the other end of one of our Unix sockets
 * whose name is rmad. */
static pid_t find_agent(void)
{
	for (int fd = 0; fd < 1024; fd++) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct stat st;
		char path[64], comm[32] = "";
		FILE *f;

		if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    cr.pid <= 0 || cr.pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)cr.pid);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		if (!strncmp(comm, "rmad", 4))
			return cr.pid;
	}
	return -1;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int make(int i, rmad_win_t *w, int64_t **base, void **heap)
{
	*heap = NULL;
	if (i % 8 == 7) {
		int e;

		*heap = calloc(1, WSIZE);
		if (!*heap)
			return RMAD_ERR_NOMEM;
		e = rmad_win_create(*heap, WSIZE, 8, NULL, RMAD_GROUP_ALL, w);
		*base = *heap;
		if (e) {
			free(*heap);
			*heap = NULL;
		}
		return e;
	}
	return rmad_win_allocate(WSIZE, 8, NULL, RMAD_GROUP_ALL, base, w);
}

/* A put to the right neighbour and a get back, on window i. */
static void use(rmad_win_t w, int64_t *base, int i)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int64_t v = (int64_t)i * 1000 + rank, got = -1;

	base[1] = -1;
	OK(rmad_barrier());
	OK(rmad_win_lock(RMAD_LOCK_EXCLUSIVE, right, 0, w));
	OK(rmad_put(&v, 1, RMAD_INT64, right, 1, 1, RMAD_INT64, w));
	OK(rmad_win_flush(right, w));
	OK(rmad_get(&got, 1, RMAD_INT64, right, 1, 1, RMAD_INT64, w));
	OK(rmad_win_unlock(right, w));
	CHECK(got == v, "window %d: got %lld back from %d, want %lld", i,
	      (long long)got, right, (long long)v);
	OK(rmad_barrier());
	CHECK(base[1] == (int64_t)i * 1000 + left, "window %d: holds %lld, "
	      "want %lld from %d", i, (long long)base[1],
	      (long long)i * 1000 + left, left);
}

static int quota(int q)
{
	int n = q + 2, made = 0, e = 0;
	rmad_win_t *w = calloc((size_t)n, sizeof(*w));
	int64_t **b = calloc((size_t)n, sizeof(*b));
	void **h = calloc((size_t)n, sizeof(*h));

	if (!w || !b || !h)
		return 1;
	while (made < n && !(e = make(made, &w[made], &b[made], &h[made])))
		made++;
	CHECK(made == q && e == RMAD_ERR_NOMEM, "quota %d: %d windows made, "
	      "then %s", q, made, rmad_strerror(e));
	if (made > 0) {
		use(w[0], b[0], 0);
		use(w[made - 1], b[made - 1], made - 1);
		OK(rmad_win_free(&w[made - 1]));
		free(h[made - 1]);
		OK(make(made - 1, &w[made - 1], &b[made - 1], &h[made - 1]));
		use(w[made - 1], b[made - 1], made - 1);
	}
	for (int i = 0; i < made; i++) {
		OK(rmad_win_free(&w[i]));
		free(h[i]);
	}
	free(w);
	free(b);
	free(h);
	return t_finish(rank, fails, " (quota %d: window %d refused)", q,
			q + 1);
}

/* One round: n windows made, used, freed; the agent's memory after. */
static long round_of(pid_t agent, int n, int r)
{
	struct usage a0, a1, a2, c0, c1, c2;
	rmad_win_t *w = calloc((size_t)n, sizeof(*w));
	int64_t **b = calloc((size_t)n, sizeof(*b));
	void **h = calloc((size_t)n, sizeof(*h));
	double t0, t1, t2;
	int made = 0;

	if (!w || !b || !h) {
		CHECK(0, "no memory for %d windows' handles", n);
		return 0;
	}
	OK(rmad_barrier());
	usage_of(agent, &a0);
	usage_of(getpid(), &c0);
	OK(rmad_barrier());
	t0 = now_us();
	for (; made < n; made++) {
		int e = make(made, &w[made], &b[made], &h[made]);

		if (e) {
			CHECK(0, "window %d of %d: %s", made, n,
			      rmad_strerror(e));
			break;
		}
	}
	t1 = now_us();
	OK(rmad_barrier());
	usage_of(agent, &a1);
	usage_of(getpid(), &c1);
	for (int i = 0; i < made; i++)
		if (i == 0 || i == made - 1 || i % 997 == 0)
			use(w[i], b[i], i);
	OK(rmad_barrier());
	t2 = now_us();
	for (int i = 0; i < made; i++) {
		OK(rmad_win_free(&w[i]));
		free(h[i]);
	}
	t2 = now_us() - t2;
	OK(rmad_barrier());
	usage_of(agent, &a2);
	usage_of(getpid(), &c2);
	/* nothing holds a descriptor per window; all of it goes back */
	CHECK(a1.fds - a0.fds < 16, "agent: %ld descriptors with %d windows, "
	      "%ld before", a1.fds, made, a0.fds);
	CHECK(c1.fds - c0.fds < 16, "process: %ld descriptors with %d "
	      "windows, %ld before", c1.fds, made, c0.fds);
	CHECK(a2.fds == a0.fds && c2.fds == c0.fds, "descriptors after the "
	      "free: agent %ld (%ld before), process %ld (%ld before)",
	      a2.fds, a0.fds, c2.fds, c0.fds);
	CHECK(a2.maps - a0.maps < 8 && c2.maps - c0.maps < 8, "mappings "
	      "after the free: agent %ld (%ld before, %ld with the windows), "
	      "process %ld (%ld before, %ld with them)", a2.maps, a0.maps,
	      a1.maps, c2.maps, c0.maps, c1.maps);
	printf("rank %d: round %d, windows %d: create %.1f us, free %.1f us "
	       "each; per window: agent %.0f bytes %.2f mappings, process "
	       "%.0f bytes %.2f mappings; after the free: agent %+ld kB %+ld "
	       "fds, process %+ld kB %+ld fds\n", rank, r, made,
	       made ? (t1 - t0) / made : 0, made ? t2 / made : 0,
	       made ? (a1.rss_kb - a0.rss_kb) * 1024.0 / made : 0,
	       made ? (double)(a1.maps - a0.maps) / made : 0,
	       made ? (c1.rss_kb - c0.rss_kb) * 1024.0 / made : 0,
	       made ? (double)(c1.maps - c0.maps) / made : 0,
	       a2.rss_kb - a0.rss_kb, a2.fds - a0.fds,
	       c2.rss_kb - c0.rss_kb, c2.fds - c0.fds);
	free(w);
	free(b);
	free(h);
	return a2.rss_kb;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	long after[2];
	rmad_win_t w0;
	int64_t *b0;
	void *h0;
	pid_t agent;

	if (t_init(&argc, &argv, &rank, &size, NULL))
		return 1;
	if (argc > 3 && !strcmp(argv[2], "quota"))
		return quota(atoi(argv[3]));
	agent = find_agent();
	CHECK(agent > 0, "no agent found at the other end of a socket");
	if (n < 1)
		return t_finish(rank, 1, " ");
	/* the first window makes what every window shares: not counted */
	OK(make(0, &w0, &b0, &h0));
	OK(rmad_win_free(&w0));
	/* twice: what the first round's windows left in the agent's heap
	 * (its tables, free memory it keeps) serves the second's, so the
	 * second round leaves nothing more: nothing leaks */
	for (int r = 0; r < 2; r++)
		after[r] = round_of(agent, n, r);
	CHECK(after[1] - after[0] < 1024, "agent's memory after the second "
	      "round: %+ld kB more than after the first", after[1] - after[0]);
	return t_finish(rank, fails, " (%d windows alive at once, twice)", n);
}
