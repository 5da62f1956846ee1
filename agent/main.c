/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - the rmad agent's startup and shutdown: one agent per
 * session and node (its lock, its pid file), the mesh (PMIx, a static
 * mesh or one node), the modules' setup in order, daemonizing, and
 * the cleanup.  The configuration is options.c's, the progress loop
 * loop.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "am.h"
#include "liveness.h"
#include "bell.h"
#include "clients.h"
#include "completion.h"
#include "options.h"
#include "loop.h"
#include "crash.h"
#include "jobs.h"
#include "jobs_events.h"
#include "jobs_ping.h"
#include "mem.h"
#include "mesh.h"
#include "pin.h"
#include "schedule.h"
#include "guard.h"
#include "rma.h"
#include "stats.h"
#include "sweep.h"
#include "windows.h"
#include "winsync.h"
#include "atomics.h"
#include "log.h"
#include "rmad_abi.h"
#include "trace.h"
#include "util.h"

/* ------------------------------------------------------ single agent */

/*
 * An abstract-namespace socket named after the session directory and
 * vnode is the "one agent per session and node" lock: binding it is
 * atomic, and the kernel drops it when the agent exits, however it
 * exits.  A second agent started for the same place (two clients that
 * raced to autostart) fails here and leaves quietly.
 */
static int take_agent_lock(struct agent *a)
{
	int err;

	/* a sweep (sweep_rundir) holds it for a moment to tell a
	 * dead agent from a live one: a few tries before giving way */
	for (int i = 0; i < 10; i++) {
		err = sweep_lock_take(a->sock_path, &a->m.lock_fd);
		if (err != 1)
			break;
		usleep(10000);
	}
	return err;
}

/*
 * agent[-K].pid beside the socket: rmad-run stops the agents it started
 * by these pids (after checking each one's command line names its
 * session), never by matching command lines.
 */
static void write_pid_file(struct agent *a)
{
	char tmp[PATH_MAX + 16];
	size_t n = strlen(a->sock_path);
	FILE *f;

	if (n < 5 || strcmp(a->sock_path + n - 5, ".sock") ||
	    n + 1 > sizeof(a->m.pid_path))
		return;
	snprintf(a->m.pid_path, sizeof(a->m.pid_path), "%.*s.pid",
		 (int)(n - 5), a->sock_path);
	snprintf(tmp, sizeof(tmp), "%s.%d", a->m.pid_path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) ||
	    rename(tmp, a->m.pid_path)) {
		rmad_warn("pid file %s: %s", a->m.pid_path, strerror(errno));
		if (f)
			unlink(tmp);
		a->m.pid_path[0] = '\0';
	}
}

static void sd_notify_ready(void)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[64];
	socklen_t len;
	int fd;

	if (!ns || (ns[0] != '/' && ns[0] != '@') ||
	    strlen(ns) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, ns, strlen(ns));
	if (ns[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(ns));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%d", (int)getpid());
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/* ------------------------------------------------------------- setup */

/* fabric_auth (rmad.conf(5)) once the fabric is open: 1 tags, 0 none,
 * or an error (logged) for a setting that cannot be met. */
static int auth_wanted(struct agent *a)
{
	const char *m = a->p.fabric_auth;
	int keyed = a->p.mesh_key_file[0] != 0;

	if (strcmp(m, "auto") && strcmp(m, "on") && strcmp(m, "off")) {
		rmad_err("fabric_auth = %s: not auto, on or off", m);
		return RMAD_ERR_ARG;
	}
	if (!strcmp(m, "off"))
		return 0;
	if (a->mesh && !keyed && !strcmp(m, "on")) {
		rmad_err("fabric_auth = on: a static mesh needs mesh_key_file");
		return RMAD_ERR_ARG;
	}
	if (a->mesh && !keyed) {
		rmad_warn("mesh: no mesh_key_file, so packets carry no tags: "
			  "whoever reaches the agents' port and claims a "
			  "node's address speaks for that node");
		return 0;
	}
	return a->mesh || !strcmp(m, "on") ||
	       strcmp(rmad_fabric_provider(a->fab), "shm");
}

static int setup_mesh(struct agent *a, int use_pmix)
{
	struct rmad_fabric_cfg fc = {
		.provider = a->p.provider,
		.node = NULL,
		.service = NULL,
		.am_buf_size = a->p.am_buf_size,
		.am_recv_bufs = (int)a->p.am_recv_bufs,
		.am_send_bufs = (int)a->p.am_send_bufs,
	};
	struct rmad_mesh_cfg mc = {
		.list = a->p.mesh,
		.file = a->p.mesh_file,
		.port = a->p.mesh_port,
		.self = a->p.mesh_self,
	};
	char addr[256], host[64], port[16];
	size_t alen = sizeof(addr);
	int err, tags;

	if (a->embedded) {
		/* one node, no peers: the fabric is not needed */
		a->node = 0;
		a->nnodes = 1;
		return 0;
	}
	if (a->p.fabric_node[0])
		fc.node = a->p.fabric_node;
	if (rmad_mesh_configured(&mc)) {
		/* a static mesh (mesh.c): our own entry is our address */
		err = rmad_mesh_load(&mc, &a->boot, host, sizeof(host), port,
				     sizeof(port));
		if (err) {
			rmad_err("the mesh of the configuration is unusable");
			return err;
		}
		fc.node = host;
		fc.service = port;
		a->mesh = 1;
	}
	err = rmad_fabric_open(&fc, am_recv, a, &a->fab);
	if (err) {
		rmad_err("cannot open libfabric provider '%s'%s%s%s",
			 a->p.provider, a->mesh ? " on " : "",
			 a->mesh ? host : "", a->mesh ? ":" : "");
		return err;
	}
	err = rmad_fabric_getname(a->fab, addr, &alen);
	if (err)
		return err;
	if (a->mesh && !rmad_mesh_check_self(&a->boot, addr, alen)) {
		rmad_err("mesh: provider %s did not bind to %s port %s, its "
			 "entry's socket address; a static mesh needs "
			 "tcp;ofi_rxm",
			 rmad_fabric_provider(a->fab), host, port);
		return RMAD_ERR_FABRIC;
	}
	tags = auth_wanted(a);
	if (tags < 0)
		return tags;
	err = a->mesh ? (tags ? rmad_mesh_keys(a->p.mesh_key_file,
					       &a->boot) : 0) :
	      use_pmix ? rmad_boot_pmix(addr, alen, tags, &a->boot) :
			 rmad_boot_single(addr, alen, &a->boot);
	if (err) {
		rmad_err("bootstrap of the agent mesh failed");
		return err;
	}
	err = rmad_fabric_set_peers(a->fab, a->boot.self, a->boot.n,
				    a->boot.addrs, a->boot.addrlen);
	if (!err && a->boot.keys)
		err = rmad_fabric_set_auth(a->fab, &a->boot.keys[0][0]);
	if (err)
		return err;
	a->node = a->boot.self;
	a->nnodes = a->boot.n;
	/*
	 * The CQ's wait fd (tcp;ofi_rxm has one, shm none) joins the event
	 * loop at the first sleep and stays (fab_watch); the agent sleeps
	 * only after fi_trywait said it may (agent_sleep), and idle_poll_us
	 * still bounds the sleep, for the progress the fd does not signal.
	 */
	rmad_info("mesh: node %d of %d over %s, packets %s%s", a->node,
		  a->nnodes, rmad_fabric_provider(a->fab),
		  a->boot.keys ? "tagged" : "not tagged",
		  a->mesh ? ", static (mesh): the others join as they come up"
			  : "");
	return 0;
}


static void daemonize(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (pid > 0)
		_exit(0);
	setsid();
	pid = fork();
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0) {
		/* stay where we are */
	}
	{
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			if (fd > STDERR_FILENO)
				close(fd);
		}
	}
}

static void agent_cleanup(struct agent *a)
{
	if (a->hdr)
		uatomic_or(&a->hdr->agent_flags, RMAD_AGENT_STOPPING);
	clients_unlisten(a);
	clients_drop_all(a);
	agent_rma_fini(a);
	agent_win_fini(a);
	agent_mem_fini(a);
	if (a->fab) {
		struct rmad_fabric_stats fs;

		rmad_fabric_get_stats(a->fab, &fs);
		rmad_info("fabric: sent %llu, received %llu, queued %llu, "
			  "cq errors %llu, rejected %llu, stale %llu, "
			  "fi_write %llu, fi_read %llu",
			  (unsigned long long)fs.sent,
			  (unsigned long long)fs.received,
			  (unsigned long long)fs.queued,
			  (unsigned long long)fs.cq_errors,
			  (unsigned long long)fs.rejected,
			  (unsigned long long)fs.stale,
			  (unsigned long long)fs.rma_writes,
			  (unsigned long long)fs.rma_reads);
	}
	if (a->fab_ev) {
		event_free(a->fab_ev);	/* before its fd goes with the fabric */
		a->fab_ev = NULL;
	}
	if (a->wake_ev) {
		event_free(a->wake_ev);
		a->wake_ev = NULL;
	}
	guard_stop(a);
	bell_close(a);
	rmad_fabric_close(a->fab);
	a->fab = NULL;
	liveness_fini(a);
	am_fini(a);
	rmad_boot_free(&a->boot);
	completion_segment_destroy(a);
	if (a->doorbell_ev)
		event_free(a->doorbell_ev);
	if (a->doorbell >= 0)
		close(a->doorbell);
	for (int i = 0; i < 3; i++)
		if (a->sig_ev[i])
			event_free(a->sig_ev[i]);
	if (a->tick_ev)
		event_free(a->tick_ev);
	if (a->base)
		event_base_free(a->base);
	if (a->m.pid_path[0])
		unlink(a->m.pid_path);
	if (a->sdir[0])
		rmdir(a->sdir);	/* only if empty: other agents may share it */
	if (a->m.lock_fd >= 0)
		close(a->m.lock_fd);
	clients_free(a);
	free(a->jobs);
	free(a->m.set_args);
	a->m.set_args = NULL;
}

/* The session's run directory and the agent's socket path: checked
 * (ours, and 0700 unless we serve other users), and what this user's
 * killed agents left in the run directory swept.  0 or -1. */
static int setup_rundir(struct agent *a)
{
	char msg[512], rdir[PATH_MAX], *slash;

	if (rmad_session_dir(a->p.rundir, a->session, a->sdir,
			     sizeof(a->sdir)) ||
	    rmad_agent_sock_path(a->sdir, a->vnode, a->sock_path,
				 sizeof(a->sock_path))) {
		rmad_err("run directory path too long: %s", a->sdir);
		a->sdir[0] = '\0';
		return -1;
	}
	/* ours, and 0700 unless we serve other users (allow_users) */
	if (rmad_session_dir_check(a->sdir, getuid(), !a->p.allow_users[0],
				   1, msg, sizeof(msg))) {
		rmad_err("%s", msg);
		a->sdir[0] = '\0';
		return -1;
	}
	/* sockets and pid files of this user's killed agents */
	rmad_strlcpy(rdir, a->sdir, sizeof(rdir));
	slash = strrchr(rdir, '/');
	if (slash && slash != rdir) {
		*slash = '\0';
		sweep_rundir(rdir, getuid(), 1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct agent agent, *a = &agent;
	const char *show = NULL;
	int fg = 0, use_pmix = 0, err;

	memset(a, 0, sizeof(*a));
	a->vnode = -1;
	a->memfd = -1;
	a->doorbell = -1;
	a->listen_fd = -1;
	a->m.lock_fd = -1;
	snprintf(a->session, sizeof(a->session), "default");
	err = options_load(a, argc, argv, &fg, &use_pmix, &show);
	if (err || show) {
		err = err ? err : options_show(a, show);
		free(a->m.set_args);
		return err;
	}
	rmad_log_init("rmad", (int)a->p.log_level);
	if (!fg && !a->embedded)
		daemonize();
	/* libfabric (fi_load.h), before our signal handlers: the psm
	 * libraries it pulls in set their own as they load.  An embedded
	 * agent (one node) opens no fabric. */
	if (!a->embedded)
		rmad_fi_load();
	crash_install("rmad");

	a->base = event_base_new();
	if (!a->base) {
		rmad_err("libevent: cannot create the event base");
		return 1;
	}
	gethostname(a->hostname, sizeof(a->hostname) - 1);
	a->jobs = calloc((size_t)a->p.max_jobs, sizeof(*a->jobs));
	if (clients_alloc(a) || !a->jobs) {
		rmad_err("out of memory");
		goto fail;
	}
	if (loop_setup_events(a))
		goto fail;
	am_init(a);
	liveness_init(a);
	jobs_events_init(a);
	jobs_ping_init(a);
	/* regions of this user's agents that were killed (SIGKILL) */
	sweep_shm("/dev/shm", getuid());
	if (setup_mesh(a, use_pmix))
		goto fail;
	if (a->vnode >= 0)
		a->vnode = a->node;
	pin_agent(a);
	sched_check_peer(a);
	if (setup_rundir(a))
		goto fail;
	err = take_agent_lock(a);
	if (err == 1) {
		rmad_info("an agent already serves %s; leaving", a->sock_path);
		a->sdir[0] = '\0';
		agent_cleanup(a);
		return 0;
	}
	if (err)
		goto fail;
	if (completion_segment_create(a) || agent_win_init(a) || agent_mem_init(a) ||
	    agent_rma_init(a))
		goto fail;
	winsync_init(a);
	/* before any client attaches: what typed ops may carry */
	a->hdr->type_blob_max = ty_blob_max(a);
	a->hdr->type_chunk_max = ty_chunk_max(a);
	if (a->nnodes > 1 && rmad_boot_fence(&a->boot)) {
		rmad_err("startup fence of the agent mesh failed");
		goto fail;
	}
	/* every agent of the mesh is up: watch them from now on */
	if (am_start(a) || liveness_start(a))
		goto fail;
	if (clients_listen(a))
		goto fail;
	bell_open(a);		/* a mesh of one host with no wait object */
	write_pid_file(a);
	a->idle_since_ns = rmad_now_ns();
	rmad_info("agent ready: session %s, node %d/%d, core %d, pid %d",
		  a->session, a->node, a->nnodes, a->core, (int)getpid());
	sd_notify_ready();
	/* again: a provider loaded since (libpsm2) put its own handler */
	crash_install("rmad");
	loop_run(a);
	rmad_info("stopping");
	if (a->p.stats_interval_ms > 0)
		loop_log_stats(a);	/* what the last interval counted */
	agent_cleanup(a);
	return 0;
fail:
	agent_cleanup(a);
	return 1;
}
