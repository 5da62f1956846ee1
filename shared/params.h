/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * params.h - the one parameter table of the agent and of librmad.
 *
 * Every tunable lives in RMAD_PARAMS below and nowhere else: the struct,
 * the parser, the RMAD_<KEY> environment overrides, `rmad --show-config`,
 * etc/rmad.conf and the KEYS section of rmad.conf(5) are all generated
 * from it, so a key cannot exist in the code and be missing from the
 * documentation (t/params-docs.sh checks the shipped files).
 *
 * X(name, TYPE, "default", flags, min, max, "help")
 *   TYPE	BOOL, INT (long), SIZE (uint64_t, suffix k/m/g = 1024^n),
 *		STRING (at most RMAD_PARAM_STRMAX - 1 bytes) or LEVEL (log
 *		level name, stored as int).
 *   default	written as a user would write it, and parsed by the same
 *		code, so what the docs show is exactly what is applied.
 *   flags	RMAD_P_RELOAD: may change on SIGHUP; RMAD_P_POW2: the value
 *		must be a power of two.
 *   min, max	inclusive range for INT and SIZE; 0, 0 for other types.
 */
#ifndef RMAD_PARAMS_H
#define RMAD_PARAMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RMAD_P_RELOAD	0x1
#define RMAD_P_POW2	0x2

#define RMAD_PARAM_STRMAX	256

#define RMAD_PARAMS(X)							\
	X(rundir, STRING, "", 0, 0, 0,					\
	  "Directory for the session's run files (sockets, lock files). " \
	  "Empty means $XDG_RUNTIME_DIR/rmad when XDG_RUNTIME_DIR is "	\
	  "set, else /tmp/rmad-<uid>.")					\
	X(provider, STRING, "shm", 0, 0, 0,				\
	  "Libfabric provider(s) for agent-to-agent traffic: shm for "	\
	  "virtual nodes on one host, \"tcp;ofi_rxm\" between hosts, or " \
	  "verbs;ofi_rxm, efa or cxi on fast fabrics.")			\
	X(core, STRING, "auto", 0, 0, 0,				\
	  "Core the agent pins itself to: auto (the node's last core; "	\
	  "with virtual nodes, agent v takes the v-th core from the "	\
	  "end), a core number, or none to leave it unpinned.")	\
	X(fabric_node, STRING, "", 0, 0, 0,				\
	  "Address the agent's libfabric endpoint binds to (with "	\
	  "FI_SOURCE), e.g. 127.0.0.1 for virtual nodes over "		\
	  "tcp;ofi_rxm, or this host's address on the cluster network. " \
	  "Empty lets the provider choose; shm ignores it.")		\
	X(mesh, STRING, "", 0, 0, 0,					\
	  "The agents of a static mesh, for agents that no launcher "	\
	  "starts (systemd): every node's agent as host[:port], comma " \
	  "separated, in node order, the same list on every node, e.g. " \
	  "\"n01,n02,n03\"; an IPv6 address with a port is written "	\
	  "[addr]:port, a link-local one with its link, "		\
	  "[fe80::1%eth0]:port. Every entry of the mesh resolves to one " \
	  "family, IPv4 (preferred) or IPv6. Needs a provider with "	\
	  "socket addresses (tcp;ofi_rxm); the agent binds to its own "	\
	  "entry. "							\
	  "Empty (and no mesh_file): this agent is a mesh of one.")	\
	X(mesh_file, STRING, "", 0, 0, 0,				\
	  "A file that lists the mesh instead, one entry (as in mesh) a line " \
	  "(# starts a comment), for meshes too long for mesh.")	\
	X(mesh_port, INT, "7281", 0, 1, 65535,				\
	  "Port of the mesh entries that give none.")			\
	X(mesh_self, INT, "-1", 0, -1, 65535,				\
	  "This agent's entry in the mesh (0 is the first), or -1: the " \
	  "one entry that is an address of this host. A host running " \
	  "several agents of the mesh (virtual nodes) must set it.")	\
	X(mesh_key_file, STRING, "", 0, 0, 0,				\
	  "A file holding the static mesh's secret, 32 hexadecimal "	\
	  "digits (od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'), the "	\
	  "same on every node, owned by the agent's user or root and "	\
	  "readable by nobody else: the agents tag their packets under " \
	  "it (fabric_auth). Empty: a static mesh's packets carry no "	\
	  "tags, and anyone who can reach the agents' port and claim a " \
	  "node's address speaks for that node.")			\
	X(fabric_auth, STRING, "auto", 0, 0, 0,				\
	  "Whether the agents tag every packet they send each other "	\
	  "with a keyed hash (SipHash-2-4, 32 bytes a packet with a "	\
	  "sequence number) and drop every packet whose tag is wrong "	\
	  "or whose number was taken before (a replay): on, off, or "	\
	  "auto: on "							\
	  "unless the provider is shm (whose queues only the agents' "	\
	  "user can open) or a static mesh has no mesh_key_file. "	\
	  "Agents that a launcher starts draw their keys at start and "	\
	  "exchange them with their addresses; a static mesh's agents "	\
	  "share mesh_key_file's. The same on every agent of a mesh.")	\
	X(spin_us, INT, "20000", RMAD_P_RELOAD, 0, 60000000,		\
	  "Microseconds the agent keeps polling its rings and the "	\
	  "fabric after its last activity before it sleeps. Longer "	\
	  "spins cut wake-up latency but keep a core busy.")		\
	X(progress, STRING, "auto", RMAD_P_RELOAD, 0, 0,		\
	  "How the agent waits for work: spin (poll for spin_us after "	\
	  "its last activity, then sleep), event (sleep as soon as it "	\
	  "is idle, woken by its clients, the fabric's wait descriptor " \
	  "or a peer's doorbell), or auto: event while a client of "	\
	  "this agent may run on the "	\
	  "agent's core (its CPU affinity includes it, or the agent is " \
	  "not pinned), spin otherwise.")				\
	X(rt_priority, INT, "1", 0, 0, 99,				\
	  "While event-driven, the agent runs under SCHED_FIFO at this "	\
	  "priority, when the system allows it (root, CAP_SYS_NICE or "	\
	  "RLIMIT_RTPRIO), so that a wakeup for work preempts a "	\
	  "computing process on its core at once instead of waiting "	\
	  "for the end of its time slice; it sleeps whenever idle, and "	\
	  "gives the core up for a moment when it must wait busily.  "	\
	  "0 keeps SCHED_OTHER; spinning agents always use it.  Over "	\
	  "shm, an agent that another agent of its mesh may share a "	\
	  "core with (more virtual nodes than cores, a fixed core, "	\
	  "core = none) runs at nice -20 in SCHED_OTHER instead: under " \
	  "SCHED_FIFO it would spin on shm's locks held by the agent "	\
	  "it preempted until the kernel throttles it, about a second.") \
	X(answer_spin_us, INT, "50", RMAD_P_RELOAD, 0, 1000000,	\
	  "While event-driven under SCHED_FIFO (rt_priority), how long "	\
	  "in microseconds the agent keeps polling after it sent another " \
	  "node a request that it answers (a flush, a get, a lock, an "	\
	  "acknowledged put or accumulate) before it sleeps: the answer " \
	  "and the client's next operation then find it awake, which "	\
	  "saves a wakeup each.  Meanwhile it gives its core to other "	\
	  "processes only for a moment every 256 passes.  0: sleep at "	\
	  "once.")							\
	X(wait_spin_us, INT, "200", RMAD_P_RELOAD, 0, 1000000,	\
	  "While event-driven, how long in microseconds after its last "	\
	  "activity the agent polls instead of sleeping, as long as "	\
	  "every client attached to it sleeps on a completion counter "	\
	  "(and for a quarter of that after it woke one, or took "	\
	  "operations from one that runs on): none of its "		\
	  "clients wants the core then, and the next packet or "	\
	  "operation finds the agent awake, which saves a wakeup each.  "	\
	  "It polls in SCHED_IDLE, so any other process of the core "	\
	  "preempts it at once; a second thread of the agent under "	\
	  "SCHED_FIFO checks every 100 microseconds (up to 800 while "	\
	  "nothing else wants the core) that it still gets "		\
	  "the core, raises it back to SCHED_FIFO when a process keeps "	\
	  "the core from it, and the polling then stays off for a "	\
	  "while.  Only under SCHED_FIFO (rt_priority) and with no "	\
	  "other agent on its core.  0: sleep at once.")		\
	X(busy_poll, BOOL, "false", RMAD_P_RELOAD, 0, 0,		\
	  "Never sleep: the agent polls its rings and the fabric "	\
	  "continuously. Use it only when the agent has a core of its "	\
	  "own.")							\
	X(idle_poll_us, INT, "1000", RMAD_P_RELOAD, 10, 1000000,	\
	  "While asleep, the longest time in microseconds the agent "	\
	  "waits before it polls the fabric again. Data on the "	\
	  "fabric's wait descriptor (tcp;ofi_rxm) ends the sleep "	\
	  "sooner; shm has no wait descriptor, and tcp;ofi_rxm's "	\
	  "connection setup does not signal it.")			\
	X(heartbeat_ms, INT, "250", RMAD_P_RELOAD, 0, 60000,		\
	  "How often, in milliseconds, an agent sends every other agent "	\
	  "of the mesh a heartbeat stamped with its clock, which the "	\
	  "other answers at once with an echo of the stamp (in a static " \
	  "mesh, every busy one: heartbeat_idle_ms); 0 turns failure "	\
	  "detection off.")						\
	X(heartbeat_timeout_ms, INT, "1500", RMAD_P_RELOAD, 100, 600000, \
	  "An agent whose newest stamp that another echoed is older than " \
	  "this many milliseconds holds that node suspect (what "	\
	  "arrives late proves nothing new), and declares it dead on "	\
	  "definite evidence, looked for once a heartbeat while it is "	\
	  "suspect: over tcp, its host refuses a connection to its "	\
	  "address; between virtual nodes of one host, its agent lock "	\
	  "is free; or sends to it failed and no echo came within two " \
	  "heartbeats after. Without evidence, only after "		\
	  "heartbeat_confirm_ms. Keep it several times heartbeat_ms.")	\
	X(heartbeat_confirm_ms, INT, "20000", RMAD_P_RELOAD, 0, 3600000, \
	  "An agent declares a node dead without evidence once its "	\
	  "newest echo is this many milliseconds old: every call that " \
	  "waits on it returns RMAD_ERR_PROC_FAILED, and its ranks are " \
	  "failed for their jobs. Long, because a false death loses "	\
	  "work that would have finished: it must outlast whatever "	\
	  "stalls a healthy node (CPU starvation, reclaim and swapping, " \
	  "a stopped and resumed agent); ULFM's detector waits 10 s. A " \
	  "hung (SIGSTOP) agent or a cut network is found this late; a " \
	  "killed agent sooner, by the evidence. 0, or a value not above " \
	  "heartbeat_timeout_ms: dead at heartbeat_timeout_ms.")	\
	X(heartbeat_idle_ms, INT, "2000", RMAD_P_RELOAD, 0, 600000,	\
	  "In a static mesh, how often in milliseconds an agent sends "	\
	  "a heartbeat to an up node it has no business with: none of "	\
	  "its jobs has ranks there or waits for its map there, and it " \
	  "sent the node nothing for heartbeat_timeout_ms. Such an idle " \
	  "node is suspect after heartbeat_timeout_ms times "		\
	  "heartbeat_idle_ms / heartbeat_ms without an echo (as many "	\
	  "heartbeats as a busy node), and dead as a busy one is, but "	\
	  "not before that time either. A node that becomes busy (a "	\
	  "job, a packet for it, a send error) gets heartbeats every "	\
	  "heartbeat_ms at once, and is suspect unless it answers "	\
	  "within two of them or heartbeat_timeout_ms after its last "	\
	  "echo, whichever is later. Nodes not up are knocked at this "	\
	  "rate too, once the agent has run for heartbeat_timeout_ms "	\
	  "(one that starts knocks at heartbeat_ms, and is answered at " \
	  "once). 0, or a value not above heartbeat_ms: every node at "	\
	  "heartbeat_ms. Without a static mesh every node is busy.")	\
	X(attach_timeout_ms, INT, "120000", RMAD_P_RELOAD, 0, 86400000, \
	  "How long, in milliseconds, an agent waits for every rank of " \
	  "a job to attach (rmad_init) after it first heard of the job. " \
	  "Nothing else notices a rank that exits or dies before it " \
	  "attaches: when the time is up, rmad_init fails with " \
	  "RMAD_ERR_PROC_FAILED in the ranks that did attach. Raise it " \
	  "for jobs whose ranks start far apart; 0 waits forever.") \
	X(client_spin_us, INT, "50", RMAD_P_RELOAD, 0, 1000000,	\
	  "Microseconds a waiting client spins on a completion counter " \
	  "before it sleeps on the futex, while its agent spins; while " \
	  "the agent is event-driven (progress), waiting clients sleep " \
	  "at once.  A wait for other clients of the node alone (a "	\
	  "same-node fence, a post or complete of PSCW) spins this long " \
	  "in either mode, giving the core away every 16 pauses " \
	  "while the agent is event-driven.")				\
	X(log_level, LEVEL, "warn", RMAD_P_RELOAD, 0, 0,		\
	  "Log verbosity of the agent and of librmad: error, warn, "	\
	  "info or debug.")						\
	X(max_clients, INT, "64", 0, 1, 4096,				\
	  "Client slots in the node's shared segment, that is the most " \
	  "client processes one agent serves at once.")			\
	X(register_timeout_ms, INT, "10000", RMAD_P_RELOAD, 0, 3600000, \
	  "How long, in milliseconds, a connection to the agent's "	\
	  "socket may hold a client slot before it registers (rmad_init " \
	  "does at once); then the agent closes it. rmadctl's "		\
	  "requests are answered well within it. 0 waits forever.")	\
	X(max_user_clients, INT, "0", RMAD_P_RELOAD, 0, 4096,		\
	  "Systemd mode: the most client slots (connections, registered " \
	  "or not) that one user other than the agent's own and root "	\
	  "holds at once; another connection of that user is refused. " \
	  "0: no limit but max_clients.")				\
	X(max_user_jobs, INT, "0", RMAD_P_RELOAD, 0, 4096,		\
	  "Systemd mode: the most jobs that the clients of one user "	\
	  "other than the agent's own and root belong to at once on "	\
	  "this agent; a client of another job of that user is refused " \
	  "at rmad_init. 0: no limit but max_jobs.")			\
	X(ring_entries, INT, "1024", RMAD_P_POW2, 16, 65536,		\
	  "Entries in each client's submission ring; a power of two. "	\
	  "A client that finds its ring full waits for the agent to "	\
	  "drain it.")							\
	X(op_pool, INT, "4096", 0, 1, 1048576,				\
	  "Op elements in the node's global pool, used once a client's " \
	  "reserved elements are all in flight.  Each client may borrow " \
	  "an equal share; idle elements above a client's share are "	\
	  "taken back when another client needs them.")		\
	X(client_op_pool, INT, "64", 0, 0, 65536,			\
	  "Op elements reserved to each client, the first level of the " \
	  "pool; a window's op_pool hint adds one of its own, taken "	\
	  "from the global pool.")					\
	X(target_pool, INT, "1024", 0, 1, 1048576,			\
	  "Target elements in the node's global pool.")			\
	X(win_slots, INT, "32", 0, 1, 65536,				\
	  "Slots of each origin's operation table per window: target " \
	  "elements are hashed into them by rank.  The window hint "	\
	  "slots overrides it.")					\
	X(win_target_pool, INT, "4", 0, 1, 65536,			\
	  "Target elements reserved to each origin in each window (the " \
	  "first level of the target pool); the global target_pool is " \
	  "the second.  The window hint target_pool overrides it.")	\
	X(lock_queue, INT, "4096", 0, 1, 1048576,			\
	  "Lock requests from other nodes that wait in the agent's "	\
	  "queues at once, over all windows (granted locks take no "	\
	  "entry).  A request that finds the queue full is refused and " \
	  "retried by the origin's agent after 200 microseconds.")	\
	X(max_windows, INT, "32768", RMAD_P_RELOAD, 0, 16777216,		\
	  "Windows each user may have alive at once on this agent "	\
	  "(a quota on a shared agent, 0: none); the window past it "	\
	  "is refused on every member with RMAD_ERR_NOMEM "	\
	  "(MPI_ERR_NO_MEM).  Windows are otherwise limited by "	\
	  "memory only; the agent maps each member's window on its "	\
	  "node, so vm.max_map_count (65530 by default) bounds the "	\
	  "windows times their members on a node.  Other nodes may "	\
	  "make a window of a job here before a member on this node "	\
	  "did, each node at most one per rank it serves of the "	\
	  "job.")	\
	X(staging_size, SIZE, "1m", 0, 4096, 1073741824,		\
	  "Bytes of each client's data staging area in the shared "	\
	  "segment.")							\
	X(max_jobs, INT, "16", 0, 1, 4096,				\
	  "Jobs one agent serves at once.  Where the agent collects "	\
	  "jobs' maps, the jobs other nodes joined count too; when "	\
	  "none is free, the node whose joins hold the most jobs "	\
	  "that wait for their map loses its oldest one (that job "	\
	  "fails), so one node cannot take them all.")			\
	X(idle_exit_ms, INT, "2000", RMAD_P_RELOAD, 0, 86400000,	\
	  "An agent started by a client (embedded mode) exits after "	\
	  "this many milliseconds without clients; 0 means never.")	\
	X(am_buf_size, SIZE, "8k", 0, 1024, 1048576,			\
	  "Bytes of each active-message buffer on the fabric, which "	\
	  "bounds the size of one agent-to-agent message.")		\
	X(am_recv_bufs, INT, "64", 0, 4, 65536,				\
	  "Receive buffers the agent keeps posted to the fabric.")	\
	X(am_send_bufs, INT, "256", 0, 4, 65536,			\
	  "Send buffers; messages queued beyond them wait for send "	\
	  "completions.")						\
	X(single_op_threshold, SIZE, "4k", RMAD_P_RELOAD, 0, 8192,	\
	  "Single short operation: a lone put, get, accumulate or "	\
	  "atomic of at most this many bytes between a lock and its "	\
	  "unlock is held by the origin's agent and sent at the unlock " \
	  "as one packet that locks, operates and unlocks; 0 turns "	\
	  "this off.")							\
	X(acc_bulk_threshold, SIZE, "64", RMAD_P_RELOAD, 0, 1073741824, \
	  "An accumulate of at least this many bytes on an allocated "	\
	  "or shared window is combined with plain, vectorized loads "	\
	  "and stores under the target's accumulate lock once every "	\
	  "small accumulate in progress there is done, instead of one "	\
	  "atomic instruction per element (rmad(7), \"Atomicity and " \
	  "ordering of accumulates\"); 0 keeps every accumulate on "	\
	  "atomics. Read by the agent and by each client at start.")	\
	X(acc_lock_timeout_ms, INT, "10000", RMAD_P_RELOAD, 1, 3600000, \
	  "How long, in milliseconds, an operation from another node "	\
	  "waits for a target's accumulate lock that a live client of " \
	  "this node holds (one that is descheduled, or stopped) before " \
	  "it fails with RMAD_ERR_SYNC, as do the next ones there while " \
	  "the lock stays held. Meanwhile that node's later packets for " \
	  "the same window wait behind it, in order, and the agent serves " \
	  "everybody else (rmad(7), \"Atomicity and ordering of "	\
	  "accumulates\"). A dead holder is passed over at once.")	\
	X(piggyback_threshold, INT, "0", RMAD_P_RELOAD, 0, 65536,	\
	  "Operations to a locked target that the origin's agent holds " \
	  "back until the closing flush or unlock, so that the last "	\
	  "carries the request for its acknowledgment (or the UNLOCK); " \
	  "0 sends them at once, and the operation that is last when "	\
	  "the flush or unlock comes still carries it.")		\
	X(aggregate, BOOL, "true", RMAD_P_RELOAD, 0, 0,			\
	  "Node-level aggregation: the operations and answers bound for "	\
	  "one node, from every client and window, travel together in "	\
	  "one fabric message of up to am_buf_size bytes, applied in "	\
	  "order there; a flush, an unlock, a full message or the end of " \
	  "the agent's pass sends it at once.")			\
	X(type_cache_entries, INT, "64", 0, 0, 4096,			\
	  "Derived target types each agent keeps per origin node "	\
	  "(rmad(7), \"Datatypes\"): a strided op to another node "	\
	  "carries a type id once its type is in the target agent's "	\
	  "cache, and the origin's agent sends the type again when it "	\
	  "was evicted.  Must be the same on every node of the mesh; "	\
	  "0 sends every non-contiguous op to another node as one op "	\
	  "per contiguous piece instead.")				\
	X(type_cache_bytes, SIZE, "1m", 0, 4096, 1073741824,		\
	  "Bytes of derived target types (their wire forms) each agent "	\
	  "keeps per origin node; a type larger than this, or than 64 "	\
	  "KiB, travels as one op per contiguous piece.  The origin's "	\
	  "agent evicts the least recently used types to stay within "	\
	  "it.  Must be the same on every node of the mesh.")		\
	X(am_ordering, BOOL, "true", 0, 0, 0,				\
	  "Rely on the fabric's send-after-send ordering, when the "	\
	  "provider offers it, to leave puts and accumulates "		\
	  "unanswered and to keep accumulates in order without "	\
	  "waiting.  false behaves as on an unordered fabric: every "	\
	  "operation is answered, and an accumulate waits for the "	\
	  "answer to the previous one unless the window's "		\
	  "accumulate_ordering hint is none.")				\
	X(cma, BOOL, "true", 0, 0, 0,					\
	  "Read and write client buffers in place with "		\
	  "process_vm_readv/writev (clients allow it with "		\
	  "PR_SET_PTRACER).  false, or a kernel or container that "	\
	  "refuses it, makes clients stage remote operations on "	\
	  "ordinary memory through their staging area in the shared "	\
	  "segment, one operation at a time; rmad_alloc_mem memory "	\
	  "never needs it.")						\
	X(rdma_threshold, SIZE, "32k", 0, 0, 1099511627776,		\
	  "Puts and gets to another node of at least this many bytes "	\
	  "move by fi_write/fi_read straight into the target's "	\
	  "registered window, when the provider offers FI_RMA; "	\
	  "accumulates of at least this many bytes, and puts to a "	\
	  "created or dynamic window (memory the target's agent does " \
	  "not register), are read by the target's agent with fi_read " \
	  "and combined or stored there, and gets from such a window " \
	  "are written by it with fi_write into the origin's memory; " \
	  "get-accumulates of at least this many bytes both (operands " \
	  "read, results written back); puts, gets, accumulates and "	\
	  "get-accumulates with a derived target type of at least "	\
	  "this many bytes move their packed stream the same way "	\
	  "(read, or written for a get, by the target's "		\
	  "agent); smaller ones, and all of them when it is 0, travel " \
	  "as active messages that the target's agent applies.")	\
	X(rdma_chunk, SIZE, "512k", 0, 4096, 1073741824,		\
	  "Bytes of one fi_write/fi_read (of a read or write by the "	\
	  "target's agent, at most 512k); a larger transfer is split "	\
	  "into chunks, of which 8 per op and 64 in all are in flight " \
	  "at once.")							\
	X(direct_chunk, SIZE, "4m", 0, 4096, 1073741824,		\
	  "Bytes of one fi_write/fi_read of a put or get straight from "	\
	  "or into the client's rmad_alloc_mem memory (no bounce "	\
	  "buffer) when the provider moves it by itself without the "	\
	  "target's agent: over shm, one process_vm_writev/readv that "	\
	  "the origin's agent makes, doing nothing else meanwhile.  "	\
	  "Smaller chunks interleave other work, larger ones copy "	\
	  "faster.  Other transfers use rdma_chunk.")			\
	X(allow_users, STRING, "", 0, 0, 0,				\
	  "Systemd mode: comma-separated user names or uids, besides "	\
	  "the agent's own uid, whose clients may attach. Empty means "	\
	  "only the agent's own uid; \"*\" means everyone.")		\
	X(agent_user, STRING, "", 0, 0, 0,				\
	  "Systemd mode, for clients: the user (name or uid) that the "	\
	  "node's system-wide agent runs as. A client then trusts a "	\
	  "run directory and an agent owned by that user besides its "	\
	  "own. Empty means its own uid only.")				\
	X(connect_timeout_ms, INT, "20000", 0, 100, 3600000,		\
	  "How long a client keeps trying to reach (or start) its "	\
	  "agent before rmad_init fails with RMAD_ERR_AGENT.")		\
	X(stats_interval_ms, INT, "0", RMAD_P_RELOAD, 0, 3600000,	\
	  "Log agent statistics this often, in milliseconds, and "	\
	  "once more as the agent stops; 0 means never.")

/* Field types, by TYPE token. */
#define RMAD_P_CTYPE_BOOL(n)	int n
#define RMAD_P_CTYPE_INT(n)	long n
#define RMAD_P_CTYPE_SIZE(n)	uint64_t n
#define RMAD_P_CTYPE_STRING(n)	char n[RMAD_PARAM_STRMAX]
#define RMAD_P_CTYPE_LEVEL(n)	int n

#define RMAD_P_FIELD(n, t, d, fl, mn, mx, h)	RMAD_P_CTYPE_##t(n);
#define RMAD_P_INDEX(n, t, d, fl, mn, mx, h)	RMAD_PI_##n,

/* RMAD_PI_<name> is the index of a key in the table. */
enum {
	RMAD_PARAMS(RMAD_P_INDEX)
	RMAD_NPARAMS
};

/* Where a value came from, for `rmad --show-config`. */
enum rmad_param_src {
	RMAD_PSRC_DEFAULT = 0,
	RMAD_PSRC_FILE,
	RMAD_PSRC_ENV,
	RMAD_PSRC_SET,
};

struct rmad_params {
	RMAD_PARAMS(RMAD_P_FIELD)
	unsigned char src[RMAD_NPARAMS];	/* enum rmad_param_src */
};

/* Every key at its default. */
void rmad_params_defaults(struct rmad_params *p);

/*
 * Read "key = value" lines.  '#' starts a comment at the start of a line
 * or after whitespace; blank lines are skipped; the value may be wrapped
 * in double quotes.  The file applies as a whole or not at all.
 * Returns 0, 1 when the file does not exist (the caller decides whether
 * that matters), or RMAD_ERR_ARG with "FILE:LINE: ..." in err.
 */
int rmad_params_load_file(struct rmad_params *p, const char *path,
			  char *err, size_t errlen);

/* RMAD_<KEY> (key upper-cased) overrides; all or nothing, like a file. */
int rmad_params_load_env(struct rmad_params *p, char *err, size_t errlen);

/* Set one key; on failure *p is unchanged and err says why. */
int rmad_params_set(struct rmad_params *p, const char *key, const char *val,
		    char *err, size_t errlen);

/* Copy the RMAD_P_RELOAD keys from fresh; returns how many changed. */
int rmad_params_apply_reload(struct rmad_params *cur,
			     const struct rmad_params *fresh);

enum rmad_params_fmt {
	RMAD_PARAMS_FMT_TEXT,	/* "key = value  # source" */
	RMAD_PARAMS_FMT_CONF,	/* a complete commented etc/rmad.conf */
	RMAD_PARAMS_FMT_MAN,	/* .TP entries for rmad.conf(5) KEYS */
	RMAD_PARAMS_FMT_JSON,	/* {"key": value, ...} */
};

/*
 * TEXT is what `rmad --show-config` prints and reads back as a config
 * file.  CONF and MAN show the defaults whatever p holds; p may be NULL
 * for them (and means the defaults for TEXT and JSON).
 */
void rmad_params_print(const struct rmad_params *p, FILE *f,
		       enum rmad_params_fmt fmt);

/* Number of keys and the name of the i-th (NULL when out of range). */
int rmad_params_count(void);
const char *rmad_params_name(int i);

#endif
