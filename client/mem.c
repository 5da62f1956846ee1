/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem.c - memory the agent can reach: rmad_alloc_mem and rmad_free_mem
 * (a sealed memfd this rank maps and the agent maps too, registered
 * through the control socket), whether a buffer lies in such memory,
 * and the probe at attach of whether the agent can reach the rest of
 * ours in place (process_vm_readv), which else is staged.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "util.h"

/* Regions from rmad_alloc_mem, which the agent maps too. */
struct mem_region {
	struct mem_region *next;
	void *base;
	size_t size;
};
static struct mem_region *mems;

int rmad_stage_probe(struct rmad_client *c)
{
	static volatile uint64_t magic = 0x7374616765645f3fULL;
	struct rmad_ctl_mem m = { 0 };
	int err;

	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_CMA_PROBE;
	m.addr = (uint64_t)(uintptr_t)&magic;
	m.size = magic;
	pthread_mutex_lock(&rmad_ctl_lock);
	err = rmad_ctl_call(c, &m, sizeof(m), -1, m.addr);
	pthread_mutex_unlock(&rmad_ctl_lock);
	c->staged = err == RMAD_ERR_PERM;
	if (c->staged)
		rmad_info("the agent cannot reach this process's memory: "
			  "remote operations on it are staged");
	return err == RMAD_ERR_PERM ? 0 : err;
}

int rmad_mem_shared(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	int in = 0;

	pthread_mutex_lock(&rmad_ctl_lock);
	for (struct mem_region *r = mems; r && !in; r = r->next)
		in = a >= (uintptr_t)r->base && len <= r->size &&
		     a - (uintptr_t)r->base <= r->size - len;
	pthread_mutex_unlock(&rmad_ctl_lock);
	return in;
}

int rmad_alloc_mem(size_t size, void **ptr)
{
	struct rmad_client *c = &rmad_cl;
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	struct rmad_ctl_mem m = { 0 };
	struct mem_region *r;
	int fd, err;

	if (!ptr || size > (1ull << 40))
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	r = calloc(1, sizeof(*r));
	if (!r)
		return RMAD_ERR_NOMEM;
	/* 0 bytes still gives a distinct pointer, as malloc may */
	r->size = (size ? size + psz - 1 : psz) / psz * psz;
	/* sealed at its size, or the agent refuses it (it maps it) */
	fd = rmad_memfd_sealed("rmad-mem", r->size, 0);
	if (fd < 0) {
		fd = -1;
		goto nomem;
	}
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       0);
	if (r->base == MAP_FAILED)
		goto nomem;
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_MEM_REG;
	m.addr = (uint64_t)(uintptr_t)r->base;
	m.size = r->size;
	pthread_mutex_lock(&rmad_ctl_lock);
	err = rmad_ctl_call(c, &m, sizeof(m), fd, m.addr);
	if (!err) {
		r->next = mems;
		mems = r;
	}
	pthread_mutex_unlock(&rmad_ctl_lock);
	close(fd);
	if (err) {
		munmap(r->base, r->size);
		free(r);
		return err;
	}
	*ptr = r->base;
	return 0;
nomem:
	if (fd >= 0)
		close(fd);
	free(r);
	return RMAD_ERR_NOMEM;
}

int rmad_free_mem(void *ptr)
{
	struct rmad_client *c = &rmad_cl;
	struct rmad_ctl_mem m = { 0 };
	struct mem_region **pp, *r = NULL;
	int err;

	if (!ptr)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	pthread_mutex_lock(&rmad_ctl_lock);
	for (pp = &mems; *pp; pp = &(*pp)->next)
		if ((*pp)->base == ptr) {
			r = *pp;
			*pp = r->next;
			break;
		}
	if (!r) {
		pthread_mutex_unlock(&rmad_ctl_lock);
		return RMAD_ERR_ARG;	/* not from rmad_alloc_mem */
	}
	m.h.magic = RMAD_CTL_MAGIC;
	m.h.abi_version = RMAD_ABI_VERSION;
	m.h.type = RMAD_CTL_MEM_DEREG;
	m.addr = (uint64_t)(uintptr_t)r->base;
	m.size = r->size;
	err = rmad_ctl_call(c, &m, sizeof(m), -1, m.addr);
	pthread_mutex_unlock(&rmad_ctl_lock);
	/* the pages are ours to drop whatever the agent said */
	munmap(r->base, r->size);
	free(r);
	return err == RMAD_ERR_AGENT ? 0 : err;
}
