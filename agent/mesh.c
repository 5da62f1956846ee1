/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mesh.c - a static mesh of agents from the configuration, for agents
 * that no launcher starts (systemd: rmad(8), LAUNCH MODES).
 *
 * mesh (a comma list) or mesh_file (one entry a line, # comments) names
 * every node's agent as host[:port] ([addr]:port for an IPv6 address
 * with a port), in node order, the same list on every node; entries
 * without a port take mesh_port.  Each entry is resolved here to a
 * socket address, IPv4 or IPv6 (one family for the whole mesh), which is
 * what tcp;ofi_rxm's endpoints are named by, so the addresses need no
 * exchange: entry i is node i, and this agent binds its endpoint to its
 * own entry.  Its own
 * entry is mesh_self, or the one entry whose address belongs to this
 * host (a host that runs several agents of the mesh, as in tests, must
 * say which with mesh_self).  Which nodes are up, and when one comes
 * back, is liveness.c's business (heartbeats).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rmad_abi.h"
#include "log.h"
#include "mesh.h"
#include "secret.h"

#define ENTRY_MAX	256	/* bytes of one host[:port] */

int rmad_mesh_configured(const struct rmad_mesh_cfg *c)
{
	return c && ((c->list && c->list[0]) || (c->file && c->file[0]));
}

/* An entry's address, of either family. */
union msa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

struct ents {
	union msa *sa;
	int n, cap;
	int family;		/* the first entry's; every entry's */
};

static socklen_t msa_len(int family)
{
	return family == AF_INET6 ? sizeof(struct sockaddr_in6) :
				    sizeof(struct sockaddr_in);
}

/* Do a and b (of one family) name one host (and, with port, one port)?
 * Link-local IPv6 ones only on the same link (fe80::1%eth0 is not
 * fe80::1%eth1). */
static bool msa_same(const union msa *a, const union msa *b, bool port)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET6)
		return !memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr,
			       sizeof(a->in6.sin6_addr)) &&
		       (!IN6_IS_ADDR_LINKLOCAL(&a->in6.sin6_addr) ||
			a->in6.sin6_scope_id == b->in6.sin6_scope_id) &&
		       (!port || a->in6.sin6_port == b->in6.sin6_port);
	return a->in.sin_addr.s_addr == b->in.sin_addr.s_addr &&
	       (!port || a->in.sin_port == b->in.sin_port);
}

static bool msa_unspecified(const union msa *a)
{
	return a->sa.sa_family == AF_INET6 ?
	       IN6_IS_ADDR_UNSPECIFIED(&a->in6.sin6_addr) :
	       !a->in.sin_addr.s_addr;
}

/*
 * Split an entry (trimmed, len bytes) into host and port text: "[addr]"
 * or "[addr]:port" for an IPv6 address, a bare IPv6 address (two colons
 * or more) without a port, or "host" or "host:port".  0, or -1 when it
 * cannot be split.
 */
static int split_entry(const char *s, size_t len, char *host,
		       size_t hostcap, const char **port, size_t *portlen)
{
	const char *colon, *end = s + len, *h = s;
	size_t hl;

	*port = NULL;
	*portlen = 0;
	if (*s == '[') {
		const char *rb = memchr(s, ']', len);

		if (!rb || (rb + 1 < end && rb[1] != ':'))
			return -1;
		h = s + 1;
		hl = (size_t)(rb - h);
		if (rb + 1 < end) {
			*port = rb + 2;
			*portlen = (size_t)(end - *port);
		}
	} else {
		colon = memchr(s, ':', len);
		if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			colon = NULL;	/* a bare IPv6 address */
		hl = colon ? (size_t)(colon - s) : len;
		if (colon) {
			*port = colon + 1;
			*portlen = (size_t)(end - *port);
		}
	}
	if (hl >= hostcap)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	return 0;
}

/* One entry "host[:port]" (trimmed), resolved and appended. */
static int add_entry(struct ents *e, const char *s, size_t len, long port,
		     const char *where, int line)
{
	char host[ENTRY_MAX], serv[16];
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *r;
	const char *ptext;
	size_t pl;
	long p = port;
	int rc;

	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
		       s[len - 1] == '\r'))
		len--;
	if (!len)
		return 0;	/* an empty entry */
	if (len >= ENTRY_MAX) {
		rmad_err("mesh: %s:%d: entry longer than %d bytes", where,
			 line, ENTRY_MAX - 1);
		return RMAD_ERR_ARG;
	}
	if (split_entry(s, len, host, sizeof(host), &ptext, &pl)) {
		rmad_err("mesh: %s:%d: bad entry '%.*s' (an IPv6 address "
			 "with a port is [addr]:port)", where, line, (int)len,
			 s);
		return RMAD_ERR_ARG;
	}
	if (ptext) {
		char num[16], *end;
		size_t nl = pl;

		if (!nl || nl >= sizeof(num)) {
			rmad_err("mesh: %s:%d: bad port in '%.*s'", where,
				 line, (int)len, s);
			return RMAD_ERR_ARG;
		}
		memcpy(num, ptext, nl);
		num[nl] = '\0';
		errno = 0;
		p = strtol(num, &end, 10);
		if (errno || *end || p < 1 || p > 65535) {
			rmad_err("mesh: %s:%d: bad port in '%.*s'", where,
				 line, (int)len, s);
			return RMAD_ERR_ARG;
		}
	}
	if (!host[0]) {
		rmad_err("mesh: %s:%d: no host in '%.*s'", where, line,
			 (int)len, s);
		return RMAD_ERR_ARG;
	}
	if (e->n >= RMAD_MESH_MAX) {
		rmad_err("mesh: more than %d nodes", RMAD_MESH_MAX);
		return RMAD_ERR_ARG;
	}
	snprintf(serv, sizeof(serv), "%ld", p);
	rc = getaddrinfo(host, serv, &hints, &res);
	if (rc || !res) {
		rmad_err("mesh: %s:%d: cannot resolve '%s': %s", where, line,
			 host, gai_strerror(rc));
		return RMAD_ERR_ARG;
	}
	/* the mesh's family where one is set, else IPv4 before IPv6 */
	for (r = res; r; r = r->ai_next)
		if (e->family ? r->ai_family == e->family :
			        r->ai_family == AF_INET)
			break;
	if (!r && !e->family)
		for (r = res; r && r->ai_family != AF_INET6; r = r->ai_next)
			;
	if (!r || r->ai_addrlen != msa_len(r->ai_family)) {
		rmad_err("mesh: %s:%d: '%s' has no %s address", where, line,
			 host, e->family == AF_INET6 ? "IPv6" :
			 e->family ? "IPv4" : "IPv4 or IPv6");
		freeaddrinfo(res);
		return RMAD_ERR_ARG;
	}
	if (e->n == e->cap) {
		int cap = e->cap ? 2 * e->cap : 16;
		void *q = realloc(e->sa, sizeof(*e->sa) * (size_t)cap);

		if (!q) {
			freeaddrinfo(res);
			return RMAD_ERR_NOMEM;
		}
		e->sa = q;
		e->cap = cap;
	}
	memset(&e->sa[e->n], 0, sizeof(*e->sa));
	memcpy(&e->sa[e->n], r->ai_addr, r->ai_addrlen);
	e->family = r->ai_family;
	freeaddrinfo(res);
	if (msa_unspecified(&e->sa[e->n])) {
		rmad_err("mesh: %s:%d: '%s' is no address of a node", where,
			 line, host);
		return RMAD_ERR_ARG;
	}
	if (e->family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&e->sa[e->n].in6.sin6_addr) &&
	    !e->sa[e->n].in6.sin6_scope_id) {
		rmad_err("mesh: %s:%d: '%s' is link-local: name its link "
			 "(fe80::1%%eth0)", where, line, host);
		return RMAD_ERR_ARG;
	}
	e->n++;
	return 0;
}

static int read_list(struct ents *e, const char *list, long port)
{
	int line = 0;

	for (const char *s = list; s && *s;) {
		const char *c = strchr(s, ',');
		size_t len = c ? (size_t)(c - s) : strlen(s);
		int err = add_entry(e, s, len, port, "mesh", ++line);

		if (err)
			return err;
		s = c ? c + 1 : s + len;
	}
	return 0;
}

static int read_file(struct ents *e, const char *path, long port)
{
	char buf[ENTRY_MAX + 2];
	FILE *f = fopen(path, "r");
	int line = 0, err = 0;

	if (!f) {
		rmad_err("mesh_file %s: %s", path, strerror(errno));
		return RMAD_ERR_ARG;
	}
	while (!err && fgets(buf, sizeof(buf), f)) {
		size_t len = strcspn(buf, "#\n");

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			rmad_err("mesh_file %s:%d: line too long", path, line);
			err = RMAD_ERR_ARG;
			break;
		}
		err = add_entry(e, buf, len, port, path, line);
	}
	fclose(f);
	return err;
}

/* The one entry whose address is this host's, or -1 (logged). */
static int find_self(const struct ents *e)
{
	struct ifaddrs *ifs = NULL;
	int self = -1, many = 0;

	if (getifaddrs(&ifs)) {
		rmad_err("mesh: cannot list this host's addresses: %s",
			 strerror(errno));
		return -1;
	}
	for (int i = 0; i < e->n; i++) {
		int mine = 0;

		for (struct ifaddrs *x = ifs; x && !mine; x = x->ifa_next) {
			union msa a;

			if (!x->ifa_addr || x->ifa_addr->sa_family != e->family)
				continue;
			memcpy(&a, x->ifa_addr, msa_len(e->family));
			mine = msa_same(&a, &e->sa[i], false);
		}
		if (!mine)
			continue;
		if (self >= 0)
			many = 1;
		else
			self = i;
	}
	freeifaddrs(ifs);
	if (many) {
		rmad_err("mesh: several entries are addresses of this host; "
			 "set mesh_self to this agent's");
		return -1;
	}
	if (self < 0)
		rmad_err("mesh: no entry is an address of this host; set "
			 "mesh_self, or list this node");
	return self;
}

int rmad_mesh_load(const struct rmad_mesh_cfg *c, struct rmad_boot *b,
		   char *host, size_t hostlen, char *port, size_t portlen)
{
	struct ents e = { 0 };
	int err;

	if (!c || !b || !rmad_mesh_configured(c))
		return RMAD_ERR_ARG;
	memset(b, 0, sizeof(*b));
	if (c->list && c->list[0] && c->file && c->file[0]) {
		rmad_err("mesh: set mesh or mesh_file, not both");
		return RMAD_ERR_ARG;
	}
	err = c->file && c->file[0] ? read_file(&e, c->file, c->port) :
				      read_list(&e, c->list, c->port);
	if (!err && !e.n) {
		rmad_err("mesh: no node listed");
		err = RMAD_ERR_ARG;
	}
	for (int i = 0; !err && i < e.n; i++)
		for (int k = 0; k < i; k++)
			if (msa_same(&e.sa[i], &e.sa[k], true)) {
				rmad_err("mesh: nodes %d and %d have the same "
					 "address", k, i);
				err = RMAD_ERR_ARG;
				break;
			}
	if (!err) {
		b->self = c->self >= 0 ? (int)c->self : find_self(&e);
		if (b->self < 0)
			err = RMAD_ERR_ARG;
		else if (b->self >= e.n) {
			rmad_err("mesh_self %d: the mesh has %d nodes",
				 b->self, e.n);
			err = RMAD_ERR_ARG;
		}
	}
	if (err) {
		free(e.sa);
		memset(b, 0, sizeof(*b));
		return err;
	}
	/* the provider's names: addresses of the family's own size */
	b->addrlen = msa_len(e.family);
	b->addrs = malloc((size_t)e.n * b->addrlen);
	if (!b->addrs) {
		free(e.sa);
		memset(b, 0, sizeof(*b));
		return RMAD_ERR_NOMEM;
	}
	for (int i = 0; i < e.n; i++)
		memcpy((char *)b->addrs + (size_t)i * b->addrlen, &e.sa[i],
		       b->addrlen);
	b->n = e.n;
	/* numeric, with an IPv6 address's scope (fe80::1%eth0) */
	if (getnameinfo(&e.sa[b->self].sa, b->addrlen, host,
			(socklen_t)hostlen, port, (socklen_t)portlen,
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		host[0] = '\0';
		port[0] = '\0';
	}
	free(e.sa);
	return 0;
}

int rmad_mesh_check_self(const struct rmad_boot *b, const void *addr,
			 size_t len)
{
	union msa me, got;

	if (!b || !b->addrs || len != b->addrlen || len > sizeof(got))
		return 0;
	memcpy(&me, (const char *)b->addrs + (size_t)b->self * b->addrlen,
	       len);
	memcpy(&got, addr, len);
	return me.sa.sa_family == got.sa.sa_family &&
	       msa_same(&me, &got, true);
}

int rmad_mesh_keys(const char *path, struct rmad_boot *b)
{
	uint64_t k[2];
	int err;

	if (!b || b->n <= 0 || b->keys)
		return RMAD_ERR_ARG;
	err = secret_key_load(path, k);
	if (err)
		return err;
	b->keys = calloc((size_t)b->n, sizeof(*b->keys));
	if (b->keys)
		for (int i = 0; i < b->n; i++)
			memcpy(b->keys[i], k, sizeof(k));
	explicit_bzero(k, sizeof(k));
	return b->keys ? 0 : RMAD_ERR_NOMEM;
}
