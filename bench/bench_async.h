/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_async.h - rmad-bench's rows that time progress and layouts: the
 * async rows (a target computing while the origin's epoch runs, in
 * lock, flush, fence and pscw modes) and the strided rows (a vector
 * datatype at the target).  Included once, by rmad-bench.c, after the
 * helpers they use (fill, put_sync, get_sync, check_fail...).
 */
#ifndef RMAD_BENCH_ASYNC_H
#define RMAD_BENCH_ASYNC_H

/* spin for us microseconds without calling the library */
static void compute(long us)
{
	double end = now() + us * 1e-6;
	volatile double x = 1;

	while (now() < end)
		for (int i = 0; i < 100; i++)
			x = x * 1.0000001 + 1e-9;
}

/*
 * The async rows' start, on every rank: the iteration count (from T
 * alone, so every rank agrees), the row's T and size, the row's meter
 * begun, and the origin's 8-byte counter at the target zeroed (its
 * status in *rc).  -1 if the row cannot begin.
 */
static int async_begin(long tus, struct row *r, struct meter *m, int *n,
		       int *rc)
{
	*n = (int)(opt.max_time * 1e6 / (tus + 200));
	if (*n > opt.iters)
		*n = opt.iters;
	if (*n < 3)
		*n = 3;
	r->t_us = tus;
	r->size = 8;
	if (row_begin(m))
		return -1;
	*rc = 0;
	if (rank == origin) {
		memset(rbuf, 0, 8);
		*rc = put_sync(rbuf, 8, acc_off());
	}
	return 0;
}

/*
 * Asynchronous progress: every iteration starts at a barrier; the target
 * then computes for T us with no library call while the origin times one
 * lock/acc/unlock (mode lock) or put+flush inside lock_all (mode flush).
 * The iteration count comes from T alone, so every rank agrees on it.
 */
/*
 * async in fence mode: the target computes T us between two fences while
 * the origin accumulates 8 bytes into it; the origin's epoch (its op and
 * the closing fence) takes T plus what the fence and the op cost on top.
 */
static int async_fence_row(long tus, struct row *r)
{
	int n, warm = 2, done = 0, rc = 0, rc2;
	int64_t one = 1;
	struct meter m;

	if (async_begin(tus, r, &m, &n, &rc))
		return -1;
	rc2 = b_barrier();
	if (rc2)
		return rc2;
	rc2 = b_fence(BF_NOPRECEDE, win);
	rc = rc ? rc : rc2;
	for (int k = -warm; k < n; k++) {
		double t0 = now();

		if (rank == target)
			compute(tus);
		else if (rank == origin && !rc)
			rc = b_acc(&one, 1, B_INT64, target, acc_off(), win);
		rc2 = b_fence(0, win);
		rc = rc ? rc : rc2;
		if (rank == origin && k >= 0)
			samples[done++] = now() - t0;
	}
	rc2 = b_fence(BF_NOSUCCEED, win);
	rc = rc ? rc : rc2;
	if (rank == origin) {
		stats(r, samples, done, 1);
		if (rc)
			check_fail(r, "an RMA call failed");
		else if (get_sync(rbuf, 8, acc_off()) ||
			 ((int64_t *)rbuf)[0] != n + warm)
			check_fail(r, "target data differs");
	}
	return row_end(&m, r);
}

/*
 * async in pscw mode: each iteration the target posts, meets the origin
 * at a barrier, computes T us and waits; the origin times its start,
 * 8-byte accumulate and complete, which with progress done for the
 * target need not wait for its computing.
 */
static int async_pscw_row(long tus, struct row *r)
{
	int n, warm = 2, done = 0, rc = 0, rc2;
	int64_t one = 1;
	bgroup_t peer;
	struct meter m;

	if (async_begin(tus, r, &m, &n, &rc))
		return -1;
	if ((rank == origin || rank == target) &&
	    b_group1(rank == origin ? target : origin, &peer))
		rc = -1;
	for (int k = -warm; k < n; k++) {
		if (rank == target && !rc)
			rc = b_post(peer, win);
		rc2 = b_barrier();
		if (rc2)
			return rc2;	/* the job is broken: stop */
		if (rank == target) {
			compute(tus);
			if (!rc)
				rc = b_wait(win);
		} else if (rank == origin) {
			double t0 = now();

			rc2 = b_start(peer, win);
			if (!rc2) {
				if (!rc)
					rc = b_acc(&one, 1, B_INT64, target,
						   acc_off(), win);
				rc2 = b_complete(win);
			}
			rc = rc ? rc : rc2;
			if (k >= 0)
				samples[done++] = now() - t0;
		}
	}
	if (rank == origin || rank == target)
		b_group_free(&peer);
	rc2 = b_barrier();	/* the target's last wait is over */
	rc = rc ? rc : rc2;
	if (rank == origin) {
		stats(r, samples, done, 1);
		if (rc)
			check_fail(r, "an RMA call failed");
		else if (get_sync(rbuf, 8, acc_off()) ||
			 ((int64_t *)rbuf)[0] != n + warm)
			check_fail(r, "target data differs");
	}
	return row_end(&m, r);
}

static int async_row(long tus, int lock_mode, struct row *r)
{
	int n, warm = 2, done = 0, rc = 0, rc2;
	int64_t one = 1;
	struct meter m;

	if (async_begin(tus, r, &m, &n, &rc))
		return -1;
	if (rank == origin && !lock_mode && !rc)
		rc = b_lock_all(win);
	for (int k = -warm; k < n; k++) {
		rc2 = b_barrier();
		if (rc2)
			return rc2;	/* the job is broken: stop */
		if (rank == target) {
			compute(tus);
		} else if (rank == origin && !rc) {
			double t0 = now();

			if (lock_mode) {
				rc = b_lock(target, win);
				rc = rc ? rc : b_acc(&one, 1, B_INT64, target,
						     acc_off(), win);
				rc = rc ? rc : b_unlock(target, win);
			} else {
				rc = b_put(&one, 1, B_INT64, target,
					   acc_off() + 8, win);
				rc = rc ? rc : b_flush(target, win);
			}
			if (k >= 0)
				samples[done++] = now() - t0;
		}
	}
	if (rank == origin) {
		if (!lock_mode && b_unlock_all(win) && !rc)
			rc = -1;
		stats(r, samples, done, 1);
		if (rc)
			check_fail(r, "an RMA call failed");
		else if (get_sync(rbuf, 16, acc_off()) ||
			 ((int64_t *)rbuf)[lock_mode ? 0 : 1] !=
			 (lock_mode ? n + warm : 1))
			check_fail(r, "target data differs");
	}
	return row_end(&m, r);
}

/*
 * Strided: n = size / 8 int64 from a contiguous origin buffer into (or
 * from) n blocks of 8 bytes at a stride of 16 in the target (a vector
 * type), op + flush inside one lock_all; size is the data moved.
 */
static int strided_origin(int t, size_t size, struct row *r)
{
	int warm = warmup_for(size), n = iters_for(size), done = 0, rc, nops = 0;
	int cnt = (int)(size / 8);
	int64_t *ones = (int64_t *)cbuf;
	btype_t vt;
	double tstart;

	if (cnt < 1)
		return check_fail(r, "strided sizes start at 8 bytes");
	if (b_vtype(cnt, &vt))
		return check_fail(r, "cannot make the vector type");
	fill(sbuf, size, size + 5);
	for (int i = 0; i < cnt; i++)
		ones[i] = 1;
	rc = b_lock_all(win);
	/* the target's starting state: sbuf's data, strided */
	rc = rc ? rc : b_vput(sbuf, cnt, vt, target, win);
	rc = rc ? rc : b_flush(target, win);
	tstart = now();
	for (int k = -warm; k < n && !rc; k++) {
		double t0 = now();

		if (t == T_VPUT)
			rc = b_vput(sbuf, cnt, vt, target, win);
		else if (t == T_VGET)
			rc = b_vget(rbuf, cnt, vt, target, win);
		else
			rc = b_vacc(ones, cnt, vt, target, win);
		nops++;
		rc = rc ? rc : b_flush(target, win);
		if (k >= 0)
			samples[done++] = now() - t0;
		if (k >= 0 && now() - tstart > opt.max_time)
			break;
	}
	/* what the target holds now, read back strided */
	memset(rbuf, 0, size);
	if (!rc)
		rc = b_vget(rbuf, cnt, vt, target, win);
	rc = rc ? rc : b_flush(target, win);
	if (b_unlock_all(win) && !rc)
		rc = -1;
	b_type_free(&vt);
	stats(r, samples, done, 1);
	if (r->p50 > 0)
		r->mbps = size / r->p50;
	if (rc)
		return check_fail(r, "an RMA call failed");
	if (t != T_VACC && memcmp(rbuf, sbuf, size))
		return check_fail(r, "strided data differs");
	if (t == T_VACC)
		for (int i = 0; i < cnt; i++)
			if (((uint64_t *)rbuf)[i] !=
			    ((uint64_t *)sbuf)[i] + (uint64_t)nops)
				return check_fail(r, "strided sums differ");
	return 0;
}

#endif
