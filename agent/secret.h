/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * secret.h - the agent's secrets: random bytes from the kernel, the
 * keyed hash SipHash-2-4 (registration keys, packet tags), 128-bit keys
 * read from a file that only the agent's user may read or derived from
 * one, and windows of sequence numbers taken once (replays).
 */
#ifndef RMAD_AGENT_SECRET_H
#define RMAD_AGENT_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n random bytes (getrandom, else /dev/urandom): 0, or -1 with errno. */
int secret_random_bytes(void *p, size_t n);

/* SipHash-2-4 under key k of the byte string "first (8 bytes, little
 * endian), then len bytes at msg". */
uint64_t secret_siphash(const uint64_t k[2], uint64_t first, const void *msg,
		      size_t len);

/*
 * A 128-bit key from the file at path: 32 hexadecimal digits, then
 * nothing but white space.  The file must be a regular file of the
 * agent's user (or root) that neither group nor others may read or
 * write.  0, or RMAD_ERR_ARG with the reason logged.
 */
int secret_key_load(const char *path, uint64_t k[2]);

/*
 * Sequence numbers taken once: the highest taken and, as bits, which of
 * the 64 below it were.  A number is taken if it is above the highest,
 * or below it by 64 at most and not taken yet; 0 never is.  Zeroed: a
 * fresh window.
 */
struct rmad_replay {
	uint64_t hi;
	uint64_t seen;		/* bit i: hi - 1 - i taken */
};

/* Take n if it is new (true), or say it is not (false, nothing kept). */
bool secret_replay_take(struct rmad_replay *r, uint64_t n);

/* The 128-bit key of a session: SipHash-2-4 under k (twice, apart by
 * their first words) of the three words w. */
void secret_key_derive(const uint64_t k[2], const uint64_t w[3],
		     uint64_t out[2]);

#endif
