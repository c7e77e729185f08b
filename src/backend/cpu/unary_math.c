#include "backend/cpu/unary_math.h"

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

float cm_erfinv_f(float y) { return (float)cm_erfinv_d(y); }

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
