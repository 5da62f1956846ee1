/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * request.c - request-based operations (rmad_rput, rmad_rget,
 * rmad_raccumulate, rmad_rget_accumulate) and their completion
 * (rmad_wait, rmad_test, the all/any forms, rmad_request_free).
 *
 * A request completes when its op is complete at the origin: for rput
 * and raccumulate the origin buffer may be reused, for rget and
 * rget_accumulate the result is here.  An op on a same-node target is
 * done in place, so its request is complete when the call returns.  An
 * op for the agent goes in an element the client keeps (RMAD_OPF_KEEP);
 * the agent writes the op's status there when it completes, and bumps
 * the client's RMAD_CNT_LOCAL counter, which is what a waiter sleeps on:
 * one futex for every request, never one each.
 *
 * Requests hold at most REQ_KEEP_MAX elements at once.  Before another
 * op takes one, completed requests give theirs back (their status moves
 * into the request), and if none has completed yet the call waits for
 * one: the agent completes ops on its own, so this never waits on the
 * application.  Any number of requests may thus be in flight while the
 * element pool stays free for everything else.
 */
#include <pthread.h>
#include <stdlib.h>

#include "atomics.h"
#include "counter.h"
#include "handle.h"
#include "internal.h"
#include "log.h"

#define REQ_MAGIC	0x72657175u	/* "requ" */
#define REQ_KEEP_MAX	64

struct rmad_request_s {
	uint32_t magic;
	uint32_t idx;			/* the kept element, or RMAD_NIL */
	int status;
	int done;
	int orphan;			/* freed by the application while
					 * its op was in flight */
	uintptr_t handle;
	struct rmad_request_s *prev, *next;	/* requests with an element */
	/* what its op needs until it completes (a typed op's packed
	 * origin and target type): let go when it is reaped */
	void *tmp;
	struct rmad_type_s *ty;
};

static struct handle_table req_handles = HANDLE_TABLE_INIT(HANDLE_TAG_REQ);
static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rmad_request_s *kept;	/* requests holding an element */
static int nkept;

static void unlink_kept(struct rmad_request_s *rq)
{
	if (rq->prev)
		rq->prev->next = rq->next;
	else
		kept = rq->next;
	if (rq->next)
		rq->next->prev = rq->prev;
	rq->prev = rq->next = NULL;
	nkept--;
}

/* Has rq's op completed?  If so its status moves in and its element
 * goes back.  Under req_lock. */
static int reap(struct rmad_client *c, struct rmad_request_s *rq)
{
	struct rmad_op_elem *e;
	int32_t st;

	if (__atomic_load_n(&rq->done, __ATOMIC_RELAXED))
		return 1;
	e = rmad_shm_op_at(c->seg, c->hdr, rq->idx);
	st = __atomic_load_n(&e->status, __ATOMIC_ACQUIRE);
	if (st > 0)
		return 0;
	rq->status = st >= RMAD_ERR_LAST ? st : RMAD_ERR_INTERNAL;
	/* release: another thread's req_done() then sees the status */
	__atomic_store_n(&rq->done, 1, __ATOMIC_RELEASE);
	rmad_op_free(c, rq->idx);
	rq->idx = RMAD_NIL;
	unlink_kept(rq);
	free(rq->tmp);
	rq->tmp = NULL;
	if (rq->ty)
		rmad_type_release(rq->ty);
	rq->ty = NULL;
	if (rq->orphan) {
		rq->magic = 0;
		free(rq);
	}
	return 1;
}

/* Every kept element whose op completed goes back.  Under req_lock. */
static void reap_all(struct rmad_client *c)
{
	struct rmad_request_s *rq = kept, *nx;

	for (; rq; rq = nx) {
		nx = rq->next;
		reap(c, rq);
	}
}

int rmad_req_room(struct rmad_client *c)
{
	int err = 0;

	pthread_mutex_lock(&req_lock);
	reap_all(c);
	while (nkept >= REQ_KEEP_MAX && !err) {
		uint64_t seen = rmad_counter_read(c->me, RMAD_CNT_LOCAL);

		reap_all(c);
		if (nkept < REQ_KEEP_MAX)
			break;
		err = rmad_counter_wait(c->me, RMAD_CNT_LOCAL, seen + 1,
					rmad_spin_us(c), rmad_agent_gone,
					c);
	}
	pthread_mutex_unlock(&req_lock);
	return err;
}

void rmad_req_track(struct rmad_client *c, struct rmad_request_s *rq,
		    uint32_t idx)
{
	(void)c;
	pthread_mutex_lock(&req_lock);
	rq->idx = idx;
	__atomic_store_n(&rq->done, 0, __ATOMIC_RELAXED);
	rq->next = kept;
	rq->prev = NULL;
	if (kept)
		kept->prev = rq;
	kept = rq;
	nkept++;
	pthread_mutex_unlock(&req_lock);
}

/* ---------------------------------------------------------- creation */

static struct rmad_request_s *req_new(void)
{
	struct rmad_request_s *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	rq->magic = REQ_MAGIC;
	rq->idx = RMAD_NIL;
	rq->done = 1;		/* until an element is kept for it */
	if (handle_new(&req_handles, rq, &rq->handle)) {
		free(rq);
		return NULL;
	}
	return rq;
}

/* The op's call returned err: hand the request out, or drop it. */
static int req_out(struct rmad_request_s *rq, int err, rmad_request_t *req)
{
	if (err) {
		/* nothing was kept: a failed call keeps no element */
		handle_free(&req_handles, rq->handle);
		rq->magic = 0;
		free(rq);
		return err;
	}
	*req = (rmad_request_t)rq->handle;
	return 0;
}

int rmad_rput(const void *origin, int ocount, rmad_datatype_t otype,
	      int target, size_t tdisp, int tcount, rmad_datatype_t ttype,
	      rmad_win_t win, rmad_request_t *req)
{
	struct rmad_request_s *rq;

	if (!req)
		return RMAD_ERR_ARG;
	rq = req_new();
	if (!rq)
		return RMAD_ERR_NOMEM;
	return req_out(rq, rmad_put_req(origin, ocount, otype, target, tdisp,
					tcount, ttype, rmad_win_get(win), rq),
		       req);
}

int rmad_rget(void *origin, int ocount, rmad_datatype_t otype, int target,
	      size_t tdisp, int tcount, rmad_datatype_t ttype, rmad_win_t win,
	      rmad_request_t *req)
{
	struct rmad_request_s *rq;

	if (!req)
		return RMAD_ERR_ARG;
	rq = req_new();
	if (!rq)
		return RMAD_ERR_NOMEM;
	return req_out(rq, rmad_get_req(origin, ocount, otype, target, tdisp,
					tcount, ttype, rmad_win_get(win), rq),
		       req);
}

int rmad_raccumulate(const void *origin, int ocount, rmad_datatype_t otype,
		     int target, size_t tdisp, int tcount,
		     rmad_datatype_t ttype, rmad_op_t op, rmad_win_t win,
		     rmad_request_t *req)
{
	struct rmad_request_s *rq;

	if (!req)
		return RMAD_ERR_ARG;
	rq = req_new();
	if (!rq)
		return RMAD_ERR_NOMEM;
	return req_out(rq, rmad_accumulate_req(origin, ocount, otype, target,
					       tdisp, tcount, ttype, op,
					       rmad_win_get(win), rq), req);
}

int rmad_rget_accumulate(const void *origin, int ocount,
			 rmad_datatype_t otype, void *result, int rcount,
			 rmad_datatype_t rtype, int target, size_t tdisp,
			 int tcount, rmad_datatype_t ttype, rmad_op_t op,
			 rmad_win_t win, rmad_request_t *req)
{
	struct rmad_request_s *rq;

	if (!req)
		return RMAD_ERR_ARG;
	rq = req_new();
	if (!rq)
		return RMAD_ERR_NOMEM;
	return req_out(rq, rmad_get_accumulate_req(origin, ocount, otype,
						   result, rcount, rtype,
						   target, tdisp, tcount,
						   ttype, op, rmad_win_get(win),
						   rq), req);
}

/* -------------------------------------------------------- completion */

static struct rmad_request_s *req_get(rmad_request_t h)
{
	struct rmad_request_s *rq = handle_get(&req_handles, (uintptr_t)h);

	return rq && __atomic_load_n(&rq->magic, __ATOMIC_RELAXED) ==
		     REQ_MAGIC ? rq : NULL;
}

/* A completed request ends: its status, and the handle is nulled. */
static int req_end(struct rmad_request_s *rq, rmad_request_t *req)
{
	int st = rq->status;

	handle_free(&req_handles, rq->handle);
	rq->magic = 0;
	free(rq);
	*req = RMAD_REQUEST_NULL;
	return st;
}

/* Is request rq complete?  (Reaped if its op is.) */
static int req_done(struct rmad_request_s *rq)
{
	int d;

	if (__atomic_load_n(&rq->done, __ATOMIC_ACQUIRE))
		return 1;
	pthread_mutex_lock(&req_lock);
	d = reap(&rmad_cl, rq);
	pthread_mutex_unlock(&req_lock);
	return d;
}

/* Sleep until an op of this client may have completed since `seen`. */
static int req_sleep(uint64_t seen)
{
	struct rmad_client *c = &rmad_cl;

	return rmad_counter_wait(c->me, RMAD_CNT_LOCAL, seen + 1,
				 rmad_spin_us(c), rmad_agent_gone, c);
}

/* ------------------------------------------------ internal waits */

struct rmad_request_s *rmad_req_internal(void)
{
	struct rmad_request_s *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	rq->magic = REQ_MAGIC;
	rq->idx = RMAD_NIL;
	rq->done = 1;
	return rq;
}

void rmad_req_hold(struct rmad_request_s *rq, void *tmp,
		   struct rmad_type_s *ty, int orphan)
{
	rq->tmp = tmp;
	rq->ty = ty;
	rq->orphan = orphan;
}

int rmad_req_wait_internal(struct rmad_request_s *rq)
{
	int st = 0;

	for (;;) {
		uint64_t seen = rmad_counter_read(rmad_cl.me, RMAD_CNT_LOCAL);

		if (req_done(rq)) {
			st = rq->status;
			break;
		}
		st = req_sleep(seen);
		if (st) {
			/* the agent is gone: the element stays with it */
			pthread_mutex_lock(&req_lock);
			if (rq->idx != RMAD_NIL)
				unlink_kept(rq);
			pthread_mutex_unlock(&req_lock);
			break;
		}
	}
	rq->magic = 0;
	free(rq);
	return st;
}

int rmad_test(rmad_request_t *req, int *done)
{
	struct rmad_request_s *rq;

	if (!req || !done || !(rq = req_get(*req)))
		return RMAD_ERR_ARG;
	*done = req_done(rq);
	if (!*done)
		return rmad_agent_gone(&rmad_cl);
	return req_end(rq, req);
}

int rmad_wait(rmad_request_t *req)
{
	struct rmad_request_s *rq;

	if (!req || !(rq = req_get(*req)))
		return RMAD_ERR_ARG;
	for (;;) {
		uint64_t seen = rmad_counter_read(rmad_cl.me, RMAD_CNT_LOCAL);
		int err;

		if (req_done(rq))
			return req_end(rq, req);
		err = req_sleep(seen);
		if (err)
			return err;
	}
}

/* Null entries are skipped, as in MPI; a garbage one is an error. */
static int check_all(int n, const rmad_request_t *reqs)
{
	if (n < 0 || (n && !reqs))
		return RMAD_ERR_ARG;
	for (int i = 0; i < n; i++)
		if (reqs[i] != RMAD_REQUEST_NULL && !req_get(reqs[i]))
			return RMAD_ERR_ARG;
	return 0;
}

int rmad_waitall(int n, rmad_request_t *reqs)
{
	int err = check_all(n, reqs), first = 0;

	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		if (reqs[i] == RMAD_REQUEST_NULL)
			continue;
		err = rmad_wait(&reqs[i]);
		if (err && !first)
			first = err;
		if (err == RMAD_ERR_AGENT)
			break;
	}
	return first;
}

int rmad_testall(int n, rmad_request_t *reqs, int *done)
{
	int err = check_all(n, reqs), first = 0;

	if (err)
		return err;
	if (!done)
		return RMAD_ERR_ARG;
	*done = 1;
	for (int i = 0; i < n; i++)
		if (reqs[i] != RMAD_REQUEST_NULL && !req_done(req_get(reqs[i])))
			*done = 0;
	if (!*done)
		return rmad_agent_gone(&rmad_cl);
	/* all complete: all end */
	for (int i = 0; i < n; i++) {
		if (reqs[i] == RMAD_REQUEST_NULL)
			continue;
		err = req_end(req_get(reqs[i]), &reqs[i]);
		if (err && !first)
			first = err;
	}
	return first;
}

int rmad_testany(int n, rmad_request_t *reqs, int *index, int *done)
{
	int err = check_all(n, reqs), active = 0;

	if (err)
		return err;
	if (!index || !done)
		return RMAD_ERR_ARG;
	*index = -1;
	*done = 0;
	for (int i = 0; i < n; i++) {
		struct rmad_request_s *rq;

		if (reqs[i] == RMAD_REQUEST_NULL)
			continue;
		active = 1;
		rq = req_get(reqs[i]);
		if (req_done(rq)) {
			*index = i;
			*done = 1;
			return req_end(rq, &reqs[i]);
		}
	}
	if (!active)
		*done = 1;	/* nothing to wait for: index stays -1 */
	return rmad_agent_gone(&rmad_cl);
}

int rmad_waitany(int n, rmad_request_t *reqs, int *index)
{
	int done = 0, err;

	if (!index)
		return RMAD_ERR_ARG;
	for (;;) {
		uint64_t seen = rmad_counter_read(rmad_cl.me, RMAD_CNT_LOCAL);

		err = rmad_testany(n, reqs, index, &done);
		if (err || done)
			return err;
		err = req_sleep(seen);
		if (err)
			return err;
	}
}

int rmad_request_free(rmad_request_t *req)
{
	struct rmad_request_s *rq;

	if (!req || !(rq = req_get(*req)))
		return RMAD_ERR_ARG;
	if (req_done(rq)) {
		req_end(rq, req);
		return 0;
	}
	/* in flight: it ends when its op does (reaped later) */
	pthread_mutex_lock(&req_lock);
	handle_free(&req_handles, rq->handle);
	if (!reap(&rmad_cl, rq))
		rq->orphan = 1;
	else {
		rq->magic = 0;
		free(rq);
	}
	pthread_mutex_unlock(&req_lock);
	*req = RMAD_REQUEST_NULL;
	return 0;
}
