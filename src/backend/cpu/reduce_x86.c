/* AVX2 versions of the hottest reduction kernels, chosen at run time when
 * the CPU has AVX2 (and F16C): contiguous float32 and float64 sum, and
 * float32, float16 and bfloat16 sum, max and min.  The portable kernels
 * in reduce.c are built for the baseline target (SSE2 on x86-64), where a
 * max costs six vector operations and a half element is widened one at a
 * time; here a max is a vmaxps plus a NaN check on twice the width, and
 * eight halves widen in one instruction (vcvtph2ps, or a shift for
 * bfloat16) into the same float accumulators.
 *
 * Same contract as the portable kernels: the grouping of elements depends
 * only on n, so results do not depend on the thread count (they may
 * differ in the last bit from a machine without AVX2). */
#include "backend/cpu/reduce.h"

#include <math.h>

#include "backend/cpu/cpu_features.h"
#include "core/dtype.h"
#include "primitives/reduce.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,f16c")))

/* Eight elements (LOAD8_x) or one (LOAD1_x) of each input type as float. */
#define LOAD8_f32(p) _mm256_loadu_ps(p)
#define LOAD1_f32(p) (*(p))
#define LOAD8_f16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define LOAD1_f16(p) cm_f16_to_f32(*(p))
#define LOAD8_bf16(p)                                                                \
  _mm256_castsi256_ps(                                                               \
      _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define LOAD1_bf16(p) cm_bf16_to_f32(*(p))
typedef float T_f32;
typedef uint16_t T_f16;
typedef uint16_t T_bf16;

/* A run read from memory streams faster with the line 1 KB ahead asked
 * for in software, one request per iteration (measured on a 2-core Xeon
 * VM: 27 -> 32-35 GB/s for a read over 1 GB with two threads; more
 * requests or a longer distance gained nothing). */
#define PREFETCH_AHEAD(p) _mm_prefetch((const char *)(p) + 1024, _MM_HINT_T0)

/* ---- sums into float accumulators ---- */

#define DEF_SUM(SFX)                                                                 \
  AVX2 static void sum_##SFX(void *acc, const void *src, int64_t n) {                \
    const T_##SFX *s = src;                                                          \
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0; /* MLX's 0 */        \
    int64_t i = 0;                                                                   \
    for (; i + 32 <= n; i += 32) {                                                   \
      PREFETCH_AHEAD(s + i);                                                         \
      a0 = _mm256_add_ps(a0, LOAD8_##SFX(s + i));                                    \
      a1 = _mm256_add_ps(a1, LOAD8_##SFX(s + i + 8));                                \
      a2 = _mm256_add_ps(a2, LOAD8_##SFX(s + i + 16));                               \
      a3 = _mm256_add_ps(a3, LOAD8_##SFX(s + i + 24));                               \
    }                                                                                \
    for (; i + 8 <= n; i += 8) a0 = _mm256_add_ps(a0, LOAD8_##SFX(s + i));           \
    a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));                \
    float l[8];                                                                      \
    _mm256_storeu_ps(l, a0);                                                         \
    float r = l[0];                                                                  \
    for (int k = 1; k < 8; k++) r += l[k];                                           \
    for (; i < n; i++) r += LOAD1_##SFX(s + i);                                      \
    *(float *)acc = r;                                                               \
  }                                                                                  \
  AVX2 static void col_sum_##SFX(void *acc, const void *src, int64_t n) {            \
    float *a = acc;                                                                  \
    const T_##SFX *s = src;                                                          \
    int64_t j = 0;                                                                   \
    for (; j + 8 <= n; j += 8)                                                       \
      _mm256_storeu_ps(a + j, _mm256_add_ps(_mm256_loadu_ps(a + j), LOAD8_##SFX(s + j))); \
    for (; j < n; j++) a[j] += LOAD1_##SFX(s + j);                                   \
  }                                                                                  \
  /* Four rows per pass over the accumulators: a quarter of their loads    \
   * and stores, and the rows are summed pairwise before they join. */              \
  AVX2 static void col4_sum_##SFX(void *acc, const void *src, int64_t stride, int64_t n) { \
    float *a = acc;                                                                  \
    const T_##SFX *s0 = src, *s1 = (const T_##SFX *)((const char *)src + stride),    \
                  *s2 = (const T_##SFX *)((const char *)src + 2 * stride),           \
                  *s3 = (const T_##SFX *)((const char *)src + 3 * stride);           \
    int64_t j = 0;                                                                   \
    for (; j + 8 <= n; j += 8) {                                                     \
      __m256 x = _mm256_add_ps(LOAD8_##SFX(s0 + j), LOAD8_##SFX(s1 + j));            \
      __m256 y = _mm256_add_ps(LOAD8_##SFX(s2 + j), LOAD8_##SFX(s3 + j));            \
      _mm256_storeu_ps(a + j, _mm256_add_ps(_mm256_loadu_ps(a + j), _mm256_add_ps(x, y))); \
    }                                                                                \
    for (; j < n; j++)                                                               \
      a[j] += (LOAD1_##SFX(s0 + j) + LOAD1_##SFX(s1 + j)) +                          \
              (LOAD1_##SFX(s2 + j) + LOAD1_##SFX(s3 + j));                           \
  }
DEF_SUM(f32)
DEF_SUM(f16)
DEF_SUM(bf16)

/* ---- max / min into float accumulators ----
 * vmaxps(x, m) returns m when x is NaN, so NaNs are tracked on the side
 * and win at the end. */
#define DEF_EXT(NAME, OP, CMP, SFX)                                                  \
  AVX2 static void NAME##_##SFX(void *acc, const void *src, int64_t n) {             \
    const T_##SFX *s = src;                                                          \
    __m256 m0 = _mm256_set1_ps(OP##_IDENT), m1 = m0, m2 = m0, m3 = m0;               \
    __m256 bad = _mm256_setzero_ps();                                                \
    int64_t i = 0;                                                                   \
    for (; i + 32 <= n; i += 32) {                                                   \
      PREFETCH_AHEAD(s + i);                                                         \
      __m256 x0 = LOAD8_##SFX(s + i), x1 = LOAD8_##SFX(s + i + 8);                   \
      __m256 x2 = LOAD8_##SFX(s + i + 16), x3 = LOAD8_##SFX(s + i + 24);             \
      m0 = OP##_PS(x0, m0);                                                          \
      m1 = OP##_PS(x1, m1);                                                          \
      m2 = OP##_PS(x2, m2);                                                          \
      m3 = OP##_PS(x3, m3);                                                          \
      __m256 u = _mm256_or_ps(_mm256_cmp_ps(x0, x1, _CMP_UNORD_Q),                   \
                              _mm256_cmp_ps(x2, x3, _CMP_UNORD_Q));                  \
      bad = _mm256_or_ps(bad, u);                                                    \
    }                                                                                \
    for (; i + 8 <= n; i += 8) {                                                     \
      __m256 x = LOAD8_##SFX(s + i);                                                 \
      m0 = OP##_PS(x, m0);                                                           \
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));                    \
    }                                                                                \
    m0 = OP##_PS(OP##_PS(m0, m1), OP##_PS(m2, m3));                                  \
    float l[8], r;                                                                   \
    _mm256_storeu_ps(l, m0);                                                         \
    r = l[0];                                                                        \
    for (int k = 1; k < 8; k++) r = CMP(l[k], r) ? l[k] : r;                         \
    if (_mm256_movemask_ps(bad)) r = NAN;                                            \
    for (; i < n; i++) {                                                             \
      float x = LOAD1_##SFX(s + i);                                                  \
      r = (CMP(x, r) || x != x) ? x : r;                                             \
    }                                                                                \
    *(float *)acc = r;                                                               \
  }                                                                                  \
  AVX2 static void col_##NAME##_##SFX(void *acc, const void *src, int64_t n) {       \
    float *a = acc;                                                                  \
    const T_##SFX *s = src;                                                          \
    int64_t j = 0;                                                                   \
    for (; j + 8 <= n; j += 8) {                                                     \
      __m256 x = LOAD8_##SFX(s + j), m = _mm256_loadu_ps(a + j);                     \
      /* a NaN accumulator stays (second operand); a NaN x is blended in */          \
      m = _mm256_blendv_ps(OP##_PS(x, m), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));     \
      _mm256_storeu_ps(a + j, m);                                                    \
    }                                                                                \
    for (; j < n; j++) {                                                             \
      float x = LOAD1_##SFX(s + j);                                                  \
      a[j] = (CMP(x, a[j]) || x != x) ? x : a[j];                                    \
    }                                                                                \
  }                                                                                  \
  /* four rows per pass: their extreme (NaN noted on the side), then one  \
   * update of the accumulators */                                                  \
  AVX2 static void col4_##NAME##_##SFX(void *acc, const void *src, int64_t stride,   \
                                       int64_t n) {                                  \
    float *a = acc;                                                                  \
    const T_##SFX *s0 = src, *s1 = (const T_##SFX *)((const char *)src + stride);    \
    const T_##SFX *s2 = (const T_##SFX *)((const char *)src + 2 * stride);           \
    const T_##SFX *s3 = (const T_##SFX *)((const char *)src + 3 * stride);           \
    const __m256 qnan = _mm256_set1_ps(NAN);                                         \
    int64_t j = 0;                                                                   \
    for (; j + 8 <= n; j += 8) {                                                     \
      __m256 x0 = LOAD8_##SFX(s0 + j), x1 = LOAD8_##SFX(s1 + j);                     \
      __m256 x2 = LOAD8_##SFX(s2 + j), x3 = LOAD8_##SFX(s3 + j);                     \
      __m256 y = OP##_PS(OP##_PS(x0, x1), OP##_PS(x2, x3));                          \
      __m256 u = _mm256_or_ps(_mm256_cmp_ps(x0, x1, _CMP_UNORD_Q),                   \
                              _mm256_cmp_ps(x2, x3, _CMP_UNORD_Q));                  \
      __m256 m = OP##_PS(y, _mm256_loadu_ps(a + j)); /* a NaN acc stays */           \
      _mm256_storeu_ps(a + j, _mm256_blendv_ps(m, qnan, u));                         \
    }                                                                                \
    for (int r = 0; r < 4; r++)                                                      \
      col_##NAME##_##SFX(a + j, (const char *)src + r * stride + j * sizeof(T_##SFX),\
                         n - j);                                                     \
  }
#define MAX_IDENT (-INFINITY)
#define MIN_IDENT INFINITY
#define MAX_PS _mm256_max_ps
#define MIN_PS _mm256_min_ps
#define GT(x, y) ((x) > (y))
#define LT(x, y) ((x) < (y))
DEF_EXT(max, MAX, GT, f32)
DEF_EXT(min, MIN, LT, f32)
DEF_EXT(max, MAX, GT, f16)
DEF_EXT(min, MIN, LT, f16)
DEF_EXT(max, MAX, GT, bf16)
DEF_EXT(min, MIN, LT, bf16)

/* ---- float64 ---- */

AVX2 static void sum_f64(void *acc, const void *src, int64_t n) {
  const double *s = src;
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0; /* MLX's 0 */
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_add_pd(a0, _mm256_loadu_pd(s + i));
    a1 = _mm256_add_pd(a1, _mm256_loadu_pd(s + i + 4));
    a2 = _mm256_add_pd(a2, _mm256_loadu_pd(s + i + 8));
    a3 = _mm256_add_pd(a3, _mm256_loadu_pd(s + i + 12));
  }
  for (; i + 4 <= n; i += 4) a0 = _mm256_add_pd(a0, _mm256_loadu_pd(s + i));
  a0 = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
  double l[4];
  _mm256_storeu_pd(l, a0);
  double r = l[0];
  for (int k = 1; k < 4; k++) r += l[k];
  for (; i < n; i++) r += s[i];
  *(double *)acc = r;
}

AVX2 static void col_sum_f64(void *acc, const void *src, int64_t n) {
  double *a = acc;
  const double *s = src;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    _mm256_storeu_pd(a + j, _mm256_add_pd(_mm256_loadu_pd(a + j), _mm256_loadu_pd(s + j)));
  for (; j < n; j++) a[j] += s[j];
}

/* The sum/max/min kernel set of one float input type. */
#define PICK(SFX)                                                                    \
  switch (op) {                                                                      \
  case CM_REDUCE_SUM: *base = sum_##SFX, *col = col_sum_##SFX, *col4 = col4_sum_##SFX; return true; \
  case CM_REDUCE_MAX: *base = max_##SFX, *col = col_max_##SFX, *col4 = col4_max_##SFX; return true; \
  case CM_REDUCE_MIN: *base = min_##SFX, *col = col_min_##SFX, *col4 = col4_min_##SFX; return true; \
  default: return false;                                                             \
  }

bool cm_reduce_simd(int op, cm_dtype dt, cm_red_fn *base, cm_red_fn *col, cm_red_col4_fn *col4) {
  const cm_cpu_flags *f = cm_cpu_features();
  if (!f->avx2) return false;
  if (dt == CM_FLOAT32) PICK(f32)
  if (dt == CM_FLOAT16 && f->f16c) PICK(f16)
  if (dt == CM_BFLOAT16) PICK(bf16)
  if (dt == CM_FLOAT64 && op == CM_REDUCE_SUM) {
    *base = sum_f64;
    *col = col_sum_f64;
    return true;
  }
  return false;
}

#else

bool cm_reduce_simd(int op, cm_dtype dt, cm_red_fn *base, cm_red_fn *col, cm_red_col4_fn *col4) {
  (void)op, (void)dt, (void)base, (void)col, (void)col4;
  return false;
}

#endif
