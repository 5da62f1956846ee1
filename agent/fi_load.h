/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_load.h - libfabric, loaded when the agent first opens a fabric, not
 * when the program starts.  Debian's libfabric.so.1 pulls in the psm
 * providers' libraries, and libinfinipath's constructor sleeps some
 * 200 ms calibrating a clock: every start of this binary paid that,
 * also the ones that only print (--print-run-dir, --show-config,
 * --version, --sweep), which rmad-run makes once a run.  The five
 * functions of libfabric's that are not inline in its headers, and
 * fi_allocinfo, inline over one of them, are named here after their
 * rmad_ twins, which load the library on first use;
 * everything else reaches the provider through its ops tables.
 * Included by fabric_impl.h, after the libfabric headers.
 */
#ifndef RMAD_FI_LOAD_H
#define RMAD_FI_LOAD_H

#include <stdint.h>

#include <rdma/fabric.h>

/* 0 once libfabric.so.1 is loaded, else -FI_ENOSYS (said in the log) */
int rmad_fi_load(void);

int rmad_fi_getinfo(uint32_t version, const char *node, const char *service,
		    uint64_t flags, const struct fi_info *hints,
		    struct fi_info **info);
void rmad_fi_freeinfo(struct fi_info *info);
struct fi_info *rmad_fi_dupinfo(const struct fi_info *info);
int rmad_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		   void *context);
const char *rmad_fi_strerror(int errnum);

#define fi_getinfo rmad_fi_getinfo
#define fi_freeinfo rmad_fi_freeinfo
#define fi_dupinfo rmad_fi_dupinfo
#define fi_fabric rmad_fi_fabric
#define fi_strerror rmad_fi_strerror
/* <rdma/fabric.h>'s inline one calls the real fi_dupinfo */
#define fi_allocinfo() rmad_fi_dupinfo(NULL)

#endif
