/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad-bench.c - the one-sided benchmark suite: latency of every RMA op,
 * put/get bandwidth, message rate, post rate and asynchronous progress,
 * OSU-style (warm-up, then timed iterations, median and percentiles),
 * with the CPU time of the whole job (agents included) and a check of
 * the data every test moved.
 *
 * The same source is compiled twice: as rmad-bench against librmad, and
 * with BENCH_MPI defined as bench/mpi/mpi-bench against MPI-3 RMA (that
 * file only includes this one).  Only the small backend section below
 * differs, so both print the same rows and their numbers compare
 * directly.  Rank 0 is the origin, rank size-1 the target (on another
 * node when the ranks are split among nodes in blocks); rank 0 prints.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

#include "bench_backend.h"


/* ------------------------------------------------------------ options */

#define MAX_SIZE_LIMIT (4u << 20)
#define OPS_PER_FLUSH 64
#define MAX_SIZES 32
#define MAX_TS 16

enum { T_PUT, T_GET, T_ACC, T_GACC, T_FOP, T_CAS, T_PUT_BW, T_GET_BW, T_MR_1,
	T_MR_ALL, T_POST, T_ASYNC, T_VPUT, T_VGET, T_VACC, T_HALO, T_OVERLAP,
	T_MEM, T_WINS, T_ACCGET, T_NTESTS };

static const char *const test_names[T_NTESTS] = {
	"put", "get", "acc", "gacc", "fop", "cas", "put_bw", "get_bw", "mr_1",
	"mr_all", "post", "async", "vput", "vget", "vacc", "halo", "overlap",
	"mem", "wins", "accget"
};

#define MEM_WIN_SIZE 4096	/* bytes per rank of the mem test's window */

enum { FMT_TABLE, FMT_CSV, FMT_JSON };
enum { M_FLUSH, M_LOCK, M_FENCE, M_PSCW };	/* latency sync modes */

static struct {
	int tests[T_NTESTS];
	int mode_lock, mode_flush, mode_fence, mode_pscw;
	size_t sizes[MAX_SIZES];
	int nsizes;
	size_t min_size, max_size;
	long ts[MAX_TS];
	int nts;
	int iters, warmup;
	double max_time;
	int timeout;
	int fmt;
	int mean;		/* --mean: the p50 column holds the mean */
	const char *label;
} opt;

static int rank, nranks, origin, target;
static struct binfo info;
static bwin_t win;
static unsigned char *wbase;	/* window: data region, then acc region */
static size_t win_bytes;	/* its size */
static unsigned char *sbuf, *rbuf, *cbuf;	/* origin buffers */
static double *samples;
static int nfail;
static double total_cpu, total_wall;	/* over the rows, on rank 0 */
static int first_row = 1;
static int us_header;		/* the table's header has been printed */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG_NAME " [options]   (run with 2 or more ranks)\n"
"  -t, --tests LIST     comma list of put,get,acc,gacc,fop,cas,put_bw,\n"
"                       get_bw,mr_1,mr_all,post,async,vput,vget,vacc,halo,\n"
"                       overlap,mem,wins,accget or the groups lat,bw,mr,\n"
"                       strided (vput,vget,vacc), apps (halo,overlap),\n"
"                       all (default; all leaves out strided, apps, mem,\n"
"                       wins: --iters windows alive at once, the time to\n"
"                       make and free one, the memory per window, and\n"
"                       accget: an accumulate, flush_local, a get of its\n"
"                       bytes and flush, in one lock_all)\n"
"  -m, --mode LIST      sync modes: lock (an epoch per op), flush (op +\n"
"                       flush in one lock_all), fence (op + fence, every\n"
"                       rank fencing), pscw (target: post + wait, origin:\n"
"                       start + op + complete), both (lock,flush) or all\n"
"      --sync LIST      the same as --mode\n"
"  -s, --sizes LIST     message sizes (K and M suffixes), e.g. 8,4K,4M\n"
"      --min-size N     smallest size of the 1 B..4 MiB ladder (1)\n"
"      --max-size N     largest size of the ladder (4M)\n"
"  -T, --compute LIST   target compute times in us for async\n"
"                       (0,100,1000,10000)\n"
"  -w, --window FLAVOR  the window: allocate (default), create (over heap\n"
"                       memory), dynamic (heap memory attached) or\n"
"                       shared (every rank on one node)\n"
"  -i, --iters N        timed iterations (1000; a tenth above 64 KiB)\n"
"  -W, --warmup N       warm-up iterations (100; a tenth above 64 KiB)\n"
"      --max-time S     stop a row's timed loop after S seconds (2)\n"
"      --quick          few iterations and sizes: a smoke test\n"
"      --mean           report the mean, not the median, in the p50\n"
"                       column (below the clock's step: overheads)\n"
"      --csv, --json    machine-readable output (default: a table)\n"
"      --label NAME     name of this run in the output (" IMPL_NAME ")\n"
"      --timeout S      give up after S seconds in all (600; 0: never)\n"
"  -V, --version        print the version\n"
"  -h, --help           this text\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v < 1 || v > MAX_SIZE_LIMIT)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int set_test(const char *name)
{
	static const struct {
		const char *group;
		int first, last;
	} groups[] = {
		{ "lat", T_PUT, T_CAS }, { "bw", T_PUT_BW, T_GET_BW },
		{ "mr", T_MR_1, T_MR_ALL }, { "all", 0, T_ASYNC },
		{ "strided", T_VPUT, T_VACC }, { "apps", T_HALO, T_OVERLAP },
	};

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		if (!strcmp(name, groups[g].group)) {
			for (int t = groups[g].first; t <= groups[g].last; t++)
				opt.tests[t] = 1;
			return 0;
		}
	for (int t = 0; t < T_NTESTS; t++)
		if (!strcmp(name, test_names[t])) {
			opt.tests[t] = 1;
			return 0;
		}
	return -1;
}

/* split a comma list in place; calls fn on each item */
static int for_each_item(char *list, int (*fn)(const char *))
{
	char *save = NULL;

	for (char *s = strtok_r(list, ",", &save); s;
	     s = strtok_r(NULL, ",", &save))
		if (fn(s))
			return -1;
	return 0;
}

static int set_mode(const char *m)
{
	int all = !strcmp(m, "all"), both = all || !strcmp(m, "both");
	int lock = both || !strcmp(m, "lock");
	int flush = both || !strcmp(m, "flush");
	int fence = all || !strcmp(m, "fence");
	int pscw = all || !strcmp(m, "pscw");

	opt.mode_lock |= lock;
	opt.mode_flush |= flush;
	opt.mode_fence |= fence;
	opt.mode_pscw |= pscw;
	return lock || flush || fence || pscw ? 0 : -1;
}

static int add_size(const char *s)
{
	if (opt.nsizes == MAX_SIZES || parse_size(s, &opt.sizes[opt.nsizes]))
		return -1;
	opt.nsizes++;
	return 0;
}

static int add_t(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (opt.nts == MAX_TS || end == s || *end || v < 0 || v > 10000000)
		return -1;
	opt.ts[opt.nts++] = v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	int any_test = 0, quick = 0, iters = -1, warmup = -1;
	char *tests = NULL, *sizes = NULL, *ts = NULL;

	opt.mode_lock = opt.mode_flush = 1;
	opt.min_size = 1;
	opt.max_size = MAX_SIZE_LIMIT;
	opt.max_time = 2.0;
	opt.timeout = 600;
	opt.label = IMPL_NAME;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int used = 1;

		if (!strcmp(a, "-t") || !strcmp(a, "--tests"))
			tests = (char *)v;
		else if (!strcmp(a, "-m") || !strcmp(a, "--mode") ||
			 !strcmp(a, "--sync")) {
			if (!v)
				return -1;
			opt.mode_lock = opt.mode_flush = opt.mode_fence =
				opt.mode_pscw = 0;
			if (for_each_item((char *)v, set_mode))
				return -1;
		} else if (!strcmp(a, "-s") || !strcmp(a, "--sizes"))
			sizes = (char *)v;
		else if (!strcmp(a, "--min-size")) {
			if (!v || parse_size(v, &opt.min_size))
				return -1;
		} else if (!strcmp(a, "--max-size")) {
			if (!v || parse_size(v, &opt.max_size))
				return -1;
		} else if (!strcmp(a, "-T") || !strcmp(a, "--compute"))
			ts = (char *)v;
		else if (!strcmp(a, "-i") || !strcmp(a, "--iters"))
			iters = v ? atoi(v) : 0;
		else if (!strcmp(a, "-W") || !strcmp(a, "--warmup"))
			warmup = v ? atoi(v) : -1;
		else if (!strcmp(a, "-w") || !strcmp(a, "--window")) {
			int f = -1;

			for (int k = 0; v && k < 4; k++)
				if (!strcmp(v, bw_names[k]))
					f = k;
			if (f < 0)
				return -1;
			b_flavor = f;
		}
		else if (!strcmp(a, "--max-time"))
			opt.max_time = v ? atof(v) : 0;
		else if (!strcmp(a, "--timeout"))
			opt.timeout = v ? atoi(v) : -1;
		else if (!strcmp(a, "--label"))
			opt.label = v;
		else {
			used = 0;
			if (!strcmp(a, "--quick"))
				quick = 1;
			else if (!strcmp(a, "--csv"))
				opt.fmt = FMT_CSV;
			else if (!strcmp(a, "--mean"))
				opt.mean = 1;
			else if (!strcmp(a, "--json"))
				opt.fmt = FMT_JSON;
			else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
				return 1;
			else if (!strcmp(a, "-V") || !strcmp(a, "--version"))
				return 2;
			else
				return -1;
		}
		if (used) {
			if (!v)
				return -1;
			i++;
		}
	}
	if (tests) {
		char *dup = strdup(tests);
		int rc = dup ? for_each_item(dup, set_test) : -1;

		free(dup);
		if (rc)
			return -1;
	}
	for (int t = 0; t < T_NTESTS; t++)
		any_test |= opt.tests[t];
	if (!any_test)
		set_test("all");
	if (sizes) {
		char *dup = strdup(sizes);
		int rc = dup ? for_each_item(dup, add_size) : -1;

		free(dup);
		if (rc)
			return -1;
	} else if (quick) {
		static const size_t q[] = { 1, 8, 4096, 1 << 20 };

		for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
			if (q[k] >= opt.min_size && q[k] <= opt.max_size)
				opt.sizes[opt.nsizes++] = q[k];
	} else {
		for (size_t s = 1; s <= MAX_SIZE_LIMIT; s <<= 1)
			if (s >= opt.min_size && s <= opt.max_size)
				opt.sizes[opt.nsizes++] = s;
	}
	if (ts) {
		char *dup = strdup(ts);
		int rc = dup ? for_each_item(dup, add_t) : -1;

		free(dup);
		if (rc)
			return -1;
	} else if (quick) {
		opt.ts[0] = 0;
		opt.ts[1] = 1000;
		opt.nts = 2;
	} else {
		static const long d[] = { 0, 100, 1000, 10000 };

		for (int k = 0; k < 4; k++)
			opt.ts[k] = d[k];
		opt.nts = 4;
	}
	opt.iters = iters >= 0 ? iters : quick ? 10 : 1000;
	opt.warmup = warmup >= 0 ? warmup : quick ? 2 : 100;
	if (opt.iters < 1 || opt.warmup < 0 || opt.max_time <= 0 ||
	    opt.timeout < 0 || !opt.label || opt.nsizes == 0)
		return -1;
	return 0;
}

#include "bench_rows.h"


/* ------------------------------------------------------------ tests */

static void fill(unsigned char *b, size_t n, size_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 31 + seed * 7 + 1);
}

static int iters_for(size_t size)
{
	return size > 65536 ? (opt.iters + 9) / 10 : opt.iters;
}

static int warmup_for(size_t size)
{
	return size > 65536 ? (opt.warmup + 9) / 10 : opt.warmup;
}

static size_t acc_off(void)
{
	return MAX_SIZE_LIMIT;
}

/* outside any epoch: put n bytes of b at disp of the target, completed */
static int put_sync(const void *b, size_t n, size_t disp)
{
	int rc = b_lock(target, win);

	if (!rc)
		rc = b_put(b, (int)n, B_BYTE, target, disp, win);
	if (!rc)
		rc = b_unlock(target, win);
	return rc;
}

static int get_sync(void *b, size_t n, size_t disp)
{
	int rc = b_lock(target, win);

	if (!rc)
		rc = b_get(b, (int)n, B_BYTE, target, disp, win);
	if (!rc)
		rc = b_unlock(target, win);
	return rc;
}

static int check_fail(struct row *r, const char *what)
{
	fprintf(stderr, PROG_NAME ": %s %s size %zu: %s\n", r->test, r->mode,
		r->size, what);
	r->ok = 0;
	return -1;
}

/* accumulate element type and count for a size */
static void acc_shape(size_t size, btype_t *t, int *count, size_t *esz)
{
	if (size >= 8) {
		*t = B_INT64;
		*esz = 8;
	} else {
		*t = B_UINT8;
		*esz = 1;
	}
	*count = (int)(size / *esz);
}

/* is every element of the acc region equal to total (in its type)? */
static int acc_region_is(const unsigned char *b, size_t size, long total)
{
	if (size >= 8) {
		const int64_t *v = (const int64_t *)b;

		for (size_t i = 0; i < size / 8; i++)
			if (v[i] != total)
				return 0;
	} else {
		for (size_t i = 0; i < size; i++)
			if (b[i] != (unsigned char)total)
				return 0;
	}
	return 1;
}

/*
 * One latency row on the origin: op t of size bytes, lock mode (an epoch
 * per op) or flush mode (op+flush inside one lock_all).  Data checked.
 */
/*
 * One latency row: op t of size bytes, in sync mode M_LOCK (an epoch per
 * op), M_FLUSH (op + flush inside one lock_all) or M_FENCE (op + fence:
 * every rank runs this, the origin alone moves data).  Data checked.
 */
static int lat_origin(int t, int smode, size_t size, struct row *r)
{
	int lock_mode = smode == M_LOCK, fence = smode == M_FENCE;
	int pscw = smode == M_PSCW, coll = fence || pscw;
	bgroup_t peer;
	int me = rank == origin;
	int warm = warmup_for(size), n = iters_for(size), done = 0, rc = 0;
	int count = 0;
	btype_t at;
	size_t esz;
	int64_t one = 1, cmp, nv, res = 0;
	int64_t *ones = (int64_t *)cbuf;
	int missed = 0;			/* accget: gets that missed it */
	double tstart;

	acc_shape(size, &at, &count, &esz);
	if (t == T_FOP || t == T_CAS)
		size = 8;
	fill(sbuf, size, size);
	/* starting state of the target (set by the origin alone) */
	if (!me)
		;
	else if (t == T_GET)
		rc = put_sync(sbuf, size, 0);
	else if (t != T_PUT) {
		memset(rbuf, 0, size);
		rc = put_sync(rbuf, size, acc_off());
	}
	if (t == T_ACC || t == T_GACC || t == T_ACCGET) {
		if (esz == 8)
			for (int i = 0; i < count; i++)
				ones[i] = 1;
		else
			memset(cbuf, 1, size);
	}
	memset(rbuf, 0, size);
	if (coll) {
		/* the origin's set-up is done: everyone may fence, or the
		 * target post */
		int rc2 = b_barrier();

		if (rc || rc2)
			return rc2 ? rc2 : check_fail(r, "cannot set up the "
						      "target");
		if (fence)
			rc = b_fence(BF_NOPRECEDE, win);
		else if (!me && rank != target)
			return 0;	/* pscw: neither origin nor target */
		else
			rc = b_group1(me ? target : origin, &peer);
	} else if (rc) {
		return check_fail(r, "cannot set up the target");
	} else if (!lock_mode) {
		rc = b_lock_all(win);
	}
	tstart = now();
	/* fence, pscw: every rank runs every iteration, whatever happens */
	for (int k = -warm; k < n && (coll || !rc); k++) {
		double t0 = now();

		if (lock_mode)
			rc = b_lock(target, win);
		if (fence && (!me || rc)) {
			int rc2 = b_fence(0, win);

			rc = rc ? rc : rc2;
			continue;
		}
		if (pscw && !me) {	/* the target */
			int rc2 = b_post(peer, win);

			rc2 = rc2 ? rc2 : b_wait(win);
			rc = rc ? rc : rc2;
			continue;
		}
		if (pscw) {
			int rc2 = b_start(peer, win);

			if (rc2 || rc) {
				/* the target waits for a complete */
				rc = rc ? rc : rc2;
				if (!rc2)
					b_complete(win);
				continue;
			}
		}
		switch (t) {
		case T_PUT:
			rc = rc ? rc : b_put(sbuf, (int)size, B_BYTE, target,
					     0, win);
			break;
		case T_GET:
			rc = rc ? rc : b_get(rbuf, (int)size, B_BYTE, target,
					     0, win);
			break;
		case T_ACC:
			rc = rc ? rc : b_acc(cbuf, count, at, target,
					     acc_off(), win);
			break;
		case T_GACC:
			rc = rc ? rc : b_gacc(cbuf, rbuf, count, at, target,
					      acc_off(), win);
			break;
		case T_FOP:
			rc = rc ? rc : b_fop(&one, &res, target, acc_off(),
					     win);
			break;
		case T_CAS:
			cmp = k + warm;
			nv = cmp + 1;
			rc = rc ? rc : b_cas(&nv, &cmp, &res, target,
					     acc_off(), win);
			break;
		case T_ACCGET:
			/* ARMCI-MPI's blocking accumulate, then a get of
			 * its bytes: it must see the accumulate */
			rc = rc ? rc : b_acc(cbuf, count, at, target,
					     acc_off(), win);
			rc = rc ? rc : b_flush_local(target, win);
			rc = rc ? rc : b_get(rbuf, count, at, target,
					     acc_off(), win);
			break;
		}
		if (coll) {
			int rc2 = fence ? b_fence(0, win) : b_complete(win);

			rc = rc ? rc : rc2;
		} else if (!rc) {
			rc = lock_mode ? b_unlock(target, win) :
					 b_flush(target, win);
		}
		if (k >= 0)
			samples[done++] = now() - t0;
		/* the fetched value must be the count of earlier ops */
		if (!rc && (t == T_FOP || t == T_CAS) && res != k + warm) {
			check_fail(r, "fetched value out of sequence");
			if (coll)
				rc = -1;	/* synchronize on, moving nothing */
			else
				break;
		}
		/* counted, not stopped at: the row's time stays comparable
		 * with an agent that lets the get overtake */
		if (!rc && t == T_ACCGET &&
		    !acc_region_is(rbuf, size, k + warm + 1) && !missed++)
			check_fail(r, "the get missed the accumulate before it");
		/* (a fence or PSCW loop cannot stop early: both sides count) */
		if (!coll && k >= 0 && now() - tstart > opt.max_time)
			break;
	}
	if (pscw)
		b_group_free(&peer);
	if (coll) {
		if (fence && b_fence(BF_NOSUCCEED, win) && !rc)
			rc = -1;
		if (!me)
			return 0;
	} else if (!lock_mode && b_unlock_all(win) && !rc) {
		rc = -1;
	}
	stats(r, samples, done, 1);
	if (missed)
		fprintf(stderr, PROG_NAME ": accget size %zu: %d of %d gets "
			"missed the accumulate before them\n", size, missed,
			warm + done);
	if (rc)
		return check_fail(r, "an RMA call failed");
	/* check what the target holds, or what came back */
	switch (t) {
	case T_PUT:
		if (get_sync(rbuf, size, 0) || memcmp(rbuf, sbuf, size))
			return check_fail(r, "target data differs");
		break;
	case T_GET:
		if (memcmp(rbuf, sbuf, size))
			return check_fail(r, "fetched data differs");
		break;
	default:
		if (t == T_GACC &&
		    !acc_region_is(rbuf, size, warm + done - 1))
			return check_fail(r, "fetched accumulate differs");
		if (get_sync(rbuf, size, acc_off()) ||
		    !acc_region_is(rbuf, size, warm + done))
			return check_fail(r, "target accumulate differs");
	}
	(void)res;
	return 0;
}

/*
 * Bandwidth, message rate and post rate: inside one lock_all, windows of
 * OPS_PER_FLUSH ops then a flush.  Post rate times only the enqueues.
 */
static int window_origin(int t, size_t size, struct row *r)
{
	int warm = warmup_for(size), n = iters_for(size), done = 0, rc;
	double tstart;
	int per = OPS_PER_FLUSH;

	fill(sbuf, size, size + 3);
	if (t == T_GET_BW) {
		rc = put_sync(sbuf, size, 0);
		memset(rbuf, 0, size);
		if (rc)
			return check_fail(r, "cannot set up the target");
	}
	rc = b_lock_all(win);
	tstart = now();
	for (int k = -warm; k < n && !rc; k++) {
		double t0 = now(), t1;

		for (int j = 0; j < per && !rc; j++) {
			int tg = target;

			if (t == T_MR_ALL) {
				/* round robin over every rank but this one */
				tg = j % (nranks - 1);
				tg += tg >= origin;
			}
			if (t == T_GET_BW)
				rc = b_get(rbuf, (int)size, B_BYTE, tg, 0, win);
			else
				rc = b_put(sbuf, (int)size, B_BYTE, tg,
					   t == T_MR_ALL || t == T_MR_1 ?
					   (size_t)j * 8 : 0, win);
		}
		t1 = now();
		if (!rc)
			rc = t == T_MR_ALL ? b_flush_all(win) :
					     b_flush(target, win);
		if (t != T_POST)
			t1 = now();
		if (k >= 0)
			samples[done++] = t1 - t0;
		if (k >= 0 && now() - tstart > opt.max_time)
			break;
	}
	if (b_unlock_all(win) && !rc)
		rc = -1;
	stats(r, samples, done, per);
	if (r->p50 > 0) {
		if (t == T_PUT_BW || t == T_GET_BW)
			r->mbps = size / r->p50;	/* bytes/us = MB/s */
		else
			r->mops = 1 / r->p50;
	}
	if (rc)
		return check_fail(r, "an RMA call failed");
	if (t == T_GET_BW) {
		if (memcmp(rbuf, sbuf, size))
			return check_fail(r, "fetched data differs");
	} else if (t == T_PUT_BW || t == T_POST) {
		if (get_sync(rbuf, size, 0) || memcmp(rbuf, sbuf, size))
			return check_fail(r, "target data differs");
	} else if (get_sync(rbuf, (size_t)per * 8, 0)) {
		return check_fail(r, "cannot read the target back");
	} else {
		/* target got slots j with j % (nranks - 1) == its index */
		for (int j = 0; j < per; j++)
			if ((t == T_MR_1 || j % (nranks - 1) ==
			     target - (target > origin)) &&
			    memcmp(rbuf + j * 8, sbuf, 8))
				return check_fail(r, "target data differs");
	}
	return 0;
}

#include "bench_async.h"
#include "bench_halo.h"

/* ------------------------------------------------------------ memory */

/* the value of field (e.g. "VmRSS:") in a /proc file, in KiB; NAN if none */
static double proc_kib(const char *path, const char *field)
{
	char line[256];
	size_t n = strlen(field);
	double v = NAN;
	FILE *f = fopen(path, "r");

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n)) {
			v = strtod(line + n, NULL);
			break;
		}
	fclose(f);
	return v;
}

struct memsnap {
	double rss, hwm, pss, agent;	/* KiB; NAN: not measured */
};

static void mem_snap(struct memsnap *s)
{
	char path[64];

	s->rss = proc_kib("/proc/self/status", "VmRSS:");
	s->hwm = proc_kib("/proc/self/status", "VmHWM:");
	s->pss = proc_kib("/proc/self/smaps_rollup", "Pss:");
	s->agent = NAN;
	/* one rank per node counts its node's agent */
	if (info.local_rank == 0 && info.agent_pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/status",
			 info.agent_pid);
		s->agent = proc_kib(path, "VmRSS:");
	}
}

/* collective: gather v, print a mem row of its median, p90 and max */
static int mem_row_of(const char *mode, size_t size, double v, double *all,
		      double cpu, double wall, int ok)
{
	struct row r = { .test = test_names[T_MEM], .mode = mode,
			 .size = size, .t_us = -1, .ok = ok,
			 .cpu = cpu, .wall = wall };
	int n = 0, rc = b_gather0(v, all);

	if (rc || rank != 0)
		return rc;
	for (int i = 0; i < nranks; i++)
		if (!isnan(all[i]))
			all[n++] = all[i];
	if (n == 0)
		return 0;	/* nobody measured it (no agent, no Pss) */
	qsort(all, (size_t)n, sizeof(*all), cmp_double);
	r.iters = n;
	r.p50 = all[(n - 1) / 2];
	r.p90 = all[(int)((n - 1) * 0.90)];
	r.p99 = all[n - 1];
	if (!r.ok)
		nfail++;
	print_row(&r);
	return 0;
}

static int mem_row(const char *mode, double v, double *all, double cpu,
		   double wall, int ok)
{
	return mem_row_of(mode, MEM_WIN_SIZE, v, all, cpu, wall, ok);
}

/*
 * Per-process memory of a window over all ranks (BENCHMARKS.md P9):
 * each rank's RSS before allocating a MEM_WIN_SIZE window, after it, and
 * after one lock_all epoch that puts 8 bytes to every rank (so per-target
 * state made on first use counts too); its Pss and peak RSS after the
 * epoch; and the RSS of each node's agent.  Growth in KiB, nothing
 * subtracted: the window's own bytes are in it.
 */
static int mem_test(void)
{
	struct memsnap s0, s1, s2;
	struct meter m;
	bwin_t w;
	int64_t *base = NULL, v = rank + 1;
	double *all, cpu = 0, bad = 0, wall;
	int rc, rc2, ok = 1;

	all = calloc((size_t)nranks, sizeof(*all));
	if (!all)
		return -1;
	rc = row_begin(&m);
	mem_snap(&s0);
	rc = rc ? rc : b_win_alloc(MEM_WIN_SIZE, &base, &w);
	if (rc) {
		free(all);
		return rc;
	}
	memset(base, 0, MEM_WIN_SIZE);
	rc = b_barrier();
	mem_snap(&s1);
	/* rank r puts r + 1 into slot r of every window */
	rc = rc ? rc : b_lock_all(w);
	for (int t = 0; t < nranks && !rc; t++)
		rc = b_put(&v, 1, B_INT64, t,
			   (size_t)rank % (MEM_WIN_SIZE / 8) * 8, w);
	rc2 = rc ? -1 : b_unlock_all(w);
	rc = rc ? rc : rc2;
	rc2 = b_barrier();
	rc = rc ? rc : rc2;
	mem_snap(&s2);
	wall = now() - m.wall0;
	/* what this rank's window holds, read inside an epoch on itself */
	if (!rc && !b_lock(rank, w)) {
		for (int r = 0; r < nranks && r < MEM_WIN_SIZE / 8; r++)
			if (base[r] != r + 1)
				ok = 0;
		b_unlock(rank, w);
	} else {
		ok = 0;
	}
	if (rc || !ok)
		fprintf(stderr, PROG_NAME ": mem: rank %d: %s\n", rank,
			rc ? "an RMA call failed" : "window data differs");
	rc2 = b_sum0(my_cpu() - m.cpu0, &cpu);
	rc = rc ? rc : rc2;
	/* rank 0 learns how many ranks failed */
	rc2 = b_sum0(ok && !rc ? 0 : 1, &bad);
	ok = !rc2 && bad == 0;
	rc2 = rc2 ? rc2 : mem_row("alloc", s1.rss - s0.rss, all, cpu, wall,
				  ok);
	rc2 = rc2 ? rc2 : mem_row("epoch", s2.rss - s0.rss, all, cpu, wall,
				  ok);
	rc2 = rc2 ? rc2 : mem_row("hwm", s2.hwm - s0.hwm, all, cpu, wall, ok);
	rc2 = rc2 ? rc2 : mem_row("pss", s2.pss - s0.pss, all, cpu, wall, ok);
	rc2 = rc2 ? rc2 : mem_row("agent", s2.agent - s0.agent, all, cpu,
				  wall, ok);
	total_cpu += cpu;
	total_wall += wall;
	b_win_free(&w);
	free(all);
	return rc ? rc : rc2;
}


#define WINS_SIZE 64	/* bytes per rank of each of the wins test's windows */

/*
 * Many windows: --iters allocated windows of WINS_SIZE bytes over all
 * ranks (whatever -w says), made one after another and all alive at
 * once, then freed in the order made.  Rows: "wins create" and "wins
 * free", rank 0's time of each call (every rank makes and frees them
 * alike); "mem win" and "mem winag", each rank's and each node's
 * agent's RSS growth per window in KiB with them all alive (an agent
 * counted once per node).  The check: every call returned success and a
 * put to the last window made reads back.
 */
static int wins_test(void)
{
	int n = opt.iters, made = 0, rc = 0, rc2, fl = b_flavor, ok = 1;
	bwin_t *w = calloc((size_t)n, sizeof(*w));
	double *tf = calloc((size_t)n + 1, sizeof(*tf));
	double *all = calloc((size_t)nranks, sizeof(*all));
	int64_t **base = calloc((size_t)n, sizeof(*base)), v = rank + 1;
	struct row rcr = { .test = test_names[T_WINS], .mode = "create",
			   .size = WINS_SIZE, .t_us = -1, .ok = 1 };
	struct row rfr = rcr;
	struct memsnap s0, s1;
	struct meter m;
	double bad = 0;

	if (!w || !tf || !all || !base) {
		free(w);
		free(tf);
		free(all);
		free(base);
		return -1;
	}
	rfr.mode = "free";
	b_flavor = BW_ALLOCATE;
	rc = row_begin(&m);
	mem_snap(&s0);
	while (!rc && made < n) {
		double t = now();

		rc = b_win_alloc(WINS_SIZE, &base[made], &w[made]);
		samples[made] = now() - t;
		if (!rc)
			made++;
	}
	stats(&rcr, samples, made, 1);
	rc2 = b_sum0(made == n ? 0 : 1, &bad);
	rcr.ok = !rc2 && bad == 0;
	rc2 = rc2 ? rc2 : row_end(&m, &rcr);
	rc = rc ? rc : rc2;
	mem_snap(&s1);
	/* the last one works: every rank puts its rank + 1 to the next */
	if (!rc && made) {
		bwin_t l = w[made - 1];
		int right = (rank + 1) % nranks;

		*base[made - 1] = 0;
		rc = b_barrier();
		rc = rc ? rc : b_lock_all(l);
		rc = rc ? rc : b_put(&v, 1, B_INT64, right, 0, l);
		rc2 = rc ? -1 : b_unlock_all(l);
		rc = rc ? rc : rc2;
		rc2 = b_barrier();
		rc = rc ? rc : rc2;
		if (!rc && !b_lock(rank, l)) {
			ok = *base[made - 1] == (rank + nranks - 1) % nranks + 1;
			b_unlock(rank, l);
		}
	}
	if (rc || !ok || made < n)
		fprintf(stderr, PROG_NAME ": wins: rank %d: %d of %d windows "
			"made%s\n", rank, made, n, rc ? ", a call failed" :
			ok ? "" : ", the data differs");
	ok = ok && !rc && made == n;
	rc2 = row_begin(&m);
	for (int i = 0; i < made; i++) {
		double t = now();

		b_win_free(&w[i]);
		tf[i] = now() - t;
	}
	stats(&rfr, tf, made, 1);
	rc2 = rc2 ? rc2 : b_sum0(ok ? 0 : 1, &bad);
	ok = !rc2 && bad == 0;
	rfr.ok = ok;
	b_flavor = fl;
	rc2 = rc2 ? rc2 : row_end(&m, &rfr);
	if (!rc2 && made) {
		rc2 = mem_row_of("win", WINS_SIZE, (s1.rss - s0.rss) / made,
				 all, 0, 0, ok);
		rc2 = rc2 ? rc2 : mem_row_of("winag", WINS_SIZE,
					     (s1.agent - s0.agent) / made,
					     all, 0, 0, ok);
	}
	free(w);
	free(tf);
	free(all);
	free(base);
	return rc ? rc : rc2;
}

/* one row of a test that only the origin drives */
static int origin_row(int t, const char *mode, size_t size)
{
	struct row r = { .test = test_names[t], .mode = mode, .size = size,
			 .t_us = -1, .ok = 1 };
	struct meter m;

	if (row_begin(&m))
		return -1;
	if (!strcmp(mode, "fence"))
		lat_origin(t, M_FENCE, size, &r);	/* every rank */
	else if (!strcmp(mode, "pscw"))
		lat_origin(t, M_PSCW, size, &r);	/* every rank: a barrier */
	else if (rank == origin && t >= T_VPUT && t <= T_VACC)
		strided_origin(t, size, &r);
	else if (rank == origin && (t <= T_CAS || t == T_ACCGET))
		lat_origin(t, strcmp(mode, "lock") ? M_FLUSH : M_LOCK, size,
			   &r);
	else if (rank == origin)
		window_origin(t, size, &r);
	if (t == T_FOP || t == T_CAS)
		r.size = 8;
	return row_end(&m, &r);
}

/* the rows' sync modes, in their order: lock, flush, fence, pscw */
#define NMODES 4
static const char *const mode_names[NMODES] = { "lock", "flush", "fence",
						"pscw" };

static int mode_on(int m)
{
	return m == 0 ? opt.mode_lock : m == 1 ? opt.mode_flush :
	       m == 2 ? opt.mode_fence : opt.mode_pscw;
}

static int run_all(void)
{
	int rc = 0;

	if (opt.tests[T_MEM])
		rc = mem_test();
	if (opt.tests[T_WINS] && !rc)
		rc = wins_test();
	for (int t = T_PUT; t <= T_CAS && !rc; t++) {
		if (!opt.tests[t])
			continue;
		for (int m = 0; m < NMODES && !rc; m++) {
			if (!mode_on(m))
				continue;
			for (int s = 0; s < opt.nsizes && !rc; s++) {
				size_t sz = opt.sizes[s];

				if ((t == T_FOP || t == T_CAS) && s > 0)
					break;
				rc = origin_row(t, mode_names[m], sz);
			}
		}
	}
	for (int t = T_PUT_BW; t <= T_GET_BW && !rc; t++)
		for (int s = 0; opt.tests[t] && s < opt.nsizes && !rc; s++)
			if (opt.sizes[s] >= 1024)
				rc = origin_row(t, "flush", opt.sizes[s]);
	for (int t = T_MR_1; t <= T_POST && !rc; t++)
		if (opt.tests[t])
			rc = origin_row(t, "flush", 8);
	for (int t = T_VPUT; t <= T_VACC && !rc; t++)
		for (int s = 0; opt.tests[t] && s < opt.nsizes && !rc; s++)
			if (opt.sizes[s] >= 8)
				rc = origin_row(t, "flush", opt.sizes[s]);
	for (int s = 0; opt.tests[T_HALO] && s < opt.nsizes && !rc; s++) {
		struct row r = { .test = "halo", .mode = "fence",
				 .size = opt.sizes[s], .t_us = -1, .ok = 1 };
		struct meter m;

		if (opt.sizes[s] < 8 || (opt.sizes[s] / 8 + 2) *
		    (opt.sizes[s] / 8 + 2) * 8 > win_bytes)
			continue;	/* the grid must fit the window */
		rc = row_begin(&m);
		if (!rc)
			halo_row(opt.sizes[s], &r);	/* every rank */
		rc = rc ? rc : row_end(&m, &r);
	}
	for (int s = 0; opt.tests[T_OVERLAP] && s < opt.nsizes && !rc; s++)
		rc = overlap_rows(opt.sizes[s]);
	for (int s = 0; opt.tests[T_ACCGET] && s < opt.nsizes && !rc; s++)
		rc = origin_row(T_ACCGET, "flush", opt.sizes[s]);
	for (int k = 0; opt.tests[T_ASYNC] && k < opt.nts && !rc; k++)
		for (int m = 0; m < NMODES && !rc; m++) {
			struct row r = { .test = "async", .mode = mode_names[m],
					 .ok = 1 };

			if (!mode_on(m))
				continue;
			rc = m == 3 ? async_pscw_row(opt.ts[k], &r) :
			     m == 2 ? async_fence_row(opt.ts[k], &r) :
				      async_row(opt.ts[k], m == 0, &r);
		}
	return rc;
}

/* ------------------------------------------------------------ main */

static void on_alarm(int sig)
{
	static const char msg[] = PROG_NAME ": timed out\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(124);
	_exit(124);
}

int main(int argc, char **argv)
{
	int prc = parse_args(argc, argv), rc;
	size_t wsize = 2 * (size_t)MAX_SIZE_LIMIT;
	size_t bsize = (size_t)MAX_SIZE_LIMIT + OPS_PER_FLUSH * 8;
	int only_mem = 1;
	char date[32];
	time_t tnow = time(NULL);

	if (prc == 1) {
		usage(stdout);
		return 0;
	}
	if (prc == 2) {
		printf(PROG_NAME " " PACKAGE_VERSION "\n");
		return 0;
	}
	if (prc < 0) {
		usage(stderr);
		return 2;
	}
	if (opt.timeout > 0) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned)opt.timeout);
	}
	rc = b_init(&argc, &argv);
	if (rc) {
		fprintf(stderr, PROG_NAME ": init failed (%d)\n", rc);
		return 3;
	}
	b_rank_size(&rank, &nranks);
	if (nranks < 2) {
		fprintf(stderr, PROG_NAME ": needs 2 or more ranks\n");
		b_finalize();
		return 2;
	}
	origin = 0;
	target = nranks - 1;
	/* the mem test alone needs no big buffers: keep the job small */
	for (int t = 0; t < T_NTESTS; t++)	/* (mem, wins) */
		only_mem &= t == T_MEM || t == T_WINS || !opt.tests[t];
	if (only_mem)
		wsize = bsize = MEM_WIN_SIZE;
	samples = calloc((size_t)opt.iters + 1, sizeof(*samples));
	rc = !samples ? -1 : b_info(&info);
	rc = rc ? rc : b_ctl_init();
	rc = rc ? rc : b_win_alloc(wsize, &wbase, &win);
	win_bytes = wsize;
	rc = rc ? rc : b_alloc_mem(bsize, &sbuf);
	rc = rc ? rc : b_alloc_mem(bsize, &rbuf);
	rc = rc ? rc : b_alloc_mem(bsize, &cbuf);
	if (rc) {
		fprintf(stderr, PROG_NAME ": setup failed (%d)\n", rc);
		return 3;
	}
	memset(wbase, 0, wsize);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%MZ", gmtime(&tnow));
	if (rank == 0) {
		if (opt.fmt == FMT_JSON)
			printf("{\"label\": \"%s\", \"impl\": \"%s\", "
			       "\"window\": \"%s\", "
			       "\"ranks\": %d, \"nodes\": %d, \"provider\": "
			       "\"%s\", \"origin\": %d, \"target\": %d, "
			       "\"date\": \"%s\", \"rows\": [\n", opt.label,
			       IMPL_NAME, bw_names[b_flavor], nranks,
			       info.nodes, info.provider, origin, target,
			       date);
		else if (opt.fmt == FMT_TABLE)
			printf("# " PROG_NAME " " PACKAGE_VERSION ": %s (%s), "
			       "%s window, %d ranks on %d nodes, provider %s, "
			       "rank %d -> rank %d, %s\n", opt.label,
			       IMPL_NAME, bw_names[b_flavor], nranks,
			       info.nodes, info.provider, origin, target,
			       date);
		fflush(stdout);
	}
	rc = run_all();
	if (rank == 0 && opt.fmt == FMT_JSON)
		printf("\n  ], \"failed\": %d, \"cpu_s\": %.3f, "
		       "\"wall_s\": %.3f}\n", nfail, total_cpu, total_wall);
	else if (rank == 0 && opt.fmt == FMT_TABLE)
		printf("# all rows: job CPU %.3f s (agents included) in %.3f s"
		       ", %d failed their check\n", total_cpu, total_wall,
		       nfail);
	b_barrier();
	b_free_mem(cbuf);
	b_free_mem(rbuf);
	b_free_mem(sbuf);
	b_win_free(&win);
	b_ctl_fini();
	b_finalize();
	free(samples);
	if (rc)
		return 3;
	if (rank == 0 && nfail)
		fprintf(stderr, PROG_NAME ": %d rows failed their check\n",
			nfail);
	return nfail ? 1 : 0;
}
