/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot.c - what librmad learns from the launcher: the backend that
 * serves (boot.h: preset, pmix, pmi, singleton) and what rmad-run adds.
 *
 * A process started without a launcher is a 1-rank job.  Under rmad-run
 * --vnodes K (RMAD_VNODES) the ranks are split in blocks among K agents
 * on one host: vnode v holds ranks [ceil(v*N/K), ceil((v+1)*N/K)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "internal.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------------ preset */

static struct {
	int set;
	int rank, size, local_rank, local_size;
	char nspace[RMAD_NSPACE_MAX];
} preset;

int rmad_boot_preset(int rank, int size, int local_rank, int local_size,
		     const char *nspace)
{
	if (size < 1 || rank < 0 || rank >= size || local_size < 1 ||
	    local_rank < 0 || local_rank >= local_size || !nspace ||
	    !*nspace || strlen(nspace) >= sizeof(preset.nspace))
		return RMAD_ERR_ARG;
	preset.rank = rank;
	preset.size = size;
	preset.local_rank = local_rank;
	preset.local_size = local_size;
	snprintf(preset.nspace, sizeof(preset.nspace), "%s", nspace);
	preset.set = 1;
	return 0;
}

static int preset_probe(void)
{
	return preset.set;
}

static int preset_init(struct rmad_bootinfo *b)
{
	b->rank = preset.rank;
	b->size = preset.size;
	b->local_rank = preset.local_rank;
	b->local_size = preset.local_size;
	snprintf(b->nspace, sizeof(b->nspace), "%s", preset.nspace);
	return 0;
}

static const struct rmad_boot_backend boot_preset = {
	.name = "preset",
	.probe = preset_probe,
	.init = preset_init,
};

/* --------------------------------------------------------- singleton */

static int singleton_probe(void)
{
	return 1;
}

static int singleton_init(struct rmad_bootinfo *b)
{
	char host[64] = "";

	gethostname(host, sizeof(host) - 1);
	b->singleton = 1;
	snprintf(b->nspace, sizeof(b->nspace), "singleton.%s.%d", host,
		 (int)getpid());
	return 0;
}

static const struct rmad_boot_backend boot_singleton = {
	.name = "singleton",
	.probe = singleton_probe,
	.init = singleton_init,
};

/* first that probes yes */
static const struct rmad_boot_backend *const backends[] = {
	&boot_preset, &rmad_boot_pmix, &rmad_boot_pmi, &boot_singleton,
};

/* -------------------------------------------------------------- boot */

static int first_of(int v, int n, int k)
{
	return (int)(((long)v * n + k - 1) / k);
}

int rmad_boot_client(struct rmad_bootinfo *b)
{
	const char *vn = getenv("RMAD_VNODES");
	const char *base = getenv("RMAD_VNODE_BASE");
	const char *sess = getenv("RMAD_SESSION");
	int err;

	memset(b, 0, sizeof(*b));
	b->vnode = -1;
	b->size = 1;
	b->local_size = 1;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i]->probe()) {
			b->be = backends[i];
			break;
		}
	err = b->be->init(b);
	if (err)
		return err;
	if (b->size < 1 || b->rank < 0 || b->rank >= b->size) {
		rmad_err("launcher gave rank %d of %d", b->rank, b->size);
		return RMAD_ERR_BOOTSTRAP;
	}
	if (vn && *vn) {
		int k = atoi(vn);

		if (k < 1) {
			rmad_err("RMAD_VNODES=%s is not a positive number", vn);
			return RMAD_ERR_BOOTSTRAP;
		}
		b->vnodes = k;
		b->vnode = (int)((long)b->rank * k / b->size);
		b->local_rank = b->rank - first_of(b->vnode, b->size, k);
		b->local_size = first_of(b->vnode + 1, b->size, k) -
				first_of(b->vnode, b->size, k);
		/* the blocks on virtual nodes base.. rather than 0.. */
		if (base && *base) {
			char *end;
			long v = strtol(base, &end, 10);

			if (*end || v < 0 || v > 1 << 20) {
				rmad_err("RMAD_VNODE_BASE=%s is not a node "
					 "number", base);
				return RMAD_ERR_BOOTSTRAP;
			}
			b->vnode += (int)v;
		}
	}
	if (sess && *sess) {
		rmad_sanitize(sess, b->session, sizeof(b->session));
		b->session_given = 1;
	}
	if (b->local_size < 1 || b->local_rank < 0 ||
	    b->local_rank >= b->local_size)
		return RMAD_ERR_BOOTSTRAP;
	return 0;
}

void rmad_boot_client_fini(struct rmad_bootinfo *b)
{
	if (b->be && b->be->fini)
		b->be->fini(b);
	b->be = NULL;
	preset.set = 0;		/* said for one rmad_init */
}
