/* GGUF's Q4_0, Q4_1 and Q8_0 blocks (32 weights each) into MLX's affine
 * quantized layout, exactly as mlx/io/gguf_quants.cpp does:
 *   Q4_0 |f16 d|16 bytes of nibbles|    scale d, bias -8 d
 *   Q4_1 |f16 d|f16 m|16 bytes|         scale d, bias m
 *   Q8_0 |f16 d|32 int8|                scale d, bias -128 d, q ^ 0x80
 * GGML keeps element j in the low nibble of byte j and element j + 16 in
 * its high nibble; MLX packs element k at bits 4 (k % 8) of word k / 8,
 * so the nibbles are reordered.  Biases are computed in float16, as MLX's
 * float16 arithmetic does. */
#include <stdlib.h>
#include <string.h>

#include "io/gguf.h"

/* MLX's unpack_32_4: 16 GGML bytes -> 16 bytes of MLX nibble pairs. */
static void unpack_32_4(const unsigned char *q, unsigned char *dst) {
  memset(dst, 0, 16);
  for (int j = 0; j < 16; j++) {
    dst[j / 2] |= (unsigned char)((q[j] & 0x0F) << (j % 2 ? 4 : 0));
    dst[8 + j / 2] |= (unsigned char)((q[j] >> 4) << (j % 2 ? 4 : 0));
  }
}

static uint16_t f16_mul(uint16_t h, float k) { return cm_f32_to_f16(k * cm_f16_to_f32(h)); }

int cm_gguf_load_quantized(cm_reader *r, uint64_t off, uint32_t type, const char *name,
                           size_t namelen, int ndim, const int32_t *shape, cm_named_arrays *out) {
  if (ndim == 0 || shape[ndim - 1] % 32 != 0)
    return cm_error(CM_ERR_RUNTIME, "[load_gguf] tensor %.*s has incompatible last dim shape: %d",
                    (int)namelen, name, ndim ? shape[ndim - 1] : 1);
  bool q8 = type == GGUF_T_Q8_0;
  size_t bbytes = type == GGUF_T_Q4_0 ? 18 : type == GGUF_T_Q4_1 ? 20 : 34;
  size_t wbytes = q8 ? 32 : 16; /* packed weight bytes per block */
  int32_t wshape[8], sshape[8];
  memcpy(wshape, shape, sizeof(int32_t) * (size_t)ndim);
  memcpy(sshape, shape, sizeof(int32_t) * (size_t)ndim);
  wshape[ndim - 1] /= q8 ? 4 : 8;
  sshape[ndim - 1] /= 32;
  cm_array *w = cm_array_from_data(NULL, ndim, wshape, CM_UINT32);
  cm_array *sc = w ? cm_array_from_data(NULL, ndim, sshape, CM_FLOAT16) : NULL;
  cm_array *bi = sc ? cm_array_from_data(NULL, ndim, sshape, CM_FLOAT16) : NULL;
  uint64_t nblocks = sc ? (uint64_t)sc->size : 0;
  enum { CHUNK = 4096 };
  unsigned char *raw = bi ? malloc(CHUNK * bbytes) : NULL;
  int rc = raw ? 0 : -1;
  if (bi && !raw) cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  unsigned char *wd = w ? cm_data(w) : NULL;
  uint16_t *sd = sc ? cm_data(sc) : NULL, *bd = bi ? cm_data(bi) : NULL;
  for (uint64_t b0 = 0; !rc && b0 < nblocks; b0 += CHUNK) {
    size_t nb = nblocks - b0 < CHUNK ? (size_t)(nblocks - b0) : CHUNK;
    if ((rc = cm_reader_read(r, raw, nb * bbytes, off + b0 * bbytes))) break;
    for (size_t k = 0; k < nb; k++) {
      const unsigned char *blk = raw + k * bbytes;
      uint64_t i = b0 + k;
      uint16_t d = (uint16_t)(blk[0] | blk[1] << 8);
      unsigned char *wo = wd + i * wbytes;
      sd[i] = d;
      if (type == GGUF_T_Q4_0) {
        bd[i] = f16_mul(d, -8.0f);
        unpack_32_4(blk + 2, wo);
      } else if (type == GGUF_T_Q4_1) {
        bd[i] = (uint16_t)(blk[2] | blk[3] << 8);
        unpack_32_4(blk + 4, wo);
      } else {
        bd[i] = f16_mul(d, -128.0f);
        for (int j = 0; j < 32; j++) wo[j] = blk[2 + j] ^ 0x80;
      }
    }
  }
  free(raw);
  if (!bi) rc = -1;
  if (!rc) {
    if (cm_named_arrays_get(out, name) && strlen(name) == namelen) cm_release(w);
    else rc = cm_named_arrays_put(out, name, namelen, w, false, "load_gguf");
    w = NULL;
  }
  size_t pl = namelen >= 7 ? namelen - 7 : namelen;
  char *key = !rc ? malloc(pl + 8) : NULL;
  if (!rc && !key) rc = cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  if (!rc) {
    memcpy(key, name, pl);
    memcpy(key + pl, ".scales", 8);
    rc = cm_named_arrays_put(out, key, pl + 7, sc, false, "load_gguf");
    sc = NULL;
  }
  if (!rc) {
    memcpy(key + pl, ".biases", 8);
    rc = cm_named_arrays_put(out, key, pl + 7, bi, false, "load_gguf");
    bi = NULL;
  }
  free(key);
  if (w) cm_release(w);
  if (sc) cm_release(sc);
  if (bi) cm_release(bi);
  return rc;
}
