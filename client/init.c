/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c - librmad's lifecycle calls: init, finalize, rank, size, barrier,
 * and the two extensions get_info and ping.
 *
 * rmad_init is collective: after attaching, every rank joins a barrier,
 * which the agents only release once they know the whole job's
 * rank->node map.  rmad_finalize is collective too (a barrier, then a
 * clean goodbye to the agent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "util.h"

struct rmad_client rmad_cl = {
	.sock = -1,
	.doorbell = -1,
	.sync_lock = PTHREAD_MUTEX_INITIALIZER,
	.pool_lock = PTHREAD_MUTEX_INITIALIZER,
};

static const char *conf_path(void)
{
	const char *env = getenv("RMAD_CONF");

	return env && *env ? env : RMAD_SYSCONFDIR "/rmad/rmad.conf";
}

static int load_params(struct rmad_params *p)
{
	char err[256];

	rmad_params_defaults(p);
	if (rmad_params_load_file(p, conf_path(), err, sizeof(err)) < 0 ||
	    rmad_params_load_env(p, err, sizeof(err)) < 0) {
		rmad_log_init("librmad", RMAD_LOG_WARN);
		rmad_err("%s", err);
		return RMAD_ERR_ARG;
	}
	return 0;
}

int rmad_init(int *argc, char ***argv)
{
	struct rmad_client *c = &rmad_cl;
	int err;

	(void)argc;
	(void)argv;
	if (c->initialized)
		return RMAD_ERR_SYNC;
	err = load_params(&c->p);
	if (err)
		return err;
	rmad_log_init("librmad", (int)c->p.log_level);
	err = rmad_boot_client(&c->b);
	if (err)
		goto fail_boot;
	err = rmad_attach(c);
	if (err)
		goto fail_boot;
	c->sync_issued = 0;
	c->barrier_epoch = 0;
	c->dead = 0;
	err = rmad_stage_probe(c);
	if (err) {
		rmad_detach(c);
		goto fail_boot;
	}
	c->initialized = 1;
	err = rmad_barrier();
	if (err) {
		c->initialized = 0;
		goto fail_attach;
	}
	return 0;
fail_attach:
	rmad_detach(c);
fail_boot:
	rmad_boot_client_fini(&c->b);
	return err;
}

int rmad_finalize(void)
{
	struct rmad_client *c = &rmad_cl;
	int err;

	if (!c->initialized)
		return RMAD_ERR_SYNC;
	err = c->dead ? RMAD_ERR_AGENT : rmad_barrier();
	rmad_detach(c);
	rmad_boot_client_fini(&c->b);
	c->initialized = 0;
	return err;
}

int rmad_rank(int *rank)
{
	if (!rank)
		return RMAD_ERR_ARG;
	if (!rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	*rank = rmad_cl.b.rank;
	return 0;
}

int rmad_size(int *size)
{
	if (!size)
		return RMAD_ERR_ARG;
	if (!rmad_cl.initialized)
		return RMAD_ERR_SYNC;
	*size = rmad_cl.b.size;
	return 0;
}

int rmad_barrier(void)
{
	struct rmad_client *c = &rmad_cl;

	if (!c->initialized)
		return RMAD_ERR_SYNC;
	return rmad_sync_op(c, RMAD_OPC_BARRIER, -1, ++c->barrier_epoch);
}

int rmad_ping(int rank)
{
	struct rmad_client *c = &rmad_cl;

	if (!c->initialized)
		return RMAD_ERR_SYNC;
	if (rank < 0 || rank >= c->b.size)
		return RMAD_ERR_RANK;
	return rmad_sync_op(c, RMAD_OPC_PING, rank, 0);
}

int rmad_get_info(struct rmad_info *info)
{
	struct rmad_client *c = &rmad_cl;

	if (!info)
		return RMAD_ERR_ARG;
	if (!c->initialized)
		return RMAD_ERR_SYNC;
	memset(info, 0, sizeof(*info));
	info->rank = c->b.rank;
	info->size = c->b.size;
	info->node = (int)c->reg.node;
	info->nnodes = (int)c->reg.nnodes;
	info->local_rank = c->b.local_rank;
	info->local_size = c->b.local_size;
	info->agent_pid = c->reg.agent_pid;
	info->agent_core = c->reg.agent_core;
	rmad_strlcpy(info->hostname, c->reg.hostname, sizeof(info->hostname));
	rmad_strlcpy(info->provider, c->reg.provider, sizeof(info->provider));
	rmad_strlcpy(info->session, c->reg.session, sizeof(info->session));
	return 0;
}
