/* Scalar math for the unary kernels: the per-element functions of each op
 * in the three computation domains (float, double, complex64), written so
 * the row loops can inline them.  float16 and bfloat16 use the float ones.
 * Accuracy: these use libm (glibc) for the transcendental functions, so
 * results are within an ulp or two of the true value in every domain;
 * float64 is computed in double (MLX's CPU build computes most float64
 * unary ops in float32 precision — being more accurate is deliberate). */
#ifndef CMLX_BACKEND_CPU_UNARY_MATH_H
#define CMLX_BACKEND_CPU_UNARY_MATH_H

#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/cpu/types.h"

#ifndef CMPLXF
#define CMPLXF(re, im) __builtin_complex((float)(re), (float)(im))
#endif

/* erfinv in double: accurate to an ulp or so (an initial estimate refined
 * with Newton steps on erf/erfc). */
double cm_erfinv_d(double y);

/* float erf and erfinv are MLX's own formulas (mlx/backend/cpu/simd/
 * math.h), evaluated exactly as MLX's x86 build does (one element at a
 * time, fmaf, glibc's logf), so that they give MLX's bits: its samplers
 * (normal, truncated_normal) are built on them and must reproduce MLX's
 * numbers.  Max error about 2.4 ulp (erfinv) and 1e-7 absolute (erf).
 * cm_mlx_exp_f is MLX's fast exp (Cephes' polynomial for 2^f), inside erf
 * and float exp itself (categorical's weights): up to 63 ulp off near
 * |x| = 88, 0.3 ulp on average, 0 below -88 and inf above 88. */
float cm_mlx_exp_f(float x);
float cm_erf_f(float x);
float cm_erfinv_f(float y);

/* Complex functions MLX defines itself rather than taking from libm. */
cm_c64_t cm_clog1p(cm_c64_t z);

/* ---- sign, sigmoid: MLX's definitions ---- */
static inline float cm_sign_f(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f; }
static inline double cm_sign_d(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }
/* z / |z|, with 0 kept as is (and its signed zeros); the division is a full
 * complex division, so inf and NaN inputs give NaN parts as in MLX. */
static inline cm_c64_t cm_sign_c(cm_c64_t z) {
  if (crealf(z) == 0 && cimagf(z) == 0) return z;
  return z / CMPLXF(cabsf(z), 0.0f);
}

/* 1/(1+e^-x) without overflow: with e = e^-|x| <= 1, x >= 0 gives 1/(1+e)
 * and x < 0 gives e/(1+e), each one rounding from exact. */
static inline float cm_sigmoid_f(float x) {
  float e = expf(-fabsf(x));
  return x < 0 ? e / (1.0f + e) : 1.0f / (1.0f + e);
}
static inline double cm_sigmoid_d(double x) {
  double e = exp(-fabs(x));
  return x < 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
}

/* ---- complex: ops MLX builds from the complex log ---- */
static inline cm_c64_t cm_clog2(cm_c64_t z) {
  cm_c64_t l = clogf(z);
  const float k = (float)0.69314718055994530942; /* MLX divides by M_LN2 as float */
  return CMPLXF(crealf(l) / k, cimagf(l) / k);
}
static inline cm_c64_t cm_clog10(cm_c64_t z) {
  cm_c64_t l = clogf(z);
  const float k = 2.30258509299404568402f; /* log(10.0f), as std::log10(complex) */
  return CMPLXF(crealf(l) / k, cimagf(l) / k);
}
/* A complex times the real scalar k written as (k, 0): MLX multiplies by
 * a complex64 scalar, so this is a full complex product, with C's Annex G
 * recovery of infinities from NaN parts (as std::complex has). */
static inline cm_c64_t cm_cmul_real(cm_c64_t z, float k) { return z * CMPLXF(k, 0.0f); }

/* ---- predicates ---- */
static inline bool cm_isposinf_f(double x) { return x == INFINITY; }
static inline bool cm_isneginf_f(double x) { return x == -INFINITY; }
static inline bool cm_cisnan(cm_c64_t z) { return isnan(crealf(z)) || isnan(cimagf(z)); }
static inline bool cm_cisinf(cm_c64_t z) { return isinf(crealf(z)) || isinf(cimagf(z)); }
static inline bool cm_cisfinite(cm_c64_t z) { return isfinite(crealf(z)) && isfinite(cimagf(z)); }
/* MLX compares with inf as a complex64 (inf + 0j). */
static inline bool cm_cisposinf(cm_c64_t z) { return crealf(z) == INFINITY && cimagf(z) == 0; }
static inline bool cm_cisneginf(cm_c64_t z) { return crealf(z) == -INFINITY && cimagf(z) == 0; }

/* ---- rounding constants to a dtype ---- */
static inline float cm_round_to_f16(float x) { return cm_f16_to_f32(cm_f32_to_f16(x)); }
static inline float cm_round_to_bf16(float x) { return cm_bf16_to_f32(cm_f32_to_bf16(x)); }

#endif
