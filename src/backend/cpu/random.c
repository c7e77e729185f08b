/* RandomBits: the Threefry-2x32 counter hash (20 rounds, as in Random123
 * and JAX), laid out over the output exactly as MLX's CPU kernel does, so
 * that a seed gives MLX's numbers.
 *
 * Each key owns a run of B = out.size / num_keys * width bytes, i.e.
 * W = ceil(B / 4) 32-bit words (the last one possibly partial: only its
 * first B mod 4 bytes are written).  With H = W / 2 and odd = W % 2, the
 * counter pair (j, H + odd + j) for j < H hashes to the words j and
 * H + odd + j; when W is odd, word H is the first half of the hash of
 * (H, 0).  Every word depends only on its key and its counter, so any
 * split of the work gives the same bits: the runs of pairs are spread over
 * the thread pool, and counters are hashed 8 per vector with AVX2 and 16
 * with AVX-512.  The portable loop and the vector loops produce identical
 * words: CMLX_RANDOM_SIMD=0 forces the portable loop, CMLX_RANDOM_AVX512=0
 * the AVX2 one. */
#include "backend/cpu/random.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_features.h"
#include "core/threadpool.h"
#include "primitives/random.h"

#define KS_PARITY 0x1BD11BDAu

static inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* One Threefry-2x32 block: ks[2] = ks[0] ^ ks[1] ^ parity. */
static inline void threefry(const uint32_t ks[3], uint32_t c0, uint32_t c1, uint32_t *o0,
                            uint32_t *o1) {
  static const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (int i = 0; i < 5; i++) {
    for (int r = 0; r < 4; r++) {
      x0 += x1;
      x1 = rotl(x1, rot[i % 2][r]);
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + (uint32_t)i + 1;
  }
  *o0 = x0;
  *o1 = x1;
}

/* Store the first n (<= 4) bytes of v at p (little-endian, as MLX's
 * byte copy of a uint32). */
static inline void put_word(unsigned char *p, uint32_t v, size_t n) {
  if (n >= 4) memcpy(p, &v, 4);
  else memcpy(p, &v, n);
}

typedef struct bits_job {
  const uint32_t *keys; /* num_keys pairs, gathered contiguous */
  unsigned char *out;
  size_t bytes_per_key;
  int64_t words, half, odd, units; /* per key; units = half + odd */
  bool simd, simd512;
  bool unit; /* write min(float(w) / 2^32, upper) instead of the word w */
  float upper;
} bits_job;

static inline uint32_t unit_word(const bits_job *jb, uint32_t w) {
  if (!jb->unit) return w;
  float f = (float)w * 0x1p-32f;
  if (f > jb->upper) f = jb->upper;
  uint32_t r;
  memcpy(&r, &f, sizeof r);
  return r;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CM_RANDOM_X86 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f")))

/* Both vector loops hash NV vectors in turn: the hash is a chain of
 * dependent adds, rotates and xors, and independent vectors fill the
 * pipeline.  Two per loop is the most AVX2's 16 registers hold. */
#define NV 2
#define MIX(ADD, XOR, ROTL, r)                  \
  for (int v = 0; v < NV; v++) {                \
    x0[v] = ADD(x0[v], x1[v]);                  \
    x1[v] = XOR(ROTL(x1[v], r), x0[v]);         \
  }
#define INJECT(ADD, i)                          \
  for (int v = 0; v < NV; v++) {                \
    x0[v] = ADD(x0[v], k[((i) + 1) % 3]);       \
    x1[v] = ADD(x1[v], kc[i]);                  \
  }
/* Five groups of four mixes (the even and the odd rotation sets in
 * turn), each followed by key injection i. */
#define ROUNDS(ADD, XOR, ROTL)                                                            \
  for (int i = 0; i < 5; i++) {                                                          \
    if (i % 2 == 0) {                                                                    \
      MIX(ADD, XOR, ROTL, 13) MIX(ADD, XOR, ROTL, 15) MIX(ADD, XOR, ROTL, 26)            \
      MIX(ADD, XOR, ROTL, 6)                                                             \
    } else {                                                                             \
      MIX(ADD, XOR, ROTL, 17) MIX(ADD, XOR, ROTL, 29) MIX(ADD, XOR, ROTL, 16)            \
      MIX(ADD, XOR, ROTL, 24)                                                            \
    }                                                                                    \
    INJECT(ADD, i)                                                                       \
  }

/* AVX2 has no rotate: two shifts and an or, except the byte-sized
 * rotations (16, 24), which are one byte shuffle. */
AVX2 static inline __m256i rotl8x32(__m256i x, int r) {
  if (r == 16)
    return _mm256_shuffle_epi8(
        x, _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7,
                            4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  if (r == 24)
    return _mm256_shuffle_epi8(
        x, _mm256_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6,
                            7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
  return _mm256_or_si256(_mm256_slli_epi32(x, r), _mm256_srli_epi32(x, 32 - r));
}

/* The unit form (see primitives/random.h): float(w) as two exact halves
 * summed (one rounding, as the direct conversion), scaled by 2^-32
 * (exact) and clamped to upper. */
AVX2 static inline __m256i unit8(__m256i w, __m256 upper) {
  __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(w, 16));
  __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xffff)));
  __m256 f = _mm256_add_ps(_mm256_mul_ps(hi, _mm256_set1_ps(65536.0f)), lo);
  return _mm256_castps_si256(_mm256_min_ps(_mm256_mul_ps(f, _mm256_set1_ps(0x1p-32f)), upper));
}

/* Pairs j in [j0, j1) of one key, 8 * NV at a time; returns where it
 * stopped (the caller finishes the tail). */
AVX2 static int64_t pairs_avx2(const uint32_t ks[3], unsigned char *blk, int64_t j0, int64_t j1,
                               int64_t second, const float *unit) {
  __m256i k[3], kc[5]; /* kc[i]: the second word's injection ks[(i + 2) % 3] + i + 1 */
  for (int i = 0; i < 3; i++) k[i] = _mm256_set1_epi32((int)ks[i]);
  for (int i = 0; i < 5; i++) kc[i] = _mm256_set1_epi32((int)(ks[(i + 2) % 3] + (uint32_t)i + 1));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int64_t j = j0;
  for (; j + 8 * NV <= j1; j += 8 * NV) {
    __m256i x0[NV], x1[NV];
    for (int v = 0; v < NV; v++) {
      __m256i c = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)(j + 8 * v)), lane);
      x0[v] = _mm256_add_epi32(c, k[0]);
      x1[v] = _mm256_add_epi32(_mm256_add_epi32(c, _mm256_set1_epi32((int)(uint32_t)second)),
                               k[1]);
    }
    ROUNDS(_mm256_add_epi32, _mm256_xor_si256, rotl8x32)
    if (unit)
      for (int v = 0; v < NV; v++) {
        x0[v] = unit8(x0[v], _mm256_set1_ps(*unit));
        x1[v] = unit8(x1[v], _mm256_set1_ps(*unit));
      }
    for (int v = 0; v < NV; v++) {
      _mm256_storeu_si256((__m256i *)(blk + 4 * (j + 8 * v)), x0[v]);
      _mm256_storeu_si256((__m256i *)(blk + 4 * (second + j + 8 * v)), x1[v]);
    }
  }
  return j;
}

/* The same with sixteen lanes and AVX-512's one-instruction rotate. */
#define ROL16(x, r) _mm512_rol_epi32((x), (r))
AVX512 static inline __m512i unit16(__m512i w, __m512 upper) {
  __m512 f = _mm512_mul_ps(_mm512_cvtepu32_ps(w), _mm512_set1_ps(0x1p-32f));
  return _mm512_castps_si512(_mm512_min_ps(f, upper));
}

AVX512 static int64_t pairs_avx512(const uint32_t ks[3], unsigned char *blk, int64_t j0,
                                   int64_t j1, int64_t second, const float *unit) {
  __m512i k[3], kc[5];
  for (int i = 0; i < 3; i++) k[i] = _mm512_set1_epi32((int)ks[i]);
  for (int i = 0; i < 5; i++) kc[i] = _mm512_set1_epi32((int)(ks[(i + 2) % 3] + (uint32_t)i + 1));
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  int64_t j = j0;
  for (; j + 16 * NV <= j1; j += 16 * NV) {
    __m512i x0[NV], x1[NV];
    for (int v = 0; v < NV; v++) {
      __m512i c = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)(j + 16 * v)), lane);
      x0[v] = _mm512_add_epi32(c, k[0]);
      x1[v] = _mm512_add_epi32(_mm512_add_epi32(c, _mm512_set1_epi32((int)(uint32_t)second)),
                               k[1]);
    }
    ROUNDS(_mm512_add_epi32, _mm512_xor_si512, ROL16)
    if (unit)
      for (int v = 0; v < NV; v++) {
        x0[v] = unit16(x0[v], _mm512_set1_ps(*unit));
        x1[v] = unit16(x1[v], _mm512_set1_ps(*unit));
      }
    for (int v = 0; v < NV; v++) {
      _mm512_storeu_si512((void *)(blk + 4 * (j + 16 * v)), x0[v]);
      _mm512_storeu_si512((void *)(blk + 4 * (second + j + 16 * v)), x1[v]);
    }
  }
  return j;
}
#endif

/* Units [u0, u1) of key kidx: unit j < half is the pair j, unit half (odd
 * runs only) the single word. */
static void key_units(const bits_job *jb, int64_t kidx, int64_t u0, int64_t u1) {
  const uint32_t *kp = jb->keys + 2 * kidx;
  const uint32_t ks[3] = {kp[0], kp[1], kp[0] ^ kp[1] ^ KS_PARITY};
  unsigned char *blk = jb->out + (size_t)kidx * jb->bytes_per_key;
  int64_t half = jb->half, second = half + jb->odd;
  size_t B = jb->bytes_per_key;
  /* the last pair may write a partial word; full pairs take the fast path */
  int64_t full = B % 4 ? half - 1 : half;
  int64_t j = u0, jend = u1 < full ? u1 : full;
#ifdef CM_RANDOM_X86
  const float *unit = jb->unit ? &jb->upper : NULL;
  if (jb->simd512 && j < jend) j = pairs_avx512(ks, blk, j, jend, second, unit);
  if (jb->simd && j < jend) j = pairs_avx2(ks, blk, j, jend, second, unit);
#endif
  for (; j < u1 && j < half; j++) {
    uint32_t a, b;
    threefry(ks, (uint32_t)j, (uint32_t)(second + j), &a, &b);
    put_word(blk + 4 * j, unit_word(jb, a), 4);
    put_word(blk + 4 * (second + j), unit_word(jb, b), B - 4 * (size_t)(second + j));
  }
  if (jb->odd && u1 > half) {
    uint32_t a, b;
    threefry(ks, (uint32_t)half, 0, &a, &b);
    put_word(blk + 4 * half, unit_word(jb, a), B - 4 * (size_t)half);
  }
}

static void bits_range(void *ctx, int64_t b, int64_t e) {
  const bits_job *jb = ctx;
  while (b < e) {
    int64_t kidx = b / jb->units, u0 = b % jb->units;
    int64_t u1 = u0 + (e - b) < jb->units ? u0 + (e - b) : jb->units;
    key_units(jb, kidx, u0, u1);
    b += u1 - u0;
  }
}

/* Element i of a (any layout) as uint32. */
static uint32_t key_elem(const cm_array *k, int64_t i) {
  int64_t loc = 0;
  for (int d = k->ndim - 1; d >= 0; d--) {
    loc += (i % k->shape[d]) * k->strides[d];
    i /= k->shape[d];
  }
  return ((const uint32_t *)cm_data(k))[loc];
}

int cm_cpu_random_bits(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_random_bits_params *q = cm_random_bits_params_of(out);
  const cm_array *keys = in[0];
  if (cm_alloc_output(out)) return -1;
  int64_t num_keys = keys->size / 2;
  if (out->size == 0 || num_keys == 0) return 0;
  uint32_t stack_keys[16], *kv = stack_keys;
  if (num_keys > 8 && !(kv = malloc(sizeof *kv * 2 * (size_t)num_keys)))
    return cm_error(CM_ERR_MEMORY, "[RandomBits] Out of memory.");
  for (int64_t i = 0; i < 2 * num_keys; i++) kv[i] = key_elem(keys, i);
  bits_job jb = {.keys = kv, .out = cm_data(out)};
  jb.bytes_per_key = (size_t)(out->size / num_keys) * cm_itemsize(out);
  jb.words = (int64_t)((jb.bytes_per_key + 3) / 4);
  jb.half = jb.words / 2;
  jb.odd = jb.words % 2;
  jb.units = jb.half + jb.odd;
  jb.simd = cm_cpu_simd_enabled(CM_SIMD_RANDOM);
  jb.simd512 = jb.simd && cm_cpu_simd_enabled(CM_SIMD_RANDOM512);
  jb.unit = q->unit != 0;
  jb.upper = q->upper;
  /* a unit is one 20-round hash writing two words: ~100 integer ops */
  cm_parallel_for(num_keys * jb.units, cm_grain(100), bits_range, &jb);
  if (kv != stack_keys) free(kv);
  return 0;
}
