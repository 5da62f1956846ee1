/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.c - the agent's configuration: the command line, rmad.conf
 * ($RMAD_CONF, --config) and the environment, --set, the --show-config
 * and --print options (which print and exit), and a reload on SIGHUP.
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

#ifndef RMAD_SYSCONFDIR
#define RMAD_SYSCONFDIR "/etc"
#endif

static int apply_sets(struct agent *a, struct rmad_params *p, char *err,
		      size_t len)
{
	for (int i = 0; i < a->m.nset_args; i++) {
		char kv[512], *eq;

		snprintf(kv, sizeof(kv), "%s", a->m.set_args[i]);
		eq = strchr(kv, '=');
		if (!eq) {
			snprintf(err, len, "--set wants KEY=VALUE, not '%s'",
				 a->m.set_args[i]);
			return RMAD_ERR_ARG;
		}
		*eq = '\0';
		if (rmad_params_set(p, kv, eq + 1, err, len) < 0)
			return RMAD_ERR_ARG;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: rmad [options]\n"
"  -f, --foreground        stay in the foreground (default: daemonize)\n"
"  -c, --config FILE       configuration file (default "
RMAD_SYSCONFDIR "/rmad/rmad.conf,\n"
"                          or $RMAD_CONF)\n"
"  -s, --session NAME      session to serve (default: \"default\")\n"
"      --vnodes K          one of K agents on this host (virtual nodes);\n"
"                          its index is its PMIx rank\n"
"      --pmix              bootstrap the agent mesh through PMIx\n"
"      --embedded          started by a client: single node, exits idle\n"
"      --set KEY=VALUE     override one parameter (repeatable)\n"
"      --show-config[=FMT] print the configuration and exit; FMT is\n"
"                          text (default), conf, man, json or names\n"
"      --print-run-dir     print the session's run directory and exit\n"
"      --sweep             remove what this user's dead agents left: shm\n"
"                          regions in /dev/shm, sockets and pid files in\n"
"                          the run directory; print the count and exit\n"
"                          (--sweep-shm is the same)\n"
"      --owner-pid PID     stop when process PID (the launcher) is gone\n"
"      --print-rank-cpus K print the CPUs left for ranks when K agents of\n"
"                          this host are pinned (\"\" if none) and exit\n"
"      --print-vnode-cores K  print the cores of each of K virtual nodes\n"
"                          of a host with none to spare and exit\n"
"                          (the --print options combine: one line each,\n"
"                          in the order above)\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              this text\n");
}

int options_proc_start(unsigned long long *start, int pid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command, which may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* fields 3..21, then the start time */
	for (int k = 0; k < 20 && p; k++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", start) == 1;
}

/* --owner-pid: the launcher is gone (dead, or its pid reused), and with
 * it whoever would stop us: stop. */
static int parse_args(struct agent *a, int argc, char **argv, int *fg,
		      int *use_pmix, const char **show)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "session", required_argument, NULL, 's' },
		{ "vnodes", required_argument, NULL, 'k' },
		{ "pmix", no_argument, NULL, 'p' },
		{ "embedded", no_argument, NULL, 'e' },
		{ "set", required_argument, NULL, 'S' },
		{ "show-config", optional_argument, NULL, 'C' },
		{ "print-run-dir", no_argument, NULL, 'D' },
		{ "sweep", no_argument, NULL, 'W' },
		{ "sweep-shm", no_argument, NULL, 'W' },
		{ "print-rank-cpus", required_argument, NULL, 'R' },
		{ "print-vnode-cores", required_argument, NULL, 'Y' },
		{ "owner-pid", required_argument, NULL, 'O' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, vnodes = 0;

	while ((c = getopt_long(argc, argv, "fc:s:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			*fg = 1;
			break;
		case 'c':
			snprintf(a->conf_path, sizeof(a->conf_path), "%s",
				 optarg);
			break;
		case 's':
			snprintf(a->session, sizeof(a->session), "%s", optarg);
			break;
		case 'k':
			vnodes = atoi(optarg);
			if (vnodes < 1) {
				fprintf(stderr, "rmad: bad --vnodes '%s'\n",
					optarg);
				return 2;
			}
			a->vnode = 0;	/* real index from the bootstrap */
			*use_pmix = 1;
			break;
		case 'p':
			*use_pmix = 1;
			break;
		case 'e':
			a->embedded = 1;
			break;
		case 'S':
			/* applied after the file and environment */
			if (a->m.set_args)
				a->m.set_args[a->m.nset_args++] = optarg;
			break;
		case 'C':
			*show = optarg ? optarg : "text";
			break;
		case 'D':
			a->m.prints |= PRINT_RUN_DIR;
			*show = "print";
			break;
		case 'W':
			*show = "sweep";
			break;
		case 'R':
			a->m.rank_cpus_agents = atoi(optarg);
			a->m.prints |= PRINT_RANK_CPUS;
			*show = "print";
			break;
		case 'Y':
			a->m.vnode_cores_nodes = atoi(optarg);
			a->m.prints |= PRINT_VNODE_CORES;
			*show = "print";
			break;
		case 'O': {
			char *end;
			long pid = strtol(optarg, &end, 10);

			if (*end || pid < 1 || pid > INT_MAX ||
			    !options_proc_start(&a->m.owner_start, (int)pid)) {
				fprintf(stderr, "rmad: no process --owner-pid "
					"'%s'\n", optarg);
				return 2;
			}
			a->m.owner_pid = (int)pid;
			break;
		}
		case 'V':
			printf("rmad %s (ABI %d)\n", PACKAGE_VERSION,
			       RMAD_ABI_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rmad: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

/*
 * --print-run-dir, --print-rank-cpus K, --print-vnode-cores K: one line
 * each, in that order, however many of them were given, so that a
 * launcher learns all three in one start of this binary (libfabric's
 * psm provider alone spends 100-200 ms of every start calibrating a
 * clock).  A line that cannot be worked out is printed empty and makes
 * the exit status 2.
 */
static void print_line(char *buf, int failed, int *rc)
{
	if (failed) {
		buf[0] = '\0';
		*rc = 2;
	}
	printf("%s\n", buf);
}

static int print_launch(struct agent *a)
{
	char buf[PATH_MAX > 4096 ? PATH_MAX : 4096];
	int rc = 0;

	if (a->m.prints & PRINT_RUN_DIR)
		print_line(buf, rmad_session_dir(a->p.rundir, a->session, buf,
						 sizeof(buf)) != 0, &rc);
	if (a->m.prints & PRINT_RANK_CPUS)
		print_line(buf, a->m.rank_cpus_agents < 1 ||
			   pin_rank_cpus(&a->p, a->m.rank_cpus_agents, buf,
					   sizeof(buf)), &rc);
	if (a->m.prints & PRINT_VNODE_CORES)
		print_line(buf, a->m.vnode_cores_nodes < 1 ||
			   pin_vnode_cores(&a->p, a->m.vnode_cores_nodes,
					     buf, sizeof(buf)), &rc);
	return rc;
}

int options_show(struct agent *a, const char *fmt)
{
	static const struct {
		const char *name;
		enum rmad_params_fmt f;
	} fmts[] = {
		{ "text", RMAD_PARAMS_FMT_TEXT },
		{ "conf", RMAD_PARAMS_FMT_CONF },
		{ "man", RMAD_PARAMS_FMT_MAN },
		{ "json", RMAD_PARAMS_FMT_JSON },
	};

	if (!strcmp(fmt, "print") && a->m.prints)
		return print_launch(a);
	if (!strcmp(fmt, "sweep")) {
		char sdir[PATH_MAX], *slash;

		rmad_log_init("rmad", (int)a->p.log_level);
		if (rmad_session_dir(a->p.rundir, a->session, sdir,
				     sizeof(sdir)) || !(slash = strrchr(sdir, '/')))
			return 2;
		*slash = '\0';
		printf("%d\n", sweep_shm("/dev/shm", getuid()) +
		       sweep_rundir(sdir, getuid(), 1));
		return 0;
	}
	if (!strcmp(fmt, "names")) {
		for (int i = 0; i < rmad_params_count(); i++)
			printf("%s\n", rmad_params_name(i));
		return 0;
	}
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (!strcmp(fmt, fmts[i].name)) {
			rmad_params_print(&a->p, stdout, fmts[i].f);
			return 0;
		}
	fprintf(stderr, "rmad: unknown --show-config format '%s'\n", fmt);
	return 2;
}

int options_load(struct agent *a, int argc, char **argv, int *fg,
		 int *use_pmix, const char **show)
{
	char err[256];
	const char *env = getenv("RMAD_CONF");
	int r;

	rmad_params_defaults(&a->p);
	snprintf(a->conf_path, sizeof(a->conf_path), "%s",
		 env && *env ? env : RMAD_SYSCONFDIR "/rmad/rmad.conf");
	/* a first pass only to learn --config; --set is applied below */
	{
		struct agent tmp = *a;
		int fgx = 0, px = 0;
		const char *sx = NULL;

		opterr = 0;
		r = parse_args(&tmp, argc, argv, &fgx, &px, &sx);
		opterr = 1;
		if (r)
			return r;
		memcpy(a->conf_path, tmp.conf_path, sizeof(a->conf_path));
		optind = 1;
	}
	r = rmad_params_load_file(&a->p, a->conf_path, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "rmad: %s\n", err);
		return 2;
	}
	if (rmad_params_load_env(&a->p, err, sizeof(err)) < 0) {
		fprintf(stderr, "rmad: %s\n", err);
		return 2;
	}
	a->m.set_args = calloc((size_t)argc, sizeof(*a->m.set_args));
	if (!a->m.set_args)
		return 1;
	r = parse_args(a, argc, argv, fg, use_pmix, show);
	if (r)
		return r;
	if (apply_sets(a, &a->p, err, sizeof(err)) < 0) {
		fprintf(stderr, "rmad: %s\n", err);
		return 2;
	}
	return 0;
}
void options_reload(struct agent *a)
{
	struct rmad_params fresh;
	char err[256];
	int r, n;

	a->reload = 0;
	rmad_params_defaults(&fresh);
	r = rmad_params_load_file(&fresh, a->conf_path, err, sizeof(err));
	if (r < 0 || rmad_params_load_env(&fresh, err, sizeof(err)) < 0 ||
	    apply_sets(a, &fresh, err, sizeof(err)) < 0) {
		rmad_err("reload refused: %s", err);
		return;
	}
	n = rmad_params_apply_reload(&a->p, &fresh);
	rmad_log_set_level(a->p.log_level);
	rmad_info("reloaded %s: %d parameters changed", a->conf_path, n);
}

