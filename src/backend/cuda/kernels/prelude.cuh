// The prelude of every kernel the CUDA backend compiles with NVRTC: the
// storage types of cmlx's dtypes, conversions between them, and one device
// function per elementwise op.  It includes no header (NVRTC on a machine
// with only the driver and the NVRTC library has none to include), so the
// half-precision conversions are PTX instructions and bit arithmetic.
//
// Storage types: bool is one byte (cm_b8), float16 and bfloat16 are their
// bits (cm_f16, cm_bf16), complex64 is two floats (cm_c64); the others are
// the C types.  Arithmetic runs on compute types: float for float16 and
// bfloat16 (rounded back on every store, as the CPU does), bool for bool.

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

struct cm_b8 { u8 v; };
struct cm_f16 { u16 b; };
struct cm_bf16 { u16 b; };
struct cm_c64 { float re, im; };

__device__ __forceinline__ float cm_h2f(cm_f16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.b));
  return f;
}
__device__ __forceinline__ cm_f16 cm_f2h(float f) {
  cm_f16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.b) : "f"(f));
  return h;
}
__device__ __forceinline__ float cm_bf2f(cm_bf16 h) { return __uint_as_float(((u32)h.b) << 16); }
// Round to nearest even; NaNs stay NaN (quieted), as the CPU's conversion.
__device__ __forceinline__ cm_bf16 cm_f2bf(float f) {
  u32 u = __float_as_uint(f);
  cm_bf16 r;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    r.b = (u16)((u >> 16) | 0x40u);
    return r;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  r.b = (u16)(u >> 16);
  return r;
}

__device__ __forceinline__ cm_c64 cm_cplx(float re, float im) {
  cm_c64 z;
  z.re = re;
  z.im = im;
  return z;
}

// ---- compute types ----
template <class S> struct cm_compute { typedef S t; };
template <> struct cm_compute<cm_b8> { typedef bool t; };
template <> struct cm_compute<cm_f16> { typedef float t; };
template <> struct cm_compute<cm_bf16> { typedef float t; };

// ---- conversions: cm_conv<To>::from(x) for every storage or compute type ----
template <class To> struct cm_conv {
  template <class F> static __device__ __forceinline__ To from(F x) { return (To)x; }
  static __device__ __forceinline__ To from(cm_c64 x) { return (To)x.re; }
  static __device__ __forceinline__ To from(cm_f16 x) { return (To)cm_h2f(x); }
  static __device__ __forceinline__ To from(cm_bf16 x) { return (To)cm_bf2f(x); }
  static __device__ __forceinline__ To from(cm_b8 x) { return (To)(x.v != 0); }
};
template <> struct cm_conv<bool> {
  template <class F> static __device__ __forceinline__ bool from(F x) { return x != 0; }
  static __device__ __forceinline__ bool from(cm_c64 x) { return x.re != 0 || x.im != 0; }
  static __device__ __forceinline__ bool from(cm_f16 x) { return cm_h2f(x) != 0; }
  static __device__ __forceinline__ bool from(cm_bf16 x) { return cm_bf2f(x) != 0; }
  static __device__ __forceinline__ bool from(cm_b8 x) { return x.v != 0; }
};
template <> struct cm_conv<cm_b8> {
  template <class F> static __device__ __forceinline__ cm_b8 from(F x) {
    cm_b8 r;
    r.v = cm_conv<bool>::from(x) ? 1 : 0;
    return r;
  }
};
template <> struct cm_conv<cm_f16> {
  template <class F> static __device__ __forceinline__ cm_f16 from(F x) {
    return cm_f2h(cm_conv<float>::from(x));
  }
  static __device__ __forceinline__ cm_f16 from(cm_f16 x) { return x; }
};
template <> struct cm_conv<cm_bf16> {
  template <class F> static __device__ __forceinline__ cm_bf16 from(F x) {
    return cm_f2bf(cm_conv<float>::from(x));
  }
  static __device__ __forceinline__ cm_bf16 from(cm_bf16 x) { return x; }
};
template <> struct cm_conv<cm_c64> {
  template <class F> static __device__ __forceinline__ cm_c64 from(F x) {
    return cm_cplx(cm_conv<float>::from(x), 0.0f);
  }
  static __device__ __forceinline__ cm_c64 from(cm_c64 x) { return x; }
};

template <class S> __device__ __forceinline__ typename cm_compute<S>::t cm_load(S x) {
  return cm_conv<typename cm_compute<S>::t>::from(x);
}

// ---- type traits for the op functions ----
template <class T> struct cm_is_float { static const bool v = false; };
template <> struct cm_is_float<float> { static const bool v = true; };
template <> struct cm_is_float<double> { static const bool v = true; };
template <class T> struct cm_is_signed { static const bool v = (T)(-1) < (T)0; };
template <> struct cm_is_signed<bool> { static const bool v = false; };

// ---- complex arithmetic ----
__device__ __forceinline__ cm_c64 operator+(cm_c64 a, cm_c64 b) { return cm_cplx(a.re + b.re, a.im + b.im); }
__device__ __forceinline__ cm_c64 operator-(cm_c64 a, cm_c64 b) { return cm_cplx(a.re - b.re, a.im - b.im); }
__device__ __forceinline__ cm_c64 operator-(cm_c64 a) { return cm_cplx(-a.re, -a.im); }
__device__ __forceinline__ cm_c64 operator*(cm_c64 a, cm_c64 b) {
  return cm_cplx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
__device__ __forceinline__ cm_c64 operator/(cm_c64 a, cm_c64 b) {
  // Smith's algorithm: no overflow for large b
  if (fabsf(b.re) >= fabsf(b.im)) {
    float r = b.im / b.re, d = b.re + b.im * r;
    return cm_cplx((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  float r = b.re / b.im, d = b.im + b.re * r;
  return cm_cplx((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
__device__ __forceinline__ bool operator==(cm_c64 a, cm_c64 b) { return a.re == b.re && a.im == b.im; }
__device__ __forceinline__ bool operator!=(cm_c64 a, cm_c64 b) { return !(a == b); }
// MLX orders complex numbers lexicographically
__device__ __forceinline__ bool operator<(cm_c64 a, cm_c64 b) { return a.re < b.re || (a.re == b.re && a.im < b.im); }
__device__ __forceinline__ bool operator<=(cm_c64 a, cm_c64 b) { return a.re < b.re || (a.re == b.re && a.im <= b.im); }
__device__ __forceinline__ bool operator>(cm_c64 a, cm_c64 b) { return b < a; }
__device__ __forceinline__ bool operator>=(cm_c64 a, cm_c64 b) { return b <= a; }
__device__ __forceinline__ float cm_cabs(cm_c64 z) { return hypotf(z.re, z.im); }
__device__ __forceinline__ cm_c64 cm_cexp(cm_c64 z) {
  float e = expf(z.re), s, c;
  sincosf(z.im, &s, &c);
  return cm_cplx(e * c, e * s);
}
__device__ __forceinline__ cm_c64 cm_clog(cm_c64 z) { return cm_cplx(logf(cm_cabs(z)), atan2f(z.im, z.re)); }
__device__ __forceinline__ cm_c64 cm_csqrt(cm_c64 z) {
  if (z.re == 0 && z.im == 0) return cm_cplx(0.0f, z.im);
  float m = cm_cabs(z), t = sqrtf(0.5f * (m + fabsf(z.re)));
  if (z.re >= 0) return cm_cplx(t, z.im / (2 * t));
  return cm_cplx(fabsf(z.im) / (2 * t), copysignf(t, z.im));
}
__device__ __forceinline__ bool cm_isnan(cm_c64 z) { return isnan(z.re) || isnan(z.im); }
