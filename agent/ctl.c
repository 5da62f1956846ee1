/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl.c - the agent's answer to `rmadctl status`.
 *
 * The report is built in one static buffer and sent as a single
 * SOCK_SEQPACKET message: a struct rmad_ctl_hdr, then NUL-terminated
 * text, either a human-readable report in sections or one JSON object.
 * It runs on the loop thread and only reads agent state, so it needs no
 * locking; the shared segment's free-list count is read relaxed because
 * clients change it concurrently and it is only a statistic.
 *
 * The message never exceeds CTL_MSG_MAX.  Everything but the client and
 * job lists has a small fixed bound, so those lists are written under a
 * lower limit that keeps CTL_RESERVE bytes free: an entry that does not
 * fit is taken back whole and the report says how many were left out,
 * which keeps the JSON valid however many clients there are.
 *
 * Text layout: a section header on a line of its own in column 0 (agent,
 * clients, jobs, stats, op pool, fabric), its lines indented.  rmadctl
 * stats prints the report from the "stats" header on, so keep the
 * counters last.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "liveness.h"
#include "completion.h"
#include "ctl.h"
#include "stats.h"
#include "windows.h"
#include "atomics.h"
#include "log.h"
#include "rmad_abi.h"
#include "sbuf.h"
#include "util.h"

#define CTL_MSG_MAX	(60 * 1024)	/* whole message, header included */
#define CTL_RESERVE	(8 * 1024)	/* for everything but the lists */


/*
 * Seconds since this process started, from /proc/self/stat (field 22,
 * in clock ticks after boot) against CLOCK_BOOTTIME: no start time has
 * to be kept in struct agent.  Returns 0 or RMAD_ERR_INTERNAL.
 */
static int agent_uptime(uint64_t *secs)
{
	char buf[2048], *p, *end;
	unsigned long long start;
	struct timespec now;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return RMAD_ERR_INTERNAL;
	do {
		n = read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) < 0)
		return RMAD_ERR_INTERNAL;
	buf[n] = '\0';
	/* comm (field 2) may hold spaces and ')': start after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return RMAD_ERR_INTERNAL;
	p++;
	for (int field = 3; field < 22; field++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	errno = 0;
	start = strtoull(p, &end, 10);
	if (end == p || errno)
		return RMAD_ERR_INTERNAL;
	start /= (unsigned long long)hz;
	*secs = (uint64_t)now.tv_sec > start ? (uint64_t)now.tv_sec - start : 0;
	return 0;
}

/* Registered clients only: rmadctl's own connection is not a client. */
static int count_clients(struct agent *a)
{
	int n = 0;

	for (int c = 0; c < a->p.max_clients; c++)
		n += a->cl[c].fd >= 0 && a->cl[c].registered;
	return n;
}

static uint32_t op_pool_in_use(struct agent *a)
{
	uint32_t size, nfree;

	if (!a->hdr)
		return 0;
	size = a->lay.op_pool_size;
	nfree = completion_global_free(a);
	return nfree < size ? size - nfree : 0;
}

static const char *provider_name(struct agent *a)
{
	const char *p = a->fab ? rmad_fabric_provider(a->fab) : NULL;

	return p ? p : "none";
}

static const char *job_nspace(const struct agent_client *ac)
{
	return ac->job ? ac->job->nspace : NULL;
}

/* ------------------------------------------------------------- text */

static void text_agent(struct agent *a, struct sbuf *b)
{
	uint64_t up;
	int conns = 0;

	for (int c = 0; c < a->p.max_clients; c++)
		conns += a->cl[c].fd >= 0;
	sbuf_printf(b, "agent\n  pid          %d\n  version      %s (ABI %d)\n",
		  (int)getpid(), PACKAGE_VERSION, RMAD_ABI_VERSION);
	sbuf_printf(b, "  session      ");
	sbuf_text_str(b, a->session, sizeof(a->session));
	sbuf_printf(b, "\n  node         %d of %d\n", a->node, a->nnodes);
	if (a->core >= 0)
		sbuf_printf(b, "  core         %d\n", a->core);
	else
		sbuf_printf(b, "  core         unpinned\n");
	sbuf_printf(b, "  hostname     ");
	sbuf_text_str(b, a->hostname, sizeof(a->hostname));
	sbuf_printf(b, "\n  provider     ");
	sbuf_text_str(b, provider_name(a), 64);
	sbuf_putc(b, '\n');
	if (!agent_uptime(&up)) {
		sbuf_printf(b, "  uptime       ");
		if (up >= 86400)
			sbuf_printf(b, "%llud ",
				  (unsigned long long)(up / 86400));
		sbuf_printf(b, "%02u:%02u:%02u\n", (unsigned)(up / 3600 % 24),
			  (unsigned)(up / 60 % 60), (unsigned)(up % 60));
	}
	sbuf_printf(b, "  clients      %d attached, %d connections\n",
		  count_clients(a), conns);
	sbuf_printf(b, "  progress     %s (%d on our core)\n",
		  a->event_mode ? "event-driven" : "spinning", a->nshare);
	if (a->nnodes > 1) {
		int nup, nbusy;

		liveness_node_counts(a, &nup, &nbusy);
		sbuf_printf(b, "  nodes        %d others up (%d busy, %d idle), "
			  "%d not up\n", nup, nbusy, nup - nbusy,
			  a->nnodes - 1 - nup);
	}
}

/*
 * What a status request may see: viewer -1 (the agent's user, root)
 * sees every client and job; another user admitted by allow_users sees
 * only its own clients and the jobs they belong to, never another
 * user's pids, ranks or job names.
 */
static int job_visible(const struct agent *a, const struct agent_job *j,
		       long viewer)
{
	if (viewer < 0)
		return 1;
	for (int c = 0; c < a->p.max_clients; c++)
		if (a->cl[c].fd >= 0 && a->cl[c].registered &&
		    a->cl[c].job == j && a->cl[c].uid == (uid_t)viewer)
			return 1;
	return 0;
}

/*
 * The MPI windows a client's librmad-mpi counted in its block (served by
 * rmad / by MPI): numbers the client writes as it likes, shown as read.
 */
static void mpi_wins(struct agent *a, int c, unsigned int *r, unsigned int *f)
{
	const struct rmad_shm_client *sc =
		rmad_shm_client_at(a->seg, &a->lay, (uint32_t)c);

	*r = __atomic_load_n(&sc->mpi_rmad, __ATOMIC_RELAXED);
	*f = __atomic_load_n(&sc->mpi_fallback, __ATOMIC_RELAXED);
}

static void text_clients(struct agent *a, struct sbuf *b, long viewer)
{
	size_t full;
	int omitted = 0;
	unsigned int mr, mf;
	char mw[24];

	sbuf_printf(b, "\nclients\n  %4s %8s %8s %6s %8s %9s  %s\n", "SLOT",
		  "PID", "RANK", "LOCAL", "BAD_OPS", "MPI_WINS", "JOB");
	full = sbuf_list_begin(b, CTL_RESERVE);
	for (int c = 0; c < a->p.max_clients; c++) {
		const struct agent_client *ac = &a->cl[c];
		size_t mark = b->len;

		if (ac->fd < 0 || !ac->registered ||
		    (viewer >= 0 && ac->uid != (uid_t)viewer))
			continue;
		if (omitted || b->over) {
			omitted++;
			continue;
		}
		mpi_wins(a, c, &mr, &mf);
		snprintf(mw, sizeof(mw), "%u/%u", mr, mf);
		sbuf_printf(b, "  %4d %8d %8d %6d %8llu %9s  ", c, (int)ac->pid,
			  (int)ac->rank, (int)ac->local_rank,
			  (unsigned long long)ac->bad_ops, mw);
		sbuf_text_str(b, job_nspace(ac), RMAD_NSPACE_MAX);
		sbuf_putc(b, '\n');
		if (b->over) {
			sbuf_rewind(b, mark);
			omitted = 1;
		}
	}
	b->lim = full;
	if (omitted)
		sbuf_printf(b, "  ... %d more not shown\n", omitted);
}

static void text_jobs(struct agent *a, struct sbuf *b, long viewer)
{
	char local[32];
	size_t full;
	int omitted = 0;

	sbuf_printf(b, "\njobs\n  %8s %11s %5s %6s %8s  %s\n", "SIZE",
		  "LOCAL", "MAP", "FAILED", "EPOCH", "NSPACE");
	full = sbuf_list_begin(b, CTL_RESERVE);
	for (int i = 0; i < a->p.max_jobs; i++) {
		const struct agent_job *j = &a->jobs[i];
		size_t mark = b->len;

		if (!j->in_use || !job_visible(a, j, viewer))
			continue;
		if (omitted || b->over) {
			omitted++;
			continue;
		}
		snprintf(local, sizeof(local), "%d/%d", (int)j->nlocal,
			 (int)j->local_size);
		sbuf_printf(b, "  %8d %11s %5s %6s %8llu  ", (int)j->size, local,
			  j->map_ready ? "ready" : "no",
			  j->failed ? "yes" : "no",
			  (unsigned long long)j->bar_epoch);
		sbuf_text_str(b, j->nspace, sizeof(j->nspace));
		sbuf_putc(b, '\n');
		if (b->over) {
			sbuf_rewind(b, mark);
			omitted = 1;
		}
	}
	b->lim = full;
	if (omitted)
		sbuf_printf(b, "  ... %d more not shown\n", omitted);
}

/* ------------------------------------------------------ windows */

static const char *win_kind(const struct agent_win *w)
{
	if (w->shared)
		return "shared";
	if (w->dynamic)
		return "dynamic";
	for (int32_t i = 0; i < w->nhere; i++)
		if (w->local[i].created)
			return "create";
	return "allocate";
}

static const char *win_state(const struct agent_win *w)
{
	return w->failed ? "failed" : w->ready ? "ready" : "joining";
}

/* A local member's window name, copied out of its control page (which
 * any client of the node may write): NUL-terminated, maybe empty. */
static void win_name(const struct agent_win *w, char *out, size_t len)
{
	out[0] = '\0';
	for (int32_t i = 0; i < w->nhere && !out[0]; i++) {
		const struct rmad_win_ctl *ctl = w->local[i].base;

		if (!ctl || w->local[i].map_len < sizeof(*ctl))
			continue;
		memcpy(out, (const char *)ctl->name,
		       len < sizeof(ctl->name) ? len : sizeof(ctl->name));
		out[len - 1] = '\0';
	}
}

static int win_visible(const struct agent *a, const struct agent_win *w,
		       long viewer)
{
	return w->job && job_visible(a, w->job, viewer);
}

static void text_windows(struct agent *a, struct sbuf *b, long viewer)
{
	char here[32], name[RMAD_WIN_CTL_NAME];
	size_t full;
	int omitted = 0;

	sbuf_printf(b, "\nwindows\n  %-16s %7s %9s %-8s %-7s  %s\n", "KEY",
		  "MEMBERS", "HERE", "KIND", "STATE", "NAME");
	full = sbuf_list_begin(b, CTL_RESERVE);
	for (struct agent_win *w = a->wn.wins; w; w = w->next) {
		size_t mark = b->len;

		if (!win_visible(a, w, viewer))
			continue;
		if (omitted || b->over) {
			omitted++;
			continue;
		}
		snprintf(here, sizeof(here), "%d/%d", (int)w->nhere,
			 (int)w->nlocal);
		win_name(w, name, sizeof(name));
		sbuf_printf(b, "  %016llx %7d %9s %-8s %-7s  ",
			  (unsigned long long)w->key, (int)w->gsize, here,
			  win_kind(w), win_state(w));
		sbuf_text_str(b, name, sizeof(name));
		sbuf_putc(b, '\n');
		if (b->over) {
			sbuf_rewind(b, mark);
			omitted = 1;
		}
	}
	b->lim = full;
	if (omitted)
		sbuf_printf(b, "  ... %d more not shown\n", omitted);
}

static void json_windows(struct agent *a, struct sbuf *b, long viewer)
{
	char name[RMAD_WIN_CTL_NAME];
	size_t full;
	int omitted = 0, first = 1;

	sbuf_printf(b, ",\"windows\":[");
	full = sbuf_list_begin(b, CTL_RESERVE);
	for (struct agent_win *w = a->wn.wins; w; w = w->next) {
		size_t mark = b->len;

		if (!win_visible(a, w, viewer))
			continue;
		if (omitted || b->over) {
			omitted++;
			continue;
		}
		win_name(w, name, sizeof(name));
		sbuf_printf(b, "%s{\"key\":\"%016llx\",\"nspace\":",
			  first ? "" : ",", (unsigned long long)w->key);
		sbuf_json_str(b, w->job->nspace, sizeof(w->job->nspace));
		sbuf_printf(b, ",\"members\":%d,\"local_members\":%d,"
			  "\"local_expected\":%d,\"kind\":\"%s\","
			  "\"state\":\"%s\",\"name\":", (int)w->gsize,
			  (int)w->nhere, (int)w->nlocal, win_kind(w),
			  win_state(w));
		sbuf_json_str(b, name, sizeof(name));
		sbuf_putc(b, '}');
		if (b->over) {
			sbuf_rewind(b, mark);
			omitted = 1;
			continue;
		}
		first = 0;
	}
	b->lim = full;
	sbuf_printf(b, "],\"windows_omitted\":%d", omitted);
}

static void text_stats(struct agent *a, struct sbuf *b)
{
	const struct agent_stats *st = &a->st;
	char line[1024];

	agent_stats_format(st, AGENT_STATS_TEXT, line, sizeof(line));
	sbuf_printf(b, "\nstats\n%s", line);
	sbuf_printf(b, "  %-17s  %12s %12s\n", "packets", "SENT", "RECEIVED");
	for (int t = 1; t < RMAD_AM_TYPE_MAX; t++)
		sbuf_printf(b, "    %-15s  %12llu %12llu\n", agent_stats_pkt_name(t),
			  (unsigned long long)st->pkts_sent[t],
			  (unsigned long long)st->pkts_recv[t]);
	sbuf_printf(b, "\nop pool\n");
	sbuf_printf(b, "  global in use      %u of %u\n", op_pool_in_use(a),
		  a->hdr ? a->lay.op_pool_size : 0);
	sbuf_printf(b, "  high-water mark    %u\n", st->op_pool_hwm);
	sbuf_printf(b, "  reserved           %u (window op pools)\n",
		  a->hdr ? completion_global_reserved(a) : 0);
	if (a->fab) {
		struct rmad_fabric_stats fs;

		rmad_fabric_get_stats(a->fab, &fs);
		sbuf_printf(b, "\nfabric\n");
		sbuf_printf(b, "  sent               %llu (%llu bytes)\n",
			  (unsigned long long)fs.sent,
			  (unsigned long long)fs.send_bytes);
		sbuf_printf(b, "  received           %llu (%llu bytes)\n",
			  (unsigned long long)fs.received,
			  (unsigned long long)fs.recv_bytes);
		sbuf_printf(b, "  queued             %llu\n",
			  (unsigned long long)fs.queued);
		sbuf_printf(b, "  fi_write / fi_read %llu / %llu (%llu bytes)\n",
			  (unsigned long long)fs.rma_writes,
			  (unsigned long long)fs.rma_reads,
			  (unsigned long long)fs.rma_bytes);
		sbuf_printf(b, "  pending now        %d\n",
			  rmad_fabric_pending(a->fab));
		sbuf_printf(b, "  cq errors          %llu\n",
			  (unsigned long long)fs.cq_errors);
		sbuf_printf(b, "  rejected (tags)    %llu\n",
			  (unsigned long long)fs.rejected);
		sbuf_printf(b, "  stale (sessions)   %llu\n",
			  (unsigned long long)fs.stale);
	}
}

/* ------------------------------------------------------------- JSON */

static void json_agent(struct agent *a, struct sbuf *b)
{
	uint64_t up;
	int nup, nbusy;

	sbuf_printf(b, "{\"agent\":{\"pid\":%d,\"version\":", (int)getpid());
	sbuf_json_str(b, PACKAGE_VERSION, 64);
	sbuf_printf(b, ",\"abi_version\":%d,\"session\":", RMAD_ABI_VERSION);
	sbuf_json_str(b, a->session, sizeof(a->session));
	sbuf_printf(b, ",\"node\":%d,\"nnodes\":%d,\"core\":%d,\"hostname\":",
		  a->node, a->nnodes, a->core);
	sbuf_json_str(b, a->hostname, sizeof(a->hostname));
	sbuf_printf(b, ",\"provider\":");
	sbuf_json_str(b, provider_name(a), 64);
	if (!agent_uptime(&up))
		sbuf_printf(b, ",\"uptime_s\":%llu", (unsigned long long)up);
	else
		sbuf_printf(b, ",\"uptime_s\":null");
	liveness_node_counts(a, &nup, &nbusy);
	sbuf_printf(b, ",\"clients\":%d,\"progress\":\"%s\","
		  "\"clients_on_core\":%d,\"nodes_up\":%d,"
		  "\"nodes_busy\":%d}", count_clients(a),
		  a->event_mode ? "event" : "spin", a->nshare, nup, nbusy);
}

static void json_clients(struct agent *a, struct sbuf *b, long viewer)
{
	size_t full;
	int omitted = 0, first = 1;
	unsigned int mr, mf;

	sbuf_printf(b, ",\"clients\":[");
	full = sbuf_list_begin(b, CTL_RESERVE);
	for (int c = 0; c < a->p.max_clients; c++) {
		const struct agent_client *ac = &a->cl[c];
		size_t mark = b->len;

		if (ac->fd < 0 || !ac->registered ||
		    (viewer >= 0 && ac->uid != (uid_t)viewer))
			continue;
		if (omitted || b->over) {
			omitted++;
			continue;
		}
		mpi_wins(a, c, &mr, &mf);
		sbuf_printf(b, "%s{\"slot\":%d,\"pid\":%d,\"rank\":%d,"
			  "\"local_rank\":%d,\"bad_ops\":%llu,"
			  "\"mpi_windows_rmad\":%u,\"mpi_windows_mpi\":%u,"
			  "\"job\":",
			  first ? "" : ",", c, (int)ac->pid, (int)ac->rank,
			  (int)ac->local_rank, (unsigned long long)ac->bad_ops,
			  mr, mf);
		sbuf_json_str(b, job_nspace(ac), RMAD_NSPACE_MAX);
		sbuf_putc(b, '}');
		if (b->over) {
			sbuf_rewind(b, mark);
			omitted = 1;
			continue;
		}
		first = 0;
	}
	b->lim = full;
	sbuf_printf(b, "],\"clients_omitted\":%d", omitted);
}

static void json_jobs(struct agent *a, struct sbuf *b, long viewer)
{
	size_t full;
	int omitted = 0, first = 1;

	sbuf_printf(b, ",\"jobs\":[");
	full = sbuf_list_begin(b, CTL_RESERVE);
	for (int i = 0; i < a->p.max_jobs; i++) {
		const struct agent_job *j = &a->jobs[i];
		size_t mark = b->len;

		if (!j->in_use || !job_visible(a, j, viewer))
			continue;
		if (omitted || b->over) {
			omitted++;
			continue;
		}
		sbuf_printf(b, "%s{\"nspace\":", first ? "" : ",");
		sbuf_json_str(b, j->nspace, sizeof(j->nspace));
		sbuf_printf(b, ",\"size\":%d,\"local_size\":%d,"
			  "\"local_ranks\":%d,\"map_ready\":%s,\"failed\":%s,"
			  "\"barrier_epoch\":%llu}",
			  (int)j->size, (int)j->local_size, (int)j->nlocal,
			  j->map_ready ? "true" : "false",
			  j->failed ? "true" : "false",
			  (unsigned long long)j->bar_epoch);
		if (b->over) {
			sbuf_rewind(b, mark);
			omitted = 1;
			continue;
		}
		first = 0;
	}
	b->lim = full;
	sbuf_printf(b, "],\"jobs_omitted\":%d", omitted);
}

static void json_pkts(struct sbuf *b, const char *key, const uint64_t *v)
{
	sbuf_printf(b, ",\"%s\":{", key);
	for (int t = 1; t < RMAD_AM_TYPE_MAX; t++)
		sbuf_printf(b, "%s\"%s\":%llu", t > 1 ? "," : "",
			  agent_stats_pkt_name(t), (unsigned long long)v[t]);
	sbuf_putc(b, '}');
}

static void json_stats(struct agent *a, struct sbuf *b)
{
	const struct agent_stats *st = &a->st;
	char pairs[1024];

	/* the table's pairs each start with a comma */
	agent_stats_format(st, AGENT_STATS_JSON, pairs, sizeof(pairs));
	sbuf_printf(b, ",\"stats\":{%s", pairs + 1);
	json_pkts(b, "pkts_sent", st->pkts_sent);
	json_pkts(b, "pkts_recv", st->pkts_recv);
	sbuf_printf(b, "},\"op_pool\":{\"size\":%u,\"in_use\":%u,\"hwm\":%u,"
		  "\"reserved\":%u}",
		  a->hdr ? a->lay.op_pool_size : 0, op_pool_in_use(a),
		  st->op_pool_hwm, a->hdr ? completion_global_reserved(a) : 0);
	if (a->fab) {
		struct rmad_fabric_stats fs;

		rmad_fabric_get_stats(a->fab, &fs);
		sbuf_printf(b, ",\"fabric\":{\"sent\":%llu,\"received\":%llu,"
			  "\"queued\":%llu,\"pending\":%d,\"cq_errors\":%llu,"
			  "\"rejected\":%llu,\"stale\":%llu,"
			  "\"send_bytes\":%llu,\"recv_bytes\":%llu,"
			  "\"rma_writes\":%llu,\"rma_reads\":%llu,"
			  "\"rma_bytes\":%llu}",
			  (unsigned long long)fs.sent,
			  (unsigned long long)fs.received,
			  (unsigned long long)fs.queued,
			  rmad_fabric_pending(a->fab),
			  (unsigned long long)fs.cq_errors,
			  (unsigned long long)fs.rejected,
			  (unsigned long long)fs.stale,
			  (unsigned long long)fs.send_bytes,
			  (unsigned long long)fs.recv_bytes,
			  (unsigned long long)fs.rma_writes,
			  (unsigned long long)fs.rma_reads,
			  (unsigned long long)fs.rma_bytes);
	} else {
		sbuf_printf(b, ",\"fabric\":null");
	}
	sbuf_printf(b, "}\n");
}

/* ------------------------------------------------------------ reply */

void ctl_status(struct agent *a, int fd, int json, long viewer)
{
	/* on the heap: 60 KiB is too much for the loop thread's stack */
	char *msg = malloc(CTL_MSG_MAX);
	struct rmad_ctl_hdr *h = (struct rmad_ctl_hdr *)msg;
	struct sbuf b = {
		.lim = CTL_MSG_MAX - sizeof(*h) - 1,
	};
	int err;

	if (!msg) {
		rmad_warn("status reply not sent: out of memory");
		return;
	}
	b.p = msg + sizeof(*h);

	memset(h, 0, sizeof(*h));
	h->magic = RMAD_CTL_MAGIC;
	h->abi_version = RMAD_ABI_VERSION;
	h->type = RMAD_CTL_TEXT_REPLY;
	h->flags = json ? RMAD_CTL_FLAG_JSON : 0;
	b.p[0] = '\0';

	/* the lists are cut to fit; everything else has a small bound */
	if (json) {
		json_agent(a, &b);
		json_clients(a, &b, viewer);
		json_jobs(a, &b, viewer);
		json_windows(a, &b, viewer);
		json_stats(a, &b);
	} else {
		text_agent(a, &b);
		text_clients(a, &b, viewer);
		text_jobs(a, &b, viewer);
		text_windows(a, &b, viewer);
		text_stats(a, &b);
	}
	if (b.over) {
		/* cannot happen with CTL_RESERVE; still answer something
		 * that parses rather than a cut JSON object */
		rmad_warn("status report too large, sending a stub");
		sbuf_rewind(&b, 0);
		sbuf_printf(&b, "%s", json ?
			  "{\"error\":\"status report too large\"}\n" :
			  "status report too large\n");
	}
	err = rmad_send_msg(fd, msg, sizeof(*h) + b.len + 1, NULL, 0);
	if (err < 0)
		rmad_warn("status reply not sent: %s", strerror(-err));
	free(msg);
}
