/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sweep.h - what dead agents leave behind, and the lock that tells a
 * live agent from a dead one.
 *
 * An agent killed with SIGKILL cannot remove its files: the libfabric shm
 * provider's regions in /dev/shm, and its socket and pid file in the
 * session directory.  Every agent sweeps them when it starts, and
 * `rmad --sweep` (rmad-run's cleanup, the systemd unit's ExecStopPost)
 * sweeps them on demand.
 */
#ifndef RMAD_AGENT_SWEEP_H
#define RMAD_AGENT_SWEEP_H

#include <sys/types.h>

/*
 * The "one agent per session and node" lock of the agent whose socket is
 * sock_path: an abstract-namespace socket, dropped by the kernel when its
 * holder exits, however it exits.  Returns 0 with the lock held in *fd,
 * 1 when a live process holds it, or RMAD_ERR_INTERNAL.
 */
int sweep_lock_take(const char *sock_path, int *fd);

/*
 * Remove the shm provider's regions (DIR/PID:...) that user uid left
 * behind when its processes died without closing them: regular files of
 * that owner whose pid no longer exists in this pid namespace.  Returns
 * how many went.
 */
int sweep_shm(const char *dir, uid_t uid);

/*
 * Remove the sockets and pid files of dead agents from the session
 * directories under rundir (those owned by uid): an agent is dead when
 * its lock can be taken, and its files go while the sweeper holds it, so
 * a live or starting agent never loses its own.  With rmdirs, a session
 * directory that held a dead agent's files goes too when nothing else is
 * left in it (an agent that was starting there makes it again when it
 * binds its socket).  Returns how many session directories held dead
 * agents' files.
 */
int sweep_rundir(const char *rundir, uid_t uid, int rmdirs);

#endif
