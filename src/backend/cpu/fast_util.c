/* Row helpers of the mx.fast kernels: loading any float dtype as float,
 * storing with one rounding, and the vector loops (dot, axpy, sums), which
 * take AVX2+FMA versions on CPUs that have them. */
#include <string.h>

#include "backend/cpu/fast.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/cpu_features.h"
#include "core/dtype.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

/* The 32-byte vectors below never cross a call boundary (static helpers,
 * inlined), so the baseline build's ABI note does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

void cm_fast_load(float *dst, const void *src, int64_t st, int64_t n, cm_dtype dt) {
  switch (dt) {
  case CM_FLOAT32:
    if (st == 1) memcpy(dst, src, (size_t)n * 4);
    else
      for (int64_t i = 0; i < n; i++) dst[i] = ((const float *)src)[i * st];
    break;
  case CM_FLOAT64:
    for (int64_t i = 0; i < n; i++) dst[i] = (float)((const double *)src)[i * st];
    break;
  default: /* the half types: copy.c's row loop (vector with F16C/AVX2) */
    cm_cpu_convert_row(dt, CM_FLOAT32)(dst, 1, src, st, n);
  }
}

void cm_fast_store(void *dst, const float *src, int64_t n, cm_dtype dt) {
  switch (dt) {
  case CM_FLOAT32: memcpy(dst, src, (size_t)n * 4); break;
  case CM_FLOAT64:
    for (int64_t i = 0; i < n; i++) ((double *)dst)[i] = src[i];
    break;
  default: cm_cpu_convert_row(CM_FLOAT32, dt)(dst, 1, src, 1, n);
  }
}

int64_t cm_fast_row_offset(const cm_array *a, int64_t r) {
  int64_t off = 0;
  for (int d = a->ndim - 2; d >= 0 && r; d--) {
    int64_t n = a->shape[d];
    off += (r % n) * a->strides[d];
    r /= n;
  }
  return off;
}

/* ---- vector loops: one body, compiled for the baseline and for AVX2 ---- */
typedef float v8f __attribute__((vector_size(32)));

/* Macros, not functions: clang rejects passing or returning a 32-byte vector
 * between a baseline function and an AVX2 one (it changes the ABI). An
 * unaligned, aliasing vector type loads 8 floats from any float pointer. */
typedef float v8f_unaligned __attribute__((vector_size(32), aligned(4), may_alias));
#define ld8(p) (*(const v8f_unaligned *)(const void *)(p))
/* left to right, as a loop over the lanes would add them */
#define hsum8(v) ((v)[0] + (v)[1] + (v)[2] + (v)[3] + (v)[4] + (v)[5] + (v)[6] + (v)[7])

#define DOT_BODY                           \
  v8f s0 = {0}, s1 = {0};                  \
  int64_t i = 0;                           \
  for (; i + 16 <= n; i += 16) {           \
    s0 += ld8(a + i) * ld8(b + i);         \
    s1 += ld8(a + i + 8) * ld8(b + i + 8); \
  }                                        \
  float s = hsum8(s0 + s1);                \
  for (; i < n; i++) s += a[i] * b[i];     \
  return s;
#define AXPY_BODY                            \
  int64_t i = 0;                             \
  for (; i + 8 <= n; i += 8) {               \
    v8f v = ld8(y + i) + alpha * ld8(x + i); \
    memcpy(y + i, &v, 32);                   \
  }                                          \
  for (; i < n; i++) y[i] += alpha * x[i];
#define SUMSQ_BODY                                            \
  v8f s0 = {0}, s1 = {0};                                     \
  int64_t i = 0;                                              \
  for (; i + 16 <= n; i += 16) {                              \
    v8f d0 = ld8(a + i) - shift, d1 = ld8(a + i + 8) - shift; \
    s0 += d0 * d0;                                            \
    s1 += d1 * d1;                                            \
  }                                                           \
  float s = hsum8(s0 + s1);                                   \
  for (; i < n; i++) s += (a[i] - shift) * (a[i] - shift);    \
  return s;
#define SUM_BODY                 \
  v8f s0 = {0}, s1 = {0};        \
  int64_t i = 0;                 \
  for (; i + 16 <= n; i += 16) { \
    s0 += ld8(a + i);            \
    s1 += ld8(a + i + 8);        \
  }                              \
  float s = hsum8(s0 + s1);      \
  for (; i < n; i++) s += a[i];  \
  return s;

#define AFFINE_BODY                          \
  v8f m8 = mu - (v8f){0}, n8 = n - (v8f){0}; \
  int64_t i = 0;                             \
  for (; i + 8 <= D; i += 8) {               \
    v8f v = (ld8(x + i) - m8) * n8;          \
    if (w) v *= ld8(w + i);                  \
    if (b) v += ld8(b + i);                  \
    memcpy(o + i, &v, 32);                   \
  }                                          \
  for (; i < D; i++) {                       \
    float v = (x[i] - mu) * n;               \
    if (w) v *= w[i];                        \
    o[i] = b ? v + b[i] : v;                 \
  }

/* A few query rows against a block of key or value rows (a decode step's
 * attention): each dot and each axpy is the single-row loop above, inlined,
 * so the results are those of cm_fast_dot and cm_fast_axpy bit for bit,
 * without a dispatch per row. */
#define DOT_ROWS_BODY(DOT)                                                      \
  for (int64_t r = 0; r < rows; r++)                                            \
    for (int64_t c = 0; c < n; c++) s[r * n + c] = scale * DOT(q + r * D, k + c * ldk, D);
#define AXPY_ROWS_BODY(AXPY)                                                    \
  for (int64_t r = 0; r < rows; r++)                                            \
    for (int64_t c = 0; c < n; c++) AXPY(o + r * Dv, p[r * n + c], v + c * ldv, Dv);

static void affine_base(float *o, const float *x, float mu, float n, const float *w, const float *b,
                        int64_t D) {
  AFFINE_BODY
}
static float dot_base(const float *a, const float *b, int64_t n) { DOT_BODY }
static void axpy_base(float *y, float alpha, const float *x, int64_t n) { AXPY_BODY }
static float sumsq_base(const float *a, float shift, int64_t n) { SUMSQ_BODY }
static float sum_base(const float *a, int64_t n){SUM_BODY}
static void dot_rows_base(float *s, const float *q, int64_t rows, int64_t D, const float *k,
                          int64_t ldk, int64_t n, float scale) {
  DOT_ROWS_BODY(dot_base)
}
static void axpy_rows_base(float *o, int64_t rows, int64_t Dv, const float *p, const float *v,
                           int64_t ldv, int64_t n) {
  AXPY_ROWS_BODY(axpy_base)
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AVX2 __attribute__((target("avx2,fma")))
/* dot and axpy are inlined into the row-block loops below (a call per
 * 64-element row cost as much as the row) */
#define INLINE inline __attribute__((always_inline))
AVX2 static void affine_avx2(float *o, const float *x, float mu, float n, const float *w,
                             const float *b, int64_t D) {
  AFFINE_BODY
}
AVX2 static INLINE float dot_in(const float *a, const float *b, int64_t n) { DOT_BODY }
AVX2 static INLINE void axpy_in(float *y, float alpha, const float *x, int64_t n) { AXPY_BODY }
AVX2 static float dot_avx2(const float *a, const float *b, int64_t n) { return dot_in(a, b, n); }
AVX2 static void axpy_avx2(float *y, float alpha, const float *x, int64_t n) {
  axpy_in(y, alpha, x, n);
}
AVX2 static float sumsq_avx2(const float *a, float shift, int64_t n) { SUMSQ_BODY }
AVX2 static float sum_avx2(const float *a, int64_t n) { SUM_BODY }
AVX2 static void dot_rows_avx2(float *s, const float *q, int64_t rows, int64_t D, const float *k,
                               int64_t ldk, int64_t n, float scale) {
  DOT_ROWS_BODY(dot_in)
}
AVX2 static void axpy_rows_avx2(float *o, int64_t rows, int64_t Dv, const float *p, const float *v,
                                int64_t ldv, int64_t n) {
  AXPY_ROWS_BODY(axpy_in)
}
/* The same rows of half-precision keys or values, widened one row at a
 * time into a stack block (exact), so no block of floats is written out. */
#define AVX2H __attribute__((target("avx2,fma,f16c")))
AVX2H static inline void widen_row(float *d, const uint16_t *s, int64_t n, bool bf16) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128((const __m128i *)(s + i));
    __m256 v = bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
                    : _mm256_cvtph_ps(h);
    _mm256_storeu_ps(d + i, v);
  }
  for (; i < n; i++) d[i] = bf16 ? cm_bf16_to_f32(s[i]) : _cvtsh_ss(s[i]);
}
/* The cache's rows come from memory (a long context is megabytes per
 * layer): each row is asked for 8 rows ahead. */
AVX2H static inline void prefetch_row(const uint16_t *p, int64_t n) {
  for (int64_t b = 0; b < n * 2; b += 64) _mm_prefetch((const char *)p + b, _MM_HINT_T0);
}
AVX2H static void dot_rows_half_avx2(float *s, const float *q, int64_t rows, int64_t D,
                                     const uint16_t *k, int64_t ldk, int64_t n, float scale,
                                     bool bf16) {
  float t[CM_FAST_HALF_ROW_MAX];
  for (int64_t c = 0; c < n; c++) {
    if (c + 8 < n) prefetch_row(k + (c + 8) * ldk, D);
    widen_row(t, k + c * ldk, D, bf16);
    for (int64_t r = 0; r < rows; r++) s[r * n + c] = scale * dot_in(q + r * D, t, D);
  }
}
/* c outer, r inner: each output row still takes the keys in order */
AVX2H static void axpy_rows_half_avx2(float *o, int64_t rows, int64_t Dv, const float *p,
                                      const uint16_t *v, int64_t ldv, int64_t n, bool bf16) {
  float t[CM_FAST_HALF_ROW_MAX];
  for (int64_t c = 0; c < n; c++) {
    if (c + 8 < n) prefetch_row(v + (c + 8) * ldv, Dv);
    widen_row(t, v + c * ldv, Dv, bf16);
    for (int64_t r = 0; r < rows; r++) axpy_in(o + r * Dv, p[r * n + c], t, Dv);
  }
}
static bool use_avx2(void) {
  const cm_cpu_flags *f = cm_cpu_features();
  return f->avx2 && f->fma;
}
#define PICK(name, ...) return use_avx2() ? name##_avx2(__VA_ARGS__) : name##_base(__VA_ARGS__)
#else
#define PICK(name, ...) return name##_base(__VA_ARGS__)
#endif

float cm_fast_dot(const float *a, const float *b, int64_t n) { PICK(dot, a, b, n); }
void cm_fast_axpy(float *y, float alpha, const float *x, int64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (use_avx2()) {
    axpy_avx2(y, alpha, x, n);
    return;
  }
#endif
  axpy_base(y, alpha, x, n);
}
void cm_fast_affine(float *o, const float *x, float mu, float n, const float *w, const float *b,
                    int64_t D) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (use_avx2()) {
    affine_avx2(o, x, mu, n, w, b, D);
    return;
  }
#endif
  affine_base(o, x, mu, n, w, b, D);
}
float cm_fast_sumsq(const float *a, float shift, int64_t n) { PICK(sumsq, a, shift, n); }
float cm_fast_sum(const float *a, int64_t n) { PICK(sum, a, n); }
void cm_fast_dot_rows(float *s, const float *q, int64_t rows, int64_t D, const float *k, int64_t ldk,
                      int64_t n, float scale) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (use_avx2()) {
    dot_rows_avx2(s, q, rows, D, k, ldk, n, scale);
    return;
  }
#endif
  dot_rows_base(s, q, rows, D, k, ldk, n, scale);
}
void cm_fast_axpy_rows(float *o, int64_t rows, int64_t Dv, const float *p, const float *v,
                       int64_t ldv, int64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (use_avx2()) {
    axpy_rows_avx2(o, rows, Dv, p, v, ldv, n);
    return;
  }
#endif
  axpy_rows_base(o, rows, Dv, p, v, ldv, n);
}

void cm_fast_round_row(float *v, int64_t n, cm_dtype dt) {
  if (dt != CM_FLOAT16 && dt != CM_BFLOAT16) return;
  /* through the vector row conversions, a stack block at a time */
  cm_convert_row_fn to = cm_cpu_convert_row(CM_FLOAT32, dt), back = cm_cpu_convert_row(dt, CM_FLOAT32);
  uint16_t h[512];
  for (int64_t i = 0; i < n; i += 512) {
    int64_t m = n - i < 512 ? n - i : 512;
    to(h, 1, v + i, 1, m);
    back(v + i, 1, h, 1, m);
  }
}

bool cm_fast_dot_rows_half(float *s, const float *q, int64_t rows, int64_t D, const uint16_t *k,
                           int64_t ldk, int64_t n, float scale, cm_dtype dt) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (D <= CM_FAST_HALF_ROW_MAX && use_avx2() && cm_cpu_features()->f16c) {
    dot_rows_half_avx2(s, q, rows, D, k, ldk, n, scale, dt == CM_BFLOAT16);
    return true;
  }
#endif
  (void)s, (void)q, (void)rows, (void)D, (void)k, (void)ldk, (void)n, (void)scale, (void)dt;
  return false;
}
bool cm_fast_axpy_rows_half(float *o, int64_t rows, int64_t Dv, const float *p, const uint16_t *v,
                            int64_t ldv, int64_t n, cm_dtype dt) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (Dv <= CM_FAST_HALF_ROW_MAX && use_avx2() && cm_cpu_features()->f16c) {
    axpy_rows_half_avx2(o, rows, Dv, p, v, ldv, n, dt == CM_BFLOAT16);
    return true;
  }
#endif
  (void)o, (void)rows, (void)Dv, (void)p, (void)v, (void)ldv, (void)n, (void)dt;
  return false;
}
