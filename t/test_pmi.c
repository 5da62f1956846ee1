/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pmi.c - the PMI backend of the client's bootstrap
 * (client/boot_pmi.c): its reading of PMI_process_mapping (blocks,
 * cyclic layouts, repetition, garbage), of the two wires' key=value
 * messages (PMI-2's ";;"), and a whole init and finalize against a
 * scripted launcher on a socketpair, over PMI-2 and, where the launcher
 * refuses version 2, PMI-1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot.h"
#include "internal.h"
#include "tap.h"

static void map_case(const char *map, int size, const char *want)
{
	int node_of[64];
	char got[256] = "";
	size_t n = 0;

	if (rmad_pmi_map_nodes(map, size, node_of)) {
		ok(want == NULL, "%s, %d ranks: does not parse", map, size);
		return;
	}
	for (int r = 0; r < size; r++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%d", node_of[r]);
	ok(want && !strcmp(got, want), "%s, %d ranks: nodes %s (want %s)",
	   map, size, got, want ? want : "an error");
}

static void test_parse(void)
{
	char v[64];
	int lr = -1, ls = -1, e;

	map_case("(vector,(0,2,2))", 4, "0011");
	map_case("(vector,(0,2,1))", 4, "0101");		/* cyclic */
	map_case("(vector,(0,3,1))", 5, "01201");
	map_case("(vector,(0,1,3),(1,1,1))", 4, "0001");
	map_case("(vector, (0,2,2), (2,1,1))", 5, "00112");
	map_case("(vector,(0,1,2))", 6, "000000");	/* one node */
	map_case("(vector,(0,2,1))", 1, "0");
	map_case("", 2, NULL);
	map_case("(vector)", 2, NULL);
	map_case("(vector,(0,0,0))", 2, NULL);		/* places no rank */
	map_case("(vector,(0,2))", 2, NULL);
	map_case("(vector,(0,2,x))", 2, NULL);
	map_case("(block,(0,2,2))", 2, NULL);
	e = rmad_pmi_local("(vector,(0,2,1))", 3, 4, &lr, &ls);
	ok(!e && lr == 1 && ls == 2, "cyclic on 2 nodes, rank 3 of 4: local 1 of 2 (%d of %d)",
	   lr, ls);
	e = rmad_pmi_local("(vector,(0,1,3),(1,1,1))", 3, 4, &lr, &ls);
	ok(!e && lr == 0 && ls == 1, "3+1, rank 3: local 0 of 1 (%d of %d)", lr, ls);
	ok(rmad_pmi_local("(vector,(0,2,1))", 4, 4, &lr, &ls) == -1,
	   "rank 4 of 4: an error");

	ok(!rmad_pmi_field("cmd=a;rc=0;value=x;;y;;;n=1;", 1, "value", v,
			   sizeof(v)) && !strcmp(v, "x;y;"),
	   "PMI-2: ';;' is a ';' in a value (%s)", v);
	ok(!rmad_pmi_field("cmd=a;rc=0;value=x;;y;;;n=1;", 1, "n", v,
			   sizeof(v)) && !strcmp(v, "1"), "PMI-2: the key after");
	ok(rmad_pmi_field("cmd=a;rc=0;", 1, "value", v, sizeof(v)) == -1,
	   "PMI-2: a missing key");
	ok(!rmad_pmi_field("cmd=my_kvsname rc=0 kvsname=kvs_9_0\n", 0,
			   "kvsname", v, sizeof(v)) && !strcmp(v, "kvs_9_0"),
	   "PMI-1: kvsname=%s", v);
	ok(rmad_pmi_field("cmd=x value=0123456789", 0, "value", v, 4) == -1,
	   "a value too long for the buffer: an error");
}

/* ------------------------------------------- a scripted launcher */

static int rd_exact(int fd, char *b, size_t n)
{
	while (n) {
		ssize_t r = read(fd, b, n);

		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int rd_line(int fd, char *b, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap && !rd_exact(fd, b + n, 1))
		if (b[n++] == '\n')
			break;
	b[n] = '\0';
	return n ? 0 : -1;
}

static void say2(int fd, const char *m)
{
	char len[8];

	snprintf(len, sizeof(len), "%6u", (unsigned)strlen(m));
	if (write(fd, len, 6) != 6 || write(fd, m, strlen(m)) < 0)
		_exit(3);
}

/* PMI-2: rank 3 of 4, cyclic on 2 nodes */
static void serve_v2(int fd)
{
	char b[1024], len[7];

	if (rd_line(fd, b, sizeof(b)) ||
	    strcmp(b, "cmd=init pmi_version=2 pmi_subversion=0\n"))
		_exit(2);
	if (write(fd, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n", 57) != 57)
		_exit(3);
	for (;;) {
		if (rd_exact(fd, len, 6))
			_exit(0);
		len[6] = '\0';
		if (rd_exact(fd, b, (size_t)atoi(len)))
			_exit(2);
		b[atoi(len)] = '\0';
		if (!strncmp(b, "cmd=fullinit;", 13) && strstr(b, "pmirank=3;"))
			say2(fd, "cmd=fullinit-response;rc=0;pmi-version=2;"
				 "pmi-subversion=0;rank=3;size=4;appnum=0;");
		else if (!strcmp(b, "cmd=job-getid;"))
			say2(fd, "cmd=job-getid-response;rc=0;jobid=77.0;");
		else if (!strcmp(b, "cmd=info-getjobattr;key=PMI_process_mapping;"))
			say2(fd, "cmd=info-getjobattr-response;rc=0;found=TRUE;"
				 "value=(vector,(0,2,1));");
		else if (!strcmp(b, "cmd=finalize;")) {
			say2(fd, "cmd=finalize-response;rc=0;");
			_exit(0);
		} else
			_exit(2);
	}
}

/* PMI-1 only: refuses version 2; rank 2 of 3, 2 then 1 */
static void serve_v1(int fd)
{
	static const struct { const char *in, *out; } s[] = {
		{ "cmd=init pmi_version=2 pmi_subversion=0\n",
		  "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n" },
		{ "cmd=init pmi_version=1 pmi_subversion=1\n",
		  "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n" },
		{ "cmd=get_maxes\n", "cmd=maxes rc=0 kvsname_max=256 "
		  "keylen_max=64 vallen_max=1024\n" },
		{ "cmd=get_my_kvsname\n", "cmd=my_kvsname rc=0 kvsname=kvs_5_0\n" },
		{ "cmd=get kvsname=kvs_5_0 key=PMI_process_mapping\n",
		  "cmd=get_result rc=0 value=(vector,(0,1,2),(1,1,1))\n" },
		{ "cmd=finalize\n", "cmd=finalize_ack\n" },
	};
	char b[1024];

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		if (rd_line(fd, b, sizeof(b)) || strcmp(b, s[i].in))
			_exit(2);
		if (write(fd, s[i].out, strlen(s[i].out)) < 0)
			_exit(3);
	}
	_exit(0);
}

static void test_wire(int v2)
{
	struct rmad_bootinfo b;
	char fdstr[16];
	int sv[2], st = -1, err;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		skip(5, "no socketpair");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		alarm(20);
		if (v2)
			serve_v2(sv[1]);
		serve_v1(sv[1]);
	}
	close(sv[1]);
	snprintf(fdstr, sizeof(fdstr), "%d", sv[0]);
	setenv("PMI_FD", fdstr, 1);
	setenv("PMI_RANK", v2 ? "3" : "2", 1);
	setenv("PMI_SIZE", v2 ? "4" : "3", 1);
	memset(&b, 0, sizeof(b));
	ok(rmad_boot_pmi.probe(), "PMI-%d: PMI_FD and PMI_RANK: the backend serves",
	   v2 ? 2 : 1);
	err = rmad_boot_pmi.init(&b);
	ok(!err && b.rank == (v2 ? 3 : 2) && b.size == (v2 ? 4 : 3),
	   "PMI-%d: init: rank %d of %d (err %d)", v2 ? 2 : 1, b.rank, b.size,
	   err);
	ok(b.local_rank == (v2 ? 1 : 0) && b.local_size == (v2 ? 2 : 1),
	   "PMI-%d: local rank %d of %d, from the mapping", v2 ? 2 : 1,
	   b.local_rank, b.local_size);
	ok(!strcmp(b.nspace, v2 ? "77.0" : "kvs_5_0"), "PMI-%d: the job: %s",
	   v2 ? 2 : 1, b.nspace);
	rmad_boot_pmi.fini(&b);
	close(sv[0]);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "PMI-%d: the launcher saw every command it expected, finalize last "
	   "(status %d)", v2 ? 2 : 1, st);
}

int main(void)
{
	alarm_after(30);
	setenv("RMAD_PMI_TIMEOUT_MS", "5000", 1);
	test_parse();
	test_wire(1);
	test_wire(0);
	unsetenv("PMI_FD");
	ok(!rmad_boot_pmi.probe(), "no PMI_FD: the backend does not serve");
	return done_testing();
}
