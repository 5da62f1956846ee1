/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req.c - the MPI_Requests of request ops (MPI_Rput ...).
 *
 * Each is a generalized request (MPI_Grequest_start) whose rmad request
 * is kept in a table keyed by the MPI_Request.  The MPI_Wait and MPI_Test
 * families are intercepted: they complete the rmad requests among their
 * arguments first (rmad_wait/rmad_test, then MPI_Grequest_complete) and
 * then hand the whole array to MPI, so requests of both kinds mix in one
 * call.  With no request op in flight they cost one load.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "rmpi.h"

struct rq {
	MPI_Request m;
	rmad_request_t r;		/* NULL once completed */
	int err;			/* rmad's outcome */
	MPI_Win win;
	struct rq *next;		/* hash chain */
};

#define RTAB 4096
static struct rq *rtab[RTAB];
static pthread_mutex_t rlock = PTHREAD_MUTEX_INITIALIZER;
static int nlive;			/* entries in rtab */

static unsigned int rhash(MPI_Request m)
{
	uintptr_t v = rmpi_hword(m);

	return (unsigned int)((v >> 4) ^ (v >> 16)) & (RTAB - 1);
}

int rmpi_req_any(void)
{
	return __atomic_load_n(&nlive, __ATOMIC_ACQUIRE) > 0;
}

static int q_query(void *extra, MPI_Status *st)
{
	struct rq *q = extra;

	PMPI_Status_set_elements(st, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	st->MPI_ERROR = rmpi_errclass(q->err);
	return st->MPI_ERROR;
}

static int q_free(void *extra)
{
	free(extra);
	return MPI_SUCCESS;
}

static int q_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;		/* RMA requests are not cancelled */
}

int rmpi_req_new(struct mwin *m, rmad_request_t rr, MPI_Request *out)
{
	struct rq *q = calloc(1, sizeof(*q));
	unsigned int h;

	if (!q) {
		rmad_request_free(&rr);
		return RMAD_ERR_NOMEM;
	}
	q->r = rr;
	q->win = m->handle;
	if (PMPI_Grequest_start(q_query, q_free, q_cancel, q, out) !=
	    MPI_SUCCESS) {
		rmad_request_free(&rr);
		free(q);
		return RMAD_ERR_INTERNAL;
	}
	q->m = *out;
	h = rhash(*out);
	pthread_mutex_lock(&rlock);
	q->next = rtab[h];
	rtab[h] = q;
	__atomic_store_n(&nlive, nlive + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rlock);
	return 0;
}

/* Take q out of the table (the caller completes it). */
static struct rq *take(MPI_Request m)
{
	struct rq **pp, *q = NULL;

	if (!rmpi_req_any() || m == MPI_REQUEST_NULL)
		return NULL;
	pthread_mutex_lock(&rlock);
	for (pp = &rtab[rhash(m)]; *pp; pp = &(*pp)->next)
		if ((*pp)->m == m) {
			q = *pp;
			*pp = q->next;
			__atomic_store_n(&nlive, nlive - 1, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&rlock);
	return q;
}

static struct rq *find(MPI_Request m)
{
	struct rq *q;

	if (!rmpi_req_any() || m == MPI_REQUEST_NULL)
		return NULL;
	pthread_mutex_lock(&rlock);
	for (q = rtab[rhash(m)]; q && q->m != m; q = q->next)
		;
	pthread_mutex_unlock(&rlock);
	return q;
}

/* Wait for m's rmad request if it is one; MPI then sees it complete. */
static void wait_one(MPI_Request m)
{
	struct rq *q = take(m);

	if (!q)
		return;
	q->err = rmad_wait(&q->r);
	PMPI_Grequest_complete(m);	/* q is MPI's now (q_free) */
}

/* Test m's rmad request; complete it for MPI when done.  1: not ours or
 * done. */
static int test_one(MPI_Request m)
{
	struct rq *q = find(m);
	int done = 0, err;

	if (!q)
		return 1;
	err = rmad_test(&q->r, &done);
	if (!err && !done)
		return 0;
	if (take(m) != q)
		return 1;		/* another thread completed it */
	q->err = err;
	PMPI_Grequest_complete(m);
	return 1;
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
	if (rmpi_req_any() && req)
		wait_one(*req);
	return PMPI_Wait(req, st);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
	if (rmpi_req_any() && req)
		test_one(*req);
	return PMPI_Test(req, flag, st);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
	if (rmpi_req_any() && reqs)
		for (int i = 0; i < n; i++)
			wait_one(reqs[i]);
	return PMPI_Waitall(n, reqs, sts);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	if (rmpi_req_any() && reqs)
		for (int i = 0; i < n; i++)
			test_one(reqs[i]);
	return PMPI_Testall(n, reqs, flag, sts);
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag,
		MPI_Status *st)
{
	if (rmpi_req_any() && reqs)
		for (int i = 0; i < n; i++)
			if (find(reqs[i]) && test_one(reqs[i]))
				break;
	return PMPI_Testany(n, reqs, idx, flag, st);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outn, int idx[],
		 MPI_Status sts[])
{
	if (rmpi_req_any() && reqs)
		for (int i = 0; i < n; i++)
			test_one(reqs[i]);
	return PMPI_Testsome(n, reqs, outn, idx, sts);
}

/* Any of reqs holds an rmad request still in flight. */
static int ours(int n, const MPI_Request reqs[])
{
	if (!rmpi_req_any() || !reqs)
		return 0;
	for (int i = 0; i < n; i++)
		if (find(reqs[i]))
			return 1;
	return 0;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
	int flag = 0, rc;

	if (!ours(n, reqs))
		return PMPI_Waitany(n, reqs, idx, st);
	/* both kinds progress: ours by rmad_test, MPI's by MPI_Testany */
	for (;;) {
		rc = MPI_Testany(n, reqs, idx, &flag, st);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		if (!ours(n, reqs))
			return PMPI_Waitany(n, reqs, idx, st);
		sched_yield();
	}
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outn, int idx[],
		 MPI_Status sts[])
{
	int rc;

	if (!ours(n, reqs))
		return PMPI_Waitsome(n, reqs, outn, idx, sts);
	for (;;) {
		rc = MPI_Testsome(n, reqs, outn, idx, sts);
		if (rc != MPI_SUCCESS || *outn != 0)
			return rc;
		if (!ours(n, reqs))
			return PMPI_Waitsome(n, reqs, outn, idx, sts);
		sched_yield();
	}
}

int MPI_Request_free(MPI_Request *req)
{
	struct rq *q = req ? take(*req) : NULL;

	if (q) {
		/* the user gave it up: rmad forgets it (the op still
		 * completes, as flush and unlock will see) */
		rmad_request_free(&q->r);
		PMPI_Grequest_complete(*req);
	}
	return PMPI_Request_free(req);
}
