/* Row conversions between the half types and float32 with F16C and AVX2
 * (see convert_half.h).
 *
 * Half weights meet float32 everywhere in a language model (the widened
 * operands of a half GEMM, scales read by the quantized products, the
 * activations of a float16 model), and the generic row loop of copy.c
 * calls the scalar conversion once per element: it ran at about 1 GB/s,
 * and took a third of a 4-bit decode step.  These loops convert eight
 * elements at a time (F16C for float16, AVX2 integer rounding for
 * bfloat16); strided rows keep one element at a time.
 *
 * Results: float16 -> float32 quiets signalling NaNs, as F16C does and as
 * MLX's casts do on x86-64 (the generic loop kept them signalling);
 * float32 -> float16 rounds to nearest even (immediate 0), bit-identical
 * to cm_f32_to_f16; bfloat16 <-> float32 are bit-identical to
 * cm_bf16_to_f32 / cm_f32_to_bf16 (NaNs quieted by setting bit 6). */
#include "backend/cpu/convert_half.h"

#include <stdatomic.h>
#include <string.h>

#include "backend/cpu/cpu_features.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define CH_TARGET __attribute__((target("avx2,f16c")))

CH_TARGET static void f16_to_f32(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) {
  float *d = dst;
  const uint16_t *s = src;
  int64_t i = 0;
  if (ds == 1 && ss == 1)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
  for (; i < n; i++) d[i * ds] = _cvtsh_ss(s[i * ss]);
}

CH_TARGET static void f32_to_f16(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) {
  uint16_t *d = dst;
  const float *s = src;
  int64_t i = 0;
  if (ds == 1 && ss == 1)
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), 0));
  for (; i < n; i++) d[i * ds] = _cvtss_sh(s[i * ss], 0);
}

CH_TARGET static void bf16_to_f32(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) {
  float *d = dst;
  const uint16_t *s = src;
  int64_t i = 0;
  if (ds == 1 && ss == 1)
    for (; i + 8 <= n; i += 8) {
      __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
      _mm256_storeu_si256((__m256i *)(d + i), _mm256_slli_epi32(w, 16));
    }
  for (; i < n; i++) d[i * ds] = cm_bf16_to_f32(s[i * ss]);
}

/* Eight float32 -> bfloat16, rounded to nearest even; NaNs keep their
 * high bits with the quiet bit set. */
CH_TARGET static inline __m128i bf16_round8(__m256 v) {
  __m256i u = _mm256_castps_si256(v);
  __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
  __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
  __m256i q = _mm256_or_si256(u, _mm256_set1_epi32(0x400000)); /* bit 6 of the result */
  r = _mm256_srli_epi32(_mm256_blendv_epi8(r, q, nan), 16);
  /* pack the low 16 bits of 8 lanes: packus is per 128-bit half */
  __m256i p = _mm256_packus_epi32(r, r);
  p = _mm256_permute4x64_epi64(p, 0x08);
  return _mm256_castsi256_si128(p);
}

CH_TARGET static void f32_to_bf16(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) {
  uint16_t *d = dst;
  const float *s = src;
  int64_t i = 0;
  if (ds == 1 && ss == 1)
    for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(d + i), bf16_round8(_mm256_loadu_ps(s + i)));
  for (; i < n; i++) d[i * ds] = cm_f32_to_bf16(s[i * ss]);
}

cm_convert_row_fn cm_convert_half_row(cm_dtype st, cm_dtype dt) {
  /* asked once per row by the fast ops' loads: the answer is settled once */
  static atomic_int usable = -1;
  int u = atomic_load_explicit(&usable, memory_order_relaxed);
  if (u < 0) {
    const cm_cpu_flags *f = cm_cpu_features();
    u = f->avx2 && f->f16c && cm_cpu_simd_enabled(CM_SIMD_UNARY);
    atomic_store_explicit(&usable, u, memory_order_relaxed);
  }
  if (!u) return NULL;
  if (st == CM_FLOAT16 && dt == CM_FLOAT32) return f16_to_f32;
  if (st == CM_FLOAT32 && dt == CM_FLOAT16) return f32_to_f16;
  if (st == CM_BFLOAT16 && dt == CM_FLOAT32) return bf16_to_f32;
  if (st == CM_FLOAT32 && dt == CM_BFLOAT16) return f32_to_bf16;
  return NULL;
}

#else
cm_convert_row_fn cm_convert_half_row(cm_dtype st, cm_dtype dt) {
  (void)st, (void)dt;
  return NULL;
}
#endif
