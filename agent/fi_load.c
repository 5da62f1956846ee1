/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_load.c - libfabric loaded on first use (fi_load.h says why).  The
 * default version of each symbol is taken, the one a link against the
 * installed library would have bound, which matches the headers that
 * came with it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fi_load.h"
#include "log.h"

#ifndef RMAD_FABRIC_SONAME
#define RMAD_FABRIC_SONAME "libfabric.so.1"
#endif

static struct {
	void *h;
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
		       const struct fi_info *, struct fi_info **);
	void (*freeinfo)(struct fi_info *);
	struct fi_info *(*dupinfo)(const struct fi_info *);
	int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
	const char *(*strerror)(int);
	int err;
} fl;
static pthread_once_t fl_once = PTHREAD_ONCE_INIT;

static void fl_open(void)
{
	void *h = dlopen(RMAD_FABRIC_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		rmad_err("fabric: cannot load %s: %s", RMAD_FABRIC_SONAME,
			 dlerror());
		fl.err = -FI_ENOSYS;
		return;
	}
	*(void **)&fl.getinfo = dlsym(h, "fi_getinfo");
	*(void **)&fl.freeinfo = dlsym(h, "fi_freeinfo");
	*(void **)&fl.dupinfo = dlsym(h, "fi_dupinfo");
	*(void **)&fl.fabric = dlsym(h, "fi_fabric");
	*(void **)&fl.strerror = dlsym(h, "fi_strerror");
	if (!fl.getinfo || !fl.freeinfo || !fl.dupinfo || !fl.fabric ||
	    !fl.strerror) {
		rmad_err("fabric: %s lacks fi_getinfo, fi_freeinfo, "
			 "fi_dupinfo, fi_fabric or fi_strerror",
			 RMAD_FABRIC_SONAME);
		memset(&fl, 0, sizeof(fl));
		dlclose(h);
		fl.err = -FI_ENOSYS;
		return;
	}
	fl.h = h;	/* never closed: providers keep threads and handlers */
}

int rmad_fi_load(void)
{
	pthread_once(&fl_once, fl_open);
	return fl.err;
}

int rmad_fi_getinfo(uint32_t version, const char *node, const char *service,
		    uint64_t flags, const struct fi_info *hints,
		    struct fi_info **info)
{
	int err = rmad_fi_load();

	if (err)
		return err;
	return fl.getinfo(version, node, service, flags, hints, info);
}

void rmad_fi_freeinfo(struct fi_info *info)
{
	if (info && !rmad_fi_load())
		fl.freeinfo(info);
}

struct fi_info *rmad_fi_dupinfo(const struct fi_info *info)
{
	if (rmad_fi_load())
		return NULL;
	return fl.dupinfo(info);
}

int rmad_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		   void *context)
{
	int err = rmad_fi_load();

	if (err)
		return err;
	return fl.fabric(attr, fabric, context);
}

const char *rmad_fi_strerror(int errnum)
{
	if (rmad_fi_load())
		return strerror(errnum < 0 ? -errnum : errnum);
	return fl.strerror(errnum);
}
