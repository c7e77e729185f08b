/* Vectorised contiguous loops for the hot float unary ops (float32, and
 * float16/bfloat16 computed in float32), for x86-64 CPUs with AVX2 + FMA +
 * F16C.  The functions carry their own target attribute and are chosen at
 * run time, so the library still runs on any x86-64 and builds elsewhere
 * (where cm_unary_simd returns NULL and the scalar loops run).  No special
 * compile flags are needed.
 *
 * Transcendental ops use our own kernels: expm1, sigmoid, tanh (one exp
 * core), log2, log10 (one log core), sin, cos (reduction in double).  Max
 * error over every float input, measured against double libm: expm1 1.44
 * ulp, sigmoid 2.40, tanh 1.33, log2 0.95, log10 0.88, sin/cos 1.58.  exp,
 * erf and erfinv are MLX's formulas (the same bits as the scalar loops and
 * MLX; MLX's fast exp is off by up to 63 ulp for |x| near 88, 0.3 ulp on
 * average): the random samplers built on them must reproduce MLX's
 * numbers, and exp is under categorical's (a language model's sampler).
 * log and log1p have no vector loop: MLX's x86 build takes them from
 * glibc (logf, log1pf), and the random samplers built on them (gumbel,
 * laplace) must give MLX's numbers, so cmlx calls glibc too.  A result
 * never depends on its neighbours: the rare lanes a kernel does not cover
 * (subnormal exponentials, |x| > 1e6 for sin/cos, NaN/inf where not set
 * directly) are redone with libm one by one, and short tails are padded to
 * a full vector.  The strided path stages data through these same loops,
 * so every layout gets the same bits.  sqrt, rsqrt, reciprocal, floor,
 * ceil and round are exact operations and match the scalar loops bit for
 * bit.
 *
 * Set CMLX_UNARY_SIMD=0 in the environment to force the scalar loops. */
#include <string.h>

#include "backend/cpu/types.h"
#include "backend/cpu/unary_impl.h"
#include "backend/cpu/unary_math.h"
#include "backend/cpu/unary_table.h"
#include "backend/cpu/cpu_features.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CM_HAVE_AVX2_KERNELS 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* ---- exp ---- */
#define EXP_LO -87.0f /* e^-87 is still a normal float */
#define EXP_HI 88.0f  /* n = round(x / ln2) stays <= 127 */

/* e^x = 2^n e^r with n = round(x / ln2) and r = x - n ln2 (|r| <= ln2/2),
 * reduced in two steps (the fma keeps n * ln2_hi exact).  Returns e^r - 1
 * = r + r^2 P(r), P fitted on [-ln2/2, ln2/2] (Cephes' expf), and n. */
AVX2 static inline __m256 expm1_reduced(__m256 x, __m256 *n_out) {
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  const __m256 ln2_hi = _mm256_set1_ps(0.693147182464599609375f); /* float(ln 2) */
  const __m256 ln2_lo = _mm256_set1_ps(-1.904654323148236e-09f);  /* ln 2 - ln2_hi */
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, log2e), ROUND_NEAREST);
  __m256 r = _mm256_fnmadd_ps(n, ln2_hi, x);
  r = _mm256_fnmadd_ps(n, ln2_lo, r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  *n_out = n;
  return _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
}

/* 2^n for integral n in [-126, 127], built in the exponent field. */
AVX2 static inline __m256 pow2i(__m256 n) {
  __m256i e = _mm256_cvtps_epi32(n);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23));
}

/* e^x for x in [EXP_LO, EXP_HI]; NaN in, NaN out (other lanes: garbage). */
AVX2 static inline __m256 exp8_core(__m256 x) {
  __m256 n, em1 = expm1_reduced(x, &n);
  return _mm256_mul_ps(_mm256_add_ps(em1, _mm256_set1_ps(1.0f)), pow2i(n));
}

/* Redo the lanes of y selected by mask with the scalar f (for rare inputs
 * the polynomial does not cover). */
AVX2 static inline __m256 redo_lanes(__m256 x, __m256 y, __m256 mask, float (*f)(float)) {
  int m = _mm256_movemask_ps(mask);
  if (!m) return y;
  float xs[8], ys[8];
  _mm256_storeu_ps(xs, x);
  _mm256_storeu_ps(ys, y);
  for (int i = 0; i < 8; i++)
    if (m >> i & 1) ys[i] = f(xs[i]);
  return _mm256_loadu_ps(ys);
}
#define CMP(a, op, b) _mm256_cmp_ps(a, _mm256_set1_ps(b), op)

/* Full-range exp: overflow to inf (beyond ln FLT_MAX) and underflow to 0
 * (below ln 2^-150) are set directly, NaN passes through the core; only
 * the slivers with subnormal results or n = 128 go to libm. */
AVX2 static inline __m256 exp8(__m256 x) {
  __m256 y = exp8_core(x);
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), CMP(x, _CMP_GT_OQ, 88.7228394f));
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), CMP(x, _CMP_LT_OQ, -104.0f));
  __m256 low = _mm256_and_ps(CMP(x, _CMP_GE_OQ, -104.0f), CMP(x, _CMP_LT_OQ, EXP_LO));
  __m256 high = _mm256_and_ps(CMP(x, _CMP_GT_OQ, EXP_HI), CMP(x, _CMP_LE_OQ, 88.7228394f));
  __m256 hard = _mm256_or_ps(low, high);
  return redo_lanes(x, y, hard, expf);
}

/* e^x - 1 = 2^n (e^r - 1) + (2^n - 1), one rounding in the fma; both terms
 * are exact or small, so there is no cancellation near 0 (there n = 0 and
 * the result is e^r - 1 itself).  Tiny x give x (keeping -0), x < -88
 * gives -1, overflow inf; (88, ln FLT_MAX] goes to libm. */
AVX2 static inline __m256 expm1_8(__m256 x) {
  __m256 n, em1 = expm1_reduced(x, &n);
  __m256 s = pow2i(n);
  __m256 y = _mm256_fmadd_ps(s, em1, _mm256_sub_ps(s, _mm256_set1_ps(1.0f)));
  __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  y = _mm256_blendv_ps(y, x, CMP(ax, _CMP_LT_OQ, 1e-10f));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(-1.0f), CMP(x, _CMP_LT_OQ, -88.0f));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), CMP(x, _CMP_GT_OQ, 88.7228394f));
  __m256 hard = _mm256_and_ps(CMP(x, _CMP_GT_OQ, EXP_HI), CMP(x, _CMP_LE_OQ, 88.7228394f));
  return redo_lanes(x, y, hard, expm1f);
}

/* sigmoid = 1/(1+e) for x >= 0, e/(1+e) for x < 0, with e = e^-|x| <= 1. */
AVX2 static inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  __m256 nax = _mm256_sub_ps(_mm256_setzero_ps(), ax);
  __m256 e = exp8(nax);
  __m256 q = _mm256_div_ps(one, _mm256_add_ps(one, e));
  __m256 neg = _mm256_div_ps(e, _mm256_add_ps(one, e));
  return _mm256_blendv_ps(q, neg, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

/* tanh: x + x^3 P(x^2) below 0.625 (Cephes' tanhf polynomial), else
 * 1 - 2/(e^{2|x|} + 1) with |x| capped at 10 (tanh rounds to 1 from 9.01
 * on), then the sign of x put on both (so tanh(-0) = -0).  NaN stays NaN
 * through both branches. */
AVX2 static inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  __m256 ax = _mm256_andnot_ps(sign, x);
  __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422e-1f));
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  __m256 m = _mm256_min_ps(_mm256_set1_ps(10.0f), ax); /* NaN passes: min returns operand 2 */
  __m256 e = exp8_core(_mm256_add_ps(m, m));
  __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  __m256 y = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
  return _mm256_or_ps(y, _mm256_and_ps(sign, x));
}

/* ---- log, log2, log10 ---- */
/* x = 2^e (1 + f) with 1 + f in (sqrt(1/2), sqrt(2)] and f exact; returns
 * log(1 + f) = f - f^2/2 + f^3 P(f) (Cephes' logf polynomial) split as
 * f + *tail, and e as a float.  Subnormals are scaled by 2^23 first; the
 * callers set zero, negatives, inf and NaN at the end (log_specials). */
AVX2 static inline __m256 log8_parts(__m256 x, __m256 *tail, __m256 *fe) {
  __m256 tiny = CMP(x, _CMP_LT_OQ, 1.17549435e-38f);
  __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f)), tiny);
  __m256i bits = _mm256_castps_si256(xs);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  e = _mm256_sub_epi32(e, _mm256_and_si256(_mm256_castps_si256(tiny), _mm256_set1_epi32(23)));
  __m256i mbits = _mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff));
  __m256 m = _mm256_castsi256_ps(_mm256_or_si256(mbits, _mm256_set1_epi32(0x3f800000)));
  __m256 big = CMP(m, _CMP_GT_OQ, 1.41421356237f);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big)); /* big lanes are -1 */
  __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
  *fe = _mm256_cvtepi32_ps(e);
  __m256 z = _mm256_mul_ps(f, f);
  __m256 p = _mm256_set1_ps(7.0376836292e-2f);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-1.1514610310e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.1676998740e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-1.2420140846e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.4249322787e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-1.6668057665e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.0000714765e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-2.4999993993e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(3.3333331174e-1f));
  *tail = _mm256_fmadd_ps(z, _mm256_set1_ps(-0.5f), _mm256_mul_ps(_mm256_mul_ps(p, f), z));
  return f;
}

/* inf and NaN give themselves, 0 gives -inf, negatives NaN. */
AVX2 static inline __m256 log_specials(__m256 x, __m256 y) {
  __m256 self = _mm256_or_ps(CMP(x, _CMP_EQ_OQ, INFINITY), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  y = _mm256_blendv_ps(y, x, self);
  y = _mm256_blendv_ps(y, _mm256_set1_ps(-INFINITY), CMP(x, _CMP_EQ_OQ, 0.0f));
  return _mm256_blendv_ps(y, _mm256_set1_ps(NAN), CMP(x, _CMP_LT_OQ, 0.0f));
}

/* log2 x = e + log(1 + f) log2(e), the constant in two parts. */
AVX2 static inline __m256 log2_8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(1.4426950216293335f); /* log2(e) */
  const __m256 lo = _mm256_set1_ps(1.925963033500011e-8f);
  __m256 tail, fe, f = log8_parts(x, &tail, &fe);
  __m256 l = _mm256_add_ps(f, tail), l_lo = _mm256_sub_ps(tail, _mm256_sub_ps(l, f));
  __m256 y = _mm256_fmadd_ps(l, lo, _mm256_mul_ps(l_lo, hi));
  y = _mm256_add_ps(fe, _mm256_fmadd_ps(l, hi, y));
  return log_specials(x, y);
}

/* log10 x = e log10(2) + log(1 + f) log10(e), the constants in two parts. */
AVX2 static inline __m256 log10_8(__m256 x) {
  const __m256 e_hi = _mm256_set1_ps(0.4342944920063019f);   /* log10(e) */
  const __m256 e_lo = _mm256_set1_ps(-1.0103049952192578e-8f);
  const __m256 t_hi = _mm256_set1_ps(0.3010300099849701f);   /* log10(2) */
  const __m256 t_lo = _mm256_set1_ps(-1.432098883924482e-8f);
  __m256 tail, fe, f = log8_parts(x, &tail, &fe);
  __m256 l = _mm256_add_ps(f, tail), l_lo = _mm256_sub_ps(tail, _mm256_sub_ps(l, f));
  __m256 y = _mm256_fmadd_ps(l, e_lo, _mm256_fmadd_ps(l_lo, e_hi, _mm256_mul_ps(fe, t_lo)));
  y = _mm256_fmadd_ps(fe, t_hi, _mm256_fmadd_ps(l, e_hi, y));
  return log_specials(x, y);
}

/* ---- sin, cos ---- */
/* The argument is reduced in double, 4 lanes at a time: j = round(|x| 2/pi)
 * and r = |x| - j pi/2 with pi/2 in two parts (the first has 33 bits, so
 * j * it is exact for the |x| <= SINCOS_MAX handled here): r is then good
 * to double precision even next to a root.  Rounded to float, r feeds
 * Cephes' sinf/cosf polynomials on [-pi/4, pi/4], all 8 lanes at once.
 * Lanes beyond SINCOS_MAX, inf and NaN go to libm. */
#define SINCOS_MAX 1.0e6f

AVX2 static inline __m128 reduce4(__m128 xf, __m128i *quadrant) {
  __m256d x = _mm256_cvtps_pd(xf);
  __m256d j = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(0.63661977236758134308)),
                              ROUND_NEAREST);
  __m256d r = _mm256_fnmadd_pd(j, _mm256_set1_pd(1.5707963267341256141662598), x);
  r = _mm256_fnmadd_pd(j, _mm256_set1_pd(6.07710050650619224932e-11), r);
  *quadrant = _mm256_cvtpd_epi32(j);
  return _mm256_cvtpd_ps(r);
}

/* sin |x| (cosine = 0) or cos x (cosine = 1) for |x| <= SINCOS_MAX. */
AVX2 static inline __m256 sincos8(__m256 x, int cosine) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 ax = _mm256_andnot_ps(sign, x);
  __m128i q0, q1;
  __m128 r0 = reduce4(_mm256_castps256_ps128(ax), &q0);
  __m128 r1 = reduce4(_mm256_extractf128_ps(ax, 1), &q1);
  __m256 r = _mm256_set_m128(r1, r0);
  __m256i q = _mm256_add_epi32(_mm256_set_m128i(q1, q0), _mm256_set1_epi32(cosine));
  __m256 z = _mm256_mul_ps(r, r);
  __m256 ps = _mm256_set1_ps(-1.9515295891e-4f);
  ps = _mm256_fmadd_ps(ps, z, _mm256_set1_ps(8.3321608736e-3f));
  ps = _mm256_fmadd_ps(ps, z, _mm256_set1_ps(-1.6666654611e-1f));
  __m256 sn = _mm256_fmadd_ps(_mm256_mul_ps(ps, z), r, r);
  __m256 pc = _mm256_set1_ps(2.443315711809948e-5f);
  pc = _mm256_fmadd_ps(pc, z, _mm256_set1_ps(-1.388731625493765e-3f));
  pc = _mm256_fmadd_ps(pc, z, _mm256_set1_ps(4.166664568298827e-2f));
  __m256 cs = _mm256_fmadd_ps(_mm256_mul_ps(pc, z), z,
                              _mm256_fnmadd_ps(_mm256_set1_ps(0.5f), z, _mm256_set1_ps(1.0f)));
  /* quadrant q: sin gives (s, c, -s, -c)[q]; cos is sin shifted by one */
  __m256 odd = _mm256_castsi256_ps(_mm256_slli_epi32(q, 31));
  __m256 neg = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(q, 1), 31));
  __m256 y = _mm256_xor_ps(_mm256_blendv_ps(sn, cs, odd), neg);
  if (!cosine) y = _mm256_xor_ps(y, _mm256_and_ps(sign, x)); /* sin is odd */
  return y;
}

/* beyond SINCOS_MAX, inf, NaN */
#define SINCOS_HARD(x) \
  _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(SINCOS_MAX), _CMP_NLE_UQ)
AVX2 static inline __m256 sin8(__m256 x) {
  return redo_lanes(x, sincos8(x, 0), SINCOS_HARD(x), sinf);
}
AVX2 static inline __m256 cos8(__m256 x) {
  return redo_lanes(x, sincos8(x, 1), SINCOS_HARD(x), cosf);
}

/* ---- erf ---- */
/* MLX's erf (see cm_erf_f in unary_math.c), lane for lane the same
 * operations, so the vector and scalar loops give MLX's bits.  Its exp
 * is MLX's fast exp, whose integer part floor(x + 0.5) MLX takes in
 * double: done here in two halves of four doubles. */
AVX2 static inline __m256 floor_half_up(__m256 x) {
  const __m256d half = _mm256_set1_pd(0.5);
  __m256d lo = _mm256_floor_pd(_mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), half));
  __m256d hi =
      _mm256_floor_pd(_mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), half));
  return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

AVX2 static inline __m256 mlx_exp8(__m256 x0) {
  __m256 x = _mm256_mul_ps(x0, _mm256_set1_ps(1.442695f));
  __m256 ipart = floor_half_up(x);
  __m256 f = _mm256_sub_ps(x, ipart);
  __m256 p = _mm256_set1_ps(1.535336188319500e-4f);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.339887440266574e-3f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.618437357674640e-3f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550332471162809e-2f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402264791363012e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931472028550421e-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(ipart),
                                                 _mm256_set1_epi32(127)), 23);
  __m256 y = _mm256_mul_ps(_mm256_castsi256_ps(e), p);
  y = _mm256_blendv_ps(y, x0, _mm256_cmp_ps(x0, x0, _CMP_UNORD_Q));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), CMP(x0, _CMP_GT_OQ, 88.0f));
  return _mm256_blendv_ps(y, _mm256_setzero_ps(), CMP(x0, _CMP_LT_OQ, -88.0f));
}

AVX2 static inline __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 ax = _mm256_andnot_ps(sign, x);
  __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
                           _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), ax, _mm256_set1_ps(1.0f)));
  __m256 r = _mm256_fmadd_ps(_mm256_set1_ps(1.061405429f), t, _mm256_set1_ps(-1.453152027f));
  r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(1.421413741f));
  r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(-0.284496736f));
  r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(0.254829592f));
  __m256 nx = _mm256_xor_ps(x, sign);
  __m256 e = _mm256_xor_ps(mlx_exp8(_mm256_mul_ps(nx, x)), sign);
  __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(e, t), r, _mm256_set1_ps(1.0f));
  return _mm256_blendv_ps(_mm256_xor_ps(y, sign), y, CMP(x, _CMP_GT_OQ, 0.0f));
}

/* ---- erfinv ---- */
/* MLX's erfinv (cm_erfinv_f in unary_math.c): log(1 - a^2) from glibc,
 * lane by lane (MLX's x86 build calls logf), and both of MLX's
 * polynomials in the vector, the right one selected per lane. */
AVX2 static inline __m256 erfinv_poly(__m256 t, const float *c, int n) {
  __m256 p = _mm256_set1_ps(c[0]);
  for (int i = 1; i < n; i++) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(c[i]));
  return p;
}

AVX2 static inline __m256 erfinv8(__m256 a) {
  static const float lhs[9] = {3.03697567e-10f, 2.93243101e-8f, 1.22150334e-6f,
                               2.84108955e-5f,  3.93552968e-4f, 3.02698812e-3f,
                               4.83185798e-3f,  -2.64646143e-1f, 8.40016484e-1f};
  static const float rhs[10] = {5.43877832e-9f,  1.43285448e-7f, 1.22774793e-6f, 1.12963626e-7f,
                                -5.61530760e-5f, -1.47697632e-4f, 2.31468678e-3f,
                                1.15392581e-2f,  -2.32015476e-1f, 8.86226892e-1f};
  __m256 t = _mm256_fmadd_ps(a, _mm256_sub_ps(_mm256_setzero_ps(), a), _mm256_set1_ps(1.0f));
  float ts[8];
  _mm256_storeu_ps(ts, t);
  for (int i = 0; i < 8; i++) ts[i] = logf(ts[i]);
  t = _mm256_loadu_ps(ts);
  __m256 at = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), t);
  __m256 p = _mm256_blendv_ps(erfinv_poly(t, rhs, 10), erfinv_poly(t, lhs, 9),
                              CMP(at, _CMP_GT_OQ, 6.125f));
  return _mm256_mul_ps(a, p);
}

/* ---- exact ops ---- */
AVX2 static inline __m256 sqrt8(__m256 x) { return _mm256_sqrt_ps(x); }
AVX2 static inline __m256 rsqrt8(__m256 x) {
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(x));
}
AVX2 static inline __m256 recip8(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), x); }
AVX2 static inline __m256 floor8(__m256 x) { return _mm256_floor_ps(x); }
AVX2 static inline __m256 ceil8(__m256 x) { return _mm256_ceil_ps(x); }
AVX2 static inline __m256 round8(__m256 x) {
  return _mm256_round_ps(x, ROUND_NEAREST);
}

/* ---- loads and stores of 8 elements per storage type ---- */
AVX2 static inline __m256 load_f32(const void *p) { return _mm256_loadu_ps(p); }
AVX2 static inline void store_f32(void *p, __m256 v) { _mm256_storeu_ps(p, v); }
AVX2 static inline __m256 load_f16(const void *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
AVX2 static inline void store_f16(void *p, __m256 v) {
  _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, ROUND_NEAREST));
}
AVX2 static inline __m256 load_bf16(const void *p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
/* Round to nearest even; NaN keeps its top bits and is made quiet, as
 * cm_f32_to_bf16 does. */
AVX2 static inline void store_bf16(void *p, __m256 v) {
  __m256i u = _mm256_castps_si256(v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb);
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
  __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                   _mm256_set1_epi32(0x7f800000));
  r = _mm256_blendv_epi8(r, q, nan);
  /* 32 -> 16 bits: pack works per 128-bit half, so fix the order after */
  __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
  _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

/* One contiguous loop per (function, storage type).  The tail is copied
 * into a padded vector so it gets exactly the same arithmetic. */
#define VEC_LOOP(NAME, VF, SFX, T)                                                      \
  AVX2 static void NAME##_##SFX(void *dst, int64_t ds, const void *src, int64_t ss,    \
                                int64_t n, const cm_unary_params *p) {                  \
    (void)ds;                                                                           \
    (void)ss;                                                                           \
    (void)p;                                                                            \
    T *d = dst;                                                                         \
    const T *s = src;                                                                   \
    int64_t i = 0;                                                                      \
    for (; i + 8 <= n; i += 8) store_##SFX(d + i, VF(load_##SFX(s + i)));               \
    if (i < n) {                                                                        \
      T tin[8] = {0}, tout[8];                                                          \
      memcpy(tin, s + i, (size_t)(n - i) * sizeof(T));                                  \
      store_##SFX(tout, VF(load_##SFX(tin)));                                           \
      memcpy(d + i, tout, (size_t)(n - i) * sizeof(T));                                 \
    }                                                                                   \
  }
#define VEC_LOOPS(NAME, VF)                 \
  VEC_LOOP(NAME, VF, f32, float)            \
  VEC_LOOP(NAME, VF, f16, cm_f16_t)         \
  VEC_LOOP(NAME, VF, bf16, cm_bf16_t)

VEC_LOOPS(exp, mlx_exp8)
VEC_LOOPS(expm1, expm1_8)
VEC_LOOPS(tanh, tanh8)
VEC_LOOPS(sigmoid, sigmoid8)
VEC_LOOPS(log2, log2_8)
VEC_LOOPS(log10, log10_8)
VEC_LOOPS(sin, sin8)
VEC_LOOPS(cos, cos8)
VEC_LOOPS(erf, erf8)
VEC_LOOPS(erfinv, erfinv8)
VEC_LOOPS(sqrt, sqrt8)
VEC_LOOPS(rsqrt, rsqrt8)
VEC_LOOPS(recip, recip8)
VEC_LOOPS(floor, floor8)
VEC_LOOPS(ceil, ceil8)
VEC_LOOPS(round, round8)

#define E3(OP) [CM_FLOAT32] = OP##_f32, [CM_FLOAT16] = OP##_f16, [CM_BFLOAT16] = OP##_bf16
/* The rows whose simd column is SIMD (backend/cpu/unary_table.h). */
#define SIMD_ENTRY_SIMD(CODE, rows) [CM_UNARY_##CODE] = {E3(rows)},
#define SIMD_ENTRY_SCALAR(CODE, rows)
static const cm_unary_row_fn avx2_table[CM_UNARY_NUM_OPS][CM_NUM_DTYPES] = {
#define CM_X(CODE, cost, rows, types, simd) SIMD_ENTRY_##simd(CODE, rows)
    CM_CPU_UNARY_OPS(CM_X)
#undef CM_X
};

#endif

cm_unary_row_fn cm_unary_simd(cm_unary_op op, cm_dtype in) {
#ifdef CM_HAVE_AVX2_KERNELS
  if ((unsigned)op < CM_UNARY_NUM_OPS && (unsigned)in < CM_NUM_DTYPES &&
      cm_cpu_simd_enabled(CM_SIMD_UNARY))
    return avx2_table[op][in];
#else
  (void)op, (void)in;
#endif
  return NULL;
}
