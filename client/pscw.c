/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pscw.c - active-target synchronization by post, start, complete and
 * wait (rmad_win_post/start/complete/wait/test).
 *
 * A target posts to a group of origins and later waits until each of
 * them has completed; an origin starts an access epoch to a group of
 * targets, whose ops may reach a target only after it posted, and
 * completes it.  The k-th start of an origin that names a target
 * matches the k-th post of that target that names the origin; since a
 * target waits for every origin's complete before it posts again, at
 * most one post from a target to an origin is ever unmatched.
 *
 * Same-node members use shared memory, with no agent in between:
 *  - post sets the target's bit (its index among the node's members of
 *    the window, by rank) in the origin's control page, posted[], and
 *    bumps post_gen (a futex word);
 *  - start waits for and clears the bits of its same-node targets;
 *  - complete adds 1 to each same-node target's pscw_done;
 *  - wait waits until pscw_done reaches the number of origins posted
 *    to, and takes that many off.
 *
 * For members on other nodes the agents carry the notices (agent
 * rma_pscw.c): post hands the agent one POST element per remote origin
 * and returns; start hands it a START element and returns at once,
 * without waiting for the remote posts (ops to a target wait in the
 * agent until its post has come); complete hands it a COMPLETE element
 * per remote target and waits for the last, after which every op of the
 * epoch is complete here and its target's agent will count the complete
 * in that target's pscw_done once the ops are applied (a complete is
 * local, as in MPI; the target's wait is what waits for the data).  A
 * target that posted and
 * went off to compute thus never holds its origins up, and its wait
 * returns at once when they are all done.
 *
 * The memory barriers are the seeds' (rmad(7)): before the notices of
 * post and complete, after those of start and wait.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "counter.h"
#include "internal.h"
#include "log.h"
#include "util.h"

#define POST_MODES	(RMAD_MODE_NOCHECK | RMAD_MODE_NOSTORE | RMAD_MODE_NOPUT)
#define START_MODES	RMAD_MODE_NOCHECK

/* This process's control page in window w. */
static struct rmad_win_ctl *my_ctl(rmad_win_t w)
{
	return w->ctl;
}

/* rank's index among the node's members of w (by rank), or -1. */
static int local_index(rmad_win_t w, int rank)
{
	int k = 0, seen = 0;

	for (int i = 0; i < w->npeers; i++) {
		k += w->peers[i].rank < rank;
		seen |= w->peers[i].rank == rank;
	}
	return seen && k < RMAD_WIN_MAX_LOCAL ? k : -1;
}

/*
 * The ranks of group g, checked against w: all members (RMAD_ERR_RANK
 * otherwise), none twice.  *out is malloc'd and sorted; *nremote counts
 * those on other nodes.
 */
static int group_ranks(rmad_group_t g, rmad_win_t w, int32_t **out, int *n,
		       int *nremote)
{
	int32_t *r;
	int err = rmad_group_members(g, n);

	*out = NULL;
	*nremote = 0;
	if (err)
		return err;
	r = malloc(sizeof(*r) * (size_t)(*n ? *n : 1));
	if (!r)
		return RMAD_ERR_NOMEM;
	for (int i = 0; i < *n; i++) {
		struct win_peer *p;
		uint64_t size;
		int du;

		r[i] = rmad_group_rank(g, i);
		if (r[i] < 0 || r[i] >= rmad_cl.b.size ||
		    rmad_win_target(w, r[i], &p, &size, &du)) {
			free(r);
			return RMAD_ERR_RANK;
		}
		*nremote += !p;
	}
	qsort(r, (size_t)*n, sizeof(*r), rmad_cmp_int);
	for (int i = 1; i < *n; i++)
		if (r[i] == r[i - 1]) {
			free(r);
			return RMAD_ERR_ARG;
		}
	*out = r;
	return 0;
}

/* What every call checks first. */
static int pscw_args(rmad_win_t w)
{
	if (!rmad_win_ok(w))
		return RMAD_ERR_ARG;
	if (!rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	return 0;
}

static void pscw_elem(rmad_win_t w, uint16_t opc, int32_t target, int assert,
		      struct rmad_op_elem *t)
{
	memset(t, 0, sizeof(*t));
	t->opcode = opc;
	t->win = w->block;
	t->ticket = w->key;
	t->target = target;
	if (opc == RMAD_OPC_START)
		rmad_lock_fields(w, 0, assert, &t->lock);
}

/*
 * Wait until done(w, arg) says so, spinning and then sleeping on *word
 * (with *sleepers counted): a wait on other clients of the node alone
 * (peer) spins as rmad_peer_spin says, one the agent may end as
 * rmad_wait_spin says.  A member's death, which the agent reports in
 * bar_failed and wakes us for, or the agent's, ends the wait with an
 * error.
 */
static int wait_word(struct rmad_client *c, rmad_win_t w, uint32_t *word,
		     uint32_t *sleepers, int peer,
		     int (*done)(rmad_win_t, void *), void *arg)
{
	struct rmad_win_ctl *me = my_ctl(w);
	uint64_t t0 = rmad_now_ns();

	for (unsigned int n = 1;; n++) {
		uint32_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
		int err;

		if (done(w, arg))
			break;
		if (__atomic_load_n(&me->bar_failed, __ATOMIC_ACQUIRE))
			return RMAD_ERR_PROC_FAILED;
		if (peer ? rmad_peer_spin(c, t0, n) : rmad_wait_spin(c, t0, n))
			continue;
		__atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
		if (!done(w, arg) &&
		    __atomic_load_n(word, __ATOMIC_SEQ_CST) == v)
			rmad_futex_wait(word, v, 100 * 1000 * 1000);
		__atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
		err = rmad_agent_gone(c);
		if (err)
			return err;
	}
	rmad_win_count(&w->st_sync_wait_ns, rmad_now_ns() - t0);
	return 0;
}

/* -------------------------------------------------------------- target */

int rmad_win_post(rmad_group_t group, int assert, rmad_win_t handle)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t w = rmad_win_get(handle);
	int me, n, nremote, err = pscw_args(w);
	int32_t *r;

	if (err)
		return err;
	rmad_win_count(&w->st_sync_calls, 1);
	if (assert & ~POST_MODES)
		return RMAD_ERR_ARG;
	if (w->exposed || w->epoch == EPOCH_LOCK || w->epoch == EPOCH_LOCK_ALL)
		return RMAD_ERR_SYNC;
	if (w->epoch == EPOCH_FENCE && rmad_leave_fence(w))
		return RMAD_ERR_SYNC;	/* a fence epoch is open */
	err = group_ranks(group, w, &r, &n, &nremote);
	if (err)
		return err;
	me = local_index(w, c->b.rank);
	if (me < 0 || (nremote && c->dead)) {
		free(r);
		return me < 0 ? RMAD_ERR_INTERNAL : RMAD_ERR_AGENT;
	}
	/* our stores before any origin's access */
	rmad_smp_mb();
	for (int i = 0; i < n && !(assert & RMAD_MODE_NOCHECK); i++) {
		struct win_peer *p;
		uint64_t size;
		int du;

		rmad_win_target(w, r[i], &p, &size, &du);
		if (p) {
			struct rmad_win_ctl *o = p->ctl;

			__atomic_fetch_or(&o->posted[me / 32], 1u << (me % 32),
					  __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&o->post_gen, 1, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&o->post_sleepers,
					    __ATOMIC_SEQ_CST))
				rmad_futex_wake(&o->post_gen, INT_MAX);
		} else {
			struct rmad_op_elem t;

			pscw_elem(w, RMAD_OPC_POST, r[i], 0, &t);
			err = rmad_async_elem(c, w, &t);
			if (err)
				break;	/* the agent is gone */
		}
	}
	free(r);
	if (err)
		return err;
	w->exposed = 1;
	w->post_n = n;
	return 0;
}

static int all_completed(rmad_win_t w, void *arg)
{
	(void)arg;
	return __atomic_load_n(&my_ctl(w)->pscw_done, __ATOMIC_ACQUIRE) >=
	       (uint32_t)w->post_n;
}

/* The exposure epoch's end, once every origin completed. */
static void exposure_end(rmad_win_t w)
{
	__atomic_sub_fetch(&my_ctl(w)->pscw_done, (uint32_t)w->post_n,
			   __ATOMIC_SEQ_CST);
	w->exposed = 0;
	w->post_n = 0;
	/* the origins' accesses before our loads and stores */
	rmad_smp_mb();
}

int rmad_win_wait(rmad_win_t handle)
{
	struct rmad_win_ctl *me;
	rmad_win_t w = rmad_win_get(handle);
	int err = pscw_args(w);

	if (err)
		return err;
	rmad_win_count(&w->st_sync_calls, 1);
	if (!w->exposed)
		return RMAD_ERR_SYNC;
	me = my_ctl(w);
	/* the agent counts the completes of other nodes' origins */
	err = wait_word(&rmad_cl, w, &me->pscw_done, &me->pscw_sleepers,
			!w->remote_members, all_completed, NULL);
	if (err) {
		/* a member died: the epoch cannot end otherwise */
		w->exposed = 0;
		return err;
	}
	exposure_end(w);
	return 0;
}

int rmad_win_test(rmad_win_t handle, int *flag)
{
	rmad_win_t w = rmad_win_get(handle);
	int err = pscw_args(w);

	if (err)
		return err;
	if (!flag)
		return RMAD_ERR_ARG;
	rmad_win_count(&w->st_sync_calls, 1);
	if (!w->exposed)
		return RMAD_ERR_SYNC;
	*flag = 0;
	if (!all_completed(w, NULL)) {
		if (__atomic_load_n(&my_ctl(w)->bar_failed, __ATOMIC_ACQUIRE)) {
			w->exposed = 0;
			return RMAD_ERR_PROC_FAILED;
		}
		return rmad_agent_gone(&rmad_cl);
	}
	exposure_end(w);
	*flag = 1;
	return 0;
}

/* -------------------------------------------------------------- origin */

int rmad_pscw_covers(rmad_win_t w, int rank)
{
	int32_t r = rank;

	return bsearch(&r, w->acc, (size_t)w->nacc, sizeof(r),
		       rmad_cmp_int) != NULL;
}

/* Has the same-node target of local index k posted to us? */
static int bit_set(rmad_win_t w, void *arg)
{
	int k = *(int *)arg;

	return !!(__atomic_load_n(&my_ctl(w)->posted[k / 32],
				  __ATOMIC_ACQUIRE) & (1u << (k % 32)));
}

int rmad_win_start(rmad_group_t group, int assert, rmad_win_t handle)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t w = rmad_win_get(handle);
	struct rmad_win_ctl *me;
	int n, nremote, err = pscw_args(w);
	int32_t *r;

	if (err)
		return err;
	rmad_win_count(&w->st_sync_calls, 1);
	if (assert & ~START_MODES)
		return RMAD_ERR_ARG;
	if (w->epoch == EPOCH_FENCE && rmad_leave_fence(w))
		return RMAD_ERR_SYNC;
	if (w->epoch != EPOCH_NONE)
		return RMAD_ERR_SYNC;
	err = group_ranks(group, w, &r, &n, &nremote);
	if (err)
		return err;
	me = my_ctl(w);
	if (!(assert & RMAD_MODE_NOCHECK) &&
	    bsearch(&(int32_t){ c->b.rank }, r, (size_t)n, sizeof(*r),
		    rmad_cmp_int)) {
		/* our own post must be in already: nobody else can make it */
		int k = local_index(w, c->b.rank);

		if (k < 0 || !bit_set(w, &k)) {
			free(r);
			return RMAD_ERR_SYNC;
		}
	}
	if (nremote) {
		struct rmad_op_elem t;

		pscw_elem(w, RMAD_OPC_START, -1, assert, &t);
		err = c->dead ? RMAD_ERR_AGENT : rmad_async_elem(c, w, &t);
		if (err) {
			free(r);
			return err;
		}
	}
	/* the same-node targets' posts: waited for here, since our ops on
	 * them go in place (under NOCHECK they are promised) */
	for (int i = 0; i < n && !(assert & RMAD_MODE_NOCHECK); i++) {
		struct win_peer *p;
		uint64_t size;
		int du, k;

		rmad_win_target(w, r[i], &p, &size, &du);
		if (!p)
			continue;
		k = local_index(w, r[i]);
		if (k < 0) {
			err = RMAD_ERR_INTERNAL;
			break;
		}
		err = wait_word(c, w, &me->post_gen, &me->post_sleepers, 1,
				bit_set, &k);
		if (err)
			break;
		__atomic_fetch_and(&me->posted[k / 32], ~(1u << (k % 32)),
				   __ATOMIC_SEQ_CST);
	}
	/* an error here leaves the access epoch open, so that complete
	 * can still end the agent's side of it */
	free(w->acc);
	w->acc = r;
	w->nacc = n;
	w->acc_remote = nremote;
	w->epoch = EPOCH_PSCW;
	/* the targets' posts before our accesses */
	rmad_smp_mb();
	return err;
}

int rmad_win_complete(rmad_win_t handle)
{
	struct rmad_client *c = &rmad_cl;
	rmad_win_t w = rmad_win_get(handle);
	int err = pscw_args(w);

	if (err)
		return err;
	rmad_win_count(&w->st_sync_calls, 1);
	if (w->epoch != EPOCH_PSCW)
		return RMAD_ERR_SYNC;
	/* our in-place accesses before the targets' wait */
	rmad_smp_mb();
	for (int i = 0; i < w->nacc; i++) {
		struct win_peer *p;
		uint64_t size;
		int du;

		rmad_win_target(w, w->acc[i], &p, &size, &du);
		if (p) {
			__atomic_add_fetch(&p->ctl->pscw_done, 1,
					   __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&p->ctl->pscw_sleepers,
					    __ATOMIC_SEQ_CST))
				rmad_futex_wake(&p->ctl->pscw_done, INT_MAX);
		} else if (!err) {
			struct rmad_op_elem t;

			pscw_elem(w, RMAD_OPC_COMPLETE, w->acc[i], 0, &t);
			err = c->dead ? RMAD_ERR_AGENT :
					rmad_async_elem(c, w, &t);
		}
	}
	if (w->acc_remote && !err) {
		struct rmad_op_elem t;
		uint64_t t0 = rmad_now_ns();

		/* the epoch's end: every op complete, every notice sent */
		pscw_elem(w, RMAD_OPC_COMPLETE, -1, 0, &t);
		err = rmad_sync_elem(c, w, &t);
		rmad_win_count(&w->st_sync_wait_ns, rmad_now_ns() - t0);
		flushed_upto_all(w);
	}
	free(w->acc);
	w->acc = NULL;
	w->nacc = 0;
	w->acc_remote = 0;
	w->epoch = EPOCH_NONE;
	return err;
}
