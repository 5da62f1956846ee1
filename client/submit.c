/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * submit.c - the client half of the submission path: op elements
 * (allocation from this client's list and the windows' reserves, the one
 * routine that fills an element in, freeing), submission on the ring,
 * the doorbell, and the sync ops waited for.
 *
 * Submitting: pop an op element from this client's list, fill it
 * (rmad_op_fill), push its index on the ring, and kick the doorbell only
 * if the agent said it sleeps (NEED_WAKEUP).  Waiting: on the completion
 * counters, with a futex, waking every 50 ms to check that the agent
 * still lives.
 */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "counter.h"
#include "internal.h"
#include "log.h"
#include "pool.h"
#include "ring.h"
#include "trace.h"
#include "util.h"

/* Ring the agent's doorbell (rmad_win_kick, internal.h). */
static void kick(struct rmad_client *c)
{
	uint64_t one = 1;

	if (write(c->doorbell, &one, sizeof(one)) < 0) {
		/* a full eventfd counter still wakes the agent */
	}
}

void rmad_win_kick(struct rmad_client *c)
{
	kick(c);
}

static struct rmad_pool_view my_view(struct rmad_client *c)
{
	struct rmad_pool_view v = {
		.base = (char *)c->seg + c->hdr->off_ops,
		.stride = sizeof(struct rmad_op_elem),
		.first = 0,
		.n = rmad_shm_nops_client(c->hdr),
	};
	return v;
}

static int resv_windows(struct rmad_client *c)
{
	return __atomic_load_n(&c->nresv_wins, __ATOMIC_ACQUIRE);
}

/*
 * Window op pools.  The agent returns every element, reserved or not, to
 * our one list, so the elements reserved to a window are sorted out on
 * the way: an element of another window's reserve that we pop goes to
 * that window's stash, and the search goes on.  So a window takes its
 * own reserve first, then the list, and one window's held-back ops
 * cannot use up the elements another window reserved.
 */
static uint32_t pick_op(struct rmad_client *c, rmad_win_t w,
			struct rmad_pool_view *v)
{
	uint32_t nops = rmad_shm_nops_client(c->hdr), i;

	pthread_mutex_lock(&c->pool_lock);
	if (w && w->nstash) {
		i = w->stash[--w->nstash];
		pthread_mutex_unlock(&c->pool_lock);
		return i;
	}
	while ((i = rmad_pool_get(&c->me->op_free, v)) != RMAD_NIL) {
		rmad_win_t h = c->op_home && i < nops ? c->op_home[i] : NULL;

		/* a full stash cannot happen: then use the element */
		if (!h || h == w || h->nstash >= h->nresv)
			break;
		h->stash[h->nstash++] = i;
	}
	pthread_mutex_unlock(&c->pool_lock);
	return i;
}

/*
 * The next free element was last written on the agent's core (it gave
 * it back): ask for its lines, for writing, while this op is filled in
 * and submitted, so the next op's get and fill find them here.  Only a
 * hint: the element may be taken by another thread first.
 */
static void prefetch_next(struct rmad_client *c)
{
	uint32_t i = (uint32_t)load_relaxed(&c->me->op_free.head);

	if (i < rmad_shm_nops_client(c->hdr)) {
		const char *e = (const char *)rmad_shm_op_at(c->seg, c->hdr,
							     i);

		__builtin_prefetch(e, 1);
		__builtin_prefetch(e + 64, 1);
	}
}

int rmad_op_alloc(struct rmad_client *c, rmad_win_t w, uint32_t *idx)
{
	struct rmad_pool_view v = my_view(c);

	for (;;) {
		uint64_t seen = rmad_counter_read(c->me, RMAD_CNT_FREED);
		uint32_t i;
		int err;

		if (resv_windows(c))
			i = pick_op(c, w, &v);
		else
			i = rmad_pool_get(&c->me->op_free, &v);
		if (i != RMAD_NIL) {
			/*
			 * Ours now, but a racing pop in another thread may
			 * still read its link (and fail its CAS): the link
			 * is written atomically, here only, and the callers
			 * fill in the element from its opcode on.
			 */
			struct rmad_op_elem *e = rmad_shm_op_at(c->seg,
								c->hdr, i);

			RMAD_TSAN_ACQUIRE(e);
			__atomic_store_n(&e->next, RMAD_NIL, __ATOMIC_RELAXED);
			*idx = i;
			prefetch_next(c);
			return 0;
		}
		/* our list is dry: ask the agent to lend from the global one */
		store_release(&c->me->want_ops, 1);
		rmad_smp_mb();
		kick(c);
		err = rmad_counter_wait(c->me, RMAD_CNT_FREED, seen + 1,
					rmad_spin_us(c), rmad_agent_gone,
					c);
		if (err)
			return err;
	}
}

void rmad_op_free(struct rmad_client *c, uint32_t idx)
{
	struct rmad_pool_view v = my_view(c);

	RMAD_TSAN_RELEASE(rmad_shm_op_at(c->seg, c->hdr, idx));
	if (resv_windows(c)) {
		rmad_win_t h;

		pthread_mutex_lock(&c->pool_lock);
		h = c->op_home && idx < rmad_shm_nops_client(c->hdr) ?
		    c->op_home[idx] : NULL;
		if (h && h->nstash < h->nresv) {
			h->stash[h->nstash++] = idx;
			pthread_mutex_unlock(&c->pool_lock);
			return;
		}
		pthread_mutex_unlock(&c->pool_lock);
	}
	rmad_pool_put(&c->me->op_free, &v, idx);
}

int rmad_op_submit(struct rmad_client *c, uint32_t idx)
{
	uint32_t mask = c->hdr->ring_entries - 1;

	RMAD_TSAN_RELEASE(rmad_shm_op_at(c->seg, c->hdr, idx));
	while (rmad_ring_push(c->me->ring, mask, &c->me->sq_tail, idx) < 0) {
		int err = rmad_agent_gone(c);

		if (err)
			return err;
		kick(c);
		sched_yield();
	}
	/*
	 * Full fence: our push before the read of NEED_WAKEUP, pairing with
	 * the agent's fence between setting it and its last look at the
	 * rings.  One ring per sleep of the agent (its epoch) and process is
	 * enough: while the flag stays set after it, the agent has not yet
	 * run, and it looks at every ring when it does.
	 */
	rmad_smp_mb();
	if (load_acquire(&c->hdr->agent_flags) & RMAD_AGENT_NEED_WAKEUP) {
		uint32_t e = load_relaxed(&c->hdr->sleep_epoch);

		if (__atomic_exchange_n(&c->rung_epoch, e,
					__ATOMIC_RELAXED) != e)
			kick(c);
	}
	return 0;
}

struct rmad_op_elem *rmad_op_fill(struct rmad_client *c, uint32_t idx,
				  const struct rmad_op_elem *t, int whole)
{
	struct rmad_op_elem *e = rmad_shm_op_at(c->seg, c->hdr, idx);
	size_t len = (whole ? sizeof(*e) :
		      offsetof(struct rmad_op_elem, data)) -
		     offsetof(struct rmad_op_elem, opcode);

	/* all but the link (see rmad_op_alloc) */
	if (t)
		memcpy(&e->opcode, &t->opcode, len);
	else
		memset(&e->opcode, 0, len);
	e->owner = c->slot;
	e->owner_gen = c->reg.gen;
	return e;
}

/*
 * A thread asleep outside rmad (mpi_api.h): one more waiter on the sync
 * counter, which moves only for sync ops, so the agent's only extra work
 * is a futex wake on each of those while it is marked.
 */
void rmad_idle_mark(int on)
{
	struct rmad_client *c = &rmad_cl;

	if (!c->initialized || !c->me)
		return;
	if (on)
		uatomic_inc(&c->me->waiters[RMAD_CNT_SYNC]);
	else
		uatomic_dec(&c->me->waiters[RMAD_CNT_SYNC]);
}

/*
 * Post t as a KEEP|SYNC element and wait for its answer, one at a time
 * per process (sync_lock): SYNC completions then come in ticket order.
 * A staged op also owns the staging area meanwhile: in (inlen bytes)
 * goes to its start first, and outlen bytes at off come back to out.
 */
static int sync_wait(struct rmad_client *c, rmad_win_t w,
		     const struct rmad_op_elem *t,
		     uint16_t flags, const void *in, size_t inlen, void *out,
		     size_t outlen, uint64_t off)
{
	uint8_t *stage = rmad_shm_staging_at(c->seg, c->hdr, 0);
	struct rmad_op_elem *e;
	uint32_t idx;
	uint64_t want;
	int err, st;

	if (c->dead)
		return RMAD_ERR_AGENT;
	pthread_mutex_lock(&c->sync_lock);
	err = rmad_op_alloc(c, w, &idx);
	if (err)
		goto out;
	if (inlen)
		memcpy(stage, in, inlen);
	e = rmad_op_fill(c, idx, t, RMAD_OPFILL_WHOLE);
	e->flags = (uint16_t)(RMAD_OPF_KEEP | RMAD_OPF_SYNC | flags);
	e->status = RMAD_ERR_INTERNAL;
	want = ++c->sync_issued;
	RMAD_TR(RMAD_TR_SYNC, t->opcode);
	err = rmad_op_submit(c, idx);
	if (err) {
		/* never reached the ring: it is still ours to free */
		c->sync_issued--;
		rmad_op_free(c, idx);
		goto out;
	}
	err = rmad_counter_wait(c->me, RMAD_CNT_SYNC, want,
				rmad_spin_us(c), rmad_agent_gone, c);
	RMAD_TR(RMAD_TR_SYNC_DONE, err);
	if (err)
		goto out;
	st = load_relaxed(&e->status);
	rmad_op_free(c, idx);
	err = st <= 0 && st >= RMAD_ERR_LAST ? st : RMAD_ERR_INTERNAL;
	if (!err && outlen)
		memcpy(out, stage + off, outlen);
out:
	pthread_mutex_unlock(&c->sync_lock);
	return err;
}

int rmad_async_elem(struct rmad_client *c, rmad_win_t w,
		    const struct rmad_op_elem *t)
{
	struct rmad_op_elem *e;
	uint32_t idx;
	int err = rmad_op_alloc(c, w, &idx);

	if (err)
		return err;
	e = rmad_op_fill(c, idx, t, RMAD_OPFILL_WHOLE);
	e->flags &= ~RMAD_OPF_KEEP;
	err = rmad_op_submit(c, idx);
	if (err)
		rmad_op_free(c, idx);
	return err;
}

int rmad_sync_elem(struct rmad_client *c, rmad_win_t w,
		   const struct rmad_op_elem *t)
{
	return sync_wait(c, w, t, 0, NULL, 0, NULL, 0, 0);
}

int rmad_staged_op(struct rmad_client *c, rmad_win_t w,
		   struct rmad_op_elem *t,
		   const void *in, size_t inlen, void *out, size_t outlen,
		   uint64_t off)
{
	if (inlen > c->hdr->staging_size || off > c->hdr->staging_size ||
	    outlen > c->hdr->staging_size - off)
		return RMAD_ERR_ARG;
	return sync_wait(c, w, t,
			 (uint16_t)(RMAD_OPF_STAGED |
				    (t->flags & (RMAD_OPF_INLINE |
						 RMAD_OPF_TBYTES))),
			 in, inlen, out, outlen, off);
}

int rmad_sync_op(struct rmad_client *c, uint16_t opcode, int32_t target,
		 uint64_t ticket)
{
	struct rmad_op_elem t = { 0 };

	t.opcode = opcode;
	t.target = target;
	t.ticket = ticket;
	return rmad_sync_elem(c, NULL, &t);
}

/* How many indices one OPS_RESERVE or OPS_RETURN carries. */
static uint32_t pool_batch(struct rmad_client *c)
{
	return (uint32_t)(c->hdr->staging_size / sizeof(uint32_t)) - 1;
}

int rmad_op_pool_reserve(struct rmad_client *c, rmad_win_t w, long want)
{
	uint32_t nops = rmad_shm_nops_client(c->hdr), batch = pool_batch(c);
	uint32_t *buf;
	int err = 0;

	if (want <= 0 || c->dead)
		return 0;
	if (want > (long)c->hdr->op_pool_size)
		want = (long)c->hdr->op_pool_size;	/* all there is */
	if (!want)
		return 0;
	pthread_mutex_lock(&c->pool_lock);
	if (!c->op_home)
		c->op_home = calloc(nops, sizeof(*c->op_home));
	pthread_mutex_unlock(&c->pool_lock);
	w->stash = calloc((size_t)want, sizeof(*w->stash));
	buf = calloc((size_t)batch + 1, sizeof(*buf));
	if (!c->op_home || !w->stash || !buf) {
		free(buf);
		free(w->stash);
		w->stash = NULL;
		return RMAD_ERR_NOMEM;
	}
	while (w->nresv < (uint32_t)want) {
		struct rmad_op_elem t = { 0 };
		uint32_t ask = (uint32_t)want - w->nresv, n;

		if (ask > batch)
			ask = batch;
		t.opcode = RMAD_OPC_OPS_RESERVE;
		t.count = ask;
		err = rmad_staged_op(c, NULL, &t, NULL, 0, buf,
				     ((size_t)ask + 1) * sizeof(*buf), 0);
		if (err)
			break;
		/* the staging area is in reach of every client: check it */
		n = buf[0] < ask ? buf[0] : ask;
		pthread_mutex_lock(&c->pool_lock);
		for (uint32_t k = 0; k < n; k++) {
			uint32_t g = buf[1 + k];

			if (g >= c->hdr->op_pool_size || c->op_home[g])
				continue;
			c->op_home[g] = w;
			w->stash[w->nstash++] = g;
			w->nresv++;
		}
		pthread_mutex_unlock(&c->pool_lock);
		if (buf[0] < ask)
			break;		/* the agent granted all it would */
	}
	free(buf);
	if (!w->nresv) {
		free(w->stash);
		w->stash = NULL;
	}
	if (w->nresv)
		__atomic_add_fetch(&c->nresv_wins, 1, __ATOMIC_RELEASE);
	rmad_dbg("window %llx: %u of %ld op elements reserved",
		 (unsigned long long)w->key, w->nresv, want);
	return err;
}

#define POOL_DRAIN_MS	2000

/*
 * The window is gone: gather its reserved elements from our list (its
 * operations are over, so they come home soon if not yet) and give them
 * back to the agent.  One that does not turn up in time stays with us as
 * an ordinary element; the agent takes it back when we detach.
 */
void rmad_op_pool_return(struct rmad_client *c, rmad_win_t w)
{
	struct rmad_pool_view v = my_view(c);
	uint32_t nops = rmad_shm_nops_client(c->hdr), batch = pool_batch(c);
	uint64_t t0 = rmad_now_ns();
	uint32_t *other, nother = 0;
	uint32_t done = 0;

	if (!w->nresv)
		return;
	other = calloc(nops, sizeof(*other));
	pthread_mutex_lock(&c->pool_lock);
	while (other && !c->dead && w->nstash < w->nresv) {
		uint32_t i = rmad_pool_get(&c->me->op_free, &v);
		rmad_win_t h = i < nops ? c->op_home[i] : NULL;

		if (i == RMAD_NIL) {
			/* not home yet: let others have the rest meanwhile */
			while (nother)
				rmad_pool_put(&c->me->op_free, &v,
					      other[--nother]);
			pthread_mutex_unlock(&c->pool_lock);
			if (rmad_now_ns() - t0 >
			    (uint64_t)POOL_DRAIN_MS * 1000000ull ||
			    rmad_agent_gone(c)) {
				pthread_mutex_lock(&c->pool_lock);
				break;
			}
			usleep(1000);
			pthread_mutex_lock(&c->pool_lock);
			continue;
		}
		if (h == w)
			w->stash[w->nstash++] = i;
		else if (h && h->nstash < h->nresv)
			h->stash[h->nstash++] = i;
		else
			other[nother++] = i;
	}
	while (nother)
		rmad_pool_put(&c->me->op_free, &v, other[--nother]);
	if (w->nstash < w->nresv)
		rmad_warn("window %llx: %u of %u reserved op elements did not "
			  "come back; kept until detach",
			  (unsigned long long)w->key, w->nresv - w->nstash,
			  w->nresv);
	for (uint32_t i = 0; i < nops; i++)
		if (c->op_home[i] == w)
			c->op_home[i] = NULL;
	w->nresv = 0;
	pthread_mutex_unlock(&c->pool_lock);
	__atomic_sub_fetch(&c->nresv_wins, 1, __ATOMIC_RELEASE);
	free(other);
	while (done < w->nstash && !c->dead) {
		struct rmad_op_elem t = { 0 };
		uint32_t n = w->nstash - done < batch ? w->nstash - done :
			     batch;

		t.opcode = RMAD_OPC_OPS_RETURN;
		t.count = n;
		if (rmad_staged_op(c, NULL, &t, w->stash + done,
				   (size_t)n * sizeof(*w->stash), NULL, 0, 0))
			break;
		done += n;
	}
	free(w->stash);
	w->stash = NULL;
	w->nstash = 0;
}
