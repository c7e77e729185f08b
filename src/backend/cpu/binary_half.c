/* float16 and bfloat16 rows: widen chunks of the inputs to float32 on the
 * stack, run the float32 row (which gcc vectorises), and narrow the result.
 * The value is the same as converting element by element (an op computed
 * in float32 and rounded once); the speed is that of the float32 loop plus
 * two conversion passes, done with the F16C instructions (float16) or AVX2
 * (bfloat16) when the CPU has them -- chosen at run time, so the library
 * runs on any x86-64 -- and with branch-free SSE2/portable code otherwise. */
#include "backend/cpu/binary_impl.h"
#include "backend/cpu/cpu_features.h"

#define CHUNK 256

/* bfloat16 narrowing as cm_f32_to_bf16, with masks instead of a branch so
 * the loop vectorises. */
static inline uint16_t f2bf(float f) {
  uint32_t u = cm_bits_f32(f);
  uint32_t nan = cm_mask32((u & 0x7fffffffu) > 0x7f800000u);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x40u;
  return (uint16_t)((q & nan) | (r & ~nan));
}

/* ---- portable conversion loops (blocks of 16 vectorise at -O2) ---------- */

#define CONVERT_LOOP(N, ...)                       \
  {                                                \
    int64_t i0 = 0;                                \
    for (; i0 + 16 <= (N); i0 += 16)               \
      for (int k = 0; k < 16; k++) {               \
        int64_t i = i0 + k;                        \
        __VA_ARGS__                                \
      }                                            \
    for (int64_t i = i0; i < (N); i++) __VA_ARGS__ \
  }

static void widen_f16(float *restrict d, const uint16_t *restrict s, int64_t n) {
  CONVERT_LOOP(n, { d[i] = cm_h2f(s[i]); })
}
static void narrow_f16(uint16_t *restrict d, const float *restrict s, int64_t n) {
  CONVERT_LOOP(n, { d[i] = cm_f2h(s[i]); })
}
static void widen_bf16(float *restrict d, const uint16_t *restrict s, int64_t n) {
  CONVERT_LOOP(n, { d[i] = cm_bf16_to_f32(s[i]); })
}
static void narrow_bf16(uint16_t *restrict d, const float *restrict s, int64_t n) {
  CONVERT_LOOP(n, { d[i] = f2bf(s[i]); })
}

/* ---- F16C ------------------------------------------------------------------ */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_F16C_KERNELS 1
#define F16C __attribute__((target("avx,f16c")))

/* vcvtph2ps quiets signalling NaNs and is exact otherwise, as cm_h2f. */
F16C static void widen_f16c(float *restrict d, const uint16_t *restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
  for (; i < n; i++) d[i] = cm_h2f(s[i]);
}
/* vcvtps2ph with round-to-nearest-even: bit-identical to cm_f2h. */
F16C static void narrow_f16c(uint16_t *restrict d, const float *restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) d[i] = cm_f2h(s[i]);
}

/* bfloat16 needs no special instruction, but SSE2 has no 32 -> 16 bit
 * pack; the same loops built for AVX2 run about twice as fast. */
#define AVX2 __attribute__((target("avx2")))
AVX2 static void widen_bf16_avx2(float *restrict d, const uint16_t *restrict s, int64_t n) {
  CONVERT_LOOP(n, { d[i] = cm_bf16_to_f32(s[i]); })
}
AVX2 static void narrow_bf16_avx2(uint16_t *restrict d, const float *restrict s, int64_t n) {
  CONVERT_LOOP(n, { d[i] = f2bf(s[i]); })
}

static bool have_avx2(void) { return cm_cpu_features()->avx2; }
static bool have_f16c(void) { return cm_cpu_features()->f16c; }
#endif

/* ---- strided widening / narrowing -------------------------------------------- */

static void widen(cm_dtype t, float *d, const uint16_t *s, int64_t ss, int64_t n) {
  if (ss == 1) {
#ifdef HAVE_F16C_KERNELS
    if (t == CM_BFLOAT16 && have_avx2()) widen_bf16_avx2(d, s, n);
    else if (t == CM_BFLOAT16) widen_bf16(d, s, n);
    else if (have_f16c()) widen_f16c(d, s, n);
#else
    if (t == CM_BFLOAT16) widen_bf16(d, s, n);
#endif
    else widen_f16(d, s, n);
    return;
  }
  if (t == CM_BFLOAT16)
    for (int64_t i = 0; i < n; i++) d[i] = cm_bf16_to_f32(s[i * ss]);
  else
    for (int64_t i = 0; i < n; i++) d[i] = cm_h2f(s[i * ss]);
}

static void narrow(cm_dtype t, uint16_t *d, int64_t ds, const float *s, int64_t n) {
  if (ds == 1) {
#ifdef HAVE_F16C_KERNELS
    if (t == CM_BFLOAT16 && have_avx2()) narrow_bf16_avx2(d, s, n);
    else if (t == CM_BFLOAT16) narrow_bf16(d, s, n);
    else if (have_f16c()) narrow_f16c(d, s, n);
#else
    if (t == CM_BFLOAT16) narrow_bf16(d, s, n);
#endif
    else narrow_f16(d, s, n);
    return;
  }
  if (t == CM_BFLOAT16)
    for (int64_t i = 0; i < n; i++) d[i * ds] = f2bf(s[i]);
  else
    for (int64_t i = 0; i < n; i++) d[i * ds] = cm_f2h(s[i]);
}

/* One row through the float32 row function, in chunks. */
static void half_one_row(cm_dtype t, cm_binary_row_fn f32, bool half_out, char *o, const char *a,
                         const char *b, int64_t n, int64_t so, int64_t sa, int64_t sb) {
  float fa[CHUNK], fb[CHUNK], fo[CHUNK];
  const uint16_t *ha = (const uint16_t *)a, *hb = (const uint16_t *)b;
  /* a broadcast operand (stride 0) is widened once and stays a scalar */
  if (sa == 0) widen(t, fa, ha, 1, 1);
  if (sb == 0) widen(t, fb, hb, 1, 1);
  cm_bin_run run = {.rows = 1, .s = {1, sa != 0, sb != 0}};
  for (int64_t i = 0; i < n; i += CHUNK) {
    run.n = n - i < CHUNK ? n - i : CHUNK;
    if (sa) widen(t, fa, ha + i * sa, sa, run.n);
    if (sb) widen(t, fb, hb + i * sb, sb, run.n);
    if (half_out) {
      f32(fo, fa, fb, &run);
      narrow(t, (uint16_t *)o + i * so, so, fo, run.n);
    } else { /* comparisons write bool straight to the output */
      run.s[0] = so;
      f32((bool *)o + i * so, fa, fb, &run);
    }
  }
}

void cm_half_row(cm_dtype t, cm_binary_row_fn f32, bool half_out, void *o, const void *a,
                 const void *b, const cm_bin_run *run) {
  int64_t osz = half_out ? 2 : 1;
  for (int64_t r = 0; r < run->rows; r++)
    half_one_row(t, f32, half_out, (char *)o + r * run->r[0] * osz,
                 (const char *)a + r * run->r[1] * 2, (const char *)b + r * run->r[2] * 2, run->n,
                 run->s[0], run->s[1], run->s[2]);
}
