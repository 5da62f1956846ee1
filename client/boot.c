/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot.c - what librmad learns from the launcher.
 *
 * Only standard PMIx keys are used (PMIX_RANK from the proc, PMIX_JOB_SIZE,
 * PMIX_LOCAL_RANK, PMIX_LOCAL_SIZE), so Open MPI's mpirun, Slurm's PMIx
 * plugin and PRRTE all serve.  A process started without a launcher is a
 * 1-rank job.  Under rmad-run --vnodes K (RMAD_VNODES) the ranks are split
 * in blocks among K agents on one host: vnode v holds ranks
 * [ceil(v*N/K), ceil((v+1)*N/K)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "internal.h"
#include "log.h"
#include "util.h"

static pmix_proc_t myproc;

static int get_u32(const pmix_proc_t *who, const char *key, uint32_t *out)
{
	pmix_value_t *val = NULL;
	pmix_status_t rc = PMIx_Get(who, key, NULL, 0, &val);

	if (rc != PMIX_SUCCESS || !val)
		return -1;
	switch (val->type) {
	case PMIX_UINT32:
		*out = val->data.uint32;
		break;
	case PMIX_UINT16:
		*out = val->data.uint16;
		break;
	case PMIX_INT:
		*out = (uint32_t)val->data.integer;
		break;
	case PMIX_PROC_RANK:
		*out = val->data.rank;
		break;
	default:
		PMIX_VALUE_RELEASE(val);
		return -1;
	}
	PMIX_VALUE_RELEASE(val);
	return 0;
}

static int first_of(int v, int n, int k)
{
	return (int)(((long)v * n + k - 1) / k);
}

int rmad_boot_client(struct rmad_bootinfo *b)
{
	const char *vn = getenv("RMAD_VNODES");
	const char *base = getenv("RMAD_VNODE_BASE");
	const char *sess = getenv("RMAD_SESSION");
	char host[64] = "";

	memset(b, 0, sizeof(*b));
	b->vnode = -1;
	b->size = 1;
	b->local_size = 1;
	gethostname(host, sizeof(host) - 1);
	if (getenv("PMIX_NAMESPACE") || getenv("PMIX_RANK") ||
	    getenv("PMIX_SERVER_URI41") || getenv("PMIX_SERVER_URI4") ||
	    getenv("PMIX_SERVER_URI3") || getenv("PMIX_SERVER_URI2")) {
		pmix_status_t rc = PMIx_Init(&myproc, NULL, 0);
		pmix_proc_t wild;
		uint32_t v;

		if (rc != PMIX_SUCCESS) {
			rmad_err("PMIx_Init failed: %s", PMIx_Error_string(rc));
			return RMAD_ERR_BOOTSTRAP;
		}
		b->pmix = 1;
		PMIX_PROC_CONSTRUCT(&wild);
		PMIX_LOAD_PROCID(&wild, myproc.nspace, PMIX_RANK_WILDCARD);
		b->rank = (int)myproc.rank;
		if (get_u32(&wild, PMIX_JOB_SIZE, &v) < 0) {
			rmad_err("PMIx: no job size");
			return RMAD_ERR_BOOTSTRAP;
		}
		b->size = (int)v;
		b->local_rank = get_u32(&myproc, PMIX_LOCAL_RANK, &v) ? 0 :
				(int)v;
		b->local_size = get_u32(&wild, PMIX_LOCAL_SIZE, &v) ?
				b->size : (int)v;
		snprintf(b->nspace, sizeof(b->nspace), "%s", myproc.nspace);
	} else {
		b->singleton = 1;
		snprintf(b->nspace, sizeof(b->nspace), "singleton.%s.%d", host,
			 (int)getpid());
	}
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
	if (b->pmix)
		PMIx_Finalize(NULL, 0);
	b->pmix = 0;
}
