/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_halo.h - rmad-bench's application-shaped rows: a 2-D halo
 * exchange under fence (a subarray datatype at both ends), and the
 * overlap a request-based get gives a computing origin.  Included once,
 * by rmad-bench.c, after bench_async.h (compute) and bench_rows.h.
 */
#ifndef RMAD_BENCH_HALO_H
#define RMAD_BENCH_HALO_H

#define HALO_ITERS_MAX	200	/* fence epochs: every rank runs them all */

static double halo_val(int r, int i, int j, int g)
{
	return r * 1e6 + (double)i * g + j;
}

/*
 * halo: each rank's window holds an (n+2) x (n+2) grid of doubles, n =
 * size / 8.  In each fence epoch a rank puts its first inner row into its
 * right neighbour's bottom ghost row (contiguous) and its first inner
 * column into its left neighbour's right ghost column (a subarray type
 * at both ends), as a 2-D stencil on a ring of ranks does.  One sample is
 * one exchange, fence to fence; every rank checks its ghost cells.
 */
static int halo_row(size_t size, struct row *r)
{
	int n = (int)(size / 8), g = n + 2, rc = 0, done = 0, bad = 0;
	int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
	int warm = warmup_for(size), iters = iters_for(size);
	double *grid = (double *)wbase, sum = 0;
	btype_t ocol, tcol;

	if (n < 1 || (size_t)g * (size_t)g * 8 > win_bytes)
		return check_fail(r, "the halo's grid does not fit the window");
	if (iters > HALO_ITERS_MAX)
		iters = HALO_ITERS_MAX;
	for (int i = 0; i < g; i++)
		for (int j = 0; j < g; j++)
			grid[i * g + j] = i && j && i <= n && j <= n ?
					  halo_val(rank, i, j, g) : -1;
	if (b_column(n, 1, &ocol) || b_column(n, n + 1, &tcol))
		return check_fail(r, "cannot make the column types");
	rc = b_fence(BF_NOPRECEDE, win);
	for (int k = -warm; k < iters && !rc; k++) {
		double t0 = now();

		rc = b_xput(&grid[g + 1], n, B_DOUBLE, right,
			    ((size_t)(n + 1) * g + 1) * 8, n, B_DOUBLE, win);
		rc = rc ? rc : b_xput(grid, 1, ocol, left, 0, 1, tcol, win);
		rc = rc ? rc : b_fence(0, win);
		if (k >= 0)
			samples[done++] = now() - t0;
	}
	if (b_fence(BF_NOSUCCEED, win) && !rc)
		rc = -1;
	b_type_free(&ocol);
	b_type_free(&tcol);
	/* ghost row from the left neighbour, ghost column from the right */
	for (int j = 1; j <= n && !rc; j++)
		bad |= grid[(n + 1) * g + j] != halo_val(left, 1, j, g);
	for (int i = 1; i <= n && !rc; i++)
		bad |= grid[i * g + n + 1] != halo_val(right, i, 1, g);
	if (b_sum0(bad || rc, &sum))
		rc = -1;
	stats(r, samples, done, 1);
	if (r->p50 > 0)
		r->mbps = 2.0 * (double)size / r->p50;
	if (rc)
		return check_fail(r, "an RMA call failed");
	if (rank == 0 && sum > 0)
		return check_fail(r, "a ghost cell holds the wrong value");
	return 0;
}

/*
 * overlap: the origin starts an rget of size bytes inside lock_all,
 * computes C us without calling the library, then waits for the request
 * (the data has arrived).  The row with T_us 0 times rget + wait alone
 * (t_comm); the row with T_us C, C being that median, times the whole
 * (t_total).  The share of the transfer the computation hid is
 * (t_comm + C - t_total) / min(t_comm, C), printed after the rows.
 */
static int overlap_origin(size_t size, long tus, struct row *r)
{
	int warm = warmup_for(size), n = iters_for(size), done = 0, rc;
	double tstart;
	breq_t q;

	fill(sbuf, size, size + 11);
	rc = put_sync(sbuf, size, 0);
	rc = rc ? rc : b_lock_all(win);
	tstart = now();
	for (int k = -warm; k < n && !rc; k++) {
		double t0 = now();

		rc = b_rget(rbuf, (int)size, B_BYTE, target, 0, win, &q);
		if (!rc && tus > 0)
			compute(tus);
		rc = rc ? rc : b_req_wait(&q);
		if (k >= 0)
			samples[done++] = now() - t0;
		if (k >= 0 && now() - tstart > opt.max_time)
			break;
	}
	if (b_unlock_all(win) && !rc)
		rc = -1;
	stats(r, samples, done, 1);	/* p50: the time, no MB/s */
	if (rc)
		return check_fail(r, "an RMA call failed");
	if (memcmp(rbuf, sbuf, size))
		return check_fail(r, "the data got differs from the target's");
	return 0;
}

static int overlap_rows(size_t size)
{
	struct row a = { .test = "overlap", .mode = "flush", .size = size,
			 .t_us = 0, .ok = 1 };
	struct row b = a;
	struct meter m;
	double c = 0;
	int rc;

	rc = row_begin(&m);
	if (!rc && rank == origin)
		overlap_origin(size, 0, &a);
	rc = rc ? rc : row_end(&m, &a);
	/* C = t_comm, known to the origin (the others only wait) */
	c = a.p50 > 1 ? a.p50 : 1;
	b.t_us = (long)(c + 0.5);
	rc = rc ? rc : row_begin(&m);
	if (!rc && rank == origin)
		overlap_origin(size, b.t_us, &b);
	rc = rc ? rc : row_end(&m, &b);
	if (!rc && rank == origin && opt.fmt == FMT_TABLE && b.p50 > 0) {
		double hid = (a.p50 + (double)b.t_us - b.p50) /
			     (a.p50 < b.t_us ? a.p50 : (double)b.t_us);

		printf("# overlap %zu B: t_comm %.1f us, compute %ld us, "
		       "total %.1f us: %.0f%% of the transfer hidden\n", size,
		       a.p50, b.t_us, b.p50, 100.0 * (hid < 0 ? 0 : hid));
	}
	return rc;
}

#endif
