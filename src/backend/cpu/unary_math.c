#include "backend/cpu/unary_math.h"

#include <string.h>

/* Initial estimate of erfinv(y), |y| < 1: M. Giles' single-precision
 * approximation ("Approximating the erfinv function", GPU Computing Gems),
 * good to about 1e-7 relative, then polished below. */
static double erfinv_estimate(double y) {
  double w = -log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * y;
}

double cm_erfinv_d(double y) {
  if (isnan(y) || y == 0) return y; /* keeps NaN and the sign of zero */
  double a = fabs(y);
  if (a >= 1.0) return a == 1.0 ? copysign(INFINITY, y) : NAN;
  double x = erfinv_estimate(y);
  /* Newton on f(x) = erf(x) - y, f'(x) = 2/sqrt(pi) e^{-x^2}.  Near |y| = 1
   * the residual is formed from erfc and 1 -+ y (both exact there), so it
   * does not cancel; two steps take 1e-7 to full double precision. */
  for (int i = 0; i < 2; i++) {
    double r;
    if (y > 0.5) r = (1.0 - y) - erfc(x);
    else if (y < -0.5) r = erfc(-x) - (1.0 + y);
    else r = erf(x) - y;
    double d = 1.12837916709551257390 * exp(-x * x); /* 2/sqrt(pi) */
    if (d == 0) break;
    x -= r / d;
  }
  return x;
}

/* ---- MLX's float formulas ---- */

float cm_mlx_exp_f(float x0) {
  float x = x0 * 1.442695f; /* x / ln 2 */
  /* MLX adds the 0.5 in double (a double literal), so the rounding of the
   * integer part is exact */
  float ipart = (float)floor((double)x + 0.5);
  float f = x - ipart;
  float p = 1.535336188319500e-4f;
  p = fmaf(p, f, 1.339887440266574e-3f);
  p = fmaf(p, f, 9.618437357674640e-3f);
  p = fmaf(p, f, 5.550332471162809e-2f);
  p = fmaf(p, f, 2.402264791363012e-1f);
  p = fmaf(p, f, 6.931472028550421e-1f);
  p = fmaf(p, f, 1.000000000000000f);
  if (isnan(x0)) return x0;
  if (x0 > 88.0f) return INFINITY;
  if (x0 < -88.0f) return 0.0f;
  /* 2^ipart built in the exponent field (ipart + 127 is in [0, 254] here) */
  uint32_t bits = (uint32_t)((int32_t)ipart + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return scale * p;
}

float cm_erf_f(float x) {
  float t = 1.0f / fmaf(0.3275911f, fabsf(x), 1.0f);
  float r = fmaf(1.061405429f, t, -1.453152027f);
  r = fmaf(r, t, 1.421413741f);
  r = fmaf(r, t, -0.284496736f);
  r = fmaf(r, t, 0.254829592f);
  float e = -cm_mlx_exp_f(-x * x);
  float y = fmaf(e * t, r, 1.0f);
  return x > 0 ? y : -y;
}

float cm_erfinv_f(float a) {
  float t = logf(fmaf(a, 0.0f - a, 1.0f)), p;
  if (fabsf(t) > 6.125f) { /* MLX: max error 2.358 ulp */
    p = 3.03697567e-10f;
    p = fmaf(p, t, 2.93243101e-8f);
    p = fmaf(p, t, 1.22150334e-6f);
    p = fmaf(p, t, 2.84108955e-5f);
    p = fmaf(p, t, 3.93552968e-4f);
    p = fmaf(p, t, 3.02698812e-3f);
    p = fmaf(p, t, 4.83185798e-3f);
    p = fmaf(p, t, -2.64646143e-1f);
    p = fmaf(p, t, 8.40016484e-1f);
  } else { /* max error 2.350 ulp */
    p = 5.43877832e-9f;
    p = fmaf(p, t, 1.43285448e-7f);
    p = fmaf(p, t, 1.22774793e-6f);
    p = fmaf(p, t, 1.12963626e-7f);
    p = fmaf(p, t, -5.61530760e-5f);
    p = fmaf(p, t, -1.47697632e-4f);
    p = fmaf(p, t, 2.31468678e-3f);
    p = fmaf(p, t, 1.15392581e-2f);
    p = fmaf(p, t, -2.32015476e-1f);
    p = fmaf(p, t, 8.86226892e-1f);
  }
  return a * p;
}

/* log(1 + z) without losing digits for small z: the modulus is taken as
 * 0.5 * log1p(2x + x^2 + y^2) when |z| < 1/2 (MLX's formulation). */
cm_c64_t cm_clog1p(cm_c64_t z) {
  float x = crealf(z), y = cimagf(z);
  float theta = atan2f(y, x + 1.0f);
  if (cabsf(z) < 0.5f) {
    float r = x * (2.0f + x) + y * y;
    if (r == 0) return CMPLXF(x, theta); /* underflow: log1p(r)/2 ~ x */
    return CMPLXF(0.5f * log1pf(r), theta);
  }
  return CMPLXF(logf(hypotf(x + 1.0f, y)), theta);
}
