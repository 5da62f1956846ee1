/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * secret.h - the agent's secrets: random bytes from the kernel, the
 * keyed hash SipHash-2-4 (registration keys, packet tags), and 128-bit
 * keys read from a file that only the agent's user may read.
 */
#ifndef RMAD_AGENT_SECRET_H
#define RMAD_AGENT_SECRET_H

#include <stddef.h>
#include <stdint.h>

/* n random bytes (getrandom, else /dev/urandom): 0, or -1 with errno. */
int rmad_random_bytes(void *p, size_t n);

/* SipHash-2-4 under key k of the byte string "first (8 bytes, little
 * endian), then len bytes at msg". */
uint64_t rmad_siphash(const uint64_t k[2], uint64_t first, const void *msg,
		      size_t len);

/*
 * A 128-bit key from the file at path: 32 hexadecimal digits, then
 * nothing but white space.  The file must be a regular file of the
 * agent's user (or root) that neither group nor others may read or
 * write.  0, or RMAD_ERR_ARG with the reason logged.
 */
int rmad_key_load(const char *path, uint64_t k[2]);

#endif
