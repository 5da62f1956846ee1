/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_patterns.c - three textbook MPI RMA patterns, written as any MPI
 * user would, with nothing of rmad in them (t/mpi.sh runs them under
 * plain Open MPI and under rmad-run --mpi):
 *
 *   1. a distributed counter: MPI_Fetch_and_op on rank 0, lock_all;
 *   2. a 1-D Jacobi halo exchange with MPI_Win_fence, checked against
 *      the same iteration done serially on every rank;
 *   3. a work-stealing queue: every rank's tasks sit in its window, and
 *      a task is claimed by MPI_Fetch_and_op on the owner's head index,
 *      by the owner first and then by thieves; each task runs once;
 *   4. with MPI_THREAD_MULTIPLE: four threads per rank draw tickets from
 *      the counter at once, in one lock_all epoch.
 *
 * Rank 0 prints TAP.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, ntest, nfail;

static void ok(int cond, const char *name)
{
	int all = 0;

	MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	ntest++;
	nfail += !all;
	if (me == 0)
		printf("%sok %d - %s\n", all ? "" : "not ", ntest, name);
	fflush(stdout);
}

static void counter(void)
{
	long *c, one = 1, got, total = 0, sum = 0;
	const int k = 200;
	MPI_Win w;

	MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &c, &w);
	*c = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	for (int i = 0; i < k; i++) {
		MPI_Fetch_and_op(&one, &got, MPI_LONG, 0, 0, MPI_SUM, w);
		MPI_Win_flush(0, w);
		sum += got;
	}
	MPI_Win_unlock_all(w);
	MPI_Barrier(MPI_COMM_WORLD);
	/* the tickets 0 .. k*np-1 were handed out once each */
	MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	long n = (long)k * np;
	ok(total == n * (n - 1) / 2, "distributed counter: every ticket once");
	MPI_Win_free(&w);
}

static void halo(void)
{
	enum { L = 16, STEPS = 20 };
	int n = L * np, good = 1;
	double *u, *next, *ref = malloc(sizeof(double) * (size_t)(n + 2));
	double *rnext = malloc(sizeof(double) * (size_t)(n + 2));
	MPI_Win w;

	/* my cells are u[1..L]; u[0] and u[L+1] are ghosts */
	MPI_Win_allocate((L + 2) * sizeof(double), sizeof(double),
			 MPI_INFO_NULL, MPI_COMM_WORLD, &u, &w);
	next = malloc(sizeof(double) * (L + 2));
	for (int i = 0; i < n + 2; i++)
		ref[i] = (i * 37 % 11) + (i == 0 || i == n + 1 ? 0 : 1);
	ref[0] = ref[n + 1] = 0;
	for (int i = 0; i < L + 2; i++)
		u[i] = ref[me * L + i];
	for (int s = 0; s < STEPS; s++) {
		MPI_Win_fence(0, w);
		if (me > 0)	/* my first cell is my left's right ghost */
			MPI_Put(&u[1], 1, MPI_DOUBLE, me - 1, L + 1, 1,
				MPI_DOUBLE, w);
		if (me < np - 1)
			MPI_Put(&u[L], 1, MPI_DOUBLE, me + 1, 0, 1,
				MPI_DOUBLE, w);
		MPI_Win_fence(0, w);
		for (int i = 1; i <= L; i++)
			next[i] = (u[i - 1] + u[i] + u[i + 1]) / 3.0;
		MPI_Win_fence(0, w);
		for (int i = 1; i <= L; i++)
			u[i] = next[i];
		/* the same step, serially */
		for (int i = 1; i <= n; i++)
			rnext[i] = (ref[i - 1] + ref[i] + ref[i + 1]) / 3.0;
		for (int i = 1; i <= n; i++)
			ref[i] = rnext[i];
	}
	MPI_Win_fence(0, w);
	for (int i = 1; i <= L; i++)
		good &= u[i] == ref[me * L + i];
	ok(good, "halo exchange under fence: 20 Jacobi steps, exact");
	MPI_Win_free(&w);
	free(next);
	free(ref);
	free(rnext);
}

static void stealing(void)
{
	enum { T = 64 };
	/* window: [0] the head index, [1..T] my tasks' ids */
	long *q, one = 1, idx;
	int *done = calloc((size_t)(T * np), sizeof(int)), *all, good = 1;
	int ran = 0;
	MPI_Win w;

	MPI_Win_allocate((T + 1) * sizeof(long), sizeof(long), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &q, &w);
	q[0] = 0;
	for (int i = 0; i < T; i++)
		q[1 + i] = (long)me * T + i;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, w);
	for (int k = 0; k < np; k++) {
		int victim = (me + k) % np;	/* myself first */

		for (;;) {
			long task;

			MPI_Fetch_and_op(&one, &idx, MPI_LONG, victim, 0,
					 MPI_SUM, w);
			MPI_Win_flush(victim, w);
			if (idx >= T)
				break;
			MPI_Get(&task, 1, MPI_LONG, victim, 1 + idx, 1,
				MPI_LONG, w);
			MPI_Win_flush(victim, w);
			done[task]++;
			ran++;
		}
	}
	MPI_Win_unlock_all(w);
	all = calloc((size_t)(T * np), sizeof(int));
	MPI_Allreduce(done, all, T * np, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < T * np; i++)
		good &= all[i] == 1;
	ok(good, "work stealing with fetch_and_op: each task runs once");
	MPI_Win_free(&w);
	free(done);
	free(all);
	(void)ran;
}

enum { NTH = 4, KTH = 100 };
static MPI_Win tw;
static long tgot[NTH][KTH];

static void *drawer(void *arg)
{
	long one = 1, *got = tgot[(long)arg];

	for (int i = 0; i < KTH; i++) {
		MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, 0, MPI_SUM, tw);
		MPI_Win_flush(0, tw);
	}
	return NULL;
}

static void threads(void)
{
	long *c, *all = NULL;
	int good = 1, n = NTH * KTH;
	pthread_t th[NTH];

	MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &c, &tw);
	*c = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, tw);
	for (long t = 0; t < NTH; t++)
		pthread_create(&th[t], NULL, drawer, (void *)t);
	for (int t = 0; t < NTH; t++)
		pthread_join(th[t], NULL);
	MPI_Win_unlock_all(tw);
	if (me == 0)
		all = calloc((size_t)(n * np), sizeof(long));
	MPI_Gather(tgot, n, MPI_LONG, all, n, MPI_LONG, 0, MPI_COMM_WORLD);
	if (me == 0) {
		char *seen = calloc((size_t)(n * np), 1);

		for (int i = 0; i < n * np; i++) {
			if (all[i] < 0 || all[i] >= n * np || seen[all[i]])
				good = 0;
			else
				seen[all[i]] = 1;
		}
		free(seen);
		free(all);
	}
	ok(good, "MPI_THREAD_MULTIPLE: 4 threads a rank share the counter");
	MPI_Win_free(&tw);
}

int main(int argc, char **argv)
{
	int provided = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	counter();
	halo();
	stealing();
	if (provided == MPI_THREAD_MULTIPLE)
		threads();
	else if (me == 0)
		printf("# the MPI gives no MPI_THREAD_MULTIPLE: no thread test\n");
	if (me == 0)
		printf("1..%d\n", ntest);
	MPI_Finalize();
	return nfail ? 1 : 0;
}
