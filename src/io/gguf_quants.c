/* GGUF's Q4_0, Q4_1 and Q8_0 blocks (32 weights each) into MLX's affine
 * quantized layout, exactly as mlx/io/gguf_quants.cpp does:
 *   Q4_0 |f16 d|16 bytes of nibbles|    scale d, bias -8 d
 *   Q4_1 |f16 d|f16 m|16 bytes|         scale d, bias m
 *   Q8_0 |f16 d|32 int8|                scale d, bias -128 d, q ^ 0x80
 * GGML keeps element j in the low nibble of byte j and element j + 16 in
 * its high nibble; MLX packs element k at bits 4 (k % 8) of word k / 8,
 * so the nibbles are reordered.  Biases are computed in float16, as MLX's
 * float16 arithmetic does.  Q2_K, Q4_K and Q6_K become float16 arrays, as
 * MLX's loader dequantizes them. */
#include <math.h>
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

/* ---- K-quants to float16, as gguflib's gguf_tensor_to_f16 (the version
 * MLX builds) computes them: float arithmetic in its order, then
 * round-to-nearest-even half with NaN as 0x7E00 (its to_half). ---- */

static uint16_t to_half(float f) {
  if (f != f) return (uint16_t)((signbit(f) ? 0x8000 : 0) | 0x7E00);
  return cm_f32_to_f16(f);
}

static float half(const unsigned char *p) { return cm_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }

/* Dequantize `count` weights from whole super-blocks at blk into dst. */
static void q4_k(const unsigned char *blk, uint16_t *dst, uint64_t count) {
  uint64_t i = 0;
  while (i < count) {
    float sscale = half(blk), mscale = half(blk + 2);
    const unsigned char *s = blk + 4;
    float scales[8], mins[8];
    for (int j = 0; j < 8; j++) {
      uint8_t d, m;
      if (j < 4) {
        d = s[j] & 63;
        m = s[j + 4] & 63;
      } else {
        d = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        m = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
      }
      scales[j] = d * sscale;
      mins[j] = m * mscale;
    }
    const unsigned char *q = blk + 16;
    for (int b = 0; b < 8; b += 2, q += 32) {
      for (int j = 0; j < 32; j++) {
        dst[i] = to_half((q[j] & 0xF) * scales[b] - mins[b]);
        if (++i == count) return;
      }
      for (int j = 0; j < 32; j++) {
        dst[i] = to_half((q[j] >> 4) * scales[b] - mins[b]);
        if (++i == count) return;
      }
    }
    blk += 144;
  }
}

static void q6_k(const unsigned char *blk, uint16_t *dst, uint64_t count) {
  uint64_t i = 0;
  while (i < count) {
    float super = half(blk + 128 + 64 + 16);
    const unsigned char *L = blk, *H = blk + 128;
    const int8_t *sc = (const int8_t *)(blk + 128 + 64);
    for (int cluster = 0; cluster < 2; cluster++, L += 64, H += 32, sc += 8)
      for (int j = 0; j < 128; j++) {
        int q = (int8_t)(((L[j % 64] >> (j / 64 * 4)) & 0xF) |
                         (((H[j % 32] >> (j / 32 * 2)) & 3) << 4));
        dst[i] = to_half((super * sc[j / 16]) * (q - 32));
        if (++i == count) return;
      }
    blk += 210;
  }
}

static void q2_k(const unsigned char *blk, uint16_t *dst, uint64_t count) {
  uint64_t i = 0;
  while (i < count) {
    float sos = half(blk + 16 + 64), som = half(blk + 16 + 64 + 2);
    float scale = 0, min = 0;
    int bn = 0;
    for (int cluster = 0; cluster < 2; cluster++)
      for (int j = 0; j < 128; j++) {
        if (j % 16 == 0) {
          scale = sos * (blk[bn] & 0xF);
          min = som * (blk[bn] >> 4);
          bn++;
        }
        uint8_t q = (blk[16 + j % 32 + cluster * 32] >> (j / 32 * 2)) & 3;
        dst[i] = to_half(q * scale - min);
        if (++i == count) return;
      }
    blk += 84;
  }
}

int cm_gguf_kquant_bytes(uint32_t type) {
  return type == GGUF_T_Q2_K ? 84 : type == GGUF_T_Q4_K ? 144 : type == GGUF_T_Q6_K ? 210 : 0;
}

int cm_gguf_load_kquant(cm_reader *r, uint64_t off, uint32_t type, int ndim, const int32_t *shape,
                        cm_array **out) {
  size_t bb = (size_t)cm_gguf_kquant_bytes(type);
  cm_array *a = cm_array_from_data(NULL, ndim, shape, CM_FLOAT16);
  if (!a) return -1;
  enum { CHUNK = 1024 }; /* super-blocks per read */
  unsigned char *raw = malloc(CHUNK * bb);
  if (!raw) {
    cm_release(a);
    return cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  }
  uint64_t total = (uint64_t)a->size;
  uint16_t *dst = cm_data(a);
  int rc = 0;
  for (uint64_t w0 = 0; !rc && w0 < total; w0 += (uint64_t)CHUNK * 256) {
    uint64_t n = total - w0 < (uint64_t)CHUNK * 256 ? total - w0 : (uint64_t)CHUNK * 256;
    if ((rc = cm_reader_read(r, raw, (size_t)((n + 255) / 256) * bb, off + w0 / 256 * bb))) break;
    if (type == GGUF_T_Q2_K) q2_k(raw, dst + w0, n);
    else if (type == GGUF_T_Q4_K) q4_k(raw, dst + w0, n);
    else q6_k(raw, dst + w0, n);
  }
  free(raw);
  if (rc) {
    cm_release(a);
    return -1;
  }
  *out = a;
  return 0;
}
