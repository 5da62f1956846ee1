/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_accword.c - bulk accumulates (shared/accword.h, dtype.c's
 * rmad_acc_apply_bulk):
 *   - the bulk loops give what rmad_acc_apply gives, for every type and
 *     op they cover, with and without fetched values, and refuse what
 *     they do not cover (binary128, pairs, bad ops, misaligned
 *     memory), complex products at infinities and NaNs too;
 *   - a bulk gives up when a small accumulate keeps its byte, and a small
 *     one gives up (RMAD_ERR_SYNC, its byte cleared) when a bulk keeps
 *     the word;
 *   - processes applying bulk and small accumulates to the same int64 and
 *     double elements at once, through the protocol, lose no update, the
 *     small ones from two threads a process that share its slot.
 * (Without the protocol, the last check loses updates on this 2-core
 * machine: run with ACCWORD_BROKEN=1 to see it, not part of the suite.)
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmad_abi.h"
#include "accword.h"
#include "dtype.h"
#include "tap.h"

#define HOT	512
#define BULKS	20000		/* per bulk process */
#define NB	2		/* bulk processes */
#define NS	2		/* small processes */

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* random element bits that make a finite value of every type (floats:
 * small whole numbers, so products stay finite and exact) */
static void fill(void *p, uint32_t t, size_t n)
{
	size_t es = rmad_dtype_size(t);

	for (size_t i = 0; i < n; i++) {
		char *e = (char *)p + i * es;

		if (t == RMAD_FLOAT) {
			float f = (float)(int)(next() % 64) - 32;

			memcpy(e, &f, 4);
		} else if (t == RMAD_DOUBLE) {
			double d = (double)(int)(next() % 64) - 32;

			memcpy(e, &d, 8);
		} else if (t == RMAD_C_FLOAT_COMPLEX) {
			float f[2] = { (float)(int)(next() % 64) - 32,
				       (float)(int)(next() % 64) - 32 };

			memcpy(e, f, 8);
		} else if (t == RMAD_C_DOUBLE_COMPLEX) {
			double d[2] = { (double)(int)(next() % 64) - 32,
					(double)(int)(next() % 64) - 32 };

			memcpy(e, d, 16);
		} else if (t == RMAD_LONG_DOUBLE ||
			   t == RMAD_C_LONG_DOUBLE_COMPLEX) {
			/* one or two values, each in 16 bytes of which
			 * x87 uses 10: the rest zero */
			for (size_t k = 0; k < es / 16; k++) {
				long double v = (long double)(int)(next() % 64)
						- 32;

				memset(e + 16 * k, 0, 16);
				memcpy(e + 16 * k, &v, 10);
			}
		} else if (t == RMAD_C_BOOL) {
			*e = (char)(next() & 1);
		} else {
			uint64_t v = next();

			memcpy(e, &v, es);
		}
	}
}

/* the n elements of type t at x and y hold the same values: x87's
 * padding (the 6 bytes after each 10) is left out, as no store defines
 * it */
static int same(const void *x, const void *y, uint32_t t, size_t n)
{
	size_t len = n * rmad_dtype_size(t);

	if (t != RMAD_LONG_DOUBLE && t != RMAD_C_LONG_DOUBLE_COMPLEX)
		return !memcmp(x, y, len);
	for (size_t q = 0; q < len; q += 16)
		if (memcmp((const char *)x + q, (const char *)y + q, 10))
			return 0;
	return 1;
}

static void check_equivalence(void)
{
	enum { N = 37, W = N * 4 + 4 };
	int bad = 0, done = 0;

	for (uint32_t t = 1; t <= RMAD_DTYPE_MAX; t++)
		for (uint32_t op = 1; op <= RMAD_NO_OP; op++) {
			size_t es = rmad_dtype_size(t);
			/* up to 32-byte elements, and room for the shifted
			 * copies below */
			_Alignas(32) uint64_t a[W], b[W], src[W], ra[W], rb[W];
			/* the reference: rmad_acc_apply, element by element;
			 * a wide type's apply takes the loops where they
			 * fit, so its reference is 8 bytes off its
			 * alignment, where only the element code runs */
			char *ref = (char *)a + (es > 8 ? 8 : 0);
			int loops = t == RMAD_C_FLOAT_COMPLEX ||
				    t == RMAD_C_DOUBLE_COMPLEX ||
				    t == RMAD_LONG_DOUBLE ||
				    t == RMAD_C_LONG_DOUBLE_COMPLEX;

			if (rmad_op_check(t, op) ||
			    (rmad_dtype_wide(t) && !loops) ||
			    (t >= RMAD_FLOAT_INT && t <= RMAD_2DOUBLE))
				continue;
			fill(ref, t, N);
			fill(src, t, N);
			memcpy(b, ref, N * es);
			rmad_acc_apply(ref, src, ra, t, op, N);
			if (rmad_acc_apply_bulk(b, src, rb, t, op, N)) {
				bad++;
				diag("type %u op %u: no bulk loop", t, op);
				continue;
			}
			if (!same(ref, b, t, N) || !same(ra, rb, t, N)) {
				bad++;
				diag("type %u op %u: bulk differs", t, op);
			}
			/* without fetched values, from an unaligned source */
			memcpy(b, ref, N * es);
			memmove((char *)src + 1, src, N * es);
			rmad_acc_apply(ref, (char *)src + 1, NULL, t, op, N);
			rmad_acc_apply_bulk(b, (char *)src + 1, NULL, t, op, N);
			if (!same(ref, b, t, N)) {
				bad++;
				diag("type %u op %u: bulk differs (unaligned "
				     "source)", t, op);
			}
			done++;
		}
	ok(!bad && done > 100, "bulk loops match rmad_acc_apply (%d type x "
	   "op pairs, %d differ)", done, bad);
}

/* C's complex product at infinities, NaNs and signed zeros (its rules,
 * C11 Annex G, behind the inline product's check): the bulk PROD loops
 * give the element code's bits. */
static void check_cprod_special(void)
{
	static const double v[] = { 0.0, -0.0, 1.0, -2.5, 1e30,
				    __builtin_inf(), -__builtin_inf(),
				    __builtin_nan("") };
	enum { NV = sizeof(v) / sizeof(v[0]), N = NV * NV * NV * NV };
	static const uint32_t types[] = { RMAD_C_FLOAT_COMPLEX,
					  RMAD_C_DOUBLE_COMPLEX,
					  RMAD_C_LONG_DOUBLE_COMPLEX };
	int bad = 0;

	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
		uint32_t t = types[k];
		size_t es = rmad_dtype_size(t);
		/* the reference 8 bytes off the alignment, where a wide
		 * type takes the element code (check_equivalence) */
		char *a = aligned_alloc(32, N * es + 32);
		char *b = aligned_alloc(32, N * es + 32);
		char *src = aligned_alloc(32, N * es + 32);
		char *ref = a + (es > 8 ? 8 : 0);

		if (!a || !b || !src) {
			bad++;
			diag("no memory");
			free(a);
			free(b);
			free(src);
			continue;
		}
		memset(a, 0, N * es + 32);
		memset(b, 0, N * es + 32);
		memset(src, 0, N * es + 32);
		for (size_t i = 0; i < N; i++) {
			double o[2] = { v[i % NV], v[i / NV % NV] };
			double x[2] = { v[i / NV / NV % NV],
					v[i / NV / NV / NV] };

			for (int part = 0; part < 2; part++) {
				size_t at = i * es + (size_t)part * es / 2;

				if (t == RMAD_C_FLOAT_COMPLEX) {
					float f = (float)o[part],
					      g = (float)x[part];

					memcpy(ref + at, &f, 4);
					memcpy(src + at, &g, 4);
				} else if (t == RMAD_C_DOUBLE_COMPLEX) {
					memcpy(ref + at, &o[part], 8);
					memcpy(src + at, &x[part], 8);
				} else {
					long double f = o[part],
						    g = x[part];

					memcpy(ref + at, &f, 16);
					memcpy(src + at, &g, 16);
				}
			}
		}
		memcpy(b, ref, N * es);
		rmad_acc_apply(ref, src, NULL, t, RMAD_PROD, N);
		if (rmad_acc_apply_bulk(b, src, NULL, t, RMAD_PROD, N) ||
		    !same(ref, b, t, N)) {
			bad++;
			diag("type %u: bulk PROD differs at special values", t);
		}
		free(a);
		free(b);
		free(src);
	}
	ok(!bad, "complex PROD in bulk gives the element code's bits at "
	   "infinities, NaNs and signed zeros (%d types differ)", bad);
}

static void check_refusals(void)
{
	uint64_t buf[8] = { 0 }, src[8] = { 0 };
	_Alignas(16) unsigned char ld[48] = { 0 }, lds[48] = { 0 };

	ok(rmad_acc_apply_bulk((char *)buf + 4, src, NULL, RMAD_INT64,
			       RMAD_SUM, 2) == -1 &&
	   rmad_acc_apply_bulk(ld + 8, lds, NULL, RMAD_LONG_DOUBLE,
			       RMAD_SUM, 2) == -1 &&
	   rmad_acc_apply_bulk(ld, lds, NULL, RMAD_FLOAT128, RMAD_SUM,
			       2) == -1 &&
	   rmad_acc_apply_bulk(ld, lds, NULL, RMAD_C_LONG_DOUBLE_COMPLEX,
			       RMAD_LAND, 1) == -1 &&
	   rmad_acc_apply_bulk(buf, src, NULL, RMAD_2INT, RMAD_MINLOC, 2) ==
		   -1 &&
	   rmad_acc_apply_bulk(buf, src, NULL, RMAD_DOUBLE, RMAD_BAND, 2) ==
		   -1,
	   "bulk refuses misaligned memory, binary128, pairs and bad ops");
}

static void check_timeouts(struct rmad_win_ctl *ctl)
{
	int r;

	memset(ctl, 0, sizeof(*ctl));
	ctl->acc_small[5] = 1;
	r = acc_bulk_begin(ctl, 64, 1000 * 1000);
	ok(r == 1 && ctl->acc_big == 1,
	   "a bulk scans only the slots below acc_small_hi");
	acc_bulk_end(ctl);
	acc_small_mark(ctl, 5);
	acc_small_mark(ctl, 2);
	ok(ctl->acc_small_hi == 6, "acc_small_hi only grows");
	r = acc_bulk_begin(ctl, 64, 1000 * 1000);
	ok(r == 0 && ctl->acc_big == 0,
	   "a bulk gives up when a small accumulate keeps its byte");
	r = acc_bulk_begin(ctl, 5, 1000 * 1000);
	ok(r == 1, "a bulk scans only max_clients slots");
	acc_bulk_end(ctl);
	ctl->acc_small_hi = 0xffffffffu;
	r = acc_bulk_begin(ctl, 64, 1000 * 1000);
	ok(r == 0, "a bound beyond max_clients is clamped");
	ctl->acc_small[5] = 0;
	ctl->acc_big = 1;
	r = acc_small_enter(ctl, 3, 1000 * 1000);
	ok(r == RMAD_ERR_SYNC && ctl->acc_small[3] == 0,
	   "a small accumulate gives up when a bulk keeps the word");
	ctl->acc_big = 0;
	ctl->acc_small_hi = 0;
	ok(acc_small_enter(ctl, 3, 1000 * 1000) == 0 &&
	   ctl->acc_small[3] == 1 && ctl->acc_small_hi == 4,
	   "a small accumulate enters a free word and raises the bound");
	acc_small_leave(ctl, 3);
}

struct shared {
	struct rmad_win_ctl ctl;
	int64_t vi[HOT];
	double vd[HOT];
	int64_t small_done[2 * NS];	/* per process and thread */
	int bulks_left;
	int ready;			/* processes started: all go at once */
};

static void start_line(struct shared *s)
{
	__atomic_fetch_add(&s->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&s->ready, __ATOMIC_SEQ_CST) < NB + NS)
		sched_yield();
}

static void bulk_proc(struct shared *s, int id)
{
	static int64_t one_i[HOT];
	static double one_d[HOT];

	for (int i = 0; i < HOT; i++) {
		one_i[i] = 1;
		one_d[i] = 1;
	}
	for (int k = 0; k < BULKS; k++) {
		uint32_t v = 0;
		int bulk;

		while (!__atomic_compare_exchange_n(&s->ctl.acc_lock, &v,
						    (uint32_t)id + 100, 0,
						    __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED)) {
			v = 0;
			sched_yield();
		}
		bulk = getenv("ACCWORD_BROKEN") ? 1 :
		       acc_bulk_begin(&s->ctl, 64, 1000ull * 1000 * 1000);
		if (!bulk ||
		    rmad_acc_apply_bulk(s->vi, one_i, NULL, RMAD_INT64,
					RMAD_SUM, HOT))
			rmad_acc_apply(s->vi, one_i, NULL, RMAD_INT64,
				       RMAD_SUM, HOT);
		if (!bulk ||
		    rmad_acc_apply_bulk(s->vd, one_d, NULL, RMAD_DOUBLE,
					RMAD_SUM, HOT))
			rmad_acc_apply(s->vd, one_d, NULL, RMAD_DOUBLE,
				       RMAD_SUM, HOT);
		if (bulk)
			acc_bulk_end(&s->ctl);
		__atomic_store_n(&s->ctl.acc_lock, 0, __ATOMIC_RELEASE);
		/* a gap, as between an application's accumulates */
		for (int g = 0; g < 500; g++)
			caa_cpu_relax();
	}
	__atomic_fetch_sub(&s->bulks_left, 1, __ATOMIC_SEQ_CST);
}

struct small_arg {
	struct shared *s;
	int id, t;
};

/* small accumulates as slot id, in thread t of the process */
static void *small_loop(void *p)
{
	struct small_arg *sa = p;
	struct shared *s = sa->s;
	int64_t one_i = 1, k = 0;
	double one_d = 1;
	int broken = getenv("ACCWORD_BROKEN") != NULL;

	while (__atomic_load_n(&s->bulks_left, __ATOMIC_SEQ_CST) > 0) {
		int at = (int)((k * 2 + sa->t) % HOT);

		if (!broken && acc_small_enter(&s->ctl, (uint32_t)sa->id,
					       10ull * 1000 * 1000 * 1000))
			_exit(2);
		rmad_acc_apply(&s->vi[at], &one_i, NULL, RMAD_INT64, RMAD_SUM,
			       1);
		rmad_acc_apply(&s->vd[at], &one_d, NULL, RMAD_DOUBLE, RMAD_SUM,
			       1);
		if (!broken)
			acc_small_leave(&s->ctl, (uint32_t)sa->id);
		k++;
	}
	s->small_done[sa->id * 2 + sa->t] = k;
	return NULL;
}

/* two threads share the process's slot, as a THREAD_MULTIPLE client's */
static void small_proc(struct shared *s, int id)
{
	struct small_arg a0 = { s, id, 0 }, a1 = { s, id, 1 };
	pthread_t th;

	if (pthread_create(&th, NULL, small_loop, &a1))
		_exit(3);
	small_loop(&a0);
	pthread_join(th, NULL);
}

static void check_mixed(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, good = 1, bad = 0;
	int64_t want[HOT];

	if (s == MAP_FAILED) {
		ok(0, "mmap");
		return;
	}
	s->bulks_left = NB;
	for (int p = 0; p < NB + NS; p++) {
		pid_t pid = fork();

		if (pid == 0) {
			start_line(s);
			if (p < NB)
				bulk_proc(s, p);
			else
				small_proc(s, p - NB);
			_exit(0);
		}
	}
	for (int p = 0; p < NB + NS; p++) {
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			good = 0;
	}
	for (int i = 0; i < HOT; i++)
		want[i] = (int64_t)NB * BULKS;
	/* thread t of a process hit (2k + t) % HOT for k < its count */
	for (int id = 0; id < 2 * NS; id++)
		for (int64_t k = 0; k < s->small_done[id]; k++)
			want[(k * 2 + id % 2) % HOT]++;
	for (int i = 0; i < HOT; i++)
		if (s->vi[i] != want[i] || s->vd[i] != (double)want[i])
			bad++;
	ok(good && !bad, "%d bulk and %d small processes of 2 threads each "
	   "(sharing their slot) on the same %d elements: %d elements off "
	   "(small ops: %lld, %lld, %lld, %lld)", NB, NS, HOT, bad,
	   (long long)s->small_done[0], (long long)s->small_done[1],
	   (long long)s->small_done[2], (long long)s->small_done[3]);
	munmap(s, sizeof(*s));
}

int main(void)
{
	static struct rmad_win_ctl ctl;

	alarm_after(120);
	plan(11);
	check_equivalence();
	check_cprod_special();
	check_refusals();
	check_timeouts(&ctl);
	check_mixed();
	return done_testing();
}
