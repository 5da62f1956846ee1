/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem.c - memory from rmad_alloc_mem, mapped by the agent as well.
 *
 * A client allocates it as a memfd and registers it (MEM_REG); the agent
 * maps the same pages, so buffers in it need no copy through the staging
 * area when the agent reads or writes them.  Regions are per client and
 * go away with the client.  The agent keeps them in a small list per
 * client: clients hold few such regions.
 *
 * A transfer that the provider makes straight from or to a region (a
 * fi_write or fi_read chunk, a chunk the target's agent reads) holds it
 * (agent_mem_hold): a region deregistered, or whose client is gone,
 * while held leaves the client's list at once but stays mapped, on the
 * zombie list, until its last hold is dropped.  Its address is thus
 * never mapped again for another client while a provider may still
 * touch it.
 *
 * Every memfd a client hands over (this memory, a window's) is mapped
 * only once agent_mem_fd_check found it sealed at its size: a client
 * that could shrink it would turn our next access into a SIGBUS, the
 * agent's death for every client of the node.  The seals are checked
 * before the size, which they then fix for good.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent.h"
#include "mem.h"
#include "log.h"
#include "rmad_abi.h"
#include "util.h"

#define MEM_SIZE_MAX	(1ull << 40)
#define SHMEM_MAGIC	0x01021994	/* TMPFS_MAGIC: a plain memfd */
#define MEM_REGIONS_MAX	4096		/* per client */

struct mem_region {
	struct mem_region *next;
	uint64_t addr;			/* in the client */
	uint64_t size;
	void *base;			/* in the agent */
	uint32_t holds;			/* transfers using it in place */
	int gone;			/* on the zombie list */
};

static void region_free(struct mem_region *r)
{
	munmap(r->base, r->size);
	free(r);
}

/* Region r left its client's list: unmap it, or keep it while held. */
static void region_gone(struct agent *a, struct mem_region *r)
{
	if (r->holds) {
		a->st.mem_kept++;
		rmad_info("memory of %llu bytes released while %u transfers "
			  "use it in place: kept mapped until they end",
			  (unsigned long long)r->size, r->holds);
		r->gone = 1;
		r->next = a->mm.zombies;
		a->mm.zombies = r;
		return;
	}
	region_free(r);
}


static void target_answer(struct agent *a, uint32_t c, uint64_t addr, int status)
{
	struct rmad_ctl_win_reply r = { 0 };

	r.h.magic = RMAD_CTL_MAGIC;
	r.h.abi_version = RMAD_ABI_VERSION;
	r.h.type = RMAD_CTL_WIN_REPLY;
	r.key = addr;
	r.status = status;
	rmad_send_msg(a->cl[c].fd, &r, sizeof(r), NULL, 0);
}

int agent_mem_init(struct agent *a)
{
	struct mem_ctx *m = &a->mm;

	m->regions = calloc((size_t)a->p.max_clients, sizeof(*m->regions));
	m->nregions = calloc((size_t)a->p.max_clients, sizeof(*m->nregions));
	return m->regions && m->nregions ? 0 : RMAD_ERR_NOMEM;
}

int agent_mem_fd_check(struct agent *a, uint32_t c, int fd, uint64_t need,
		      const char *what)
{
	struct agent_client *ac = &a->cl[c];
	struct statfs sf;
	struct stat st = { 0 };
	int seals;

	if (fd < 0)
		return RMAD_ERR_ARG;
	seals = fcntl(fd, F_GET_SEALS);
	/* a hugetlbfs memfd seals too, but a hole punched in it faults
	 * (SIGBUS) once its pool is empty: shmem only */
	if (seals < 0 || fstatfs(fd, &sf) < 0 ||
	    (unsigned long)sf.f_type != SHMEM_MAGIC) {
		rmad_warn("client %u (pid %d): its %s is not a memfd of "
			  "shared memory%s%s; refused", c, (int)ac->pid, what,
			  seals < 0 ? ": " : "",
			  seals < 0 ? strerror(errno) : "");
		return RMAD_ERR_PERM;
	}
	if ((seals & RMAD_MEMFD_SEALS) != RMAD_MEMFD_SEALS) {
		rmad_warn("client %u (pid %d): its %s's memfd is not sealed "
			  "against shrinking and growing (F_SEAL_SHRINK, "
			  "F_SEAL_GROW; seals %#x); refused", c,
			  (int)ac->pid, what, (unsigned)seals);
		return RMAD_ERR_PERM;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < need) {
		rmad_warn("client %u (pid %d): its %s's memfd holds %lld "
			  "bytes, not %llu; refused", c, (int)ac->pid, what,
			  (long long)st.st_size, (unsigned long long)need);
		return RMAD_ERR_ARG;
	}
	return 0;
}

void agent_mem_reg(struct agent *a, uint32_t c, const struct rmad_ctl_mem *m,
		   int fd)
{
	struct mem_region *r;
	int status = RMAD_ERR_ARG;

	if (fd < 0 || !m->size || m->size > MEM_SIZE_MAX ||
	    m->addr + m->size < m->addr)
		goto out;
	status = agent_mem_fd_check(a, c, fd, m->size, "rmad_alloc_mem memory");
	if (status)
		goto out;
	status = RMAD_ERR_ARG;
	for (r = a->mm.regions[c]; r; r = r->next)
		if (m->addr < r->addr + r->size && r->addr < m->addr + m->size)
			goto out;	/* overlaps one it has */
	status = RMAD_ERR_NOMEM;
	if (a->mm.nregions[c] >= MEM_REGIONS_MAX)
		goto out;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	r->base = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       0);
	if (r->base == MAP_FAILED) {
		free(r);
		goto out;
	}
	r->addr = m->addr;
	r->size = m->size;
	r->next = a->mm.regions[c];
	a->mm.regions[c] = r;
	a->mm.nregions[c]++;
	status = 0;
out:
	if (fd >= 0)
		close(fd);
	target_answer(a, c, m->addr, status);
}

void agent_mem_dereg(struct agent *a, uint32_t c,
		     const struct rmad_ctl_mem *m)
{
	for (struct mem_region **pp = &a->mm.regions[c]; *pp;
	     pp = &(*pp)->next) {
		struct mem_region *r = *pp;

		if (r->addr != m->addr)
			continue;
		*pp = r->next;
		region_gone(a, r);
		a->mm.nregions[c]--;
		target_answer(a, c, m->addr, 0);
		return;
	}
	target_answer(a, c, m->addr, RMAD_ERR_ARG);
}

/* Can we read client c's memory in place?  It put m->size at m->addr. */
void agent_mem_probe(struct agent *a, uint32_t c, const struct rmad_ctl_mem *m)
{
	uint64_t v = 0;
	struct iovec l = { &v, sizeof(v) };
	struct iovec r = { (void *)(uintptr_t)m->addr, sizeof(v) };
	int ok = a->p.cma &&
		 process_vm_readv(a->cl[c].pid, &l, 1, &r, 1, 0) ==
		 (ssize_t)sizeof(v) && v == m->size;

	a->cl[c].staged = !ok;
	if (!ok)
		rmad_info("client %u (pid %d): no in-place access to its "
			  "memory%s; it stages", c, (int)a->cl[c].pid,
			  a->p.cma ? "" : " (cma = false)");
	target_answer(a, c, m->addr, ok ? 0 : RMAD_ERR_PERM);
}

/* Client c's region holding [addr, addr + len), or NULL. */
static struct mem_region *region_find(struct agent *a, uint32_t c,
				      uint64_t addr, uint64_t len)
{
	if (!a->mm.regions || c >= (uint32_t)a->p.max_clients)
		return NULL;
	for (struct mem_region *r = a->mm.regions[c]; r; r = r->next)
		if (addr >= r->addr && len <= r->size &&
		    addr - r->addr <= r->size - len)
			return r;
	return NULL;
}

/* Where [addr, addr + len) of client c is mapped here, or NULL. */
void *agent_mem_lookup(struct agent *a, uint32_t c, uint64_t addr,
		       uint64_t len)
{
	struct mem_region *r = region_find(a, c, addr, len);

	return r ? (char *)r->base + (addr - r->addr) : NULL;
}

void *agent_mem_hold(struct agent *a, uint32_t c, uint64_t addr,
		     uint64_t len, struct mem_region **held)
{
	struct mem_region *r = region_find(a, c, addr, len);

	*held = r;
	if (!r)
		return NULL;
	r->holds++;
	return (char *)r->base + (addr - r->addr);
}

void agent_mem_drop(struct agent *a, struct mem_region *r)
{
	if (!r || !r->holds)
		return;
	if (--r->holds || !r->gone)
		return;
	for (struct mem_region **pp = &a->mm.zombies; *pp;
	     pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	region_free(r);
}

/* The client is gone: its regions too. */
void agent_mem_release(struct agent *a, uint32_t c)
{
	if (!a->mm.regions)
		return;
	while (a->mm.regions[c]) {
		struct mem_region *r = a->mm.regions[c];

		a->mm.regions[c] = r->next;
		region_gone(a, r);
	}
	a->mm.nregions[c] = 0;
}

void agent_mem_fini(struct agent *a)
{
	if (!a->mm.regions)
		return;
	for (int c = 0; c < a->p.max_clients; c++)
		agent_mem_release(a, (uint32_t)c);
	/* the agent stops: its provider makes no more progress */
	while (a->mm.zombies) {
		struct mem_region *r = a->mm.zombies;

		a->mm.zombies = r->next;
		region_free(r);
	}
	free(a->mm.regions);
	free(a->mm.nregions);
	a->mm.regions = NULL;
	a->mm.nregions = NULL;
}
