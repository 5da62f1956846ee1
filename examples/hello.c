/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello.c - the smallest rmad program: each rank says where it runs and
 * which agent serves it, then all meet in a barrier.
 *
 *   ./hello                         (starts its own agent)
 *   rmad-run --vnodes 2 -np 4 ./hello
 */
#include <stdio.h>

#include <rmad.h>

int main(int argc, char **argv)
{
	struct rmad_info in;
	int err = rmad_init(&argc, &argv);

	if (err) {
		fprintf(stderr, "rmad_init: %s\n", rmad_strerror(err));
		return 1;
	}
	err = rmad_get_info(&in);
	if (err) {
		fprintf(stderr, "rmad_get_info: %s\n", rmad_strerror(err));
		rmad_finalize();
		return 1;
	}
	printf("rank %d of %d: node %d of %d (%s), agent pid %d on core %d, "
	       "provider %s\n", in.rank, in.size, in.node, in.nnodes,
	       in.hostname, in.agent_pid, in.agent_core, in.provider);
	fflush(stdout);
	err = rmad_barrier();
	if (err)
		fprintf(stderr, "rmad_barrier: %s\n", rmad_strerror(err));
	if (rmad_finalize() || err)
		return 1;
	return 0;
}
