/* The scalar row loops of every unary op, one per (op, input dtype), and
 * the table that finds them.  Each family below stamps the same element
 * expression out over its dtypes: float16/bfloat16 load to float, compute,
 * and round back; float64 computes in double; complex64 in C's complex
 * float; integers in themselves with wrap-around done in unsigned
 * arithmetic (C's signed overflow is undefined). */

#include "backend/cpu/types.h"
#include "backend/cpu/unary_impl.h"
#include "backend/cpu/unary_math.h"
#include "backend/cpu/unary_table.h"

#define ROW(NAME, TI, TO, PRE, ...)                                                        \
  static void NAME(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n,          \
                   const cm_unary_params *p) {                                             \
    TO *d = dst;                                                                           \
    const TI *s = src;                                                                     \
    (void)p;                                                                               \
    PRE;                                                                                   \
    if (ds == 1 && ss == 1) {                                                              \
      for (int64_t i = 0; i < n; i++) {                                                    \
        TI v = s[i];                                                                       \
        (void)v;                                                                           \
        d[i] = (__VA_ARGS__);                                                              \
      }                                                                                    \
    } else {                                                                               \
      for (int64_t i = 0; i < n; i++) {                                                    \
        TI v = s[i * ss];                                                                  \
        (void)v;                                                                           \
        d[i * ds] = (__VA_ARGS__);                                                         \
      }                                                                                    \
    }                                                                                      \
  }

#define NOTHING (void)0
#define LD16(v) cm_f16_to_f32(v)
#define LDBF(v) cm_bf16_to_f32(v)
#define ST16(x) cm_f32_to_f16(x)
#define STBF(x) cm_f32_to_bf16(x)

/* Same-dtype float ops: FF on float (also for the halves), DF on double. */
#define FLOAT_ROWS(OP, FF, DF)                                  \
  ROW(OP##_f32, float, float, NOTHING, FF(v))                   \
  ROW(OP##_f16, cm_f16_t, cm_f16_t, NOTHING, ST16(FF(LD16(v)))) \
  ROW(OP##_bf16, cm_bf16_t, cm_bf16_t, NOTHING, STBF(FF(LDBF(v)))) \
  ROW(OP##_f64, double, double, NOTHING, DF(v))
#define COMPLEX_ROW(OP, CF) ROW(OP##_c64, cm_c64_t, cm_c64_t, NOTHING, CF(v))

/* Predicates: float/double/complex tests; integers and bool give K. */
#define PRED_ROWS(OP, FP, CP, K)                             \
  ROW(OP##_f32, float, bool, NOTHING, FP(v))                 \
  ROW(OP##_f16, cm_f16_t, bool, NOTHING, FP(LD16(v)))        \
  ROW(OP##_bf16, cm_bf16_t, bool, NOTHING, FP(LDBF(v)))      \
  ROW(OP##_f64, double, bool, NOTHING, FP(v))                \
  ROW(OP##_c64, cm_c64_t, bool, NOTHING, CP(v))              \
  INT_ROWS_OUT(OP, bool, K)                                  \
  ROW(OP##_b8, bool, bool, NOTHING, K)

/* Integer families over all eight integer types. */
#define ALL_INTS(X)                                                                        \
  X(i8, int8_t) X(i16, int16_t) X(i32, int32_t) X(i64, int64_t) X(u8, uint8_t) X(u16, uint16_t) \
  X(u32, uint32_t) X(u64, uint64_t)
#define INT_ROWS_OUT(OP, TO, ...)                        \
  ROW(OP##_u8, uint8_t, TO, NOTHING, __VA_ARGS__)        \
  ROW(OP##_u16, uint16_t, TO, NOTHING, __VA_ARGS__)      \
  ROW(OP##_u32, uint32_t, TO, NOTHING, __VA_ARGS__)      \
  ROW(OP##_u64, uint64_t, TO, NOTHING, __VA_ARGS__)      \
  ROW(OP##_i8, int8_t, TO, NOTHING, __VA_ARGS__)         \
  ROW(OP##_i16, int16_t, TO, NOTHING, __VA_ARGS__)       \
  ROW(OP##_i32, int32_t, TO, NOTHING, __VA_ARGS__)       \
  ROW(OP##_i64, int64_t, TO, NOTHING, __VA_ARGS__)
/* Same-type integer rows: the expression sees v; its value is cast to the
 * row's type (wrapping, as unsigned arithmetic does). */
#define INT_ROWS(OP, ...)                                                    \
  ROW(OP##_u8, uint8_t, uint8_t, NOTHING, (uint8_t)(__VA_ARGS__))            \
  ROW(OP##_u16, uint16_t, uint16_t, NOTHING, (uint16_t)(__VA_ARGS__))        \
  ROW(OP##_u32, uint32_t, uint32_t, NOTHING, (uint32_t)(__VA_ARGS__))        \
  ROW(OP##_u64, uint64_t, uint64_t, NOTHING, (uint64_t)(__VA_ARGS__))        \
  ROW(OP##_i8, int8_t, int8_t, NOTHING, (int8_t)(__VA_ARGS__))               \
  ROW(OP##_i16, int16_t, int16_t, NOTHING, (int16_t)(__VA_ARGS__))           \
  ROW(OP##_i32, int32_t, int32_t, NOTHING, (int32_t)(__VA_ARGS__))           \
  ROW(OP##_i64, int64_t, int64_t, NOTHING, (int64_t)(__VA_ARGS__))

/* ---- element functions that are not single libm calls ---- */
static inline float rsqrt_f(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt_d(double x) { return 1.0 / sqrt(x); }
static inline cm_c64_t rsqrt_c(cm_c64_t z) { return 1.0f / csqrtf(z); }
static inline float recip_f(float x) { return 1.0f / x; }
static inline double recip_d(double x) { return 1.0 / x; }
static inline cm_c64_t recip_c(cm_c64_t z) { return 1.0f / z; }
static inline cm_c64_t neg_c(cm_c64_t z) { return -z; }
static inline float sq_f(float x) { return x * x; }
static inline double sq_d(double x) { return x * x; }
static inline cm_c64_t sq_c(cm_c64_t z) { return z * z; }
static inline cm_c64_t round_c(cm_c64_t z) { return CMPLXF(rintf(crealf(z)), rintf(cimagf(z))); }
static inline bool isinf_f(double x) { return isinf(x); }
static inline bool isnan_f(double x) { return isnan(x); }
static inline bool isfinite_f(double x) { return isfinite(x); }
static inline bool not_f(double x) { return x == 0; }
static inline bool not_c(cm_c64_t z) { return crealf(z) == 0 && cimagf(z) == 0; }
/* abs of a signed integer: the most negative value maps to itself. */
#define IABS(v) ((v) < 0 ? 0 - (uint64_t)(v) : (uint64_t)(v))

/* ---- the families ---- */
/* abs/negative on the halves only touch the sign bit (exact, NaN kept). */
ROW(abs_f32, float, float, NOTHING, fabsf(v))
ROW(abs_f64, double, double, NOTHING, fabs(v))
ROW(abs_f16, cm_f16_t, cm_f16_t, NOTHING, (cm_f16_t)(v & 0x7fffu))
ROW(abs_bf16, cm_bf16_t, cm_bf16_t, NOTHING, (cm_bf16_t)(v & 0x7fffu))
ROW(abs_c64, cm_c64_t, float, NOTHING, cabsf(v))
ROW(abs_i8, int8_t, int8_t, NOTHING, (int8_t)IABS(v))
ROW(abs_i16, int16_t, int16_t, NOTHING, (int16_t)IABS(v))
ROW(abs_i32, int32_t, int32_t, NOTHING, (int32_t)IABS(v))
ROW(abs_i64, int64_t, int64_t, NOTHING, (int64_t)IABS(v))
ROW(abs_u8, uint8_t, uint8_t, NOTHING, v)
ROW(abs_u16, uint16_t, uint16_t, NOTHING, v)
ROW(abs_u32, uint32_t, uint32_t, NOTHING, v)
ROW(abs_u64, uint64_t, uint64_t, NOTHING, v)
ROW(abs_b8, bool, bool, NOTHING, v)

ROW(neg_f32, float, float, NOTHING, -v)
ROW(neg_f64, double, double, NOTHING, -v)
ROW(neg_f16, cm_f16_t, cm_f16_t, NOTHING, (cm_f16_t)(v ^ 0x8000u))
ROW(neg_bf16, cm_bf16_t, cm_bf16_t, NOTHING, (cm_bf16_t)(v ^ 0x8000u))
COMPLEX_ROW(neg, neg_c)
INT_ROWS(neg, 0 - (uint64_t)v)

FLOAT_ROWS(sign, cm_sign_f, cm_sign_d)
COMPLEX_ROW(sign, cm_sign_c)
ROW(sign_i8, int8_t, int8_t, NOTHING, (int8_t)((v > 0) - (v < 0)))
ROW(sign_i16, int16_t, int16_t, NOTHING, (int16_t)((v > 0) - (v < 0)))
ROW(sign_i32, int32_t, int32_t, NOTHING, (int32_t)((v > 0) - (v < 0)))
ROW(sign_i64, int64_t, int64_t, NOTHING, (int64_t)((v > 0) - (v < 0)))
ROW(sign_u8, uint8_t, uint8_t, NOTHING, (uint8_t)(v != 0))
ROW(sign_u16, uint16_t, uint16_t, NOTHING, (uint16_t)(v != 0))
ROW(sign_u32, uint32_t, uint32_t, NOTHING, (uint32_t)(v != 0))
ROW(sign_u64, uint64_t, uint64_t, NOTHING, (uint64_t)(v != 0))
ROW(sign_b8, bool, bool, NOTHING, v)

FLOAT_ROWS(sq, sq_f, sq_d)
COMPLEX_ROW(sq, sq_c)
INT_ROWS(sq, (uint64_t)v * (uint64_t)v)
ROW(sq_b8, bool, bool, NOTHING, v)

FLOAT_ROWS(sqrt, sqrtf, sqrt)
COMPLEX_ROW(sqrt, csqrtf)
FLOAT_ROWS(rsqrt, rsqrt_f, rsqrt_d)
COMPLEX_ROW(rsqrt, rsqrt_c)
FLOAT_ROWS(recip, recip_f, recip_d)
COMPLEX_ROW(recip, recip_c)
FLOAT_ROWS(exp, cm_mlx_exp_f, exp)
COMPLEX_ROW(exp, cexpf)
FLOAT_ROWS(expm1, expm1f, expm1)
FLOAT_ROWS(log, logf, log)
COMPLEX_ROW(log, clogf)
FLOAT_ROWS(log2, log2f, log2)
COMPLEX_ROW(log2, cm_clog2)
FLOAT_ROWS(log10, log10f, log10)
COMPLEX_ROW(log10, cm_clog10)
FLOAT_ROWS(log1p, log1pf, log1p)
COMPLEX_ROW(log1p, cm_clog1p)
FLOAT_ROWS(sin, sinf, sin)
COMPLEX_ROW(sin, csinf)
FLOAT_ROWS(cos, cosf, cos)
COMPLEX_ROW(cos, ccosf)
FLOAT_ROWS(tan, tanf, tan)
COMPLEX_ROW(tan, ctanf)
FLOAT_ROWS(asin, asinf, asin)
COMPLEX_ROW(asin, casinf)
FLOAT_ROWS(acos, acosf, acos)
COMPLEX_ROW(acos, cacosf)
FLOAT_ROWS(atan, atanf, atan)
COMPLEX_ROW(atan, catanf)
FLOAT_ROWS(sinh, sinhf, sinh)
COMPLEX_ROW(sinh, csinhf)
FLOAT_ROWS(cosh, coshf, cosh)
COMPLEX_ROW(cosh, ccoshf)
FLOAT_ROWS(tanh, tanhf, tanh)
COMPLEX_ROW(tanh, ctanhf)
FLOAT_ROWS(asinh, asinhf, asinh)
COMPLEX_ROW(asinh, casinhf)
FLOAT_ROWS(acosh, acoshf, acosh)
COMPLEX_ROW(acosh, cacoshf)
FLOAT_ROWS(atanh, atanhf, atanh)
COMPLEX_ROW(atanh, catanhf)
FLOAT_ROWS(sigmoid, cm_sigmoid_f, cm_sigmoid_d)
/* float64 erf is MLX's, its float32 formula widened, so that float32 and
 * float64 erf agree as MLX's own test expects (the double erf differs from
 * that formula by up to 1.5e-7); except for tiny arguments, where the
 * formula is nothing but its error and the double erf keeps relative
 * accuracy (both still agree there within any absolute tolerance). */
static inline double erf_as_mlx(double x) {
  return fabs(x) < 1e-5 ? erf(x) : (double)cm_erf_f((float)x);
}
FLOAT_ROWS(erf, cm_erf_f, erf_as_mlx)
FLOAT_ROWS(erfinv, cm_erfinv_f, cm_erfinv_d)
FLOAT_ROWS(floor, floorf, floor)
FLOAT_ROWS(ceil, ceilf, ceil)
FLOAT_ROWS(round, rintf, rint)
COMPLEX_ROW(round, round_c)

PRED_ROWS(isnan, isnan_f, cm_cisnan, false)
PRED_ROWS(isinf, isinf_f, cm_cisinf, false)
PRED_ROWS(isfinite, isfinite_f, cm_cisfinite, true)
PRED_ROWS(isposinf, cm_isposinf_f, cm_cisposinf, false)
PRED_ROWS(isneginf, cm_isneginf_f, cm_cisneginf, false)
PRED_ROWS(lnot, not_f, not_c, v == 0)

INT_ROWS(inv, ~v)
ROW(inv_b8, bool, bool, NOTHING, !v)

ROW(real_c64, cm_c64_t, float, NOTHING, crealf(v))
ROW(imag_c64, cm_c64_t, float, NOTHING, cimagf(v))
COMPLEX_ROW(conj, conjf)
/* imag of a real array is zeros of its dtype (all-zero bits for each). */
#define ZERO_ROW(SFX, T) ROW(imag_##SFX, T, T, NOTHING, (T)0)
ALL_INTS(ZERO_ROW)
ZERO_ROW(f32, float)
ZERO_ROW(f64, double)
ZERO_ROW(f16, cm_f16_t)
ZERO_ROW(bf16, cm_bf16_t)
ZERO_ROW(b8, bool)

/* x * k with k a constant rounded to the array's dtype first (MLX
 * multiplies by a scalar array of that dtype).  The halves' product of two
 * half values is exact in float, so one rounding on the store matches. */
#define SCALE_ROWS(OP, K)                                                                 \
  ROW(OP##_f32, float, float, const float k = (float)(K), v * k)                         \
  ROW(OP##_f64, double, double, const double k = (K), v * k)                             \
  ROW(OP##_f16, cm_f16_t, cm_f16_t, const float k = cm_round_to_f16((float)(K)),         \
      ST16(LD16(v) * k))                                                                 \
  ROW(OP##_bf16, cm_bf16_t, cm_bf16_t, const float k = cm_round_to_bf16((float)(K)),     \
      STBF(LDBF(v) * k))                                                                 \
  ROW(OP##_c64, cm_c64_t, cm_c64_t, const float k = (float)(K), cm_cmul_real(v, k))
SCALE_ROWS(deg, 180.0 / 3.14159265358979323846)
SCALE_ROWS(rad, 3.14159265358979323846 / 180.0)

/* round(x, d) = rint(x * 10^d) * 10^-d, each product rounded to the dtype
 * as MLX's separate multiplies are. */
ROW(rdec_f32, float, float, const float k = p->scale; const float q = p->inv_scale,
    rintf(v * k) * q)
ROW(rdec_f64, double, double, const double k = p->scale; const double q = p->inv_scale,
    rint(v * k) * q)
ROW(rdec_f16, cm_f16_t, cm_f16_t,
    const float k = cm_round_to_f16(p->scale); const float q = cm_round_to_f16(p->inv_scale),
    ST16(rintf(cm_round_to_f16(LD16(v) * k)) * q))
ROW(rdec_bf16, cm_bf16_t, cm_bf16_t,
    const float k = cm_round_to_bf16(p->scale); const float q = cm_round_to_bf16(p->inv_scale),
    STBF(rintf(cm_round_to_bf16(LDBF(v) * k)) * q))
ROW(rdec_c64, cm_c64_t, cm_c64_t, const float k = p->scale; const float q = p->inv_scale,
    cm_cmul_real(round_c(cm_cmul_real(v, k)), q))

/* nan_to_num: the replacement values are rounded to the dtype first. */
static inline float nan_to_num(float x, float if_nan, float if_pos, float if_neg) {
  return isnan(x) ? if_nan : x == INFINITY ? if_pos : x == -INFINITY ? if_neg : x;
}
ROW(n2n_f32, float, float, const float a = p->nan; const float b = p->posinf;
    const float c = p->neginf, nan_to_num(v, a, b, c))
ROW(n2n_f16, cm_f16_t, cm_f16_t, const float a = cm_round_to_f16(p->nan);
    const float b = cm_round_to_f16(p->posinf); const float c = cm_round_to_f16(p->neginf),
    ST16(nan_to_num(LD16(v), a, b, c)))
ROW(n2n_bf16, cm_bf16_t, cm_bf16_t, const float a = cm_round_to_bf16(p->nan);
    const float b = cm_round_to_bf16(p->posinf); const float c = cm_round_to_bf16(p->neginf),
    STBF(nan_to_num(LDBF(v), a, b, c)))
ROW(n2n_f64, double, double, const double a = p->nan; const double b = p->posinf;
    const double c = p->neginf,
    isnan(v) ? a : v == INFINITY ? b : v == -INFINITY ? c : v)
/* complex: NaN in either part, or exactly inf + 0j / -inf + 0j (MLX tests
 * with isnan and with equality against a complex64 inf). */
ROW(n2n_c64, cm_c64_t, cm_c64_t, const cm_c64_t a = CMPLXF(p->nan, 0.0f);
    const cm_c64_t b = CMPLXF(p->posinf, 0.0f); const cm_c64_t c = CMPLXF(p->neginf, 0.0f),
    cm_cisnan(v) ? a : cm_cisposinf(v) ? b : cm_cisneginf(v) ? c : v)

/* ---- the table ---- */
#define E_FLOAT(OP)                                                      \
  [CM_FLOAT16] = OP##_f16, [CM_FLOAT32] = OP##_f32, [CM_FLOAT64] = OP##_f64, \
  [CM_BFLOAT16] = OP##_bf16
#define E_C(OP) [CM_COMPLEX64] = OP##_c64
#define E_INT(OP)                                                                           \
  [CM_UINT8] = OP##_u8, [CM_UINT16] = OP##_u16, [CM_UINT32] = OP##_u32,                     \
  [CM_UINT64] = OP##_u64, [CM_INT8] = OP##_i8, [CM_INT16] = OP##_i16, [CM_INT32] = OP##_i32, \
  [CM_INT64] = OP##_i64
#define E_B(OP) [CM_BOOL] = OP##_b8
#define E_INEXACT(OP) E_FLOAT(OP), E_C(OP)
#define E_ALL(OP) E_B(OP), E_INT(OP), E_FLOAT(OP), E_C(OP)

/* The types column of backend/cpu/unary_table.h. */
#define TYPES_ALL(OP) E_ALL(OP)
#define TYPES_NUMERIC(OP) E_INT(OP), E_FLOAT(OP), E_C(OP)
#define TYPES_INEXACT(OP) E_INEXACT(OP)
#define TYPES_FLOATS(OP) E_FLOAT(OP)
#define TYPES_COMPLEX(OP) E_C(OP)
#define TYPES_BOOL_INTS(OP) E_B(OP), E_INT(OP)

/* Every op's rows, from its rows and types columns: a row the types
 * promise but this file lacks is an undeclared identifier. */
static const cm_unary_row_fn table[CM_UNARY_NUM_OPS][CM_NUM_DTYPES] = {
#define CM_X(CODE, cost, rows, types, ...) [CM_UNARY_##CODE] = {TYPES_##types(rows)},
    CM_CPU_UNARY_OPS(CM_X)
#undef CM_X
};

cm_unary_row_fn cm_unary_row(cm_unary_op op, cm_dtype in) {
  if ((unsigned)op >= CM_UNARY_NUM_OPS || (unsigned)in >= CM_NUM_DTYPES) return NULL;
  return table[op][in];
}
