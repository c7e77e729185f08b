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
 * the thread pool, and on AVX2 eight counters are hashed per vector (the
 * portable loop and the vector loop produce identical words; set
 * CMLX_RANDOM_SIMD=0 to force the portable one). */
#include "backend/cpu/random.h"

#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "core/threadpool.h"

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
  bool simd;
} bits_job;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CM_RANDOM_AVX2 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

#define VROTL(x, r) _mm256_or_si256(_mm256_slli_epi32((x), (r)), _mm256_srli_epi32((x), 32 - (r)))
#define VMIX(r)                    \
  do {                             \
    x0 = _mm256_add_epi32(x0, x1); \
    x1 = VROTL(x1, r);             \
    x1 = _mm256_xor_si256(x1, x0); \
  } while (0)
#define VINJECT(i)                                                         \
  do {                                                                     \
    x0 = _mm256_add_epi32(x0, k[((i) + 1) % 3]);                           \
    x1 = _mm256_add_epi32(x1, _mm256_add_epi32(k[((i) + 2) % 3], _mm256_set1_epi32((i) + 1)));  \
  } while (0)

/* Four mixes with the even or the odd rotation set, then the key
 * injection i. */
#define VROUNDS_A(i) \
  VMIX(13);          \
  VMIX(15);          \
  VMIX(26);          \
  VMIX(6);           \
  VINJECT(i)
#define VROUNDS_B(i) \
  VMIX(17);          \
  VMIX(29);          \
  VMIX(16);          \
  VMIX(24);          \
  VINJECT(i)

/* Pairs j in [j0, j1) of one key, eight at a time; returns where it
 * stopped (the caller finishes the tail with the portable loop). */
AVX2 static int64_t pairs_avx2(const uint32_t ks[3], unsigned char *blk, int64_t j0, int64_t j1,
                               int64_t second) {
  const __m256i k[3] = {_mm256_set1_epi32((int)ks[0]), _mm256_set1_epi32((int)ks[1]),
                        _mm256_set1_epi32((int)ks[2])};
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int64_t j = j0;
  for (; j + 8 <= j1; j += 8) {
    __m256i x0 = _mm256_add_epi32(_mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)j), lane),
                                  k[0]);
    __m256i x1 = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)(second + j)), lane), k[1]);
    VROUNDS_A(0);
    VROUNDS_B(1);
    VROUNDS_A(2);
    VROUNDS_B(3);
    VROUNDS_A(4);
    _mm256_storeu_si256((__m256i *)(blk + 4 * j), x0);
    _mm256_storeu_si256((__m256i *)(blk + 4 * (second + j)), x1);
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
#ifdef CM_RANDOM_AVX2
  if (jb->simd && j < jend) j = pairs_avx2(ks, blk, j, jend, second);
#endif
  for (; j < u1 && j < half; j++) {
    uint32_t a, b;
    threefry(ks, (uint32_t)j, (uint32_t)(second + j), &a, &b);
    put_word(blk + 4 * j, a, 4);
    put_word(blk + 4 * (second + j), b, B - 4 * (size_t)(second + j));
  }
  if (jb->odd && u1 > half) {
    uint32_t a, b;
    threefry(ks, (uint32_t)half, 0, &a, &b);
    put_word(blk + 4 * half, a, B - 4 * (size_t)half);
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
  /* a unit is one 20-round hash writing two words: ~100 integer ops */
  cm_parallel_for(num_keys * jb.units, cm_grain(100), bits_range, &jb);
  if (kv != stack_keys) free(kv);
  return 0;
}
