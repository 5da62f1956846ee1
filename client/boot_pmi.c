/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot_pmi.c - the PMI backend of the client's bootstrap (boot.h), for
 * launchers without PMIx: Slurm's srun --mpi=pmi2 and MPICH's hydra
 * (mpiexec.mpich).  Both hand each process a connected socket in PMI_FD
 * (and PMI_RANK, PMI_SIZE), and both serve the PMI-2 wire protocol as
 * MPICH's own client speaks it, so this file speaks it too, with no
 * library (Slurm's libpmi2 serves srun alone, MPICH's PMI is inside
 * libmpich):
 *
 *   "cmd=init pmi_version=2 pmi_subversion=0\n"   the PMI-1 style
 *                                                 greeting, one line;
 *   then commands of "key=value;" pairs, each message preceded by its
 *   length in 6 characters ("    38cmd=fullinit;pmirank=0;...;"), a ';'
 *   in a value doubled:
 *     fullinit         rank, size
 *     job-getid        the job's name (Slurm: "JOB.STEP")
 *     info-getjobattr  PMI_process_mapping, the ranks' nodes
 *     finalize
 *
 * A server that refuses version 2 gets PMI-1 (RMAD_PMI_VERSION=1 asks
 * for it): text lines "cmd=NAME key=value ...\n"; rank and size from
 * PMI_RANK and PMI_SIZE; get_my_kvsname; get of PMI_process_mapping.
 *
 * Local rank and size come from PMI_process_mapping,
 * "(vector,(NODE,NNODES,PPN),...)": blocks of NNODES nodes from NODE on,
 * PPN consecutive ranks on each, the blocks repeated until every rank
 * has a node (MPICH's reading).  Without it, hydra's MPI_LOCALRANKID and
 * MPI_LOCALNRANKS.  Every read is bounded (RMAD_PMI_TIMEOUT_MS, 60 s).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "internal.h"
#include "log.h"

#define PMI_MSG_MAX	8192

static struct {
	int fd;		/* -1: not connected */
	int v2;		/* PMI-2 wire (else PMI-1) */
} pmi = { .fd = -1 };

/* ---------------------------------------------------------- parsing */

/*
 * rmad_pmi_field: the value of KEY in the message MSG, into OUT (CAP
 * bytes): PMI-2 (V2) "k=v;k=v;" with ";;" a ';' in a value, PMI-1
 * "k=v k=v\n".  0 when found and it fits, -1 otherwise.
 */
int rmad_pmi_field(const char *msg, int v2, const char *key, char *out,
		   size_t cap)
{
	size_t kl = strlen(key);
	const char *p = msg;

	while (*p) {
		const char *eq = strchr(p, '=');
		size_t n = 0;
		int match;

		if (!eq)
			return -1;
		match = (size_t)(eq - p) == kl && !strncmp(p, key, kl);
		p = eq + 1;
		for (;;) {
			char c = *p;

			if (!c || c == '\n' || (!v2 && c == ' '))
				break;
			if (v2 && c == ';') {
				if (p[1] != ';')
					break;
				p++;	/* ";;": one ';' */
			}
			if (match && n + 1 < cap)
				out[n] = c;
			n++;
			p++;
		}
		if (match) {
			if (n >= cap)
				return -1;
			out[n] = '\0';
			return 0;
		}
		while (*p == ';' || *p == ' ' || *p == '\n')
			p++;
	}
	return -1;
}

/* the next decimal in *P, past one expected character C ('\0': none) */
static int next_num(const char **p, char c, long *v)
{
	char *end;

	while (**p == ' ')
		(*p)++;
	if (c) {
		if (**p != c)
			return -1;
		(*p)++;
	}
	while (**p == ' ')
		(*p)++;
	*v = strtol(*p, &end, 10);
	if (end == *p || *v < 0 || *v > 1 << 24)
		return -1;
	*p = end;
	return 0;
}

/*
 * rmad_pmi_map_nodes: fill NODE_OF[0..SIZE) with each rank's node from
 * a PMI_process_mapping string.  0, or -1 when it does not parse.
 */
int rmad_pmi_map_nodes(const char *map, int size, int *node_of)
{
	long blk[64][3];
	int nblk = 0, r = 0;
	const char *p = map;

	while (*p == ' ')
		p++;
	if (strncmp(p, "(vector", 7))
		return -1;
	p += 7;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == ')')
			break;
		if (*p++ != ',' || nblk == 64)
			return -1;
		while (*p == ' ')
			p++;
		if (*p++ != '(')
			return -1;
		if (next_num(&p, '\0', &blk[nblk][0]) ||
		    next_num(&p, ',', &blk[nblk][1]) ||
		    next_num(&p, ',', &blk[nblk][2]))
			return -1;
		while (*p == ' ')
			p++;
		if (*p++ != ')')
			return -1;
		nblk++;
	}
	if (!nblk)
		return -1;
	/* a mapping that places no rank would loop for ever */
	for (int i = 0, any = 0; i < nblk; i++) {
		any |= blk[i][1] > 0 && blk[i][2] > 0;
		if (i == nblk - 1 && !any)
			return -1;
	}
	while (r < size)
		for (int i = 0; i < nblk && r < size; i++)
			for (long j = 0; j < blk[i][1] && r < size; j++)
				for (long k = 0; k < blk[i][2] && r < size; k++)
					node_of[r++] = (int)(blk[i][0] + j);
	return 0;
}

/*
 * rmad_pmi_local: RANK's local rank and size (of SIZE) by the mapping
 * MAP.  0, or -1 when it does not parse.
 */
int rmad_pmi_local(const char *map, int rank, int size, int *lrank,
		   int *lsize)
{
	int *node_of, lr = 0, ls = 0;

	if (size < 1 || rank < 0 || rank >= size)
		return -1;
	node_of = malloc(sizeof(int) * (size_t)size);
	if (!node_of)
		return -1;
	if (rmad_pmi_map_nodes(map, size, node_of)) {
		free(node_of);
		return -1;
	}
	for (int r = 0; r < size; r++)
		if (node_of[r] == node_of[rank]) {
			lr += r < rank;
			ls++;
		}
	free(node_of);
	*lrank = lr;
	*lsize = ls;
	return 0;
}

/* ------------------------------------------------------------- wire */

static int wr(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(pmi.fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* exactly N bytes, each wait bounded */
static int rd(char *buf, size_t n)
{
	const char *t = getenv("RMAD_PMI_TIMEOUT_MS");
	int ms = t && *t ? atoi(t) : 60000;

	if (ms <= 0)	/* poll's -1 would wait for ever */
		ms = 60000;

	while (n) {
		struct pollfd pf = { .fd = pmi.fd, .events = POLLIN };
		int e = poll(&pf, 1, ms);
		ssize_t got;

		if (e < 0 && errno == EINTR)
			continue;
		if (e <= 0) {
			rmad_err("PMI: no answer from the launcher in %d ms",
				 ms);
			return -1;
		}
		got = read(pmi.fd, buf, n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

/* one PMI-1 line, without its '\n' */
static int rd_line(char *buf, size_t cap)
{
	size_t n = 0;

	for (;;) {
		if (n + 1 >= cap || rd(buf + n, 1))
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

/*
 * cmd: send MSG (PMI-2: "cmd=...;...;", PMI-1: "cmd=... ...\n") and read
 * the answer into ANS; -1 unless it is cmd=WANT with rc=0 (or no rc).
 */
static int cmd(const char *msg, const char *want, char *ans, size_t cap)
{
	char v[64];
	size_t n = strlen(msg);

	if (pmi.v2) {
		char len[7];
		long l;

		snprintf(len, sizeof(len), "%6u", (unsigned)n);
		if (wr(len, 6) || wr(msg, n) || rd(len, 6))
			return -1;
		len[6] = '\0';
		l = strtol(len, NULL, 10);
		if (l <= 0 || (size_t)l >= cap || rd(ans, (size_t)l))
			return -1;
		ans[l] = '\0';
	} else if (wr(msg, n) || rd_line(ans, cap)) {
		return -1;
	}
	if (rmad_pmi_field(ans, pmi.v2, "cmd", v, sizeof(v)) ||
	    strcmp(v, want)) {
		rmad_err("PMI: '%s' answered by '%s'", want, ans);
		return -1;
	}
	if (!rmad_pmi_field(ans, pmi.v2, "rc", v, sizeof(v)) && atoi(v)) {
		rmad_err("PMI: %s: rc %s", want, v);
		return -1;
	}
	return 0;
}

/* the greeting for VERSION (2: then PMI-2 wire); 0 when accepted */
static int greet(int version)
{
	char msg[80], ans[256], v[16];

	snprintf(msg, sizeof(msg), "cmd=init pmi_version=%d pmi_subversion=%d\n",
		 version, version == 2 ? 0 : 1);
	pmi.v2 = 0;
	if (cmd(msg, "response_to_init", ans, sizeof(ans)))
		return -1;
	if (rmad_pmi_field(ans, 0, "pmi_version", v, sizeof(v)) ||
	    atoi(v) != version)
		return -1;
	pmi.v2 = version == 2;
	return 0;
}

/* ---------------------------------------------------------- backend */

static int env_int(const char *name, int *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 1 << 30)
		return -1;
	*out = (int)v;
	return 0;
}

static int pmi_probe(void)
{
	int fd;

	return !env_int("PMI_FD", &fd) && getenv("PMI_RANK");
}

/* PMI-2: rank, size, the job's name and the mapping into MAP */
static int init_v2(struct rmad_bootinfo *b, char *map, size_t cap)
{
	char msg[256], ans[PMI_MSG_MAX], v[32];
	const char *jid = getenv("PMI_JOBID");

	snprintf(msg, sizeof(msg), "cmd=fullinit;%s%s%spmirank=%s;"
		 "threaded=FALSE;", jid ? "pmijobid=" : "", jid ? jid : "",
		 jid ? ";" : "", getenv("PMI_RANK"));
	if (cmd(msg, "fullinit-response", ans, sizeof(ans)))
		return -1;
	if (rmad_pmi_field(ans, 1, "rank", v, sizeof(v)) ||
	    rmad_pmi_field(ans, 1, "size", v + 16, sizeof(v) - 16)) {
		rmad_err("PMI-2: no rank or size in '%s'", ans);
		return -1;
	}
	b->rank = atoi(v);
	b->size = atoi(v + 16);
	if (cmd("cmd=job-getid;", "job-getid-response", ans, sizeof(ans)) ||
	    rmad_pmi_field(ans, 1, "jobid", b->nspace, sizeof(b->nspace)))
		return -1;
	if (cmd("cmd=info-getjobattr;key=PMI_process_mapping;",
		"info-getjobattr-response", ans, sizeof(ans)) ||
	    rmad_pmi_field(ans, 1, "found", v, sizeof(v)) ||
	    strcmp(v, "TRUE") || rmad_pmi_field(ans, 1, "value", map, cap))
		map[0] = '\0';
	return 0;
}

/* PMI-1: the same, rank and size from the environment */
static int init_v1(struct rmad_bootinfo *b, char *map, size_t cap)
{
	char msg[512], ans[PMI_MSG_MAX];

	if (env_int("PMI_RANK", &b->rank) || env_int("PMI_SIZE", &b->size)) {
		rmad_err("PMI-1: no PMI_RANK or PMI_SIZE");
		return -1;
	}
	if (cmd("cmd=get_maxes\n", "maxes", ans, sizeof(ans)) ||
	    cmd("cmd=get_my_kvsname\n", "my_kvsname", ans, sizeof(ans)) ||
	    rmad_pmi_field(ans, 0, "kvsname", b->nspace, sizeof(b->nspace)))
		return -1;
	snprintf(msg, sizeof(msg), "cmd=get kvsname=%s key=PMI_process_mapping\n",
		 b->nspace);
	if (cmd(msg, "get_result", ans, sizeof(ans)) ||
	    rmad_pmi_field(ans, 0, "value", map, cap))
		map[0] = '\0';
	return 0;
}

static int pmi_init(struct rmad_bootinfo *b)
{
	const char *want = getenv("RMAD_PMI_VERSION");
	char map[PMI_MSG_MAX];
	int err;

	env_int("PMI_FD", &pmi.fd);
	if (!(want && !strcmp(want, "1")) && !greet(2))
		err = init_v2(b, map, sizeof(map));
	else if (!greet(1))
		err = init_v1(b, map, sizeof(map));
	else
		err = -1;
	if (err || !b->nspace[0]) {
		rmad_err("PMI: the launcher on fd %d did not say our job",
			 pmi.fd);
		pmi.fd = -1;
		return RMAD_ERR_BOOTSTRAP;
	}
	if (b->size < 1 || b->rank < 0 || b->rank >= b->size)
		return RMAD_ERR_BOOTSTRAP;
	if (map[0] && !rmad_pmi_local(map, b->rank, b->size, &b->local_rank,
				      &b->local_size))
		return 0;
	if (!env_int("MPI_LOCALRANKID", &b->local_rank) &&
	    !env_int("MPI_LOCALNRANKS", &b->local_size))
		return 0;
	rmad_err("PMI: no process mapping%s%s, so no local rank", map[0] ?
		 " that parses: " : "", map);
	return RMAD_ERR_BOOTSTRAP;
}

static void pmi_fini(struct rmad_bootinfo *b)
{
	char ans[256];

	if (pmi.fd < 0)
		return;
	if (pmi.v2)
		cmd("cmd=finalize;", "finalize-response", ans, sizeof(ans));
	else
		cmd("cmd=finalize\n", "finalize_ack", ans, sizeof(ans));
	pmi.fd = -1;	/* the launcher's: it closes it */
}

const struct rmad_boot_backend rmad_boot_pmi = {
	.name = "pmi",
	.probe = pmi_probe,
	.init = pmi_init,
	.fini = pmi_fini,
};
