/* Row loops of the attention kernels (fast_sdpa.h).  The AVX-512 versions
 * work 16 floats at a time with masked loads for the tail; the
 * exponential is the usual reduction x = n ln2 + r (|r| <= ln2 / 2, ln2
 * split in two for exactness), a degree-6 polynomial for exp(r) and a
 * scale by 2^n, which underflows to 0 cleanly. */
#include "backend/cpu/fast_sdpa.h"

#include <math.h>

#include "backend/cpu/cpu_features.h"

static float max_base(const float *s, int64_t n, float mx) {
  for (int64_t c = 0; c < n; c++)
    if (s[c] > mx) mx = s[c];
  return mx;
}

static float exp_base(float *s, int64_t n, float mx) {
  float sum = 0.0f;
  for (int64_t c = 0; c < n; c++) sum += s[c] = expf(s[c] - mx);
  return sum;
}

static void scale_base(float *o, float a, int64_t n) {
  for (int64_t c = 0; c < n; c++) o[c] *= a;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f")))

AVX512 static inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

AVX512 static float max_512(const float *s, int64_t n, float floor) {
  __m512 mx = _mm512_set1_ps(floor);
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 k = tail_mask(n - c);
    /* NaN lanes (and the masked-off tail) keep mx: max(x, mx) returns mx */
    mx = _mm512_mask_max_ps(mx, k, _mm512_maskz_loadu_ps(k, s + c), mx);
  }
  return _mm512_reduce_max_ps(mx);
}

AVX512 static inline __m512 vexp(__m512 x) {
  /* below -104 the result is 0 in float; max(lo, x) keeps a NaN x */
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

AVX512 static float exp_512(float *s, int64_t n, float mx) {
  __m512 m = _mm512_set1_ps(mx), sum = _mm512_setzero_ps();
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 k = tail_mask(n - c);
    __m512 e = vexp(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + c), m));
    _mm512_mask_storeu_ps(s + c, k, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, e));
  }
  return _mm512_reduce_add_ps(sum);
}

AVX512 static void scale_512(float *o, float a, int64_t n) {
  __m512 av = _mm512_set1_ps(a);
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 k = tail_mask(n - c);
    _mm512_mask_storeu_ps(o + c, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, o + c), av));
  }
}

static bool use_512(void) { return cm_cpu_features()->avx512f; }
#define PICK(name, ...) return use_512() ? name##_512(__VA_ARGS__) : name##_base(__VA_ARGS__)
#else
#define PICK(name, ...) return name##_base(__VA_ARGS__)
#endif

float cm_sdpa_row_max(const float *s, int64_t n, float floor) { PICK(max, s, n, floor); }
float cm_sdpa_row_exp(float *s, int64_t n, float mx) { PICK(exp, s, n, mx); }
void cm_sdpa_row_scale(float *o, float a, int64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (use_512()) {
    scale_512(o, a, n);
    return;
  }
#endif
  scale_base(o, a, n);
}
