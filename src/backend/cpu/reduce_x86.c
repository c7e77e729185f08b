/* AVX2 versions of the hottest reduction kernels (contiguous float32 and
 * float64 sum, max, min), chosen at run time when the CPU has AVX2.  The
 * portable kernels in reduce.c are built for the baseline target (SSE2
 * on x86-64), where a max costs six vector operations; here it is a
 * vmaxps plus a NaN check on twice the width.
 *
 * Same contract as the portable kernels: the grouping of elements depends
 * only on n, so results do not depend on the thread count (they may
 * differ in the last bit from a machine without AVX2). */
#include "backend/cpu/reduce.h"

#include <math.h>

#include "backend/cpu/cpu_features.h"
#include "primitives/reduce.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* ---- float32 ---- */

AVX2 static void sum_f32(void *acc, const void *src, int64_t n) {
  const float *s = src;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0; /* MLX's 0 */
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(s + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(s + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(s + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(s + i + 24));
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(s + i));
  a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  float l[8];
  _mm256_storeu_ps(l, a0);
  float r = l[0];
  for (int k = 1; k < 8; k++) r += l[k];
  for (; i < n; i++) r += s[i];
  *(float *)acc = r;
}

AVX2 static void col_sum_f32(void *acc, const void *src, int64_t n) {
  float *a = acc;
  const float *s = src;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps(a + j, _mm256_add_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(s + j)));
  for (; j < n; j++) a[j] += s[j];
}

/* Four rows per pass over the accumulators: a quarter of their loads and
 * stores, and the rows are summed pairwise before they join. */
AVX2 static void col4_sum_f32(void *acc, const void *src, int64_t stride, int64_t n) {
  float *a = acc;
  const float *s0 = src, *s1 = (const float *)((const char *)src + stride),
              *s2 = (const float *)((const char *)src + 2 * stride),
              *s3 = (const float *)((const char *)src + 3 * stride);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 x = _mm256_add_ps(_mm256_loadu_ps(s0 + j), _mm256_loadu_ps(s1 + j));
    __m256 y = _mm256_add_ps(_mm256_loadu_ps(s2 + j), _mm256_loadu_ps(s3 + j));
    _mm256_storeu_ps(a + j, _mm256_add_ps(_mm256_loadu_ps(a + j), _mm256_add_ps(x, y)));
  }
  for (; j < n; j++) a[j] += (s0[j] + s1[j]) + (s2[j] + s3[j]);
}

/* vmaxps(x, m) returns m when x is NaN, so NaNs are tracked on the side
 * and win at the end. */
#define DEF_EXT_F32(NAME, OP, CMP)                                                   \
  AVX2 static void NAME##_f32(void *acc, const void *src, int64_t n) {               \
    const float *s = src;                                                            \
    __m256 m0 = _mm256_set1_ps(OP##_IDENT), m1 = m0, m2 = m0, m3 = m0;               \
    __m256 bad = _mm256_setzero_ps();                                                \
    int64_t i = 0;                                                                   \
    for (; i + 32 <= n; i += 32) {                                                   \
      __m256 x0 = _mm256_loadu_ps(s + i), x1 = _mm256_loadu_ps(s + i + 8);           \
      __m256 x2 = _mm256_loadu_ps(s + i + 16), x3 = _mm256_loadu_ps(s + i + 24);     \
      m0 = OP##_PS(x0, m0);                                                          \
      m1 = OP##_PS(x1, m1);                                                          \
      m2 = OP##_PS(x2, m2);                                                          \
      m3 = OP##_PS(x3, m3);                                                          \
      __m256 u = _mm256_or_ps(_mm256_cmp_ps(x0, x1, _CMP_UNORD_Q),                   \
                              _mm256_cmp_ps(x2, x3, _CMP_UNORD_Q));                  \
      bad = _mm256_or_ps(bad, u);                                                    \
    }                                                                                \
    for (; i + 8 <= n; i += 8) {                                                     \
      __m256 x = _mm256_loadu_ps(s + i);                                             \
      m0 = OP##_PS(x, m0);                                                           \
      bad = _mm256_or_ps(bad, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));                    \
    }                                                                                \
    m0 = OP##_PS(OP##_PS(m0, m1), OP##_PS(m2, m3));                                  \
    float l[8], r;                                                                   \
    _mm256_storeu_ps(l, m0);                                                         \
    r = l[0];                                                                        \
    for (int k = 1; k < 8; k++) r = CMP(l[k], r) ? l[k] : r;                         \
    if (_mm256_movemask_ps(bad)) r = NAN;                                            \
    for (; i < n; i++) r = (CMP(s[i], r) || s[i] != s[i]) ? s[i] : r;                \
    *(float *)acc = r;                                                               \
  }                                                                                  \
  AVX2 static void col_##NAME##_f32(void *acc, const void *src, int64_t n) {         \
    float *a = acc;                                                                  \
    const float *s = src;                                                            \
    int64_t j = 0;                                                                   \
    for (; j + 8 <= n; j += 8) {                                                     \
      __m256 x = _mm256_loadu_ps(s + j), m = _mm256_loadu_ps(a + j);                 \
      /* a NaN accumulator stays (second operand); a NaN x is blended in */          \
      m = _mm256_blendv_ps(OP##_PS(x, m), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));     \
      _mm256_storeu_ps(a + j, m);                                                    \
    }                                                                                \
    for (; j < n; j++) a[j] = (CMP(s[j], a[j]) || s[j] != s[j]) ? s[j] : a[j];       \
  }                                                                                  \
  /* four rows per pass: their extreme (NaN noted on the side), then one  \
   * update of the accumulators */                                                  \
  AVX2 static void col4_##NAME##_f32(void *acc, const void *src, int64_t stride,     \
                                     int64_t n) {                                    \
    float *a = acc;                                                                  \
    const float *s0 = src, *s1 = (const float *)((const char *)src + stride);        \
    const float *s2 = (const float *)((const char *)src + 2 * stride);               \
    const float *s3 = (const float *)((const char *)src + 3 * stride);               \
    const __m256 qnan = _mm256_set1_ps(NAN);                                         \
    int64_t j = 0;                                                                   \
    for (; j + 8 <= n; j += 8) {                                                     \
      __m256 x0 = _mm256_loadu_ps(s0 + j), x1 = _mm256_loadu_ps(s1 + j);             \
      __m256 x2 = _mm256_loadu_ps(s2 + j), x3 = _mm256_loadu_ps(s3 + j);             \
      __m256 y = OP##_PS(OP##_PS(x0, x1), OP##_PS(x2, x3));                          \
      __m256 u = _mm256_or_ps(_mm256_cmp_ps(x0, x1, _CMP_UNORD_Q),                   \
                              _mm256_cmp_ps(x2, x3, _CMP_UNORD_Q));                  \
      __m256 m = OP##_PS(y, _mm256_loadu_ps(a + j)); /* a NaN acc stays */           \
      _mm256_storeu_ps(a + j, _mm256_blendv_ps(m, qnan, u));                         \
    }                                                                                \
    for (int r = 0; r < 4; r++)                                                      \
      col_##NAME##_f32(a + j, (const char *)src + r * stride + j * 4, n - j);        \
  }
#define MAX_IDENT (-INFINITY)
#define MIN_IDENT INFINITY
#define MAX_PS _mm256_max_ps
#define MIN_PS _mm256_min_ps
#define GT(x, y) ((x) > (y))
#define LT(x, y) ((x) < (y))
DEF_EXT_F32(max, MAX, GT)
DEF_EXT_F32(min, MIN, LT)

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

bool cm_reduce_simd(int op, cm_dtype dt, cm_red_fn *base, cm_red_fn *col, cm_red_col4_fn *col4) {
  if (!cm_cpu_features()->avx2) return false;
  if (dt == CM_FLOAT32) {
    switch (op) {
    case CM_REDUCE_SUM: *base = sum_f32; *col = col_sum_f32; *col4 = col4_sum_f32; return true;
    case CM_REDUCE_MAX: *base = max_f32; *col = col_max_f32; *col4 = col4_max_f32; return true;
    case CM_REDUCE_MIN: *base = min_f32; *col = col_min_f32; *col4 = col4_min_f32; return true;
    default: return false;
    }
  }
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
