/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot_pmix.c - the PMIx backend of the client's bootstrap (boot.h).
 *
 * Only standard PMIx keys are used (PMIX_RANK from the proc, PMIX_JOB_SIZE,
 * PMIX_LOCAL_RANK, PMIX_LOCAL_SIZE), so Open MPI's mpirun, Slurm's PMIx
 * plugin and PRRTE all serve.
 */
#include <stdio.h>
#include <stdlib.h>

#include <pmix.h>

#include "boot.h"
#include "internal.h"
#include "log.h"

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

static int pmix_probe(void)
{
	return getenv("PMIX_NAMESPACE") || getenv("PMIX_RANK") ||
	       getenv("PMIX_SERVER_URI41") || getenv("PMIX_SERVER_URI4") ||
	       getenv("PMIX_SERVER_URI3") || getenv("PMIX_SERVER_URI2");
}

static int pmix_init(struct rmad_bootinfo *b)
{
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
	b->local_rank = get_u32(&myproc, PMIX_LOCAL_RANK, &v) ? 0 : (int)v;
	b->local_size = get_u32(&wild, PMIX_LOCAL_SIZE, &v) ? b->size :
			(int)v;
	snprintf(b->nspace, sizeof(b->nspace), "%s", myproc.nspace);
	return 0;
}

static void pmix_fini(struct rmad_bootinfo *b)
{
	if (b->pmix)
		PMIx_Finalize(NULL, 0);
	b->pmix = 0;
}

const struct rmad_boot_backend rmad_boot_pmix = {
	.name = "pmix",
	.probe = pmix_probe,
	.init = pmix_init,
	.fini = pmix_fini,
};
