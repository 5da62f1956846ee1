/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * secret.c - random bytes, SipHash-2-4 and key files (secret.h).
 *
 * SipHash-2-4 (Aumasson and Bernstein, 2012) is a pseudorandom function
 * of 64-bit output under a 128-bit key: its values cannot be told from
 * random, nor made, by whoever lacks the key.  Registration keys are
 * its values of a count (fabric_rma.c), packet tags its values of the
 * packet (fabric.c), session keys its values of a session's names.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmad_abi.h"
#include "log.h"
#include "secret.h"

int secret_random_bytes(void *p, size_t n)
{
	ssize_t r = getrandom(p, n, 0);
	int fd;

	if (r == (ssize_t)n)
		return 0;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, p, n);
	close(fd);
	if (r == (ssize_t)n)
		return 0;
	if (r >= 0)
		errno = EIO;
	return -1;
}

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND						\
	do {							\
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0;		\
		v0 = ROTL(v0, 32);				\
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;		\
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;		\
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2;		\
		v2 = ROTL(v2, 32);				\
	} while (0)
#define SIPWORD(m)						\
	do {							\
		v3 ^= (m);					\
		SIPROUND;					\
		SIPROUND;					\
		v0 ^= (m);					\
	} while (0)

static inline uint64_t le64(const uint8_t *p)
{
	uint64_t m;

	memcpy(&m, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	m = __builtin_bswap64(m);
#endif
	return m;
}

uint64_t secret_siphash(const uint64_t k[2], uint64_t first, const void *msg,
		      size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k[0];
	uint64_t v1 = 0x646f72616e646f6dull ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ k[0];
	uint64_t v3 = 0x7465646279746573ull ^ k[1];
	const uint8_t *p = msg;
	uint64_t b = (uint64_t)((len + 8) & 0xff) << 56;
	size_t left = len & 7;

	SIPWORD(first);
	for (const uint8_t *end = p + (len - left); p < end; p += 8)
		SIPWORD(le64(p));
	for (size_t i = 0; i < left; i++)
		b |= (uint64_t)p[i] << (8 * i);
	SIPWORD(b);
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* First words no message tag starts with: those are a pair of nodes,
 * and no node is numbered 0xfffffffe or above. */
#define KEY_DERIVE_0	0xfffffffffffffffeull
#define KEY_DERIVE_1	0xffffffffffffffffull

void secret_key_derive(const uint64_t k[2], const uint64_t w[3],
		     uint64_t out[2])
{
	uint8_t b[24];

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 8; j++)
			b[8 * i + j] = (uint8_t)(w[i] >> (8 * j));
	out[0] = secret_siphash(k, KEY_DERIVE_0, b, sizeof(b));
	out[1] = secret_siphash(k, KEY_DERIVE_1, b, sizeof(b));
}

bool secret_replay_take(struct rmad_replay *r, uint64_t n)
{
	uint64_t back;

	if (!n)
		return false;
	if (n > r->hi) {
		uint64_t shift = n - r->hi;

		/* the old highest becomes bit shift - 1 */
		if (shift > 64)
			r->seen = 0;
		else if (shift == 64)
			r->seen = r->hi ? 1ull << 63 : 0;
		else
			r->seen = (r->seen << shift) |
				  (r->hi ? 1ull << (shift - 1) : 0);
		r->hi = n;
		return true;
	}
	if (n == r->hi)
		return false;
	back = r->hi - 1 - n;		/* its bit */
	if (back >= 64 || (r->seen >> back) & 1)
		return false;
	r->seen |= 1ull << back;
	return true;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int secret_key_load(const char *path, uint64_t k[2])
{
	char buf[128];
	struct stat st;
	ssize_t n;
	int fd, d = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		rmad_err("key file %s: %s", path, strerror(errno));
		return RMAD_ERR_ARG;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rmad_err("key file %s: not a regular file", path);
		close(fd);
		return RMAD_ERR_ARG;
	}
	if (st.st_mode & 077) {
		rmad_err("key file %s: group or others may read or write it "
			 "(mode %03o): chmod 600 it", path,
			 (unsigned)(st.st_mode & 0777));
		close(fd);
		return RMAD_ERR_ARG;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		rmad_err("key file %s: owned by uid %u, neither this agent's "
			 "user nor root", path, (unsigned)st.st_uid);
		close(fd);
		return RMAD_ERR_ARG;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || n == (ssize_t)sizeof(buf) - 1) {
		rmad_err("key file %s: %s", path,
			 n < 0 ? strerror(errno) : "longer than a key");
		explicit_bzero(buf, sizeof(buf));
		return RMAD_ERR_ARG;
	}
	k[0] = k[1] = 0;
	for (ssize_t i = 0; i < n; i++) {
		int v = hexval((unsigned char)buf[i]);

		if (v >= 0 && d < 32) {
			k[d / 16] |= (uint64_t)v << (4 * (15 - d % 16));
			d++;
		} else if (!isspace((unsigned char)buf[i]) || d % 32) {
			d = -1;
			break;
		}
	}
	explicit_bzero(buf, sizeof(buf));
	if (d != 32) {
		rmad_err("key file %s: not 32 hexadecimal digits (make one "
			 "with: od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')",
			 path);
		k[0] = k[1] = 0;
		return RMAD_ERR_ARG;
	}
	return 0;
}
