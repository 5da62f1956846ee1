/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boot.c - agent bootstrap through PMIx.
 *
 * Each agent publishes its fabric address under one key, a fence with
 * data collection spreads all of them, and each agent reads them back in
 * rank order: rank == node index == AV index.  That is one PMIx round
 * and O(nodes) memory per agent.  Anything short of a real multi-agent
 * job (no server, a job of one) degrades to a 1-agent mesh rather than
 * an error, so the same agent binary runs standalone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "rmad_abi.h"
#include "log.h"
#include "boot.h"
#include "secret.h"

#define BOOT_ADDR_KEY	"rmad.addr"
#define BOOT_TAG_KEY	"rmad.tagkey"

static int boot_one(const void *myaddr, size_t addrlen, struct rmad_boot *b)
{
	b->addrs = malloc(addrlen);
	if (!b->addrs)
		return RMAD_ERR_NOMEM;
	memcpy(b->addrs, myaddr, addrlen);
	b->addrlen = addrlen;
	b->self = 0;
	b->n = 1;
	return 0;
}

int rmad_boot_single(const void *myaddr, size_t addrlen, struct rmad_boot *b)
{
	if (!b)
		return RMAD_ERR_ARG;
	memset(b, 0, sizeof(*b));
	if (!myaddr || !addrlen)
		return RMAD_ERR_ARG;
	return boot_one(myaddr, addrlen, b);
}

static int boot_job_size(const pmix_proc_t *me, uint32_t *size)
{
	pmix_value_t *val = NULL;
	pmix_proc_t job;
	pmix_status_t rc;
	int ret = 0;

	PMIX_LOAD_PROCID(&job, me->nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || !val) {
		rmad_err("boot: PMIx_Get(%s): %s", PMIX_JOB_SIZE,
			 PMIx_Error_string(rc));
		return RMAD_ERR_BOOTSTRAP;
	}
	/* The standard says uint32; be lenient with servers that differ. */
	switch (val->type) {
	case PMIX_UINT32:
		*size = val->data.uint32;
		break;
	case PMIX_UINT:
		*size = val->data.uint;
		break;
	case PMIX_INT:
		*size = val->data.integer > 0 ? (uint32_t)val->data.integer : 0;
		break;
	default:
		rmad_err("boot: %s has type %s", PMIX_JOB_SIZE,
			 PMIx_Data_type_string(val->type));
		ret = RMAD_ERR_BOOTSTRAP;
	}
	PMIX_VALUE_RELEASE(val);
	if (!ret && (*size == 0 || *size > INT32_MAX)) {
		rmad_err("boot: job size %u", *size);
		ret = RMAD_ERR_BOOTSTRAP;
	}
	return ret;
}

static int boot_put(const char *key, const void *p, size_t len)
{
	pmix_value_t val;
	pmix_status_t rc;

	memset(&val, 0, sizeof(val));
	val.type = PMIX_BYTE_OBJECT;
	val.data.bo.bytes = (char *)p;	/* PMIx_Put copies */
	val.data.bo.size = len;
	rc = PMIx_Put(PMIX_GLOBAL, key, &val);
	if (rc != PMIX_SUCCESS) {
		rmad_err("boot: PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
		return RMAD_ERR_BOOTSTRAP;
	}
	return 0;
}

/* Our address, and with mykey our tag key, for the others. */
static int boot_publish(const void *myaddr, size_t addrlen,
			const uint64_t *mykey)
{
	pmix_info_t info;
	pmix_status_t rc;
	bool collect = true;

	if (boot_put(BOOT_ADDR_KEY, myaddr, addrlen) ||
	    (mykey && boot_put(BOOT_TAG_KEY, mykey, 2 * sizeof(*mykey))))
		return RMAD_ERR_BOOTSTRAP;
	rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS) {
		rmad_err("boot: PMIx_Commit: %s", PMIx_Error_string(rc));
		return RMAD_ERR_BOOTSTRAP;
	}
	/* Collecting the data here saves one server round trip per peer in
	 * the gets below. */
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	rc = PMIx_Fence(NULL, 0, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_SUCCESS) {
		rmad_err("boot: PMIx_Fence: %s", PMIx_Error_string(rc));
		return RMAD_ERR_BOOTSTRAP;
	}
	return 0;
}

/* Agent r's value of key, len bytes, into out. */
static int boot_get(const pmix_proc_t *me, uint32_t r, const char *key,
		    void *out, size_t len)
{
	pmix_value_t *val = NULL;
	pmix_proc_t proc;
	pmix_status_t rc;

	PMIX_LOAD_PROCID(&proc, me->nspace, r);
	rc = PMIx_Get(&proc, key, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || !val) {
		rmad_err("boot: no %s from agent %u: %s%s", key, r,
			 PMIx_Error_string(rc), strcmp(key, BOOT_TAG_KEY) ?
			 "" : " (is fabric_auth the same everywhere?)");
		return RMAD_ERR_BOOTSTRAP;
	}
	/* Different address lengths mean different providers: such agents
	 * could never reach each other. */
	if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != len) {
		rmad_err("boot: agent %u: %s %s of %zu bytes, not %zu%s", r,
			 PMIx_Data_type_string(val->type), key,
			 val->type == PMIX_BYTE_OBJECT ?
			 val->data.bo.size : 0, len,
			 strcmp(key, BOOT_ADDR_KEY) ? "" :
			 ": same fabric provider everywhere?");
		PMIX_VALUE_RELEASE(val);
		return RMAD_ERR_BOOTSTRAP;
	}
	memcpy(out, val->data.bo.bytes, len);
	PMIX_VALUE_RELEASE(val);
	return 0;
}

static int boot_fetch(const pmix_proc_t *me, uint32_t size, size_t addrlen,
		      struct rmad_boot *b)
{
	for (uint32_t r = 0; r < size; r++) {
		if (boot_get(me, r, BOOT_ADDR_KEY,
			     (char *)b->addrs + (size_t)r * addrlen, addrlen) ||
		    (b->keys && boot_get(me, r, BOOT_TAG_KEY, b->keys[r],
					 sizeof(b->keys[r]))))
			return RMAD_ERR_BOOTSTRAP;
	}
	return 0;
}

int rmad_boot_pmix(const void *myaddr, size_t addrlen, int tags,
		   struct rmad_boot *b)
{
	pmix_status_t rc;
	pmix_proc_t me;
	uint32_t size = 0;
	int ret;

	if (!b)
		return RMAD_ERR_ARG;
	memset(b, 0, sizeof(*b));
	if (!myaddr || !addrlen)
		return RMAD_ERR_ARG;

	memset(&me, 0, sizeof(me));
	rc = PMIx_Init(&me, NULL, 0);
	/* Without a server PMIx still sets itself up as a singleton, which
	 * has to be finalized like any other init. */
	b->pmix_initialized = PMIx_Initialized() ? 1 : 0;
	if (rc != PMIX_SUCCESS) {
		if (rc == PMIX_ERR_UNREACH)
			rmad_info("boot: no PMIx server, single agent");
		else
			rmad_warn("boot: PMIx_Init: %s, single agent",
				  PMIx_Error_string(rc));
		ret = boot_one(myaddr, addrlen, b);
		if (ret)
			goto fail;
		return 0;
	}

	ret = boot_job_size(&me, &size);
	if (ret)
		goto fail;
	if (me.rank >= size) {
		rmad_err("boot: rank %u in a job of %u", me.rank, size);
		ret = RMAD_ERR_BOOTSTRAP;
		goto fail;
	}
	snprintf(b->nspace, sizeof(b->nspace), "%s", me.nspace);
	if (size == 1) {
		ret = boot_one(myaddr, addrlen, b);
		if (ret)
			goto fail;
		return 0;
	}

	if (addrlen > SIZE_MAX / size) {
		ret = RMAD_ERR_ARG;
		goto fail;
	}
	b->addrs = malloc((size_t)size * addrlen);
	b->n = (int)size;	/* for rmad_boot_free */
	if (tags)
		b->keys = calloc(size, sizeof(*b->keys));
	if (!b->addrs || (tags && !b->keys)) {
		ret = RMAD_ERR_NOMEM;
		goto fail;
	}
	if (tags && secret_random_bytes(b->keys[me.rank],
				      sizeof(b->keys[me.rank]))) {
		rmad_err("boot: no random bytes for a tag key: %s",
			 strerror(errno));
		ret = RMAD_ERR_BOOTSTRAP;
		goto fail;
	}
	ret = boot_publish(myaddr, addrlen, tags ? b->keys[me.rank] : NULL);
	if (!ret)
		ret = boot_fetch(&me, size, addrlen, b);
	if (ret)
		goto fail;
	b->addrlen = addrlen;
	b->self = (int)me.rank;
	b->n = (int)size;
	rmad_info("boot: agent %d of %d in %s", b->self, b->n, b->nspace);
	return 0;

fail:
	rmad_boot_free(b);
	return ret;
}

int rmad_boot_fence(struct rmad_boot *b)
{
	pmix_status_t rc;

	if (!b)
		return RMAD_ERR_ARG;
	if (b->n <= 1 || !b->pmix_initialized)
		return 0;
	rc = PMIx_Fence(NULL, 0, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		rmad_err("boot: PMIx_Fence: %s", PMIx_Error_string(rc));
		return RMAD_ERR_BOOTSTRAP;
	}
	return 0;
}

void rmad_boot_free(struct rmad_boot *b)
{
	if (!b)
		return;
	free(b->addrs);
	if (b->keys)
		explicit_bzero(b->keys, (size_t)b->n * sizeof(*b->keys));
	free(b->keys);
	if (b->pmix_initialized)
		PMIx_Finalize(NULL, 0);
	memset(b, 0, sizeof(*b));
}
