/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rogue.c - an outsider on the agents' network (t/rogue.sh).  It
 * is no agent and runs no rmad code: with plain libfabric it opens an
 * endpoint of the agents' provider, puts the agents' addresses in its
 * address vector, and aims remote reads and writes of 8 bytes at every
 * registration key from 0 to -k (offset 0 of each; tcp;ofi_rxm names
 * bytes by offset), as a process of another user or another host that
 * reaches the agents' ports could.  It prints one line per agent:
 *
 *   rogue: 127.0.0.1:PORT: reads N ok R, writes N ok W, first key K
 *
 * Then it sends each agent ten PINGs that claim to come from node -n.
 * With -c it only plays node -n, from an endpoint bound to 127.0.0.1:-b
 * (a mesh agent's address, taken over while that agent is down): it
 * answers the agent's heartbeats as node -n would, sends ten PINGs, and
 * counts the PONGs that come back:
 *
 *   rogue: 127.0.0.1:PORT: pongs P
 *
 * With -s as well its heartbeats echo only the first stamp of the
 * agent's it saw, as a stash of a dead node's heartbeats held back and
 * played one by one would (agent/liveness.c, hb_proof): each proves only that
 * the node lived when that stamp was sent.
 *
 * With -j FILE it plays node -n to every agent listed at once, the
 * agents in node order (an insider: a node of a keyless mesh that
 * turned hostile), for -t seconds: once FILE holds a job's namespace it
 * sends each agent, every 20 ms, barrier arrivals and releases of that
 * job for epochs 0 to 15 and a JOB_FAIL of it, as a node that holds no
 * rank of the job, until FILE.done exists, and prints
 *
 *   rogue: job NSPACE: ROUNDS rounds, PKTS packets as node N
 *
 * With -w FILE it plays node -n, which serves rank -n of a job (an
 * insider that holds a rank), to the agents listed, for -t seconds:
 * once FILE holds "NSPACE SIZE" it joins the job at node 0 with that
 * rank (JOB_JOIN); once the map comes, it joins the job's first window
 * of every rank at node 0, its root, at once and then every 50 ms, with
 * forged entries (8 bytes, unit 1, a registration of its own) for
 * members 0 and 1, and from 1.2 s on its own member too, so that the
 * window waits for it till then (WIN_JOIN); it arrives once at every
 * barrier up to the one after the last released, frees the window (from the start: a free
 * before the table is made must be dropped), and sends rank 0 post
 * notices of the window from rank 1 (forged) and from its own rank,
 * and joins a second window that no rank makes (its one rank cannot
 * wait in two), until FILE.done exists.  It prints
 *
 *   rogue: window WKEY of job NSPACE: JOINS joins, table T, map M, B barriers
 *
 * Usage: test_rogue [-p provider] [-k maxkey] [-n node] [-b port] [-c]
 *                   [-s] [-j file | -w file [-t secs]] ADDR:PORT...
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "rmad_wire.h"
#include <sys/uio.h>

static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_cq *cq;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fi_info *info;
static int stale;			/* -s */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A fresh endpoint, with its own address vector and queue, holding
 * the address sin: the provider closes a connection that used a bad
 * key, so each try after a failure starts over, as an attacker would. */
static int open_ep(const struct sockaddr_in *sin, fi_addr_t *to)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT,
				 .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	int ret;

	if (ep) {
		fi_close(&ep->fid);
		fi_close(&av->fid);
		fi_close(&cq->fid);
		ep = NULL;
	}
	if ((ret = fi_cq_open(dom, &ca, &cq, NULL)) ||
	    (ret = fi_av_open(dom, &aa, &av, NULL)) ||
	    (ret = fi_endpoint(dom, info, &ep, NULL)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) ||
	    (ret = fi_enable(ep))) {
		fprintf(stderr, "rogue: endpoint: %s\n", fi_strerror(-ret));
		return -1;
	}
	if (fi_av_insert(av, sin, 1, to, 0, NULL) != 1) {
		fprintf(stderr, "rogue: fi_av_insert failed\n");
		return -1;
	}
	return 0;
}

static const char *bind_port = "0";

static int setup(const char *prov)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -1;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", bind_port, FI_SOURCE,
			 hints,
			 &info);
	fi_freeinfo(hints);
	if (ret) {
		fprintf(stderr, "rogue: fi_getinfo: %s\n", fi_strerror(-ret));
		return -1;
	}
	if ((ret = fi_fabric(info->fabric_attr, &fab, NULL)) ||
	    (ret = fi_domain(fab, info, &dom, NULL))) {
		fprintf(stderr, "rogue: domain: %s\n", fi_strerror(-ret));
		return -1;
	}
	return 0;
}

/* One read (write: 1) of 8 bytes at offset 0 with key k: 1 if it
 * completed without error, 0 if it failed, -1 if nothing came in 5 s. */
static int try_key(fi_addr_t to, uint64_t k, int write, uint8_t *buf)
{
	struct fi_context2 ctx;
	struct fi_cq_entry e;
	struct fi_cq_err_entry err;
	double end = now() + 5;
	ssize_t r;

	do {
		if (write) {
			/* delivery complete: a write the target refused
			 * must not count as done */
			struct iovec iov = { .iov_base = buf, .iov_len = 8 };
			struct fi_rma_iov rma = { .addr = 0, .len = 8,
						  .key = k };
			struct fi_msg_rma m = { .msg_iov = &iov, .iov_count = 1,
						.addr = to, .rma_iov = &rma,
						.rma_iov_count = 1,
						.context = &ctx };

			r = fi_writemsg(ep, &m, FI_DELIVERY_COMPLETE |
					FI_COMPLETION);
		} else {
			r = fi_read(ep, buf, 8, NULL, to, 0, k, &ctx);
		}
		if (r == -FI_EAGAIN)
			fi_cq_read(cq, &e, 0);
	} while (r == -FI_EAGAIN && now() < end);
	if (r)
		return 0;
	while (now() < end) {
		r = fi_cq_read(cq, &e, 1);
		if (r == 1)
			return 1;
		if (r == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(cq, &err, 0);
			if (getenv("ROGUE_DEBUG") && *getenv("ROGUE_DEBUG"))
				fprintf(stderr, "key %llu %s: %s (%d)\n",
					(unsigned long long)k,
					write ? "write" : "read",
					fi_strerror(err.err), err.prov_errno);
			return 0;
		}
	}
	return -1;
}

/* A packet with one of the small payloads (proto/rmad_wire.h): sent
 * as its header and payload_len bytes of u. */
struct opkt {
	struct rmad_am_hdr h;
	union {
		struct rmad_am_ping ping;
		struct rmad_am_heartbeat hb;
		struct rmad_am_barrier bar;
		struct rmad_am_job_fail fail;
	} u;
};

/* A PING in the name of node claim, with cookie. */
static void ping_pkt(struct opkt *o, uint32_t claim, uint64_t cookie)
{
	*o = (struct opkt){
		.h = { .version = RMAD_WIRE_VERSION, .type = RMAD_AM_PING,
		       .src_node = claim,
		       .payload_len = sizeof(struct rmad_am_ping) },
		.u.ping.cookie = cookie };
}

static int osend(struct opkt *o, fi_addr_t to, struct fi_context2 *ctx)
{
	return (int)fi_send(ep, o, sizeof(o->h) + o->h.payload_len, NULL, to,
			    ctx);
}

/* Ten PINGs in the name of node claim; 0 if they all left. */
static int send_claims(fi_addr_t to, uint32_t claim)
{
	struct opkt o;
	struct fi_context2 ctx;
	struct fi_cq_entry e;
	int sent = 0;

	for (int i = 0; i < 10; i++) {
		double end = now() + 5;
		ssize_t r;

		ping_pkt(&o, claim, (uint64_t)i);
		do {
			r = osend(&o, to, &ctx);
			if (r == -FI_EAGAIN)
				fi_cq_read(cq, &e, 0);
		} while (r == -FI_EAGAIN && now() < end);
		while (!r && now() < end) {
			ssize_t c = fi_cq_read(cq, &e, 1);

			if (c == 1) {
				sent++;
				break;
			}
			if (c == -FI_EAVAIL) {
				struct fi_cq_err_entry err = { 0 };

				fi_cq_readerr(cq, &err, 0);
				break;
			}
		}
	}
	return sent == 10 ? 0 : -1;
}

/*
 * Keep one receive posted into buf and reap one completion: 1 with the
 * header of a packet that arrived in h, 0 otherwise (nothing, a send's
 * completion, or an error, after which the receive is posted again).
 */
static int recv_hdr(void *buf, size_t len, struct fi_context2 *rctx,
		    int *posted, struct rmad_am_hdr *h)
{
	struct fi_cq_entry e;
	ssize_t c;

	if (!*posted)
		*posted = !fi_recv(ep, buf, len, NULL, FI_ADDR_UNSPEC, rctx);
	c = fi_cq_read(cq, &e, 1);
	if (c == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(cq, &err, 0);
		if (err.op_context == rctx)
			*posted = 0;
		return 0;
	}
	if (c != 1 || e.op_context != rctx)
		return 0;
	*posted = 0;
	memcpy(h, buf, sizeof(*h));
	return 1;
}

/* The heartbeat payload of the packet in buf (zero if it has none). */
static struct rmad_am_heartbeat hb_of(const void *buf)
{
	struct rmad_am_heartbeat hb = { 0 };
	struct rmad_am_hdr h;

	memcpy(&h, buf, sizeof(h));
	if (h.payload_len >= sizeof(hb))
		memcpy(&hb, (const char *)buf + sizeof(h), sizeof(hb));
	return hb;
}

/* Answer heartbeat buf as node claim, echoing stamp (o and ctx are kept
 * until the send completes): 1 if it left. */
static int echo_heartbeat(const void *buf, uint32_t claim, uint64_t stamp,
			  fi_addr_t to, struct opkt *o,
			  struct fi_context2 *ctx)
{
	*o = (struct opkt){
		.h = { .version = RMAD_WIRE_VERSION,
		       .type = RMAD_AM_HEARTBEAT, .src_node = claim,
		       .flags = RMAD_AMF_ECHO,
		       .payload_len = sizeof(struct rmad_am_heartbeat) },
		.u.hb = { .stamp = 1, .echo = stamp,
			  .incarnation = 0x726f677565ull,
			  .inc_echo = hb_of(buf).incarnation } };
	return !osend(o, to, ctx);
}

/*
 * Be node claim to the agent at to for 4 s, as a mesh peer that comes
 * back is (agent/liveness.c, the static mesh): answer each of its heartbeats
 * with one of ours that echoes its incarnation, so that it takes us for
 * node claim up again; after 1.5 s send ten PINGs.  The PONGs that come
 * back.
 */
static int impersonate(fi_addr_t to, uint32_t claim)
{
	static uint64_t buf[8192];
	static struct opkt out[64];
	static struct fi_context2 sctx[64];
	struct fi_context2 rctx;
	double t0 = now();
	int pongs = 0, posted = 0, pinged = 0, nout = 0;
	uint64_t first = 0;

	while (now() < t0 + 4) {
		struct rmad_am_hdr h;

		if (!pinged && now() > t0 + 1.5) {
			pinged = 1;
			for (int i = 0; i < 10; i++) {
				struct opkt *o = &out[nout++ % 64];

				ping_pkt(o, claim, (uint64_t)i);
				osend(o, to, &sctx[(nout - 1) % 64]);
			}
		}
		if (!recv_hdr(buf, sizeof(buf), &rctx, &posted, &h))
			continue;
		pongs += h.type == RMAD_AM_PONG;
		if (h.type == RMAD_AM_HEARTBEAT) {
			uint64_t stamp = hb_of(buf).stamp;

			if (!first)
				first = stamp;
			echo_heartbeat(buf, claim, stale ? first : stamp, to,
				       &out[nout % 64], &sctx[nout % 64]);
			nout++;
		}
	}
	return pongs;
}

/* the agents' job key: FNV-1a of the namespace (agent/jobs.c) */
static uint64_t job_key(const char *ns)
{
	uint64_t h = 1469598103934665603ull;

	for (; *ns; ns++)
		h = (h ^ (unsigned char)*ns) * 1099511628211ull;
	return h;
}

/* -w's and -j's packets, each kept in its slot until the provider is done */
static struct mpkt {
	struct rmad_am_hdr h;
	union {
		struct {
			struct rmad_am_job jp;
			struct rmad_am_rank_run run;
		} job;
		struct {
			struct rmad_am_win hw;
			struct rmad_am_win_member m[3];
		} win;
		struct rmad_am_barrier bar;
		struct rmad_am_win_sync sync;
	} u;
} mout[256];
/* -w's heartbeats, in the slot of their mctx */
static struct opkt mhb[256];
static struct fi_context2 mctx[256];
static unsigned int mnout;

/* The next slot, a packet of type from node claim about job, with a
 * payload of plen bytes (zeroed). */
static struct mpkt *mnext(uint32_t claim, uint64_t job, uint8_t type,
			  size_t plen)
{
	struct mpkt *p = &mout[mnout % 256];

	memset(p, 0, sizeof(*p));
	p->h = (struct rmad_am_hdr){ .version = RMAD_WIRE_VERSION,
				     .type = type, .src_node = claim,
				     .job = job,
				     .payload_len = (uint32_t)plen };
	return p;
}

/* Send slot p's packet (its header and payload_len bytes): 1 if the
 * provider took it. */
static int msend(struct mpkt *p, fi_addr_t to)
{
	if (fi_send(ep, p, sizeof(p->h) + p->h.payload_len, NULL, to,
		    &mctx[mnout % 256]))
		return 0;
	mnout++;
	return 1;
}

/* -j: JOINs of made-up jobs (4 ranks, ours rank 2) to the collector at
 * to, each once the provider takes it: they fill its job slots, if it
 * lets one node take them all. */
#define MADE_UP_JOBS 16
static int made_up_joins(fi_addr_t to, uint32_t claim, int sent)
{
	for (; sent < MADE_UP_JOBS; sent++) {
		char ns[64];
		struct mpkt *p;

		snprintf(ns, sizeof(ns), "rogue-made-up-%d", sent);
		p = mnext(claim, job_key(ns), RMAD_AM_JOB_JOIN,
			  sizeof(p->u.job));
		p->u.job.jp.size = 4;
		p->u.job.jp.total_runs = 1;
		p->u.job.jp.nruns = 1;
		snprintf(p->u.job.jp.nspace, 256, "%s", ns);
		p->u.job.run = (struct rmad_am_rank_run){
			.first = 2, .count = 1, .node = (int32_t)claim };
		if (!msend(p, to))
			break;
	}
	return sent;
}

/*
 * -j: be node claim to the n agents at to[] (node k at to[k]) for secs,
 * answering their heartbeats; first send the collector (to[0]) JOINs
 * of made-up jobs, then, once jobfile names a job, send forged barrier
 * and failure packets of it every 20 ms.
 */
static int attack_job(const fi_addr_t *to, int n, uint32_t claim,
		      const char *jobfile, double secs)
{
	static uint64_t buf[8192];
	static struct opkt out[256];
	static struct fi_context2 sctx[256];
	struct fi_context2 rctx;
	double t0 = now(), next = 0;
	int posted = 0, nout = 0, rounds = 0, made = 0, up = 0;
	long pkts = 0;
	uint64_t key = 0;
	char ns[256] = "";

	while (now() < t0 + secs) {
		struct rmad_am_hdr h;

		if (!key && now() > next) {
			FILE *f = fopen(jobfile, "r");

			next = now() + 0.01;
			if (up)	/* the collector took us for node claim */
				made = made_up_joins(to[0], claim, made);
			if (f) {
				if (fgets(ns, sizeof(ns), f)) {
					ns[strcspn(ns, "\n")] = 0;
					if (*ns)
						key = job_key(ns);
				}
				fclose(f);
			}
		}
		if (key && now() > next) {
			char done[4096];

			snprintf(done, sizeof(done), "%s.done", jobfile);
			if (!access(done, F_OK))
				break;
			next = now() + 0.02;
			rounds++;
			for (int k = 0; k < n; k++)
				for (int i = 0; i < 33; i++) {
					struct opkt *o = &out[nout % 256];

					*o = (struct opkt){ .h = {
						.version = RMAD_WIRE_VERSION,
						.type = i < 16 ?
						RMAD_AM_BARRIER_ARRIVE :
						i < 32 ?
						RMAD_AM_BARRIER_RELEASE :
						RMAD_AM_JOB_FAIL,
						.src_node = claim, .job = key,
						.payload_len = 8 } };
					/* an epoch, or no rank in
					 * particular (-1) */
					if (i < 32)
						o->u.bar.epoch =
							(uint64_t)(i % 16);
					else
						o->u.fail.rank = i % 16 - 1;
					if (!osend(o, to[k],
						   &sctx[nout % 256])) {
						nout++;
						pkts++;
					}
				}
		}
		if (!recv_hdr(buf, sizeof(buf), &rctx, &posted, &h))
			continue;
		if (h.type == RMAD_AM_HEARTBEAT && h.src_node < (uint32_t)n) {
			up |= h.src_node == 0;
			nout += echo_heartbeat(buf, claim, hb_of(buf).stamp,
					       to[h.src_node], &out[nout % 256],
					       &sctx[nout % 256]);
		}
	}
	printf("rogue: job %s: %d rounds, %ld packets as node %u, %d "
	       "made-up jobs joined\n", *ns ? ns : "(none)", rounds, pkts,
	       claim, made);
	return 0;
}

/* What the agents sent us: maps, tables, and the next barrier epoch
 * (one past the last release). */
struct seen {
	int map, table;
	uint64_t epoch;
};

static void saw_one(const uint8_t *pkt, struct seen *sn)
{
	struct rmad_am_hdr h;
	struct rmad_am_barrier b;

	memcpy(&h, pkt, sizeof(h));
	sn->map += h.type == RMAD_AM_JOB_MAP;
	sn->table += h.type == RMAD_AM_WIN_READY;
	if (h.type != RMAD_AM_BARRIER_RELEASE || h.payload_len < sizeof(b))
		return;
	memcpy(&b, pkt + sizeof(h), sizeof(b));
	if (b.epoch + 1 > sn->epoch)
		sn->epoch = b.epoch + 1;
}

/* Every packet in the one received (the inner ones of an aggregate). */
static void saw(const uint8_t *msg, struct seen *sn)
{
	struct rmad_am_hdr h;
	size_t off = 0, len;

	memcpy(&h, msg, sizeof(h));
	if (h.type != RMAD_AM_BATCH) {
		saw_one(msg, sn);
		return;
	}
	/* the struct rmad_am_batch, then the packets */
	if (h.payload_len < sizeof(struct rmad_am_batch))
		return;
	msg += sizeof(h) + sizeof(struct rmad_am_batch);
	len = h.payload_len - sizeof(struct rmad_am_batch);
	while (len - off >= sizeof(h)) {
		memcpy(&h, msg + off, sizeof(h));
		if (h.payload_len > len - off - sizeof(h))
			break;
		saw_one(msg + off, sn);
		off += sizeof(h) + h.payload_len;
	}
}

/* A join of window wkey (gsize members): forged entries for members 0
 * and 1 (8 bytes, unit 1, a registration of ours) if forged, then our
 * own member if own. */
static void win_join(fi_addr_t to, uint32_t claim, uint64_t job,
		     uint64_t wkey, int gsize, int forged, int own)
{
	struct mpkt *p = mnext(claim, job, RMAD_AM_WIN_JOIN, 0);
	struct rmad_am_win_member *m = p->u.win.m;
	int n = 0;

	for (int g = 0; forged && g < 2; g++)
		m[n++] = (struct rmad_am_win_member){
			.grank = g, .disp_unit = 1, .size = 8,
			.mr_key = 0x726f677565, .has_mr = 1 };
	if (own)
		m[n++] = (struct rmad_am_win_member){
			.grank = (int32_t)claim, .disp_unit = 8,
			.size = 4096 };
	p->u.win.hw = (struct rmad_am_win){ .wkey = wkey, .gsize = gsize,
					    .nentries = n };
	p->h.payload_len = (uint32_t)(sizeof(p->u.win.hw) +
				      (size_t)n * sizeof(*m));
	msend(p, to);
}

/* -w: the job's rank claim on node claim, the window's forged joins. */
static int member_job(const fi_addr_t *to, int n, uint32_t claim,
		      const char *jobfile, double secs)
{
	static uint64_t buf[8192];
	/* the first window of RMAD_GROUP_ALL (client/win.c, next_key) */
	const uint64_t wkey = (0x616c6cull * 1099511628211ull) ^ 1;
	struct fi_context2 rctx;
	double t0 = now(), next = 0, tmap = 0;
	int posted = 0, joins = 0, size = 0, jsent = 0;
	struct seen sn = { 0 };
	uint64_t arrived = 0;		/* epochs [0, arrived) arrived at */
	uint64_t key = 0;
	char ns[256] = "";

	while (now() < t0 + secs) {
		struct rmad_am_hdr h;
		char done[4096];

		if (!key && now() > next) {
			FILE *f = fopen(jobfile, "r");

			next = now() + 0.01;
			if (f) {
				if (fscanf(f, "%255s %d", ns, &size) == 2 &&
				    size > (int)claim)
					key = job_key(ns);
				fclose(f);
			}
		}
		if (key && !jsent) {
			/* our rank, to the collector, until it left */
			struct mpkt *p = mnext(claim, key, RMAD_AM_JOB_JOIN,
					       sizeof(p->u.job));

			p->u.job.jp.size = size;
			p->u.job.jp.total_runs = 1;
			p->u.job.jp.nruns = 1;
			snprintf(p->u.job.jp.nspace, 256, "%s", ns);
			p->u.job.run = (struct rmad_am_rank_run){
				.first = (int32_t)claim, .count = 1,
				.node = (int32_t)claim };
			jsent = msend(p, to[0]);
		}
		snprintf(done, sizeof(done), "%s.done", jobfile);
		if (key && sn.map && now() > next) {
			struct mpkt *p;

			if (!access(done, F_OK))
				break;
			/* every 50 ms: what the agents log of it stays
			 * under their 200 lines a second */
			next = now() + 0.05;
			/* at each barrier once, up to the one after the
			 * last released */
			while (arrived <= sn.epoch + 1) {
				p = mnext(claim, key, RMAD_AM_BARRIER_ARRIVE,
					  sizeof(p->u.bar));
				p->u.bar.epoch = arrived;
				if (!msend(p, to[0]))
					break;	/* again next round */
				arrived++;
			}
			/* the forged entries, and from 1.2 s on our own:
			 * till then the window waits for it */
			win_join(to[0], claim, key, wkey, size, 1,
				 now() > tmap + 1.2);
			joins++;
			p = mnext(claim, key, RMAD_AM_WIN_FREE_ARRIVE,
				  sizeof(p->u.sync));
			p->u.sync.wkey = wkey;
			msend(p, to[0]);
			/* posts to rank 0: of rank 1, on node 1 (forged),
			 * and of ours */
			for (int k = 0; k < 2; k++) {
				p = mnext(claim, key, RMAD_AM_WIN_POST,
					  sizeof(p->u.sync));
				p->u.sync.wkey = wkey;
				p->u.sync.origin = 0;
				p->u.sync.target = k ? (int32_t)claim : 1;
				msend(p, to[0]);
			}
			/* a window no rank makes: one more than our one
			 * rank may be waiting in */
			win_join(to[0], claim, key, wkey ^ 6, size, 0, 1);
		}
		if (!recv_hdr(buf, sizeof(buf), &rctx, &posted, &h))
			continue;
		saw((const uint8_t *)buf, &sn);
		if (sn.map && !tmap)
			tmap = now();
		if (h.type == RMAD_AM_HEARTBEAT && h.src_node < (uint32_t)n)
			mnout += (unsigned int)echo_heartbeat(buf, claim,
					hb_of(buf).stamp, to[h.src_node],
					&mhb[mnout % 256],
					&mctx[mnout % 256]);
	}
	printf("rogue: window %llx of job %s: %d joins, table %d, map %d, "
	       "%llu barriers\n", (unsigned long long)wkey, *ns ? ns : "(none)",
	       joins, sn.table, sn.map, (unsigned long long)arrived);
	return 0;
}

int main(int argc, char **argv)
{
	const char *prov = "tcp;ofi_rxm";
	uint64_t maxkey = 256;
	uint32_t claim = 1;
	int i = 1, rc = 0, claims_only = 0;
	const char *jobfile = NULL;
	double secs = 10;
	int member = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c")) {
			claims_only = 1;
			i--;
		} else if (!strcmp(argv[i], "-s")) {
			stale = 1;
			i--;
		} else if (!strcmp(argv[i], "-b"))
			bind_port = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			prov = argv[i + 1];
		else if (!strcmp(argv[i], "-k"))
			maxkey = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "-n"))
			claim = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-j"))
			jobfile = argv[i + 1];
		else if (!strcmp(argv[i], "-w")) {
			jobfile = argv[i + 1];
			member = 1;
		}
		else if (!strcmp(argv[i], "-t"))
			secs = atof(argv[i + 1]);
	}
	if (i >= argc || setup(prov))
		return 2;
	if (jobfile) {
		fi_addr_t to[16];
		int n = 0;

		for (; i < argc && n < 16; i++, n++) {
			char host[64];
			const char *colon = strrchr(argv[i], ':');
			struct sockaddr_in sin = { .sin_family = AF_INET };

			if (!colon || colon - argv[i] >= (long)sizeof(host))
				return 2;
			memcpy(host, argv[i], colon - argv[i]);
			host[colon - argv[i]] = 0;
			sin.sin_port = htons((uint16_t)atoi(colon + 1));
			if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
				return 2;
			if (!n && open_ep(&sin, &to[0]))
				return 2;
			if (n && fi_av_insert(av, &sin, 1, &to[n], 0, NULL) != 1)
				return 2;
		}
		rc = member ? member_job(to, n, claim, jobfile, secs) :
			      attack_job(to, n, claim, jobfile, secs);
		fflush(stdout);
		return rc;
	}
	for (; i < argc; i++) {
		char host[64];
		const char *colon = strrchr(argv[i], ':');
		struct sockaddr_in sin = { .sin_family = AF_INET };
		fi_addr_t to;
		uint64_t rok = 0, wok = 0, n = 0, first = UINT64_MAX;
		int lost = 0;

		if (!colon || colon - argv[i] >= (long)sizeof(host))
			return 2;
		memcpy(host, argv[i], colon - argv[i]);
		host[colon - argv[i]] = 0;
		sin.sin_port = htons((uint16_t)atoi(colon + 1));
		if (inet_pton(AF_INET, host, &sin.sin_addr) != 1 ||
		    open_ep(&sin, &to))
			return 2;
		if (claims_only) {
			printf("rogue: %s: pongs %d\n", argv[i],
			       impersonate(to, claim));
			continue;
		}
		for (uint64_t k = 0; k <= maxkey && lost < 3; k++, n++) {
			uint8_t rb[8] = { 0 }, wb[8];
			int r = try_key(to, k, 0, rb), w;

			if (r != 1 && open_ep(&sin, &to))
				return 2;
			memset(wb, 0xee, sizeof(wb));
			w = try_key(to, k, 1, wb);
			if (w != 1 && open_ep(&sin, &to))
				return 2;
			lost += r < 0 || w < 0;
			rok += r == 1;
			wok += w == 1;
			if ((r == 1 || w == 1) && first == UINT64_MAX)
				first = k;
		}
		if (open_ep(&sin, &to))
			return 2;
		if (send_claims(to, claim))
			printf("rogue: %s: the claims as node %u did not "
			       "leave\n", argv[i], claim);
		printf("rogue: %s: reads %llu ok %llu, writes %llu ok %llu, "
		       "first key %lld%s\n", argv[i], (unsigned long long)n,
		       (unsigned long long)rok, (unsigned long long)n,
		       (unsigned long long)wok,
		       first == UINT64_MAX ? -1LL : (long long)first,
		       lost >= 3 ? " (no answers: stopped)" : "");
		if (lost >= 3)
			rc = 1;
	}
	fflush(stdout);
	fi_close(&ep->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	return rc;
}
