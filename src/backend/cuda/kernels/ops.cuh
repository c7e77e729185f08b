// One device function per elementwise op of the CUDA backend's table
// (elementwise_table.h): u_<name> for the unary ops, b_<name> for the
// binary ones, overloaded on the compute type.  The results follow the
// CPU backend's rules (backend/cpu/unary_rows.c, binary_impl.h): integer
// arithmetic wraps, x // 0 is 0 and x % 0 is x, floor division and the
// remainder take the divisor's sign, maximum and minimum propagate NaN.

// ---- integers: wrapping arithmetic through the unsigned type ----
template <class T> struct cm_unsigned { typedef T t; };
template <> struct cm_unsigned<i8> { typedef u8 t; };
template <> struct cm_unsigned<i16> { typedef u16 t; };
template <> struct cm_unsigned<i32> { typedef u32 t; };
template <> struct cm_unsigned<i64> { typedef u64 t; };
#define CM_U(T, x) ((typename cm_unsigned<T>::t)(x))

// ---- unary ----
template <class T> __device__ __forceinline__ T u_abs(T x) {
  if (cm_is_float<T>::v) return x < 0 ? -x : (x == 0 ? (T)0 : x);
  return cm_is_signed<T>::v && x < 0 ? (T)(0 - CM_U(T, x)) : x;
}
__device__ __forceinline__ bool u_abs(bool x) { return x; }
__device__ __forceinline__ float u_abs(cm_c64 x) { return cm_cabs(x); }

template <class T> __device__ __forceinline__ T u_neg(T x) {
  if (cm_is_float<T>::v) return -x;
  return (T)(0 - CM_U(T, x));
}
__device__ __forceinline__ cm_c64 u_neg(cm_c64 x) { return -x; }

template <class T> __device__ __forceinline__ T u_sign(T x) {
  if (cm_is_float<T>::v && isnan((double)x)) return x;
  if (!cm_is_signed<T>::v) return (T)(x != 0);
  return (T)((x > 0) - (x < 0));
}
__device__ __forceinline__ bool u_sign(bool x) { return x; }
__device__ __forceinline__ cm_c64 u_sign(cm_c64 x) {
  float m = cm_cabs(x);
  return m == 0 ? cm_cplx(0.0f, 0.0f) : cm_cplx(x.re / m, x.im / m);
}

template <class T> __device__ __forceinline__ T u_sq(T x) {
  if (cm_is_float<T>::v) return x * x;
  return (T)(CM_U(T, x) * CM_U(T, x));
}
__device__ __forceinline__ bool u_sq(bool x) { return x; }
__device__ __forceinline__ cm_c64 u_sq(cm_c64 x) { return x * x; }

// Floating functions: float and double through the math library's
// single- and double-precision versions.
#define CM_FLOAT_FN(NAME, F, D)                                        \
  __device__ __forceinline__ float NAME(float x) { return F(x); }      \
  __device__ __forceinline__ double NAME(double x) { return D(x); }
CM_FLOAT_FN(u_sqrt, sqrtf, sqrt)
CM_FLOAT_FN(u_rsqrt, rsqrtf, rsqrt)
CM_FLOAT_FN(u_exp, expf, exp)
CM_FLOAT_FN(u_expm1, expm1f, expm1)
CM_FLOAT_FN(u_log, logf, log)
CM_FLOAT_FN(u_log2, log2f, log2)
CM_FLOAT_FN(u_log10, log10f, log10)
CM_FLOAT_FN(u_log1p, log1pf, log1p)
CM_FLOAT_FN(u_sin, sinf, sin)
CM_FLOAT_FN(u_cos, cosf, cos)
CM_FLOAT_FN(u_tan, tanf, tan)
CM_FLOAT_FN(u_asin, asinf, asin)
CM_FLOAT_FN(u_acos, acosf, acos)
CM_FLOAT_FN(u_atan, atanf, atan)
CM_FLOAT_FN(u_sinh, sinhf, sinh)
CM_FLOAT_FN(u_cosh, coshf, cosh)
CM_FLOAT_FN(u_tanh, tanhf, tanh)
CM_FLOAT_FN(u_asinh, asinhf, asinh)
CM_FLOAT_FN(u_acosh, acoshf, acosh)
CM_FLOAT_FN(u_atanh, atanhf, atanh)
CM_FLOAT_FN(u_erf, erff, erf)
CM_FLOAT_FN(u_erfinv, erfinvf, erfinv)
CM_FLOAT_FN(u_floor, floorf, floor)
CM_FLOAT_FN(u_ceil, ceilf, ceil)
// Round half to even, as NumPy and MLX.
CM_FLOAT_FN(u_round, rintf, rint)
__device__ __forceinline__ float u_recip(float x) { return 1.0f / x; }
__device__ __forceinline__ double u_recip(double x) { return 1.0 / x; }
__device__ __forceinline__ float u_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ double u_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
__device__ __forceinline__ float u_deg(float x) { return x * (float)(180.0 / 3.14159265358979323846); }
__device__ __forceinline__ double u_deg(double x) { return x * (180.0 / 3.14159265358979323846); }
__device__ __forceinline__ float u_rad(float x) { return x * (float)(3.14159265358979323846 / 180.0); }
__device__ __forceinline__ double u_rad(double x) { return x * (3.14159265358979323846 / 180.0); }
// Complex versions of the functions with a simple closed form.
__device__ __forceinline__ cm_c64 u_sqrt(cm_c64 x) { return cm_csqrt(x); }
__device__ __forceinline__ cm_c64 u_recip(cm_c64 x) { return cm_cplx(1.0f, 0.0f) / x; }
__device__ __forceinline__ cm_c64 u_rsqrt(cm_c64 x) { return u_recip(cm_csqrt(x)); }
__device__ __forceinline__ cm_c64 u_exp(cm_c64 x) { return cm_cexp(x); }
__device__ __forceinline__ cm_c64 u_log(cm_c64 x) { return cm_clog(x); }
__device__ __forceinline__ cm_c64 u_log2(cm_c64 x) {
  cm_c64 l = cm_clog(x);
  return cm_cplx(l.re / 0.69314718055994531f, l.im / 0.69314718055994531f);
}
__device__ __forceinline__ cm_c64 u_log10(cm_c64 x) {
  cm_c64 l = cm_clog(x);
  return cm_cplx(l.re / 2.30258509299404568f, l.im / 2.30258509299404568f);
}
__device__ __forceinline__ cm_c64 u_sin(cm_c64 x) {
  return cm_cplx(sinf(x.re) * coshf(x.im), cosf(x.re) * sinhf(x.im));
}
__device__ __forceinline__ cm_c64 u_cos(cm_c64 x) {
  return cm_cplx(cosf(x.re) * coshf(x.im), -sinf(x.re) * sinhf(x.im));
}
__device__ __forceinline__ cm_c64 u_sinh(cm_c64 x) {
  return cm_cplx(sinhf(x.re) * cosf(x.im), coshf(x.re) * sinf(x.im));
}
__device__ __forceinline__ cm_c64 u_cosh(cm_c64 x) {
  return cm_cplx(coshf(x.re) * cosf(x.im), sinhf(x.re) * sinf(x.im));
}
__device__ __forceinline__ cm_c64 u_round(cm_c64 x) { return cm_cplx(rintf(x.re), rintf(x.im)); }
__device__ __forceinline__ cm_c64 u_conj(cm_c64 x) { return cm_cplx(x.re, -x.im); }
__device__ __forceinline__ float u_real(cm_c64 x) { return x.re; }
template <class T> __device__ __forceinline__ T u_imag(T x) { return (T)0; }
__device__ __forceinline__ float u_imag(cm_c64 x) { return x.im; }
__device__ __forceinline__ cm_c64 u_deg(cm_c64 x) {
  float k = (float)(180.0 / 3.14159265358979323846);
  return cm_cplx(x.re * k, x.im * k);
}
__device__ __forceinline__ cm_c64 u_rad(cm_c64 x) {
  float k = (float)(3.14159265358979323846 / 180.0);
  return cm_cplx(x.re * k, x.im * k);
}

// Predicates: integers and bool are never NaN or infinite.
template <class T> __device__ __forceinline__ bool u_isnan(T x) { return cm_is_float<T>::v && isnan((double)x); }
template <class T> __device__ __forceinline__ bool u_isinf(T x) { return cm_is_float<T>::v && isinf((double)x); }
template <class T> __device__ __forceinline__ bool u_isposinf(T x) { return u_isinf(x) && x > 0; }
template <class T> __device__ __forceinline__ bool u_isneginf(T x) { return u_isinf(x) && x < 0; }
template <class T> __device__ __forceinline__ bool u_isfinite(T x) { return !cm_is_float<T>::v || isfinite((double)x); }
__device__ __forceinline__ bool u_isnan(cm_c64 x) { return cm_isnan(x); }
__device__ __forceinline__ bool u_isinf(cm_c64 x) { return isinf(x.re) || isinf(x.im); }
__device__ __forceinline__ bool u_isposinf(cm_c64 x) { return isinf(x.re) && x.re > 0; }
__device__ __forceinline__ bool u_isneginf(cm_c64 x) { return isinf(x.re) && x.re < 0; }
__device__ __forceinline__ bool u_isfinite(cm_c64 x) { return isfinite(x.re) && isfinite(x.im); }
template <class T> __device__ __forceinline__ bool u_lnot(T x) { return !(x != 0); }
__device__ __forceinline__ bool u_lnot(cm_c64 x) { return x.re == 0 && x.im == 0; }
template <class T> __device__ __forceinline__ T u_inv(T x) { return (T)~x; }
__device__ __forceinline__ bool u_inv(bool x) { return !x; }

// Round to a number of decimals: rint(x * 10^d) / 10^d with MLX's float
// constants k and q (rounded to the array's dtype by the host).
__device__ __forceinline__ float u_rdec(float x, float k, float q) { return rintf(x * k) * q; }
__device__ __forceinline__ double u_rdec(double x, float k, float q) { return rint(x * (double)k) * (double)q; }
__device__ __forceinline__ cm_c64 u_rdec(cm_c64 x, float k, float q) {
  return cm_cplx(rintf(x.re * k) * q, rintf(x.im * k) * q);
}
template <class T> __device__ __forceinline__ T u_n2n(T x, float nan, float pinf, float ninf) {
  if (isnan(x)) return (T)nan;
  if (isinf(x)) return x > 0 ? (T)pinf : (T)ninf;
  return x;
}
__device__ __forceinline__ cm_c64 u_n2n(cm_c64 x, float nan, float pinf, float ninf) {
  return cm_cplx(u_n2n(x.re, nan, pinf, ninf), u_n2n(x.im, nan, pinf, ninf));
}

// ---- binary ----
template <class T> __device__ __forceinline__ T b_add(T x, T y) {
  if (cm_is_float<T>::v) return x + y;
  return (T)(CM_U(T, x) + CM_U(T, y));
}
__device__ __forceinline__ bool b_add(bool x, bool y) { return x || y; }
__device__ __forceinline__ cm_c64 b_add(cm_c64 x, cm_c64 y) { return x + y; }
template <class T> __device__ __forceinline__ T b_sub(T x, T y) {
  if (cm_is_float<T>::v) return x - y;
  return (T)(CM_U(T, x) - CM_U(T, y));
}
__device__ __forceinline__ bool b_sub(bool x, bool y) { return x != y; }
__device__ __forceinline__ cm_c64 b_sub(cm_c64 x, cm_c64 y) { return x - y; }
template <class T> __device__ __forceinline__ T b_mul(T x, T y) {
  if (cm_is_float<T>::v) return x * y;
  return (T)(CM_U(T, x) * CM_U(T, y));
}
__device__ __forceinline__ bool b_mul(bool x, bool y) { return x && y; }
__device__ __forceinline__ cm_c64 b_mul(cm_c64 x, cm_c64 y) { return x * y; }
__device__ __forceinline__ float b_div(float x, float y) { return x / y; }
__device__ __forceinline__ double b_div(double x, double y) { return x / y; }
__device__ __forceinline__ cm_c64 b_div(cm_c64 x, cm_c64 y) { return x / y; }

template <class T> __device__ __forceinline__ T b_fdiv(T x, T y) {
  if (y == 0) return (T)0;
  if (cm_is_signed<T>::v && y == (T)-1) return (T)(0 - CM_U(T, x));
  T q = (T)(x / y);
  if (cm_is_signed<T>::v && (T)(x % y) != 0 && ((x < 0) != (y < 0))) q = (T)(q - 1);
  return q;
}
__device__ __forceinline__ float b_fdiv(float x, float y) { return floorf(x / y); }
__device__ __forceinline__ double b_fdiv(double x, double y) { return floor(x / y); }
__device__ __forceinline__ bool b_fdiv(bool x, bool y) { return x && y; }

template <class T> __device__ __forceinline__ T b_rem(T x, T y) {
  if (y == 0) return x;
  if (cm_is_signed<T>::v && y == (T)-1) return (T)0;
  T r = (T)(x % y);
  if (cm_is_signed<T>::v && r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);
  return r;
}
__device__ __forceinline__ float b_rem(float x, float y) {
  float r = fmodf(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
__device__ __forceinline__ double b_rem(double x, double y) {
  double r = fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
__device__ __forceinline__ bool b_rem(bool x, bool y) { return x && !y; }

template <class T> __device__ __forceinline__ T b_pow(T x, T y) {
  // integers: by squaring, wrapping; a negative exponent gives 0 (MLX)
  if (cm_is_signed<T>::v && y < 0) return (T)0;
  typename cm_unsigned<T>::t r = 1, b = CM_U(T, x), e = CM_U(T, y);
  while (e) {
    if (e & 1u) r *= b;
    b *= b;
    e >>= 1;
  }
  return (T)r;
}
__device__ __forceinline__ float b_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double b_pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ bool b_pow(bool x, bool y) { return x || !y; }

template <class T> __device__ __forceinline__ T b_max(T x, T y) {
  if (cm_is_float<T>::v && (isnan((double)x) || isnan((double)y))) return isnan((double)x) ? x : y;
  return x > y ? x : y;
}
template <class T> __device__ __forceinline__ T b_min(T x, T y) {
  if (cm_is_float<T>::v && (isnan((double)x) || isnan((double)y))) return isnan((double)x) ? x : y;
  return x < y ? x : y;
}
__device__ __forceinline__ cm_c64 b_max(cm_c64 x, cm_c64 y) {
  if (cm_isnan(x)) return x;
  if (cm_isnan(y)) return y;
  return x > y ? x : y;
}
__device__ __forceinline__ cm_c64 b_min(cm_c64 x, cm_c64 y) {
  if (cm_isnan(x)) return x;
  if (cm_isnan(y)) return y;
  return x < y ? x : y;
}
__device__ __forceinline__ float b_atan2(float x, float y) { return atan2f(x, y); }
__device__ __forceinline__ double b_atan2(double x, double y) { return atan2(x, y); }
template <class T> __device__ __forceinline__ T b_lae(T x, T y) {
  if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
  T m = x > y ? x : y, d = x > y ? y - x : x - y;
  if (isinf(m)) return m;
  return m + log1p(exp(d));
}

template <class T> __device__ __forceinline__ bool b_eq(T x, T y) { return x == y; }
template <class T> __device__ __forceinline__ bool b_ne(T x, T y) { return x != y; }
template <class T> __device__ __forceinline__ bool b_lt(T x, T y) { return x < y; }
template <class T> __device__ __forceinline__ bool b_le(T x, T y) { return x <= y; }
template <class T> __device__ __forceinline__ bool b_gt(T x, T y) { return x > y; }
template <class T> __device__ __forceinline__ bool b_ge(T x, T y) { return x >= y; }
__device__ __forceinline__ bool b_land(bool x, bool y) { return x && y; }
__device__ __forceinline__ bool b_lor(bool x, bool y) { return x || y; }
__device__ __forceinline__ bool b_lxor(bool x, bool y) { return x != y; }
template <class T> __device__ __forceinline__ T b_band(T x, T y) { return (T)(x & y); }
template <class T> __device__ __forceinline__ T b_bor(T x, T y) { return (T)(x | y); }
template <class T> __device__ __forceinline__ T b_bxor(T x, T y) { return (T)(x ^ y); }
__device__ __forceinline__ bool b_band(bool x, bool y) { return x && y; }
__device__ __forceinline__ bool b_bor(bool x, bool y) { return x || y; }
__device__ __forceinline__ bool b_bxor(bool x, bool y) { return x != y; }
// Shift counts are masked to the width (C leaves larger ones undefined);
// a right shift of a signed value is arithmetic.
template <class T> __device__ __forceinline__ T b_shl(T x, T y) {
  typedef typename cm_unsigned<T>::t U;
  const U w = sizeof(T) < 4 ? 32 : sizeof(T) * 8;
  return (T)((U)x << ((U)y & (w - 1)));
}
template <class T> __device__ __forceinline__ T b_shr(T x, T y) {
  typedef typename cm_unsigned<T>::t U;
  const U w = sizeof(T) < 4 ? 32 : sizeof(T) * 8;
  if (cm_is_signed<T>::v) return (T)((long long)x >> ((U)y & (w - 1)));
  return (T)((U)x >> ((U)y & (w - 1)));
}
