/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sched_floor.c - what the machine charges for the hand-offs an agent
 * design cannot avoid, measured with nothing of rmad in between:
 *
 *   switch_proc   two processes bound to one CPU hand it back and forth
 *                 with a futex (a client that sleeps on its counter and
 *                 the agent that runs then, and back): us per round,
 *                 that is two context switches between address spaces;
 *   switch_thread the same with two threads of one process (no address
 *                 space switch): what the address space switch costs;
 *   wake_idle     a futex wake of a process asleep on another, idle CPU,
 *                 until it runs (a packet for a sleeping agent whose
 *                 core has nothing else to do);
 *   wake_busy     the same while a third process computes on that CPU
 *                 (a packet for an agent whose core a rank computes on:
 *                 the woken one must preempt it);
 *   syscall       one getppid(2).
 *
 * usage: sched_floor [-n ROUNDS] [-c CPU0,CPU1] [--csv]   (2000; CPUs 0,1)
 * Output: lines  floor,WHAT,p50_us,p90_us;  with --csv, rows of
 * bench/compare's results.csv instead (label "sched", test WHAT).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int rounds = 2000;
static int cpu[2] = { 0, 1 };
static int csv;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void pin(int c)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(c, &s);
	if (sched_setaffinity(0, sizeof(s), &s)) {
		fprintf(stderr, "sched_floor: cpu %d: %s\n", c, strerror(errno));
		exit(2);
	}
}

static void fwait(uint32_t *w, uint32_t v, int shared)
{
	syscall(SYS_futex, w, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, v,
		NULL, NULL, 0);
}

static void fwake(uint32_t *w, int shared)
{
	syscall(SYS_futex, w, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, 1,
		NULL, NULL, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print_row(const char *what, double p50, double p90)
{
	if (csv)
		printf("sched,floor,2,1,-,%s,raw,0,-,%d,%.3f,%.3f,,,,,,ok\n",
		       what, rounds, p50, p90);
	else
		printf("floor,%s,%.3f,%.3f\n", what, p50, p90);
	fflush(stdout);
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	print_row(what, v[n / 2], v[n * 9 / 10]);
}

/* The shared page: the ping-pong word, then the samples. */
struct page {
	uint32_t word;
	uint32_t pad[15];
	double t[];
};

static size_t page_len(void)
{
	return sizeof(struct page) + (size_t)rounds * sizeof(double);
}

static struct page *page_new(void)
{
	struct page *p = mmap(NULL, page_len(), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("sched_floor: mmap");
		exit(2);
	}
	return p;
}

static pid_t fork_or_die(void)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("sched_floor: fork");
		exit(2);
	}
	return pid;
}

static void page_free(struct page *p)
{
	munmap(p, page_len());
}

/* One side of a ping-pong on p->word: odd values are ours to answer. */
static void pong(struct page *p, int shared)
{
	for (int i = 0; i < rounds; i++) {
		uint32_t v;

		while ((v = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE)) !=
		       2u * i + 1)
			fwait(&p->word, v, shared);
		__atomic_store_n(&p->word, 2u * i + 2, __ATOMIC_RELEASE);
		fwake(&p->word, shared);
	}
}

static void ping(struct page *p, int shared, double *out)
{
	for (int i = 0; i < rounds; i++) {
		double t0 = now_us();
		uint32_t v;

		__atomic_store_n(&p->word, 2u * i + 1, __ATOMIC_RELEASE);
		fwake(&p->word, shared);
		while ((v = __atomic_load_n(&p->word, __ATOMIC_ACQUIRE)) !=
		       2u * i + 2)
			fwait(&p->word, v, shared);
		out[i] = now_us() - t0;
	}
}

static void *pong_thread(void *arg)
{
	pin(cpu[0]);
	pong(arg, 0);
	return NULL;
}

/*
 * Rounds of a ping-pong on cpu[0] with a process (thread 0) or a thread
 * of ours (thread 1): the samples go into the page after the word.
 */
static void switch_round(int thread)
{
	struct page *p = page_new();
	pthread_t t;
	pid_t kid = 0;

	pin(cpu[0]);
	if (thread) {
		if (pthread_create(&t, NULL, pong_thread, p)) {
			fprintf(stderr, "sched_floor: no thread\n");
			exit(2);
		}
	} else if ((kid = fork_or_die()) == 0) {
		pong(p, 1);
		_exit(0);
	}
	ping(p, !thread, p->t);
	if (thread)
		pthread_join(t, NULL);
	else
		waitpid(kid, NULL, 0);
	report(thread ? "switch_thread" : "switch_proc", p->t, rounds);
	page_free(p);
}

/*
 * A wake across CPUs: every 200 us the waker (on cpu[0]) stamps the
 * time and wakes a process asleep on cpu[1], which records how long it
 * took to run; with `busy`, a third process computes on cpu[1] all the
 * while.
 */
static void wake(int busy)
{
	struct page *p = page_new();
	pid_t hog = 0, kid;

	if (busy) {
		hog = fork_or_die();
		if (hog == 0) {
			volatile unsigned long x = 0;

			pin(cpu[1]);
			for (;;)
				x++;
		}
	}
	kid = fork_or_die();
	if (kid == 0) {
		pin(cpu[1]);
		for (int i = 0; i < rounds; i++) {
			uint32_t v;

			while ((v = __atomic_load_n(&p->word,
						    __ATOMIC_ACQUIRE)) !=
			       2u * i + 1)
				fwait(&p->word, v, 1);
			p->t[i] = now_us() - p->t[i];
			__atomic_store_n(&p->word, 2u * i + 2,
					 __ATOMIC_RELEASE);
		}
		_exit(0);
	}
	pin(cpu[0]);
	for (int i = 0; i < rounds; i++) {
		usleep(200);
		p->t[i] = now_us();
		__atomic_store_n(&p->word, 2u * i + 1, __ATOMIC_RELEASE);
		fwake(&p->word, 1);
		while (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) !=
		       2u * i + 2)
			;
	}
	waitpid(kid, NULL, 0);
	if (hog) {
		kill(hog, SIGKILL);
		waitpid(hog, NULL, 0);
	}
	report(busy ? "wake_busy" : "wake_idle", p->t, rounds);
	page_free(p);
}

static void syscall_cost(void)
{
	enum { N = 200000 };
	double t0 = now_us(), per;

	for (int i = 0; i < N; i++)
		syscall(SYS_getppid);
	per = (now_us() - t0) / N;
	print_row("syscall", per, per);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--csv")) {
			csv = 1;
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			if (sscanf(argv[++i], "%d,%d", &cpu[0], &cpu[1]) != 2) {
				fprintf(stderr, "sched_floor: -c CPU0,CPU1\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: sched_floor [-n ROUNDS] "
					"[-c CPU0,CPU1] [--csv]\n");
			return 2;
		}
	}
	if (rounds < 10) {
		fprintf(stderr, "sched_floor: at least 10 rounds\n");
		return 2;
	}
	if (!csv)
		printf("floor,what,p50_us,p90_us\n");
	syscall_cost();
	switch_round(0);
	switch_round(1);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		wake(0);
		wake(1);
	}
	return 0;
}
