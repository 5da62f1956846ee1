/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_pingpong.c - two-process test and latency probe for agent/fabric.
 *
 * The parent (node 0) forks a child (node 1); each opens the same
 * provider and they swap endpoint names over a pipe pair, as agents do
 * through PMIx.  Then: a timed ping-pong, a burst in both directions that
 * overflows the send buffers (exactly once, in order), a message to self,
 * an urgent send that overtakes a queue of them (a heartbeat: it must
 * not wait behind bulk traffic), the largest message and refused
 * sends, and, where the provider has a
 * wait fd, a check that sleeping on it wakes up when a message comes in
 * from the other process.  Only the parent prints TAP; the child reports
 * over the fabric and through its exit status.
 *
 * Usage: fabric_pingpong [-p provider] [-n iters] [-s am_buf_size] [-a]
 *
 * -a runs it all with tags (rmad_fabric_set_auth), each side under its
 * own key: every message must still pass, bound to the session and
 * fresh, and none be rejected but two that the child sends by hand: the
 * bytes of a message of its played again, and the same with another
 * sequence number in its trailer (the tag no longer matches); and one
 * message bound to a session the parent does not have, counted stale.
 * The tags' logic (fabric_tag.h) is also checked in-process, two nodes'
 * worth of keys and sessions side by side, with or without -a.
 *
 * A large -s (256k, say) makes tcp;ofi_rxm move the biggest messages by
 * rendezvous, which completes out of order; delivery must still be in
 * order.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "tap.h"
#include "rmad_abi.h"
#include "log.h"
#include "agent/fabric.h"
#include "agent/fabric_impl.h"
#include "agent/secret.h"

#define PP_RECV_BUFS	64
#define PP_SEND_BUFS	16	/* far below the burst: forces queueing */
#define PP_BURST	5000
#define PP_PING_LEN	32
#define PP_SLEEP_MS	3000	/* a wait fd that never fires shows as this */

enum pp_type {
	PP_PING = 1,
	PP_PONG,
	PP_BURST_GO,
	PP_BURST_MSG,
	PP_BURST_END,
	PP_BURST_ACK,
	PP_SELF,
	PP_BIG,
	PP_BIG_ECHO,
	PP_WAKE_GO,
	PP_WAKE_READY,
	PP_WAKE,
	PP_WAKE_ACK,
	PP_REPLAY_GO,
	PP_REPLAY_MSG,
	PP_REPLAY_END,
	PP_UMSG,
	PP_URGENT,
	PP_UEND,
	PP_UACK,
};

struct pp_hdr {
	uint32_t type;
	uint32_t src;
	uint32_t seq;
	uint32_t len;		/* payload bytes after the header */
	uint32_t a, b, c;	/* type-specific */
};

struct pp {
	struct rmad_fabric *f;
	int self, peer;
	int errors;		/* anything unexpected */
	int sourced;		/* messages whose sender the provider named */

	uint32_t pong_expect;
	int pong_got, pong_bad;

	int burst_go;
	uint32_t burst_next, burst_bad;
	int burst_end;
	uint32_t burst_end_count;
	int burst_ack;
	uint32_t ack_got, ack_bad, ack_end_count;

	int self_got, self_ok;
	int big_got, big_ok;

	int wake_go, wake_ready, wake_got, wake_ack;
	uint32_t ack_sleeps, ack_timeouts, ack_last_us;

	int replay_go, replay_got, replay_end;
	uint32_t replay_sent, stale_sent;

	uint32_t umsg_got, urgent_at;	/* child: PP_UMSG before PP_URGENT */
	int uack;
	uint32_t uack_got, uack_at;
};

static pid_t child_pid = -1;
static size_t buf_size = 4096;	/* am_buf_size, -s */
static uint8_t *scratch;	/* buf_size + 1 bytes of payload */

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint8_t pattern(uint32_t src, uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + src * 29u + (i >> 8));
}

static void fill(uint8_t *p, size_t len, uint32_t src, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(src, seq, i);
}

static int check(const uint8_t *p, size_t len, uint32_t src, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(src, seq, i))
			return 0;
	return 1;
}

static int pp_send(struct pp *pp, int node, uint32_t type, uint32_t seq,
		   const void *payload, size_t plen, uint32_t a, uint32_t b,
		   uint32_t c)
{
	struct pp_hdr h = {
		.type = type, .src = (uint32_t)pp->self, .seq = seq,
		.len = (uint32_t)plen, .a = a, .b = b, .c = c,
	};
	int ret;

	ret = rmad_fabric_send(pp->f, node, &h, sizeof(h), payload, plen);
	if (ret) {
		rmad_err("send type %u to %d: %d", type, node, ret);
		pp->errors++;
	}
	return ret;
}

/* The same callback serves both processes; each only sees its share. */
static void pp_recv(void *arg, const void *msg, size_t len, int src,
		    unsigned flags)
{
	struct pp *pp = arg;
	const uint8_t *payload = (const uint8_t *)msg + sizeof(struct pp_hdr);
	struct pp_hdr h;

	if (len < sizeof(h)) {
		rmad_err("short message: %zu bytes", len);
		pp->errors++;
		return;
	}
	memcpy(&h, msg, sizeof(h));
	if (h.len != len - sizeof(h)) {
		rmad_err("type %u: length %u in a %zu byte message", h.type,
			 h.len, len);
		pp->errors++;
		return;
	}
	/* the provider names the sender (FI_SOURCE), where it can */
	if (src != RMAD_FABRIC_SRC_UNKNOWN && src != (int)h.src) {
		rmad_err("type %u from node %u came from node %d", h.type,
			 h.src, src);
		pp->errors++;
		return;
	}
	pp->sourced += src != RMAD_FABRIC_SRC_UNKNOWN;
	if (!(flags & RMAD_FABRIC_FRESH)) {
		rmad_err("type %u from node %u: not bound to our session",
			 h.type, h.src);
		pp->errors++;
	}
	switch (h.type) {
	case PP_PING:
		/* Echo from inside the callback, as the agent will. */
		pp_send(pp, (int)h.src, PP_PONG, h.seq, payload, h.len, 0, 0,
			0);
		if (!check(payload, h.len, h.src, h.seq))
			pp->errors++;
		break;
	case PP_PONG:
		if (h.seq != pp->pong_expect ||
		    !check(payload, h.len, (uint32_t)pp->self, h.seq))
			pp->pong_bad++;
		pp->pong_got++;
		break;
	case PP_BURST_GO:
		pp->burst_go = 1;
		break;
	case PP_BURST_MSG:
		if (h.src != (uint32_t)pp->peer || h.seq != pp->burst_next ||
		    pp->burst_end || !check(payload, h.len, h.src, h.seq))
			pp->burst_bad++;
		pp->burst_next = h.seq + 1;
		break;
	case PP_BURST_END:
		pp->burst_end = 1;
		pp->burst_end_count = h.a;
		break;
	case PP_BURST_ACK:
		pp->burst_ack = 1;
		pp->ack_got = h.a;
		pp->ack_bad = h.b;
		pp->ack_end_count = h.c;
		break;
	case PP_SELF:
		pp->self_got++;
		pp->self_ok = h.src == (uint32_t)pp->self &&
			      check(payload, h.len, h.src, h.seq);
		break;
	case PP_BIG:
		if (!check(payload, h.len, h.src, h.seq))
			pp->errors++;
		pp_send(pp, (int)h.src, PP_BIG_ECHO, h.seq, payload, h.len, 0,
			0, 0);
		break;
	case PP_BIG_ECHO:
		pp->big_got++;
		pp->big_ok = len == buf_size &&
			     check(payload, h.len, (uint32_t)pp->self, h.seq);
		break;
	case PP_WAKE_GO:
		pp->wake_go = 1;
		break;
	case PP_WAKE_READY:
		pp->wake_ready = 1;
		break;
	case PP_WAKE:
		pp->wake_got = 1;
		break;
	case PP_WAKE_ACK:
		pp->wake_ack = 1;
		pp->ack_sleeps = h.a;
		pp->ack_timeouts = h.b;
		pp->ack_last_us = h.c;
		break;
	case PP_REPLAY_GO:
		pp->replay_go = 1;
		break;
	case PP_REPLAY_MSG:
		pp->replay_got++;
		if (h.seq != 77 || !check(payload, h.len, h.src, h.seq))
			pp->errors++;
		break;
	case PP_REPLAY_END:
		pp->replay_end = 1;
		pp->replay_sent = h.a;
		pp->stale_sent = h.b;
		break;
	case PP_UMSG:
		pp->umsg_got++;
		break;
	case PP_URGENT:
		pp->urgent_at = pp->umsg_got;
		break;
	case PP_UEND:
		pp_send(pp, (int)h.src, PP_UACK, 0, NULL, 0, pp->umsg_got,
			pp->urgent_at, 0);
		break;
	case PP_UACK:
		pp->uack = 1;
		pp->uack_got = h.a;
		pp->uack_at = h.b;
		break;
	default:
		rmad_err("unknown message type %u", h.type);
		pp->errors++;
	}
}

/* Busy-poll until *flag is set; the alarm catches a hang. */
static int spin_until(struct pp *pp, const int *flag)
{
	while (!*flag) {
		if (rmad_fabric_progress(pp->f) < 0)
			return -1;
	}
	return 0;
}

/*
 * Poll the way an idle agent would: progress until empty, then trywait
 * and sleep on the wait fd.  A sleep that runs its full length while a
 * message was on its way means the fd did not fire.
 */
static int sleep_until(struct pp *pp, const int *flag, uint32_t *sleeps,
		       uint32_t *timeouts, uint32_t *last_us)
{
	int fd = rmad_fabric_wait_fd(pp->f);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double t0;
	int n;

	while (!*flag) {
		n = rmad_fabric_progress(pp->f);
		if (n < 0)
			return -1;
		if (n > 0 || *flag || fd < 0 || rmad_fabric_trywait(pp->f))
			continue;
		(*sleeps)++;
		t0 = now_us();
		n = poll(&pfd, 1, PP_SLEEP_MS);
		*last_us = (uint32_t)(now_us() - t0);
		if (n == 0)
			(*timeouts)++;
		else if (n < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

static int burst_send(struct pp *pp)
{
	for (uint32_t i = 0; i < PP_BURST; i++) {
		/* Mostly small, now and then the largest there is. */
		size_t plen = i % 97 == 96 ?
			      buf_size - sizeof(struct pp_hdr) : i % 200;

		fill(scratch, plen, (uint32_t)pp->self, i);
		if (pp_send(pp, pp->peer, PP_BURST_MSG, i, scratch, plen, 0,
			    0, 0))
			return -1;
	}
	return pp_send(pp, pp->peer, PP_BURST_END, 0, NULL, 0, PP_BURST, 0,
		       0);
}

/*
 * The child, with tags: a message sent as usual, then, once the provider
 * gave its buffer back, the same sealed bytes again straight through the
 * endpoint (a replay), and those bytes with another sequence number in
 * the trailer.  White box: the send buffers are fabric_impl.h's.
 */
static int free_sends(struct rmad_fabric *f)
{
	int n = 0;

	for (struct fab_op *op = f->free_send; op; op = op->next)
		n++;
	return n;
}

static struct fab_op *take_free(struct rmad_fabric *f, struct fab_op *want)
{
	for (struct fab_op **l = &f->free_send; *l; l = &(*l)->next)
		if (!want || *l == want) {
			struct fab_op *op = *l;

			*l = op->next;
			f->nfree--;
			return op;
		}
	return NULL;
}

static int raw_send(struct rmad_fabric *f, struct fab_op *op, size_t len)
{
	ssize_t r;

	while ((r = fi_send(f->ep, op->buf, len, f->desc,
			    f->peers[0].fi_addr, &op->ctx)) == -FI_EAGAIN)
		if (rmad_fabric_progress(f) < 0)
			return -1;
	return r ? -1 : 0;
}

static int replay_send(struct pp *pp)
{
	struct rmad_fabric *f = pp->f;
	size_t len = sizeof(struct pp_hdr) + PP_PING_LEN + FAB_TAG_LEN;
	struct fab_op *sent = NULL, *again, *other;
	struct fab_tag_peer saved;
	struct pp_hdr h;
	struct fab_tag t;

	fill(scratch, PP_PING_LEN, (uint32_t)pp->self, 77);
	if (pp_send(pp, 0, PP_REPLAY_MSG, 77, scratch, PP_PING_LEN, 0, 0, 0))
		return -1;
	while (rmad_fabric_pending(f) || free_sends(f) < f->nsend)
		if (rmad_fabric_progress(f) < 0)
			return -1;
	for (int i = f->nrecv; i < f->nrecv + f->nsend && !sent; i++) {
		memcpy(&h, f->ops[i].buf, sizeof(h));
		if (h.type == PP_REPLAY_MSG)
			sent = &f->ops[i];
	}
	again = sent ? take_free(f, sent) : NULL;
	other = take_free(f, NULL);
	if (!again || !other)
		return -1;
	memcpy(other->buf, again->buf, len);
	memcpy(&t, other->buf + len - FAB_TAG_LEN, sizeof(t));
	t.seq++;
	memcpy(other->buf + len - FAB_TAG_LEN, &t, sizeof(t));
	if (raw_send(f, again, len) || raw_send(f, other, len))
		return -1;
	/* one bound to a session the parent does not have, then ours back
	 * as it was (numbers included) */
	saved = f->tags.peer[0];
	if (rmad_fabric_set_session(f, 0, 5, 6) ||
	    pp_send(pp, 0, PP_REPLAY_MSG, 78, scratch, PP_PING_LEN, 0, 0, 0))
		return -1;
	while (rmad_fabric_pending(f) || free_sends(f) < f->nsend)
		if (rmad_fabric_progress(f) < 0)
			return -1;
	f->tags.peer[0] = saved;
	return pp_send(pp, 0, PP_REPLAY_END, 0, NULL, 0, 2, 1, 0);
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int open_fabric(struct pp *pp, const char *prov)
{
	struct rmad_fabric_cfg cfg = {
		.provider = prov,
		.node = "127.0.0.1",
		.am_buf_size = buf_size,
		.am_recv_bufs = PP_RECV_BUFS,
		.am_send_bufs = PP_SEND_BUFS,
	};

	return rmad_fabric_open(&cfg, pp_recv, pp, &pp->f);
}

/* Send my name, read the peer's, insert both in node order. */
/* -a: node 0's and node 1's tag keys */
static int tagged;
static const uint64_t tag_keys[4] = { 0x243f6a8885a308d3ull,
				      0x13198a2e03707344ull,
				      0xa4093822299f31d0ull,
				      0x082efa98ec4e6c89ull };

static int exchange(struct pp *pp, int rfd, int wfd)
{
	uint8_t mine[512], theirs[512], both[1024];
	size_t mylen = sizeof(mine);
	uint32_t len32, peerlen;
	char ready = 'r';

	if (rmad_fabric_getname(pp->f, mine, &mylen))
		return -1;
	len32 = (uint32_t)mylen;
	if (write_full(wfd, &len32, sizeof(len32)) ||
	    write_full(wfd, mine, mylen))
		return -1;
	if (read_full(rfd, &peerlen, sizeof(peerlen)) ||
	    peerlen != len32 || read_full(rfd, theirs, peerlen))
		return -1;
	memcpy(both + (size_t)pp->self * mylen, mine, mylen);
	memcpy(both + (size_t)pp->peer * mylen, theirs, mylen);
	if (rmad_fabric_set_peers(pp->f, pp->self, 2, both, mylen))
		return -1;
	if (tagged && rmad_fabric_set_auth(pp->f, tag_keys))
		return -1;
	/* Neither side sends before both can address the other. */
	if (write_full(wfd, &ready, 1) || read_full(rfd, &ready, 1))
		return -1;
	return 0;
}

static int child_main(const char *prov, int rfd, int wfd)
{
	struct pp pp = { .self = 1, .peer = 0 };
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };
	unsigned long iter = 0;
	int acked = 0, ret = 1;

	rmad_log_init("fabric_pingpong[child]", RMAD_LOG_WARN);
	alarm(90);
	if (open_fabric(&pp, prov))
		goto out;
	if (exchange(&pp, rfd, wfd))
		goto out;
	for (;;) {
		if (rmad_fabric_progress(pp.f) < 0)
			goto out;
		if (pp.burst_go) {
			pp.burst_go = 0;
			if (burst_send(&pp))
				goto out;
		}
		if (pp.burst_end && !acked) {
			acked = 1;
			/* The parent also wants our queue drained. */
			while (rmad_fabric_pending(pp.f))
				if (rmad_fabric_progress(pp.f) < 0)
					goto out;
			pp_send(&pp, 0, PP_BURST_ACK, 0, NULL, 0,
				pp.burst_next, pp.burst_bad,
				pp.burst_end_count);
		}
		if (pp.replay_go) {
			pp.replay_go = 0;
			if (replay_send(&pp))
				goto out;
		}
		if (pp.wake_go) {
			uint32_t sleeps = 0, timeouts = 0, last = 0;

			pp.wake_go = 0;
			pp.wake_got = 0;
			pp_send(&pp, 0, PP_WAKE_READY, 0, NULL, 0, 0, 0, 0);
			if (sleep_until(&pp, &pp.wake_got, &sleeps, &timeouts,
					&last))
				goto out;
			pp_send(&pp, 0, PP_WAKE_ACK, 0, NULL, 0, sleeps,
				timeouts, last);
		}
		/* The parent closing its end is the signal to leave. */
		if (++iter % 256 == 0 && poll(&pfd, 1, 0) > 0)
			break;
	}
	ret = pp.errors ? 2 : 0;
out:
	rmad_fabric_close(pp.f);
	return ret;
}

/* Every exit path of the parent comes through here. */
static int reap_child(struct pp *pp)
{
	int status = -1;
	double t0 = now_us();

	if (child_pid <= 0)
		return -1;
	/* Keep our side moving while the child closes its endpoint. */
	while (waitpid(child_pid, &status, WNOHANG) == 0) {
		if (now_us() - t0 > 10e6) {
			kill(child_pid, SIGKILL);
			waitpid(child_pid, &status, 0);
			status = -1;
			break;
		}
		if (pp->f)
			rmad_fabric_progress(pp->f);
		else
			usleep(1000);
	}
	child_pid = -1;
	return status;
}

static void kill_child(void)
{
	if (child_pid > 0) {
		kill(child_pid, SIGKILL);
		waitpid(child_pid, NULL, 0);
		child_pid = -1;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void test_pingpong(struct pp *pp, int iters)
{
	uint8_t payload[PP_PING_LEN];
	double *rtt = calloc((size_t)iters, sizeof(*rtt));
	int sent = 0;

	if (!rtt) {
		ok(0, "ping-pong: no memory");
		return;
	}
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();

		fill(payload, sizeof(payload), (uint32_t)pp->self, (uint32_t)i);
		pp->pong_expect = (uint32_t)i;
		if (pp_send(pp, pp->peer, PP_PING, (uint32_t)i, payload,
			    sizeof(payload), 0, 0, 0))
			break;
		sent++;
		while (pp->pong_got < sent)
			if (rmad_fabric_progress(pp->f) < 0)
				goto out;
		rtt[i] = now_us() - t0;
	}
out:
	ok(sent == iters && pp->pong_got == iters && !pp->pong_bad,
	   "ping-pong: %d/%d replies, %d wrong", pp->pong_got, iters,
	   pp->pong_bad);
	if (pp->pong_got == iters && iters > 0) {
		qsort(rtt, (size_t)iters, sizeof(*rtt), cmp_double);
		diag("%s: median round trip %.2f us (min %.2f, p99 %.2f)",
		     rmad_fabric_provider(pp->f), rtt[iters / 2], rtt[0],
		     rtt[(iters * 99) / 100]);
	}
	free(rtt);
}

static void test_burst(struct pp *pp)
{
	struct rmad_fabric_stats st;
	int pending;

	pp_send(pp, pp->peer, PP_BURST_GO, 0, NULL, 0, 0, 0, 0);
	burst_send(pp);
	pending = rmad_fabric_pending(pp->f);
	diag("burst: %d of %d messages queued right after sending", pending,
	     PP_BURST + 1);
	if (spin_until(pp, &pp->burst_end) || spin_until(pp, &pp->burst_ack))
		rmad_err("burst: progress failed");
	while (rmad_fabric_pending(pp->f))
		if (rmad_fabric_progress(pp->f) < 0)
			break;
	rmad_fabric_get_stats(pp->f, &st);
	ok(pp->burst_next == PP_BURST && !pp->burst_bad &&
	   pp->burst_end_count == PP_BURST,
	   "burst child->parent: %u received, %u out of order/duplicate/bad",
	   pp->burst_next, pp->burst_bad);
	ok(pp->ack_got == PP_BURST && !pp->ack_bad &&
	   pp->ack_end_count == PP_BURST,
	   "burst parent->child: %u received, %u out of order/duplicate/bad",
	   pp->ack_got, pp->ack_bad);
	ok(pending > 0 && st.queued >= (uint64_t)pending,
	   "burst went through the send queue (%llu queued in all)",
	   (unsigned long long)st.queued);
	ok(rmad_fabric_pending(pp->f) == 0, "send queue drained");
}

/*
 * An urgent send (a heartbeat) behind a backlog: PP_BURST messages
 * queued beyond the send buffers, then one sent with
 * rmad_fabric_send_urgent.  It must take a reserved buffer and reach
 * the child ahead of the queue, behind at most what the provider holds
 * (PP_SEND_BUFS), not behind all of it.
 */
static void test_urgent(struct pp *pp)
{
	struct pp_hdr h = { .type = PP_URGENT, .src = (uint32_t)pp->self };
	int pending, err;

	for (uint32_t i = 0; i < PP_BURST; i++)
		pp_send(pp, pp->peer, PP_UMSG, i, scratch, 64, 0, 0, 0);
	pending = rmad_fabric_pending(pp->f);
	err = rmad_fabric_send_urgent(pp->f, pp->peer, &h, sizeof(h), NULL,
				      0);
	pp_send(pp, pp->peer, PP_UEND, 0, NULL, 0, 0, 0, 0);
	if (spin_until(pp, &pp->uack))
		rmad_err("urgent: progress failed");
	while (rmad_fabric_pending(pp->f))
		if (rmad_fabric_progress(pp->f) < 0)
			break;
	ok(!err && pending > PP_SEND_BUFS && pp->uack_got == PP_BURST &&
	   pp->uack_at <= PP_SEND_BUFS,
	   "urgent send behind %d queued: came after %u of %u (at most %d)",
	   pending, pp->uack_at, pp->uack_got, PP_SEND_BUFS);
}

static void test_self(struct pp *pp)
{
	uint8_t payload[100];

	fill(payload, sizeof(payload), (uint32_t)pp->self, 77);
	pp_send(pp, pp->self, PP_SELF, 77, payload, sizeof(payload), 0, 0,
		0);
	spin_until(pp, &pp->self_got);
	ok(pp->self_got == 1 && pp->self_ok, "message to self arrives intact");
}

static void test_limits(struct pp *pp)
{
	uint8_t *payload = scratch;
	size_t max = buf_size - sizeof(struct pp_hdr);
	struct pp_hdr h = { .type = PP_BIG };
	int r1, r2, r3, r4;

	fill(payload, max, (uint32_t)pp->self, 9);
	pp_send(pp, pp->peer, PP_BIG, 9, payload, max, 0, 0, 0);
	spin_until(pp, &pp->big_got);
	ok(pp->big_got == 1 && pp->big_ok,
	   "largest message (%zu bytes) round trip", buf_size);

	r1 = rmad_fabric_send(pp->f, pp->peer, &h, sizeof(h), payload,
			      max + 1);
	r2 = rmad_fabric_send(pp->f, pp->peer, payload, buf_size + 1,
			      NULL, 0);
	ok(r1 == RMAD_ERR_ARG && r2 == RMAD_ERR_ARG,
	   "oversize refused (%d, %d)", r1, r2);
	r3 = rmad_fabric_send(pp->f, 2, &h, sizeof(h), NULL, 0);
	r4 = rmad_fabric_send(pp->f, -1, &h, sizeof(h), NULL, 0);
	ok(r3 == RMAD_ERR_RANK && r4 == RMAD_ERR_RANK,
	   "bad node refused (%d, %d)", r3, r4);
}

static void test_wait(struct pp *pp)
{
	uint32_t sleeps = 0, timeouts = 0, last = 0;
	double t0;

	if (rmad_fabric_wait_fd(pp->f) < 0) {
		skip(2, "provider has no CQ wait fd");
		return;
	}
	pp_send(pp, pp->peer, PP_WAKE_GO, 0, NULL, 0, 0, 0, 0);
	spin_until(pp, &pp->wake_ready);
	/* Give the child time to fall asleep on its fd. */
	t0 = now_us();
	while (now_us() - t0 < 200e3)
		rmad_fabric_progress(pp->f);
	t0 = now_us();
	pp_send(pp, pp->peer, PP_WAKE, 0, NULL, 0, 0, 0, 0);
	sleep_until(pp, &pp->wake_ack, &sleeps, &timeouts, &last);
	diag("wait fd: child's last sleep %u us, answer after %.0f us",
	     pp->ack_last_us, now_us() - t0);
	/* A sleep far shorter than the pause would mean a fd that is
	 * always readable, which proves nothing. */
	ok(pp->ack_sleeps > 0 && pp->ack_timeouts == 0 &&
	   pp->ack_last_us > 50000,
	   "child asleep on its wait fd woke (%u sleeps, %u timeouts)",
	   pp->ack_sleeps, pp->ack_timeouts);
	ok(timeouts == 0,
	   "parent asleep on its wait fd woke (%u sleeps, %u timeouts)",
	   sleeps, timeouts);
}

/*
 * Registration keys: the keyed hash is SipHash-2-4 (the reference's
 * vector for an 8-byte message), and where the provider lets rmad
 * choose keys, those of three registrations are distinct and not a
 * count that an outsider could guess (t/rogue.sh aims at them).
 */
static void test_keys(struct pp *pp)
{
	const uint64_t sk[2] = { 0x0706050403020100ull,
				 0x0f0e0d0c0b0a0908ull };
	static char b[3][64];
	struct rmad_fabric_mr *mr[3] = { NULL };
	uint64_t k[3] = { 0 };
	int good = 1;

	static const uint8_t m[7] = { 8, 9, 10, 11, 12, 13, 14 };

	ok(secret_siphash(sk, 0x0706050403020100ull, NULL, 0) ==
	   0x93f5f5799a932462ull &&
	   secret_siphash(sk, 0x0706050403020100ull, m, sizeof(m)) ==
	   0xa129ca6149be45e5ull,
	   "SipHash-2-4 gives the reference's values (8 and 15 bytes)");
	if (!rmad_fabric_has_rma(pp->f))
		return;
	for (int i = 0; i < 3; i++)
		good &= rmad_fabric_mr_reg(pp->f, b[i], sizeof(b[i]), 1,
					   &mr[i], &k[i], NULL, NULL) == 0;
	ok(good && k[0] != k[1] && k[1] != k[2] && k[0] != k[2] &&
	   k[1] - k[0] != 1 && k[2] - k[1] != 1,
	   "three registrations: distinct keys, not counted (%#llx %#llx "
	   "%#llx)", (unsigned long long)k[0], (unsigned long long)k[1],
	   (unsigned long long)k[2]);
	for (int i = 0; i < 3; i++)
		if (mr[i])
			rmad_fabric_mr_close(mr[i]);
}

/*
 * The tags as logic (fabric_tag.h), two nodes in this process: a sealed
 * message opens once, not twice, nor changed, nor for another node or
 * from another sender; one of a session the receiver lacks is stale
 * until both have it; an unbound one is taken from a node that is down,
 * and again only while it is.
 */
static void test_tags(void)
{
	struct fab_tags a, b;
	char m[64 + FAB_TAG_LEN], c[sizeof(m)];
	size_t len, mlen = 0;
	int src = -3;

	if (fab_tags_init(&a, 0, 2, tag_keys) ||
	    fab_tags_init(&b, 1, 2, tag_keys)) {
		ok(0, "tags: no memory");
		return;
	}
	memset(m, 'x', 64);
	len = fab_tags_seal(&a, 1, m, 64);
	memcpy(c, m, len);
	ok(len == 64 + FAB_TAG_LEN &&
	   fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_FRESH &&
	   src == 0 && mlen == 64 &&
	   fab_tags_open(&b, -2, c, len, &src, &mlen) == FAB_TAG_BAD,
	   "tags: a sealed message opens once, the same bytes again do not");
	len = fab_tags_seal(&a, 1, m, 64);
	memcpy(c, m, len);
	c[7] ^= 1;
	ok(fab_tags_open(&b, 1, m, len, &src, &mlen) == FAB_TAG_BAD &&
	   fab_tags_open(&b, 0, c, len, &src, &mlen) == FAB_TAG_BAD &&
	   fab_tags_open(&b, -1, m, len, &src, &mlen) == FAB_TAG_BAD &&
	   fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_FRESH,
	   "tags: not from another sender, nor changed, nor from no node");
	len = fab_tags_seal(&a, 0, m, 64);	/* to itself */
	ok(fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_BAD,
	   "tags: not for another node");
	fab_tags_session(&a, 1, 5, 6);
	len = fab_tags_seal(&a, 1, m, 64);
	ok(fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_STALE,
	   "tags: bound to a session the receiver lacks: stale");
	fab_tags_session(&b, 0, 6, 5);
	len = fab_tags_seal(&a, 1, m, 64);
	ok(fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_FRESH,
	   "tags: in the new session on both sides, taken (numbers anew)");
	a.peer[1].up = false;
	len = fab_tags_seal(&a, 1, m, 64);
	memcpy(c, m, len);
	b.peer[0].up = false;
	ok(fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_UNBOUND &&
	   fab_tags_open(&b, 0, c, len, &src, &mlen) == FAB_TAG_UNBOUND,
	   "tags: unbound, to a node that is down: taken, even twice");
	b.peer[0].up = true;
	ok(fab_tags_open(&b, 0, c, len, &src, &mlen) == FAB_TAG_BAD,
	   "tags: ... but from a node that is up, not unless newer");
	len = fab_tags_seal(&a, 1, m, 64);
	ok(fab_tags_open(&b, 0, m, len, &src, &mlen) == FAB_TAG_UNBOUND,
	   "tags: a newer unbound one from a node that is up: taken");
	fab_tags_fini(&a);
	fab_tags_fini(&b);
}

/*
 * With tags: the window of sequence numbers taken once, and a child's
 * message played again (replay_send) dropped, as is one whose number
 * was changed.
 */
static void test_replay(struct pp *pp, uint64_t *rejected)
{
	struct rmad_replay r = { 0 };
	struct rmad_fabric_stats st;
	uint64_t before, stale, k1[2], k2[2];
	const uint64_t w1[3] = { 1, 2, 3 }, w2[3] = { 1, 2, 4 };
	int good = 1;

	good &= secret_replay_take(&r, 1) && secret_replay_take(&r, 2) &&
		secret_replay_take(&r, 3) && !secret_replay_take(&r, 2) &&
		!secret_replay_take(&r, 3) && !secret_replay_take(&r, 0);
	good &= secret_replay_take(&r, 10) && secret_replay_take(&r, 5) &&
		!secret_replay_take(&r, 5) && !secret_replay_take(&r, 1);
	/* 64 on: 10 is the window's last bit, 9 is out */
	good &= secret_replay_take(&r, 74) && !secret_replay_take(&r, 10) &&
		!secret_replay_take(&r, 9) && secret_replay_take(&r, 73) &&
		!secret_replay_take(&r, 73);
	good &= secret_replay_take(&r, 200) && secret_replay_take(&r, 137) &&
		secret_replay_take(&r, 136) && !secret_replay_take(&r, 135) &&
		!secret_replay_take(&r, 74);
	ok(good, "sequence numbers: each taken once, 64 back at most");
	secret_key_derive(tag_keys, w1, k1);
	secret_key_derive(tag_keys, w2, k2);
	ok(k1[0] != k2[0] && k1[1] != k2[1] && k1[0] != k1[1],
	   "session keys differ with their incarnations");
	if (!tagged)
		return;
	rmad_fabric_get_stats(pp->f, &st);
	before = st.rejected;
	stale = st.stale;
	pp->replay_end = 0;
	pp_send(pp, 1, PP_REPLAY_GO, 0, NULL, 0, 0, 0, 0);
	if (spin_until(pp, &pp->replay_end)) {
		ok(0, "replay: the child's report came");
		return;
	}
	rmad_fabric_get_stats(pp->f, &st);
	*rejected += st.rejected - before;
	ok(pp->replay_got == 1 && pp->replay_sent == 2 &&
	   st.rejected - before == 2,
	   "a message played again and one with a new number dropped (%d "
	   "taken, %llu dropped of %u)", pp->replay_got,
	   (unsigned long long)(st.rejected - before), pp->replay_sent);
	ok(pp->stale_sent == 1 && st.stale - stale == 1,
	   "one bound to a session we do not have: dropped as stale (%llu)",
	   (unsigned long long)(st.stale - stale));
}

int main(int argc, char **argv)
{
	const char *prov = "shm";
	struct pp pp = { .self = 0, .peer = 1 };
	struct rmad_fabric_stats st;
	uint64_t rejected = 0;
	int iters = 1000, p2c[2], c2p[2], opt, status;

	alarm_after(60);
	while ((opt = getopt(argc, argv, "p:n:s:a")) != -1) {
		switch (opt) {
		case 'a':
			tagged = 1;
			break;
		case 'p':
			prov = optarg;
			break;
		case 'n':
			iters = atoi(optarg);
			break;
		case 's':
			buf_size = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-p provider] [-n iters] [-s bytes] "
				"[-a]\n",
				argv[0]);
			return 2;
		}
	}
	if (iters < 1)
		iters = 1;
	if (buf_size < 256)
		buf_size = 256;
	scratch = malloc(buf_size + 1);
	if (!scratch) {
		printf("Bail out! no memory\n");
		return 1;
	}
	rmad_log_init("fabric_pingpong", RMAD_LOG_WARN);
	if (pipe(p2c) || pipe(c2p)) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		return 1;
	}
	fflush(stdout);
	/* Fork before libfabric starts any threads in this process. */
	child_pid = fork();
	if (child_pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		return 1;
	}
	if (child_pid == 0) {
		pid_t parent = getppid();

		/* Die with the parent even when its alarm fires. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(p2c[1]);
		close(c2p[0]);
		_exit(child_main(prov, p2c[0], c2p[1]));
	}
	atexit(kill_child);
	close(p2c[0]);
	close(c2p[1]);

	diag("provider %s%s", prov, tagged ? ", tagged" : "");
	if (!ok(open_fabric(&pp, prov) == 0, "open fabric (%s)", prov))
		goto out;
	diag("actual provider %s, rma %s, wait fd %s",
	     rmad_fabric_provider(pp.f),
	     rmad_fabric_has_rma(pp.f) ? "yes" : "no",
	     rmad_fabric_wait_fd(pp.f) >= 0 ? "yes" : "no");
	if (!ok(exchange(&pp, c2p[0], p2c[1]) == 0,
		"addresses exchanged, peers set"))
		goto out;
	ok(rmad_fabric_self(pp.f) == 0 && rmad_fabric_nnodes(pp.f) == 2,
	   "self 0 of 2 nodes");

	test_pingpong(&pp, iters);
	test_burst(&pp);
	test_urgent(&pp);
	test_self(&pp);
	test_limits(&pp);
	test_wait(&pp);
	test_keys(&pp);
	test_tags();
	test_replay(&pp, &rejected);

	rmad_fabric_get_stats(pp.f, &st);
	diag("parent stats: sent %llu received %llu queued %llu cq_errors %llu",
	     (unsigned long long)st.sent, (unsigned long long)st.received,
	     (unsigned long long)st.queued, (unsigned long long)st.cq_errors);
	ok(!pp.errors && !st.cq_errors && st.rejected == rejected,
	   "no stray messages, CQ errors or rejected tags (%llu, %llu "
	   "meant)", (unsigned long long)st.rejected,
	   (unsigned long long)rejected);
	diag("messages whose sender the provider named (FI_SOURCE): %d",
	     pp.sourced);
out:
	close(p2c[1]);		/* tells the child to leave */
	status = reap_child(&pp);
	ok(status == 0, "child exited cleanly (status %#x)", status);
	close(c2p[0]);
	rmad_fabric_close(pp.f);
	free(scratch);
	return done_testing();
}
