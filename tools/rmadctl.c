/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmadctl.c - ask a running rmad agent for its status, or stop or reload
 * it, over the same Unix socket its clients attach to.
 *
 * The socket is found the way librmad finds it: the rundir key of the
 * configuration (defaults, then the file, then RMAD_* variables), the
 * session (-s, else $RMAD_SESSION, else "default") and the virtual node
 * (--vnode, else the node's only agent).  Each request is one
 * SOCK_SEQPACKET message; the agent answers status with one message
 * holding the whole report, and answers stop and reload with nothing, so
 * their outcome is read from the socket: stop is done when the agent
 * hangs up and its socket is gone, and a reload is followed by a status
 * request whose answer proves the agent took the reload (a refused
 * request makes the agent hang up instead).  No wait is unbounded.
 *
 * Exit status: 0 done, 1 the agent could not be reached or refused or
 * failed the request, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "params.h"
#include "rmad_ctl.h"
#include "rmad_shm.h"
#include "util.h"

#ifndef RMAD_SYSCONFDIR
#define RMAD_SYSCONFDIR "/etc"
#endif

#define REPLY_TIMEOUT_MS	5000
#define STOP_TIMEOUT_MS		10000
/* the agent's reply is at most 60 KiB; room for more costs nothing */
#define REPLY_MAX		(64 * 1024)

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

enum cmd { CMD_STATUS, CMD_STATS, CMD_STOP, CMD_RELOAD };

static const char *const cmd_names[] = {
	[CMD_STATUS] = "status",
	[CMD_STATS] = "stats",
	[CMD_STOP] = "stop",
	[CMD_RELOAD] = "reload",
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: rmadctl [-s SESSION] [--vnode V] [--json] status|stats|stop|reload\n"
"  status              the agent, its clients and jobs, and its counters\n"
"  stats               only the counters (with --json: the whole object)\n"
"  stop                stop the agent and wait until it is gone\n"
"  reload              make the agent re-read its configuration\n"
"  -s, --session NAME  the agent's session (default: $RMAD_SESSION or\n"
"                      \"default\")\n"
"      --vnode V       the agent of virtual node V (rmad --vnodes)\n"
"  -j, --json          status and stats as one JSON object\n"
"  -V, --version       print the version and exit\n"
"  -h, --help          this text\n");
}

static const char *conf_path(void)
{
	const char *env = getenv("RMAD_CONF");

	return env && *env ? env : RMAD_SYSCONFDIR "/rmad/rmad.conf";
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Wait until fd is readable or hung up, at most until deadline_ms after
 * t0.  Returns 1 when ready, 0 on timeout, -errno on error.
 */
static int wait_readable(int fd, const struct timespec *t0, long deadline_ms)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long left = deadline_ms - elapsed_ms(t0);
		int r;

		if (left <= 0)
			return 0;
		r = poll(&pfd, 1, (int)left);
		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

static int send_req(int fd, int type, int json)
{
	struct rmad_ctl_hdr h = {
		.magic = RMAD_CTL_MAGIC,
		.abi_version = RMAD_ABI_VERSION,
		.type = (uint16_t)type,
		.flags = json ? RMAD_CTL_FLAG_JSON : 0,
	};

	return rmad_send_msg(fd, &h, sizeof(h), NULL, 0);
}

/*
 * One message into buf (REPLY_MAX bytes); 0 on hang-up.  A peer that
 * closes with our request unread makes the kernel report ECONNRESET
 * before the messages still queued (a refusal is sent just before such a
 * close), so read once more after it: the error is reported only once.
 */
static long recv_reply(int fd, char *buf)
{
	long n = rmad_recv_msg(fd, buf, REPLY_MAX, NULL, NULL);

	if (n == -ECONNRESET)
		n = rmad_recv_msg(fd, buf, REPLY_MAX, NULL, NULL);
	return n == -ECONNRESET ? 0 : n;
}

/*
 * The agent refuses a connection it cannot serve (full, or another ABI)
 * with an error REGISTER_REPLY before it reads any request.  Returns 1
 * after saying why when msg is one, else 0.
 */
static int refusal(const char *msg, size_t n, const char *path)
{
	struct rmad_ctl_register_reply rr;

	if (n < sizeof(rr))
		return 0;
	memcpy(&rr, msg, sizeof(rr));
	if (rr.h.magic != RMAD_CTL_MAGIC ||
	    rr.h.type != RMAD_CTL_REGISTER_REPLY)
		return 0;
	rr.message[sizeof(rr.message) - 1] = '\0';
	fprintf(stderr, "rmadctl: the agent at %s refused: %s (error %d; "
		"agent ABI %u, rmadctl ABI %d)\n", path, rr.message,
		(int)rr.status, rr.h.abi_version, RMAD_ABI_VERSION);
	return 1;
}

/*
 * Receive the agent's answer into buf (REPLY_MAX + 1 bytes) as a
 * NUL-terminated text.  Returns 0, or EXIT_FAIL after saying why.
 */
static int recv_text(int fd, const char *path, char *buf)
{
	struct timespec t0;
	struct rmad_ctl_hdr h;
	long n;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = wait_readable(fd, &t0, REPLY_TIMEOUT_MS);
	if (r == 0) {
		fprintf(stderr, "rmadctl: no answer from the agent at %s in "
			"%d s\n", path, REPLY_TIMEOUT_MS / 1000);
		return EXIT_FAIL;
	}
	n = r < 0 ? r : recv_reply(fd, buf);
	if (n == 0) {
		fprintf(stderr, "rmadctl: the agent at %s hung up without an "
			"answer (is this user allowed to ask it?)\n", path);
		return EXIT_FAIL;
	}
	if (n < 0) {
		fprintf(stderr, "rmadctl: reading from %s: %s\n", path,
			strerror((int)-n));
		return EXIT_FAIL;
	}
	if ((size_t)n < sizeof(h)) {
		fprintf(stderr, "rmadctl: short answer from %s\n", path);
		return EXIT_FAIL;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != RMAD_CTL_MAGIC) {
		fprintf(stderr, "rmadctl: %s does not speak the rmad "
			"protocol\n", path);
		return EXIT_FAIL;
	}
	if (refusal(buf, (size_t)n, path))
		return EXIT_FAIL;
	if (h.type != RMAD_CTL_TEXT_REPLY) {
		fprintf(stderr, "rmadctl: unexpected answer type %u from %s\n",
			h.type, path);
		return EXIT_FAIL;
	}
	/* the agent sends a NUL; do not rely on it */
	memmove(buf, buf + sizeof(h), (size_t)n - sizeof(h));
	buf[(size_t)n - sizeof(h)] = '\0';
	return 0;
}

/*
 * stats: the report from its "stats" section header on (the agent puts
 * the counters last, see agent/ctl.c); the whole report if it has none.
 */
static void print_report(const char *text, enum cmd cmd)
{
	const char *p = text;
	size_t n;

	if (cmd == CMD_STATS) {
		for (const char *l = text; l && *l;) {
			if (!strncmp(l, "stats\n", 6)) {
				p = l;
				break;
			}
			l = strchr(l, '\n');
			if (l)
				l++;
		}
	}
	n = strlen(p);
	fwrite(p, 1, n, stdout);
	if (n && p[n - 1] != '\n')
		putchar('\n');
}

/*
 * After the hang-up, the agent is gone if its socket file went away or
 * no longer takes connections.  A socket that still answers means the
 * agent refused (it hangs up on users other than its own and root).
 */
static int still_listening(const char *path, const struct stat *before)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (stat(path, &st) < 0 || st.st_ino != before->st_ino ||
	    st.st_dev != before->st_dev)
		return 0;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return r == 0;
}

static int do_stop(int fd, const char *path, const struct stat *sst,
		   char *buf)
{
	struct timespec t0;
	int err = send_req(fd, RMAD_CTL_STOP, 0);

	if (err < 0) {
		fprintf(stderr, "rmadctl: cannot send to %s: %s\n", path,
			strerror(-err));
		return EXIT_FAIL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int r = wait_readable(fd, &t0, STOP_TIMEOUT_MS);
		long n;

		if (r == 0) {
			fprintf(stderr, "rmadctl: the agent at %s did not stop "
				"within %d s\n", path, STOP_TIMEOUT_MS / 1000);
			return EXIT_FAIL;
		}
		n = r < 0 ? r : recv_reply(fd, buf);
		if (n == 0)
			break;
		if (n < 0) {
			fprintf(stderr, "rmadctl: reading from %s: %s\n", path,
				strerror((int)-n));
			return EXIT_FAIL;
		}
		/* only a refusal (a full agent) is answered; say why */
		if (refusal(buf, (size_t)n, path))
			return EXIT_FAIL;
	}
	if (still_listening(path, sst)) {
		fprintf(stderr, "rmadctl: the agent at %s refused to stop "
			"(only its own user and root may stop it)\n", path);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int do_reload(int fd, const char *path, char *buf)
{
	int r = send_req(fd, RMAD_CTL_RELOAD, 0);

	if (!r)
		r = send_req(fd, RMAD_CTL_STATUS, 0);
	if (r < 0) {
		fprintf(stderr, "rmadctl: cannot send to %s: %s\n", path,
			strerror(-r));
		return EXIT_FAIL;
	}
	/* the agent reads in order: a status answer means reload was taken */
	r = recv_text(fd, path, buf);
	if (r) {
		fprintf(stderr, "rmadctl: reload not confirmed\n");
		return r;
	}
	printf("reload requested; the agent logs the outcome\n");
	return EXIT_OK;
}

static int parse_vnode(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > 1000000)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "vnode", required_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct rmad_params p;
	struct stat sst;
	const char *session = getenv("RMAD_SESSION");
	char sdir[4096], path[sizeof(sa.sun_path)], err[512];
	char *buf;
	int c, json = 0, vnode = -1, fd, ret;
	enum cmd cmd = CMD_STATUS;
	size_t k;

	while ((c = getopt_long(argc, argv, "s:jVh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			session = optarg;
			break;
		case 'v':
			if (parse_vnode(optarg, &vnode)) {
				fprintf(stderr, "rmadctl: bad --vnode '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'V':
			printf("rmadctl %s (ABI %d)\n", PACKAGE_VERSION,
			       RMAD_ABI_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "rmadctl: %s\n", optind == argc ?
			"which command?" : "one command at a time");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (k = 0; k < sizeof(cmd_names) / sizeof(cmd_names[0]); k++)
		if (!strcmp(argv[optind], cmd_names[k]))
			break;
	if (k == sizeof(cmd_names) / sizeof(cmd_names[0])) {
		fprintf(stderr, "rmadctl: unknown command '%s'\n",
			argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = (enum cmd)k;
	if (!session || !*session)
		session = "default";

	rmad_params_defaults(&p);
	if (rmad_params_load_file(&p, conf_path(), err, sizeof(err)) < 0 ||
	    rmad_params_load_env(&p, err, sizeof(err)) < 0) {
		fprintf(stderr, "rmadctl: %s\n", err);
		return EXIT_FAIL;
	}
	if (rmad_session_dir(p.rundir, session, sdir, sizeof(sdir)) ||
	    rmad_agent_sock_path(sdir, vnode, path, sizeof(path))) {
		fprintf(stderr, "rmadctl: the socket path of session '%s' "
			"is too long\n", session);
		return EXIT_FAIL;
	}

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "rmadctl: socket: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* the inode tells a refused stop from a new agent, see do_stop */
	if (stat(path, &sst) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "rmadctl: no agent at %s: %s\n", path,
			strerror(errno));
		close(fd);
		return EXIT_FAIL;
	}
	buf = malloc(REPLY_MAX + 1);
	if (!buf) {
		fprintf(stderr, "rmadctl: out of memory\n");
		close(fd);
		return EXIT_FAIL;
	}

	switch (cmd) {
	case CMD_STATUS:
	case CMD_STATS:
		ret = send_req(fd, RMAD_CTL_STATUS, json);
		if (ret < 0) {
			fprintf(stderr, "rmadctl: cannot send to %s: %s\n",
				path, strerror(-ret));
			ret = EXIT_FAIL;
			break;
		}
		ret = recv_text(fd, path, buf);
		if (!ret)
			print_report(buf, json ? CMD_STATUS : cmd);
		break;
	case CMD_STOP:
		ret = do_stop(fd, path, &sst, buf);
		break;
	case CMD_RELOAD:
		ret = do_reload(fd, path, buf);
		break;
	default:
		ret = EXIT_USAGE;
		break;
	}
	free(buf);
	close(fd);
	if (fflush(stdout) != 0 && !ret) {
		fprintf(stderr, "rmadctl: writing the output: %s\n",
			strerror(errno));
		ret = EXIT_FAIL;
	}
	return ret;
}
