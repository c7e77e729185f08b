/* Batched FFTs (see fft_lanes.h): Stockham's autosort algorithm; for a
 * power of two radix 4 with one radix-2 stage when log2 n is odd, for
 * other lengths the mixed-radix stages of fft_mixed_impl.h (radix 4, 2,
 * 3, 5, then a generic butterfly for 7, 11, 13), in the same order.  Stage
 * by stage, with ncur points left per sub-transform and s = n / ncur
 * sub-transforms, element q + s (p + j m) (m = ncur / 4) of the input
 * goes into the butterfly that writes q + s (4p + r), r < 4, twiddled
 * by w_ncur^{p r}; the LANES lines of one element are adjacent, so the
 * loop over (q, lane) is one contiguous run of s * LANES floats.  The
 * inverse is the forward transform with real and imaginary parts
 * exchanged on the way in and out (swap(FFT(swap(x))) = IFFT(x)). */
#include "backend/cpu/fft_lanes.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_features.h"

#define L CM_FFT_LANES
_Static_assert(CM_FFT_LANES == 8, "lanes_avx2 holds one element's lanes in one vector");

/* The portable stages (lanes_avx2 below is the same with vectors). */
#define LANES_BODY                                                                   \
  {                                                                                  \
    int s = 1;                                                                       \
    bool swapped = false;                                                            \
    for (int ncur = n; ncur >= 4; ncur /= 4, s *= 4) {                               \
      int m = ncur / 4, stride = n / ncur;                                           \
      size_t span = (size_t)s * L;                                                   \
      for (int p = 0; p < m; p++) {                                                  \
        float w1r = twr[p * stride], w1i = twi[p * stride];                          \
        float w2r = twr[2 * p * stride], w2i = twi[2 * p * stride];                  \
        float w3r = twr[3 * p * stride], w3i = twi[3 * p * stride];                  \
        const float *restrict ar = xr + p * span, *restrict ai = xi + p * span;      \
        const float *restrict br = ar + m * span, *restrict bi = ai + m * span;      \
        const float *restrict cr = br + m * span, *restrict ci = bi + m * span;      \
        const float *restrict dr = cr + m * span, *restrict di = ci + m * span;      \
        float *restrict y0r = yr + 4 * p * span, *restrict y0i = yi + 4 * p * span;  \
        float *restrict y1r = y0r + span, *restrict y1i = y0i + span;                \
        float *restrict y2r = y1r + span, *restrict y2i = y1i + span;                \
        float *restrict y3r = y2r + span, *restrict y3i = y2i + span;                \
        /* runs of exactly L: the vectoriser needs no remainder loop */              \
        for (size_t t0 = 0; t0 < span; t0 += L)                                      \
          for (size_t u = 0, t = t0; u < L; u++, t++) {                              \
            float apcr = ar[t] + cr[t], apci = ai[t] + ci[t];                        \
            float amcr = ar[t] - cr[t], amci = ai[t] - ci[t];                        \
            float bpdr = br[t] + dr[t], bpdi = bi[t] + di[t];                        \
            /* i (b - d) */                                                          \
            float jr = di[t] - bi[t], ji = br[t] - dr[t];                            \
            y0r[t] = apcr + bpdr, y0i[t] = apci + bpdi;                              \
            float u1r = amcr - jr, u1i = amci - ji;                                  \
            float u2r = apcr - bpdr, u2i = apci - bpdi;                              \
            float u3r = amcr + jr, u3i = amci + ji;                                  \
            y1r[t] = u1r * w1r - u1i * w1i, y1i[t] = u1r * w1i + u1i * w1r;          \
            y2r[t] = u2r * w2r - u2i * w2i, y2i[t] = u2r * w2i + u2i * w2r;          \
            y3r[t] = u3r * w3r - u3i * w3i, y3i[t] = u3r * w3i + u3i * w3r;          \
          }                                                                          \
      }                                                                              \
      float *t0 = xr, *t1 = xi;                                                      \
      xr = yr, xi = yi, yr = t0, yi = t1;                                            \
      swapped = !swapped;                                                            \
    }                                                                                \
    if (s < n) { /* one radix-2 stage: ncur = 2, no twiddles */                      \
      size_t span = (size_t)s * L;                                                   \
      for (size_t t0 = 0; t0 < span; t0 += L)                                        \
        for (size_t u = 0, t = t0; u < L; u++, t++) {                                \
          float ar = xr[t], ai = xi[t], br = xr[span + t], bi = xi[span + t];        \
          yr[t] = ar + br, yi[t] = ai + bi;                                          \
          yr[span + t] = ar - br, yi[span + t] = ai - bi;                            \
        }                                                                            \
      float *t0 = xr, *t1 = xi;                                                      \
      xr = yr, xi = yi, yr = t0, yi = t1;                                            \
      swapped = !swapped;                                                            \
    }                                                                                \
    if (swapped) { /* the result is in the scratch: back into the caller's arrays */ \
      memcpy(yr, xr, sizeof(float) * (size_t)n * L);                                 \
      memcpy(yi, xi, sizeof(float) * (size_t)n * L);                                 \
    }                                                                                \
  }

static void lanes_portable(int n, const float *twr, const float *twi, float *xr, float *xi,
                           float *yr, float *yi) LANES_BODY

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2 1
#include <immintrin.h>

    /* The same stages with the LANES = 8 lines of an element in one vector. */
    __attribute__((target("avx2,fma"))) static void lanes_avx2(int n, const float *twr,
                                                               const float *twi, float *xr,
                                                               float *xi, float *yr, float *yi) {
  int s = 1, lg = 0;
  bool swapped = false;
  while ((1 << lg) < n) lg++;
  /* the last stage has no twiddles and writes where it reads: run in
   * place when the stage count is odd, the result ends in x, not copied */
  bool last_in_place = (lg / 2 + lg % 2) % 2 == 1;
  for (int ncur = n; ncur >= 4; ncur /= 4, s *= 4) {
    int m = ncur / 4, stride = n / ncur;
    size_t span = (size_t)s * L;
    bool in_place = last_in_place && ncur == 4 && s * 4 == n;
    float *outr = in_place ? xr : yr, *outi = in_place ? xi : yi;
    for (int p = 0; p < m; p++) {
      __m256 w1r = _mm256_set1_ps(twr[p * stride]), w1i = _mm256_set1_ps(twi[p * stride]);
      __m256 w2r = _mm256_set1_ps(twr[2 * p * stride]), w2i = _mm256_set1_ps(twi[2 * p * stride]);
      __m256 w3r = _mm256_set1_ps(twr[3 * p * stride]), w3i = _mm256_set1_ps(twi[3 * p * stride]);
      const float *ar = xr + p * span, *ai = xi + p * span;
      size_t ms = (size_t)m * span;
      float *y0r = outr + 4 * p * span, *y0i = outi + 4 * p * span;
      for (size_t t = 0; t < span; t += L) {
        __m256 a_r = _mm256_loadu_ps(ar + t), a_i = _mm256_loadu_ps(ai + t);
        __m256 b_r = _mm256_loadu_ps(ar + ms + t), b_i = _mm256_loadu_ps(ai + ms + t);
        __m256 c_r = _mm256_loadu_ps(ar + 2 * ms + t), c_i = _mm256_loadu_ps(ai + 2 * ms + t);
        __m256 d_r = _mm256_loadu_ps(ar + 3 * ms + t), d_i = _mm256_loadu_ps(ai + 3 * ms + t);
        __m256 apcr = _mm256_add_ps(a_r, c_r), apci = _mm256_add_ps(a_i, c_i);
        __m256 amcr = _mm256_sub_ps(a_r, c_r), amci = _mm256_sub_ps(a_i, c_i);
        __m256 bpdr = _mm256_add_ps(b_r, d_r), bpdi = _mm256_add_ps(b_i, d_i);
        __m256 jr = _mm256_sub_ps(d_i, b_i), ji = _mm256_sub_ps(b_r, d_r); /* i (b - d) */
        _mm256_storeu_ps(y0r + t, _mm256_add_ps(apcr, bpdr));
        _mm256_storeu_ps(y0i + t, _mm256_add_ps(apci, bpdi));
        __m256 u1r = _mm256_sub_ps(amcr, jr), u1i = _mm256_sub_ps(amci, ji);
        __m256 u2r = _mm256_sub_ps(apcr, bpdr), u2i = _mm256_sub_ps(apci, bpdi);
        __m256 u3r = _mm256_add_ps(amcr, jr), u3i = _mm256_add_ps(amci, ji);
        _mm256_storeu_ps(y0r + span + t, _mm256_fmsub_ps(u1r, w1r, _mm256_mul_ps(u1i, w1i)));
        _mm256_storeu_ps(y0i + span + t, _mm256_fmadd_ps(u1r, w1i, _mm256_mul_ps(u1i, w1r)));
        _mm256_storeu_ps(y0r + 2 * span + t, _mm256_fmsub_ps(u2r, w2r, _mm256_mul_ps(u2i, w2i)));
        _mm256_storeu_ps(y0i + 2 * span + t, _mm256_fmadd_ps(u2r, w2i, _mm256_mul_ps(u2i, w2r)));
        _mm256_storeu_ps(y0r + 3 * span + t, _mm256_fmsub_ps(u3r, w3r, _mm256_mul_ps(u3i, w3i)));
        _mm256_storeu_ps(y0i + 3 * span + t, _mm256_fmadd_ps(u3r, w3i, _mm256_mul_ps(u3i, w3r)));
      }
    }
    if (in_place) continue;
    float *t0 = xr, *t1 = xi;
    xr = yr, xi = yi, yr = t0, yi = t1;
    swapped = !swapped;
  }
  if (s < n) { /* one radix-2 stage */
    size_t span = (size_t)s * L;
    float *outr = last_in_place ? xr : yr, *outi = last_in_place ? xi : yi;
    for (size_t t = 0; t < span; t += L) {
      __m256 a_r = _mm256_loadu_ps(xr + t), a_i = _mm256_loadu_ps(xi + t);
      __m256 b_r = _mm256_loadu_ps(xr + span + t), b_i = _mm256_loadu_ps(xi + span + t);
      _mm256_storeu_ps(outr + t, _mm256_add_ps(a_r, b_r));
      _mm256_storeu_ps(outi + t, _mm256_add_ps(a_i, b_i));
      _mm256_storeu_ps(outr + span + t, _mm256_sub_ps(a_r, b_r));
      _mm256_storeu_ps(outi + span + t, _mm256_sub_ps(a_i, b_i));
    }
    if (!last_in_place) {
      float *t0 = xr, *t1 = xi;
      xr = yr, xi = yi, yr = t0, yi = t1;
      swapped = !swapped;
    }
  }
  if (swapped) {
    memcpy(yr, xr, sizeof(float) * (size_t)n * L);
    memcpy(yi, xi, sizeof(float) * (size_t)n * L);
  }
}
#endif

/* ---- mixed radix (fft_mixed_impl.h) ---- */

/* The stages of n in order: radix 4 while it divides, one radix 2, then
 * 3, 5 and the primes up to CM_FFT_LANES_MAX_PRIME.  Returns the count
 * (0: a larger prime factor). */
static int radices(int n, int *r) {
  int k = 0;
  while (n % 4 == 0) r[k++] = 4, n /= 4;
  if (n % 2 == 0) r[k++] = 2, n /= 2;
  for (int p = 3; p <= CM_FFT_LANES_MAX_PRIME; p += 2)
    while (n % p == 0) r[k++] = p, n /= p;
  return n == 1 ? k : 0;
}

bool cm_fft_lanes_supported(int n) {
  int r[32];
  return n >= 2 && radices(n, r) > 0;
}

/* (the baseline instance passes LANES-float vectors between inline
 * functions: GCC's note that this ABI differs without AVX is moot) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi" /* to the end of the file: GCC warns there */
#endif
#define MIXED_SUFFIX _portable
#include "backend/cpu/fft_mixed_impl.h"
#undef MIXED_SUFFIX

#ifdef HAVE_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#define MIXED_SUFFIX _avx2
#include "backend/cpu/fft_mixed_impl.h"
#undef MIXED_SUFFIX
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

#ifdef HAVE_AVX2
/* AVX2 and FMA present, and CMLX_FFT_SIMD does not start with '0' (which
 * forces the portable loops, to check one against the other). */
static bool use_avx2(void) {
  static atomic_int state; /* 0 unknown, 1 no, 2 yes */
  int v = atomic_load_explicit(&state, memory_order_relaxed);
  if (!v) {
    const cm_cpu_flags *f = cm_cpu_features();
    const char *env = getenv("CMLX_FFT_SIMD");
    v = f->avx2 && f->fma && !(env && env[0] == '0') ? 2 : 1;
    atomic_store_explicit(&state, v, memory_order_relaxed);
  }
  return v == 2;
}
#endif

void cm_fft_lanes(int n, const float *twr, const float *twi, float *xr, float *xi, float *yr,
                  float *yi, bool inverse) {
  if (inverse) { /* exchange the parts: the forward transform then gives the inverse */
    float *t = xr;
    xr = xi, xi = t;
    t = yr, yr = yi, yi = t;
  }
  if (n & (n - 1)) { /* not a power of two: the mixed-radix stages */
    int r[32], nr = radices(n, r);
#ifdef HAVE_AVX2
    if (use_avx2()) {
      mixed_run_avx2(n, r, nr, twr, twi, xr, xi, yr, yi);
      return;
    }
#endif
    mixed_run_portable(n, r, nr, twr, twi, xr, xi, yr, yi);
    return;
  }
#ifdef HAVE_AVX2
  if (use_avx2()) {
    lanes_avx2(n, twr, twi, xr, xi, yr, yi);
    return;
  }
#endif
  lanes_portable(n, twr, twi, xr, xi, yr, yi);
}

/* ---- rows to and from lanes ---- */

static void from_rows_portable(const cm_complex64 *const *rows, size_t k0, size_t h, float *xr,
                               float *xi) {
  for (size_t k = k0; k < h; k++)
    for (int j = 0; j < L; j++) xr[k * L + j] = rows[j][k].re, xi[k * L + j] = rows[j][k].im;
}

static void to_rows_portable(cm_complex64 *const *rows, size_t k0, size_t h, const float *xr,
                             const float *xi, float fct) {
  for (size_t k = k0; k < h; k++)
    for (int j = 0; j < L; j++)
      rows[j][k] = (cm_complex64){xr[k * L + j] * fct, xi[k * L + j] * fct};
}

#ifdef HAVE_AVX2
/* r[0..8) as the rows of an 8 x 8 matrix, transposed in place. */
__attribute__((target("avx2,fma"))) static inline void transpose8(__m256 *r) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* Four elements of the eight rows are one 8 x 8 block: row j holds
 * (re, im) of elements k..k+3; transposed, vector 2q is the real parts
 * of element k+q across the lanes and 2q+1 its imaginary parts. */
__attribute__((target("avx2,fma"))) static void from_rows_avx2(const cm_complex64 *const *rows,
                                                             size_t h, float *xr, float *xi) {
  size_t k = 0;
  for (; k + 4 <= h; k += 4) {
    __m256 r[8];
    for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(&rows[j][k].re);
    transpose8(r);
    for (int q = 0; q < 4; q++) {
      _mm256_storeu_ps(xr + (k + q) * L, r[2 * q]);
      _mm256_storeu_ps(xi + (k + q) * L, r[2 * q + 1]);
    }
  }
  from_rows_portable(rows, k, h, xr, xi);
}

__attribute__((target("avx2,fma"))) static void to_rows_avx2(cm_complex64 *const *rows, size_t h,
                                                           const float *xr, const float *xi,
                                                           float fct) {
  __m256 f = _mm256_set1_ps(fct);
  size_t k = 0;
  for (; k + 4 <= h; k += 4) {
    __m256 r[8];
    for (int q = 0; q < 4; q++) {
      r[2 * q] = _mm256_mul_ps(_mm256_loadu_ps(xr + (k + q) * L), f);
      r[2 * q + 1] = _mm256_mul_ps(_mm256_loadu_ps(xi + (k + q) * L), f);
    }
    transpose8(r);
    for (int j = 0; j < 8; j++) _mm256_storeu_ps(&rows[j][k].re, r[j]);
  }
  to_rows_portable(rows, k, h, xr, xi, fct);
}
#endif

void cm_fft_lanes_from_rows(const cm_complex64 *const *rows, size_t h, float *xr, float *xi) {
#ifdef HAVE_AVX2
  if (use_avx2()) {
    from_rows_avx2(rows, h, xr, xi);
    return;
  }
#endif
  from_rows_portable(rows, 0, h, xr, xi);
}

void cm_fft_lanes_to_rows(cm_complex64 *const *rows, size_t h, const float *xr, const float *xi,
                          float fct) {
#ifdef HAVE_AVX2
  if (use_avx2()) {
    to_rows_avx2(rows, h, xr, xi, fct);
    return;
  }
#endif
  to_rows_portable(rows, 0, h, xr, xi, fct);
}

/* ---- side-by-side lines to and from lanes ---- */

enum { LOAD_AHEAD = 8, STORE_AHEAD = 16 };

static void from_adjacent_portable(const cm_complex64 *base, ptrdiff_t s, size_t h, float *xr,
                                   float *xi) {
  for (size_t k = 0; k < h; k++) {
    if (k + LOAD_AHEAD < h) __builtin_prefetch(base + (ptrdiff_t)(k + LOAD_AHEAD) * s);
    const cm_complex64 *r = base + (ptrdiff_t)k * s;
    for (int j = 0; j < L; j++) xr[k * L + j] = r[j].re, xi[k * L + j] = r[j].im;
  }
}

static void to_adjacent_portable(cm_complex64 *base, ptrdiff_t s, size_t h, const float *xr,
                                 const float *xi, float fct) {
  for (size_t k = 0; k < h; k++) {
    if (k + STORE_AHEAD < h) __builtin_prefetch(base + (ptrdiff_t)(k + STORE_AHEAD) * s, 1);
    cm_complex64 *r = base + (ptrdiff_t)k * s;
    for (int j = 0; j < L; j++) r[j] = (cm_complex64){xr[k * L + j] * fct, xi[k * L + j] * fct};
  }
}

#ifdef HAVE_AVX2
__attribute__((target("avx2,fma"))) static void from_adjacent_avx2(const cm_complex64 *base,
                                                                 ptrdiff_t s, size_t h,
                                                                 float *xr, float *xi) {
  for (size_t k = 0; k < h; k++) {
    if (k + LOAD_AHEAD < h) __builtin_prefetch(base + (ptrdiff_t)(k + LOAD_AHEAD) * s);
    const float *r = &base[(ptrdiff_t)k * s].re;
    /* a = r0 i0 r1 i1 | r2 i2 r3 i3, b = r4 .. i7 */
    __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
    /* lo = a0 a1 b0 b1 (128-bit halves): r0 i0 r1 i1 r4 i4 r5 i5, hi: 2 3 6 7 */
    __m256 lo = _mm256_permute2f128_ps(a, b, 0x20), hi = _mm256_permute2f128_ps(a, b, 0x31);
    /* even floats of (lo, hi) per half: r0 r1 r2 r3 | r4 r5 r6 r7 */
    _mm256_storeu_ps(xr + k * L, _mm256_shuffle_ps(lo, hi, 0x88));
    _mm256_storeu_ps(xi + k * L, _mm256_shuffle_ps(lo, hi, 0xDD));
  }
}

__attribute__((target("avx2,fma"))) static void to_adjacent_avx2(cm_complex64 *base, ptrdiff_t s,
                                                               size_t h, const float *xr,
                                                               const float *xi, float fct) {
  __m256 f = _mm256_set1_ps(fct);
  for (size_t k = 0; k < h; k++) {
    if (k + STORE_AHEAD < h) __builtin_prefetch(base + (ptrdiff_t)(k + STORE_AHEAD) * s, 1);
    __m256 re = _mm256_mul_ps(_mm256_loadu_ps(xr + k * L), f);
    __m256 im = _mm256_mul_ps(_mm256_loadu_ps(xi + k * L), f);
    /* lo = r0 i0 r1 i1 | r4 i4 r5 i5, hi = r2 i2 r3 i3 | r6 i6 r7 i7 */
    __m256 lo = _mm256_unpacklo_ps(re, im), hi = _mm256_unpackhi_ps(re, im);
    float *r = &base[(ptrdiff_t)k * s].re;
    _mm256_storeu_ps(r, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(r + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
}
#endif

void cm_fft_lanes_from_adjacent(const cm_complex64 *base, ptrdiff_t s, size_t h, float *xr,
                                float *xi) {
#ifdef HAVE_AVX2
  if (use_avx2()) {
    from_adjacent_avx2(base, s, h, xr, xi);
    return;
  }
#endif
  from_adjacent_portable(base, s, h, xr, xi);
}

void cm_fft_lanes_to_adjacent(cm_complex64 *base, ptrdiff_t s, size_t h, const float *xr,
                              const float *xi, float fct) {
#ifdef HAVE_AVX2
  if (use_avx2()) {
    to_adjacent_avx2(base, s, h, xr, xi, fct);
    return;
  }
#endif
  to_adjacent_portable(base, s, h, xr, xi, fct);
}
