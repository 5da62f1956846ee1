/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.c - moving data to and from a same-node member's window.
 *
 * An allocated window's memory is mapped here, so a put is a memcpy and
 * an accumulate is CPU atomics (rmad_acc_apply), as in the agent, or
 * from acc_bulk_threshold bytes up, a bulk of plain loads and stores
 * (rmad_acc_apply_bulk) under shared/accword.h's protocol, which keeps
 * the two atomic per element against each other.
 *
 * A created window (rmad_win_create) is memory the member already had,
 * which no other process maps.  Our own is used in place; a peer's is
 * read and written with process_vm_readv/writev, straight between the
 * two processes, without the agent.  Accumulates there cannot be CPU
 * atomics, so every accumulate on a created window, by a peer, the
 * member itself or the agent for remote origins, reads, combines and
 * writes back under the member's accumulate lock (acc_lock in its
 * control page).  That keeps them atomic per element against each
 * other, as MPI requires, whoever applies them.  A holder that dies is
 * released by the agent; one that keeps the lock ACC_WAIT_NS fails the
 * waiting op with RMAD_ERR_SYNC.
 *
 * Accumulates on types wider than 8 bytes, which no CPU atomic covers,
 * take the same lock on every flavor (rmad_dtype_wide).
 *
 * A dynamic window is a created one whose displacements are addresses:
 * each access is checked against the regions the member attached, as
 * its agent publishes them, while our busy byte there tells a detaching
 * member to wait for us (dyn_enter, dyn_leave).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "accword.h"
#include "atomics.h"
#include "dtype.h"
#include "internal.h"
#include "log.h"
#include "util.h"

#define ACC_WAIT_NS	(10ull * 1000 * 1000 * 1000)
/* how long a bulk accumulate waits for small ones before it gives up
 * the bulk mode (and applies with atomics, under the lock) */
#define ACC_SMALL_WAIT_NS (1000ull * 1000)
/* bytes combined per round of a created window's accumulate: on the
 * stack up to ACC_CHUNK, else in a buffer of up to ACC_ROUND (a pair of
 * process_vm calls costs a few us in a guest, each page far less) */
#define ACC_CHUNK	4096
#define ACC_ROUND	(256 * 1024)

/* n pieces (l, r) of len bytes in all, between us and the peer */
static int vm_iov(struct win_peer *p, const struct iovec *l,
		  const struct iovec *r, unsigned long n, size_t len,
		  int write)
{
	ssize_t got;

	if (!len)
		return 0;
	got = write ? process_vm_writev(p->pid, l, n, r, n, 0) :
		      process_vm_readv(p->pid, l, n, r, n, 0);
	if (got == (ssize_t)len)
		return 0;
	rmad_warn("rank %d's window: cannot %s %zu bytes in process %d: %s",
		  p->rank, write ? "write" : "read", len, (int)p->pid,
		  got < 0 ? strerror(errno) : "short");
	return got < 0 && errno == EPERM ? RMAD_ERR_PERM :
	       got < 0 && errno == ESRCH ? RMAD_ERR_PROC_FAILED : RMAD_ERR_ARG;
}

static int vm_io(struct win_peer *p, uint64_t off, void *buf, size_t len,
		 int write)
{
	struct iovec l = { buf, len };
	struct iovec r = { (void *)(uintptr_t)(p->addr + off), len };

	return vm_iov(p, &l, &r, 1, len, write);
}

/*
 * A dynamic window: hold our busy byte in the member's table while we
 * find [addr, addr + len) in one of its regions (under the agent's
 * sequence lock) and reach into it; RMAD_ERR_DISP if no region holds it.
 */
static int dyn_enter(struct win_peer *p, uint64_t addr, uint64_t len)
{
	struct rmad_win_dyn *d = p->dyn;
	uint32_t slot = rmad_cl.slot;

	if (!d)
		return 0;
	if (slot >= sizeof(d->busy))
		return RMAD_ERR_INTERNAL;
	__atomic_store_n(&d->busy[slot], 1, __ATOMIC_SEQ_CST);
	for (unsigned tries = 0;; tries++) {
		uint32_t s = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);
		uint32_t n, lo = 0, hi;
		uint64_t ra = 0, rs = 0;

		if (s & 1) {
			if (tries > 1000000)
				break;	/* a writer that never ends */
			sched_yield();
			continue;
		}
		n = __atomic_load_n(&d->n, __ATOMIC_RELAXED);
		hi = n <= RMAD_DYN_MAX ? n : 0;
		while (lo < hi) {	/* the first region ending above addr */
			uint32_t mid = lo + (hi - lo) / 2;
			uint64_t ma = __atomic_load_n(&d->r[mid].addr,
						      __ATOMIC_RELAXED);
			uint64_t ms = __atomic_load_n(&d->r[mid].size,
						      __ATOMIC_RELAXED);

			if (ma + ms <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (n <= RMAD_DYN_MAX && lo < n) {
			ra = __atomic_load_n(&d->r[lo].addr, __ATOMIC_RELAXED);
			rs = __atomic_load_n(&d->r[lo].size, __ATOMIC_RELAXED);
			/* and the regions attached end to end after it
			 * (an access may span them, as the agent's
			 * dyn_check lets it) */
			for (uint32_t k = lo + 1; k < n && addr + len > ra + rs;
			     k++) {
				uint64_t ka = __atomic_load_n(&d->r[k].addr,
							      __ATOMIC_RELAXED);

				if (ka != ra + rs)
					break;
				rs += __atomic_load_n(&d->r[k].size,
						      __ATOMIC_RELAXED);
			}
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&d->seq, __ATOMIC_RELAXED) != s)
			continue;
		if (rs && addr >= ra && addr + len >= addr &&
		    addr + len <= ra + rs)
			return 0;
		break;
	}
	__atomic_store_n(&d->busy[slot], 0, __ATOMIC_RELEASE);
	return RMAD_ERR_DISP;
}

static void dyn_leave(struct win_peer *p)
{
	if (p->dyn)
		__atomic_store_n(&p->dyn->busy[rmad_cl.slot], 0,
				 __ATOMIC_RELEASE);
}

int rmad_peer_put(struct win_peer *p, uint64_t off, const void *src,
		  size_t len)
{
	int err;

	if (p->base) {
		memcpy((char *)p->base + off, src, len);
		return 0;
	}
	err = dyn_enter(p, off, len);
	if (err)
		return err;
	err = vm_io(p, off, (void *)src, len, 1);
	dyn_leave(p);
	return err;
}

int rmad_peer_get(struct win_peer *p, uint64_t off, void *dst, size_t len)
{
	int err;

	if (p->base) {
		memcpy(dst, (char *)p->base + off, len);
		return 0;
	}
	err = dyn_enter(p, off, len);
	if (err)
		return err;
	err = vm_io(p, off, dst, len, 0);
	dyn_leave(p);
	return err;
}

/* how long a member lets the agent take acc_lock first (acc_want) */
#define ACC_YIELD_NS	(1000ull * 1000)

static int acc_lock(struct win_peer *p)
{
	uint32_t me = rmad_cl.slot + 1;
	uint64_t t0 = 0;

	if (__atomic_load_n(&p->ctl->acc_want, __ATOMIC_ACQUIRE)) {
		/* the agent waits for the word: after it (a dead or stuck
		 * agent's flag is ignored after a while) */
		uint64_t t1 = rmad_now_ns();

		while (__atomic_load_n(&p->ctl->acc_want, __ATOMIC_ACQUIRE) &&
		       rmad_now_ns() - t1 < ACC_YIELD_NS)
			sched_yield();
	}
	for (unsigned n = 0;; n++) {
		uint32_t v = 0;

		if (__atomic_compare_exchange_n(&p->ctl->acc_lock, &v, me, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
		if (n == 64)
			t0 = rmad_now_ns();
		else if (n > 64 && !(n & 63) &&
			 rmad_now_ns() - t0 > ACC_WAIT_NS) {
			rmad_warn("rank %d's window: its accumulate lock stays "
				  "held by %#x", p->rank, v);
			return RMAD_ERR_SYNC;
		}
		sched_yield();
	}
}

static void acc_unlock(struct win_peer *p)
{
	__atomic_store_n(&p->ctl->acc_lock, 0, __ATOMIC_RELEASE);
}

/*
 * An accumulate (or compare-and-swap, cas set) on a mapped window, on a
 * type a CPU atomic covers (accword.h): in bulk from acc_bulk_threshold
 * bytes up, else with per-element atomics inside this slot's acc_small
 * byte (under acc_lock for a slot beyond the bytes).
 */
static int mapped_acc(struct win_peer *p, void *dst, const void *origin,
		      const void *compare, void *result, uint32_t dt,
		      uint32_t op, uint64_t count, int cas)
{
	struct rmad_client *c = &rmad_cl;
	uint64_t thr = c->p.acc_bulk_threshold;
	uint32_t slot = c->slot;
	int err, bulk = 0;

	if (!cas && thr && count * rmad_dtype_size(dt) >= thr) {
		err = acc_lock(p);
		if (err)
			return err;
		bulk = acc_bulk_begin(p->ctl, c->hdr->max_clients,
				      ACC_SMALL_WAIT_NS);
		if (bulk) {
			rmad_acc_apply_excl(dst, origin, result, dt, op, count);
			acc_bulk_end(p->ctl);
		} else {
			rmad_acc_apply(dst, origin, result, dt, op, count);
		}
		acc_unlock(p);
		return 0;
	}
	err = slot < RMAD_ACC_SLOTS ?
	      acc_small_enter(p->ctl, slot, ACC_WAIT_NS) : acc_lock(p);
	if (err) {
		rmad_warn("rank %d's window: a bulk accumulate there keeps "
			  "others out", p->rank);
		return err;
	}
	if (cas)
		rmad_cas_apply(dst, origin, compare, result, dt);
	else
		rmad_acc_apply(dst, origin, result, dt, op, count);
	if (slot < RMAD_ACC_SLOTS)
		acc_small_leave(p->ctl, slot);
	else
		acc_unlock(p);
	return 0;
}

int rmad_peer_acc(struct win_peer *p, uint64_t off, const void *origin,
		  void *result, uint32_t dt, uint32_t op, uint64_t count)
{
	size_t es = rmad_dtype_size(dt);
	uint64_t per = ACC_CHUNK / es, done = 0;
	uint8_t stack[ACC_CHUNK] __attribute__((aligned(64)));
	uint8_t *cur = stack, *big = NULL;
	int err;

	if (!p->created && !rmad_dtype_wide(dt))
		return mapped_acc(p, (char *)p->base + off, origin, NULL,
				  result, dt, op, count, 0);
	if (!p->base && count > per) {
		/* without it, rounds of ACC_CHUNK */
		uint64_t n = ACC_ROUND / es < count ? ACC_ROUND / es : count;

		if (!posix_memalign((void **)&big, 64, (size_t)(n * es))) {
			cur = big;
			per = n;
		}
	}
	err = acc_lock(p);
	if (err) {
		free(big);
		return err;
	}
	err = dyn_enter(p, off, count * es);
	if (err) {
		acc_unlock(p);
		free(big);
		return err;
	}
	/* under acc_lock every accumulator of a created window is shut out:
	 * plain loops where the type has them */
	if (p->base)
		rmad_acc_apply_excl((char *)p->base + off, origin, result, dt,
				    op, count);
	while (!p->base && !err && done < count) {
		uint64_t n = count - done < per ? count - done : per;
		uint64_t at = off + done * es;

		err = vm_io(p, at, cur, n * es, 0);
		if (err)
			break;
		rmad_acc_apply_excl(cur, origin ? (const char *)origin +
					 done * es : NULL,
				    result ? (char *)result + done * es : NULL,
				    dt, op, n);
		if (origin)	/* a get_accumulate with NO_OP only reads */
			err = vm_io(p, at, cur, n * es, 1);
		done += n;
	}
	dyn_leave(p);
	acc_unlock(p);
	free(big);
	return err;
}

int rmad_peer_cas(struct win_peer *p, uint64_t off, const void *origin,
		  const void *compare, void *result, uint32_t dt)
{
	size_t es = rmad_dtype_size(dt);
	uint8_t cur[16];
	int err;

	if (es > sizeof(cur))
		return RMAD_ERR_TYPE;
	/* a wide type has no CPU atomic: under acc_lock, as below */
	if (!p->created && !rmad_dtype_wide(dt))
		return mapped_acc(p, (char *)p->base + off, origin, compare,
				  result, dt, 0, 1, 1);
	err = acc_lock(p);
	if (err)
		return err;
	err = dyn_enter(p, off, es);
	if (err) {
		acc_unlock(p);
		return err;
	}
	if (p->base) {
		rmad_cas_apply((char *)p->base + off, origin, compare, result,
			       dt);
	} else {
		err = vm_io(p, off, cur, es, 0);
		if (!err) {
			rmad_cas_apply(cur, origin, compare, result, dt);
			if (memcmp(cur, result, es))
				err = vm_io(p, off, cur, es, 1);
		}
	}
	dyn_leave(p);
	acc_unlock(p);
	return err;
}

/*
 * The runs of one derived op, in batches: at most PEER_RUNS runs (the
 * kernel's iovec limit) and, for an accumulate, ACC_BATCH bytes, which
 * it reads into cur, combines and writes back under one acc_lock (a
 * created window's every accumulator takes it: atomic per element as
 * rmad_peer_acc's).  One lock per batch rather than per run also lets
 * the agent in between batches.
 */
#define PEER_RUNS	1024
#define ACC_BATCH	(64 * 1024)
/*
 * A batch whose runs lie densely (their extent at most SPAN_DENSITY
 * times their bytes, and SPAN_MAX) is read whole in one piece, the
 * kernel's cost being per iovec far more than per byte; writes keep to
 * the runs (the gaps are other origins' bytes).
 */
#define SPAN_DENSITY	4
#define SPAN_MAX	(SPAN_DENSITY * ACC_BATCH)

/* the batch's bytes read through its extent in span: 0, 1 when it is
 * not dense enough, or RMAD_ERR_* */
static int span_read(struct win_peer *p, const struct rmad_peer_run *r,
		     size_t n, size_t bytes, uint8_t *span, uint8_t *cur)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int err;

	for (size_t k = 0; k < n; k++) {
		if (r[k].off < lo)
			lo = r[k].off;
		if (r[k].off + r[k].len > hi)
			hi = r[k].off + r[k].len;
	}
	/* not on a dynamic window, whose gaps may be memory it did not
	 * attach */
	if (!span || p->dyn || hi <= lo ||
	    hi - lo > SPAN_DENSITY * (uint64_t)bytes || hi - lo > SPAN_MAX)
		return 1;
	err = vm_io(p, lo, span, (size_t)(hi - lo), 0);
	for (size_t k = 0, at = 0; k < n && !err; k++) {
		memcpy(cur ? cur + at : r[k].dst, span + (r[k].off - lo),
		       r[k].len);
		at += r[k].len;
	}
	return err;
}

static int runs_batch(struct win_peer *p, uint16_t opc, uint32_t op,
		      const struct rmad_peer_run *r, size_t n, uint8_t *cur,
		      struct iovec *l, uint8_t *span)
{
	struct iovec *rv = l ? l + PEER_RUNS : NULL;
	int acc = opc != RMAD_OPC_PUT && opc != RMAD_OPC_GET;
	int wb = opc != RMAD_OPC_GET && (opc != RMAD_OPC_GACC ||
					 op != RMAD_NO_OP);
	size_t bytes = 0;
	int err = acc ? acc_lock(p) : 0, rd = 1;

	for (size_t k = 0; k < n && !err; k++)
		err = dyn_enter(p, r[k].off, r[k].len);
	for (size_t k = 0; k < n && !err; k++) {
		uint8_t *here = p->base ? (uint8_t *)p->base + r[k].off : NULL;

		if (!acc && here) {
			if (opc == RMAD_OPC_PUT)
				memcpy(here, r[k].src, r[k].len);
			else
				memcpy(r[k].dst, here, r[k].len);
			continue;
		}
		if (acc && here) {
			/* under acc_lock: plain loops where the type has them */
			rmad_acc_apply_excl(here, r[k].src, r[k].dst,
					    r[k].basic, op,
					    r[k].len / rmad_dtype_size(r[k].basic));
			continue;
		}
		l[k].iov_base = acc ? cur + bytes :
				opc == RMAD_OPC_PUT ? (void *)r[k].src :
						      r[k].dst;
		l[k].iov_len = r[k].len;
		rv[k].iov_base = (void *)(uintptr_t)(p->addr + r[k].off);
		rv[k].iov_len = r[k].len;
		bytes += r[k].len;
	}
	if (!err && !p->base && (acc || opc == RMAD_OPC_GET)) {
		rd = span_read(p, r, n, bytes, span, acc ? cur : NULL);
		if (rd < 0)
			err = rd;
	}
	if (!err && !p->base) {
		if (acc) {
			if (rd == 1)
				err = vm_iov(p, l, rv, n, bytes, 0);
			for (size_t k = 0, at = 0; k < n && !err; k++) {
				rmad_acc_apply_excl(cur + at, r[k].src,
						    r[k].dst, r[k].basic, op,
						    r[k].len /
						    rmad_dtype_size(r[k].basic));
				at += r[k].len;
			}
		}
		if (!err && ((!acc && rd == 1) || (acc && wb)))
			err = vm_iov(p, l, rv, n, bytes, wb);
	}
	dyn_leave(p);
	if (acc)
		acc_unlock(p);
	return err;
}

int rmad_peer_runs(struct win_peer *p, uint16_t opc, uint32_t op,
		   const struct rmad_peer_run *r, size_t n)
{
	int acc = opc != RMAD_OPC_PUT && opc != RMAD_OPC_GET;
	struct iovec *iov = NULL;
	uint8_t *cur = NULL, *span = NULL;
	int err = 0;

	if (!p->base &&
	    (!(iov = malloc(2 * PEER_RUNS * sizeof(*iov))) ||
	     (acc && !(cur = malloc(ACC_BATCH))))) {
		free(iov);
		return RMAD_ERR_NOMEM;
	}
	if (!p->base && opc != RMAD_OPC_PUT)
		span = malloc(SPAN_MAX);	/* without: run by run */
	for (size_t k = 0; k < n && !err;) {
		size_t m = 0, bytes = 0;

		/* a run larger than the batch goes alone, in pieces */
		if (acc && !p->base && r[k].len > ACC_BATCH) {
			err = rmad_peer_acc(p, r[k].off, r[k].src, r[k].dst,
					    r[k].basic, op,
					    r[k].len /
					    rmad_dtype_size(r[k].basic));
			k++;
			continue;
		}
		while (k + m < n && m < PEER_RUNS &&
		       (!acc || p->base ||
			(r[k + m].len <= ACC_BATCH - bytes))) {
			bytes += r[k + m].len;
			m++;
		}
		err = runs_batch(p, opc, op, r + k, m, cur, iov, span);
		k += m;
	}
	free(span);
	free(cur);
	free(iov);
	return err;
}
