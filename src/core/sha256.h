/* SHA-256 (FIPS 180-4), for the integrity checks of files cmlx writes and
 * later trusts (the compiled-kernel cache, backend/cpu/jit.c).  Small and
 * dependency-free: the digests are checked once per kernel load, far from
 * any hot path. */
#ifndef CMLX_CORE_SHA256_H
#define CMLX_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define CM_SHA256_BYTES 32

typedef struct cm_sha256 {
  uint32_t h[8];
  uint64_t len; /* bytes hashed so far */
  unsigned char buf[64];
  size_t fill; /* bytes waiting in buf */
} cm_sha256;

void cm_sha256_init(cm_sha256 *s);
void cm_sha256_update(cm_sha256 *s, const void *data, size_t n);
void cm_sha256_final(cm_sha256 *s, unsigned char out[CM_SHA256_BYTES]);
/* The digest of one buffer. */
void cm_sha256_of(const void *data, size_t n, unsigned char out[CM_SHA256_BYTES]);

#endif
