/* Internals of the elementwise binary kernels: the row-loop template, the
 * per-type traits it is stamped with, and the scalar helpers whose C
 * versions would be undefined (signed overflow, INT_MIN / -1, shifts past
 * the width) or slow (half-precision conversions that gcc cannot inline).
 * Only backend/cpu/binary*.c include this. */
#ifndef CMLX_BACKEND_CPU_BINARY_IMPL_H
#define CMLX_BACKEND_CPU_BINARY_IMPL_H

#include <math.h>
#include <string.h>

#include "backend/cpu/types.h"
#include "ops/binary.h"

/* One row: n elements with per-operand strides (in elements).  o may be
 * exactly a or b (a donated input): each element is read before it is
 * written, so same-index aliasing is safe. */
typedef void (*cm_binary_row_fn)(void *o, const void *a, const void *b, int64_t n, int64_t so,
                                 int64_t sa, int64_t sb);

/* Row functions by op and (input) dtype; NULL where MLX has none. */
cm_binary_row_fn cm_binary_arith_row(cm_binary_op op, cm_dtype t);
cm_binary_row_fn cm_binary_cmp_row(cm_binary_op op, cm_dtype t);

/* float16 / bfloat16 (t) rows through a float32 row: chunks are widened,
 * f32 runs on them, and the result is narrowed (half_out) or, for
 * comparisons, written as bool directly (binary_half.c). */
void cm_half_row(cm_dtype t, cm_binary_row_fn f32, bool half_out, void *o, const void *a,
                 const void *b, int64_t n, int64_t so, int64_t sa, int64_t sb);
#define CM_HALF_ROWS(NAME, HALF_OUT)                                                         \
  static void NAME##_f16(void *o, const void *a, const void *b, int64_t n, int64_t so,       \
                         int64_t sa, int64_t sb) {                                           \
    cm_half_row(CM_FLOAT16, NAME##_f32, HALF_OUT, o, a, b, n, so, sa, sb);                   \
  }                                                                                          \
  static void NAME##_bf16(void *o, const void *a, const void *b, int64_t n, int64_t so,      \
                          int64_t sa, int64_t sb) {                                          \
    cm_half_row(CM_BFLOAT16, NAME##_f32, HALF_OUT, o, a, b, n, so, sa, sb);                  \
  }

/* ---- the row template ----------------------------------------------------
 * Four loops: vector-vector, scalar-vector, vector-scalar (all with a unit
 * output stride) and the general strided one.  The first three are plain
 * indexed loops over restrict pointers (restrict on the parameters: gcc
 * ignores it on locals), run as blocks of 16 with a constant inner trip
 * count plus a short tail: gcc's -O2 cost model vectorises only loops that
 * need no scalar epilogue, and the inner block loop qualifies for every
 * element type (a plain loop, or one split at n & ~15, does not reliably).
 * LOAD converts storage to the compute type CT, STORE back to OT. */
#define CM_BIN_LOOP(N, ...)                                    \
  {                                                            \
    int64_t i0 = 0;                                            \
    for (; i0 + 16 <= (N); i0 += 16)                           \
      for (int k = 0; k < 16; k++) {                           \
        int64_t i = i0 + k;                                    \
        __VA_ARGS__                                            \
      }                                                        \
    for (int64_t i = i0; i < (N); i++) __VA_ARGS__             \
  }
#define CM_BIN_ROW(NAME, IT, OT, CT, LOAD, STORE, EXPR)                                      \
  static void NAME(void *restrict o_, const void *restrict a_, const void *restrict b_,       \
                   int64_t n, int64_t so, int64_t sa, int64_t sb) {                          \
    OT *o = o_;                                                                              \
    const IT *a = a_;                                                                        \
    const IT *b = b_;                                                                        \
    if (so == 1 && sa == 1 && sb == 1) {                                                     \
      CM_BIN_LOOP(n, {                                                                  \
        CT x = LOAD(a[i]), y = LOAD(b[i]);                                                   \
        o[i] = STORE(EXPR);                                                                  \
      })                                                                                     \
    } else if (so == 1 && sa == 0 && sb == 1) {                                              \
      const CT x = LOAD(a[0]);                                                               \
      CM_BIN_LOOP(n, {                                                                  \
        CT y = LOAD(b[i]);                                                                   \
        o[i] = STORE(EXPR);                                                                  \
      })                                                                                     \
    } else if (so == 1 && sa == 1 && sb == 0) {                                              \
      const CT y = LOAD(b[0]);                                                               \
      CM_BIN_LOOP(n, {                                                                  \
        CT x = LOAD(a[i]);                                                                   \
        o[i] = STORE(EXPR);                                                                  \
      })                                                                                     \
    } else {                                                                                 \
      for (int64_t i = 0; i < n; i++) {                                                      \
        CT x = LOAD(a[i * sa]), y = LOAD(b[i * sb]);                                         \
        o[i * so] = STORE(EXPR);                                                             \
      }                                                                                      \
    }                                                                                        \
  }

#define CM_ID(v) (v)
#define CM_TO_BOOL(v) ((bool)((v) != 0))

/* ---- half precision, inline and branch-free so loops vectorise ----------
 * Bit-identical to cm_f16_to_f32 / cm_f32_to_f16 in core/dtype.c (checked
 * over every input; those are out-of-line calls), except that signalling
 * NaNs are quieted on the way in. */
static inline uint32_t cm_bits_f32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float cm_f32_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Selects are written as masks, not ?: -- gcc would otherwise sink the
 * float operations of the subnormal paths into branches (they may trap)
 * and then refuse to vectorise the loop. */
static inline uint32_t cm_mask32(bool c) { return 0u - (uint32_t)c; }

static inline float cm_h2f(uint16_t h) {
  uint32_t em = (uint32_t)(h & 0x7fffu) << 13; /* exponent and mantissa in float position */
  uint32_t e = em & 0x0f800000u;
  uint32_t norm = em + 0x38000000u; /* rebias 15 -> 127 */
  /* inf / NaN: exponent all ones, payload kept, NaNs quieted as the F16C
   * instruction (and so MLX) does: pow(1, sNaN) must still give 1 */
  uint32_t special = (em + 0x70000000u) | (cm_mask32(em > 0x0f800000u) & 0x00400000u);
  /* subnormal or zero: let the FPU renormalise man * 2^-24 */
  uint32_t sub = cm_bits_f32(cm_f32_bits(em + 0x38800000u) - cm_f32_bits(0x38800000u));
  uint32_t is_special = cm_mask32(e == 0x0f800000u), is_sub = cm_mask32(e == 0);
  uint32_t r = (special & is_special) | (sub & is_sub) | (norm & ~(is_special | is_sub));
  return cm_f32_bits(r | ((uint32_t)(h & 0x8000u) << 16));
}

static inline uint16_t cm_f2h(float f) {
  uint32_t u = cm_bits_f32(f);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  /* normal: rebias and round to nearest even in one add */
  uint32_t norm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  /* subnormal: adding 0.5 rounds to a multiple of 2^-24 (round to even by
   * the FPU); the low bits are then the half's subnormal mantissa */
  uint32_t sub = cm_bits_f32(cm_f32_bits(a) + 0.5f) - 0x3f000000u;
  /* NaN (quiet, payload kept), inf, and finite values that round past 65504 */
  uint32_t big = 0x7c00u | (cm_mask32(a > 0x7f800000u) & (0x200u | ((a >> 13) & 0x3ffu)));
  uint32_t is_big = cm_mask32(a >= 0x477ff000u), is_sub = cm_mask32(a < 0x38800000u);
  uint32_t r = (big & is_big) | (sub & is_sub) | (norm & ~(is_big | is_sub));
  return (uint16_t)(sign | r);
}

/* ---- type lists ----------------------------------------------------------
 * Integers: X(suffix, type, unsigned work type of at least int's width,
 * signed work type of the same width).  Arithmetic runs in the unsigned
 * work type so overflow wraps instead of being undefined. */
#define CM_UINT_TYPES(X)                          \
  X(u8, uint8_t, uint32_t, int32_t)               \
  X(u16, uint16_t, uint32_t, int32_t)             \
  X(u32, uint32_t, uint32_t, int32_t)             \
  X(u64, uint64_t, uint64_t, int64_t)
#define CM_SINT_TYPES(X)                          \
  X(i8, int8_t, uint32_t, int32_t)                \
  X(i16, int16_t, uint32_t, int32_t)              \
  X(i32, int32_t, uint32_t, int32_t)              \
  X(i64, int64_t, uint64_t, int64_t)
#define CM_INT_TYPES(X) CM_UINT_TYPES(X) CM_SINT_TYPES(X)

/* Floats with native rows: X(suffix, type, math suffix) where the math
 * suffix picks floorf/floor etc.  float16 and bfloat16 go through float32
 * (CM_HALF_ROWS). */
#define CM_FLOAT_TYPES(X) \
  X(f32, float, f)        \
  X(f64, double, )

/* ---- integer helpers: defined results where C's are not ------------------ */
#define CM_DEF_INT_HELPERS_COMMON(S, T, U, W)                                         \
  static inline T cm_shl_##S(T x, T y) {                                              \
    return (T)((U)x << ((U)y & (sizeof(U) * 8 - 1)));                                 \
  }                                                                                   \
  /* x ** y by squaring, wrapping; negative exponents give 0 as in MLX */            \
  static inline T cm_ipow_mag_##S(U base, U e) {                                      \
    U r = 1;                                                                          \
    while (e) {                                                                       \
      if (e & 1u) r *= base;                                                          \
      base *= base;                                                               \
      e >>= 1;                                                                        \
    }                                                                                 \
    return (T)r;                                                                      \
  }

/* Unsigned: x // 0 = 0, x % 0 = x (MLX's results; C traps). */
#define CM_DEF_UINT_HELPERS(S, T, U, W)                                               \
  CM_DEF_INT_HELPERS_COMMON(S, T, U, W)                                               \
  static inline T cm_fdiv_##S(T x, T y) { return y == 0 ? (T)0 : (T)(x / y); }        \
  static inline T cm_rem_##S(T x, T y) { return y == 0 ? x : (T)(x % y); }            \
  static inline T cm_ipow_##S(T x, T y) { return cm_ipow_mag_##S((U)x, (U)y); }       \
  static inline T cm_shr_##S(T x, T y) {                                              \
    return (T)((U)x >> ((U)y & (sizeof(U) * 8 - 1)));                                 \
  }

/* Signed: floor division and Python's sign rule for the remainder; a zero
 * divisor gives 0 and x like MLX; a -1 divisor is special-cased so that
 * INT_MIN // -1 wraps to INT_MIN (and % gives 0) instead of trapping. */
#define CM_DEF_SINT_HELPERS(S, T, U, W)                                               \
  CM_DEF_INT_HELPERS_COMMON(S, T, U, W)                                               \
  static inline T cm_fdiv_##S(T x, T y) {                                             \
    if (y == 0) return 0;                                                             \
    if (y == -1) return (T)(0u - (U)x);                                               \
    T q = (T)(x / y);                                                                 \
    if ((T)(x % y) != 0 && ((x < 0) != (y < 0))) q = (T)(q - 1);                      \
    return q;                                                                         \
  }                                                                                   \
  static inline T cm_rem_##S(T x, T y) {                                              \
    if (y == 0) return x;                                                             \
    if (y == -1) return 0;                                                            \
    T r = (T)(x % y);                                                                 \
    if (r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);                               \
    return r;                                                                         \
  }                                                                                   \
  static inline T cm_ipow_##S(T x, T y) {                                             \
    return y < 0 ? (T)0 : cm_ipow_mag_##S((U)x, (U)y);                                \
  }                                                                                   \
  /* arithmetic shift of the value widened to int (or int64), count masked */        \
  static inline T cm_shr_##S(T x, T y) {                                              \
    return (T)((W)x >> ((U)y & (sizeof(U) * 8 - 1)));                                 \
  }

CM_UINT_TYPES(CM_DEF_UINT_HELPERS)
CM_SINT_TYPES(CM_DEF_SINT_HELPERS)

/* ---- complex helpers: MLX orders complex numbers lexicographically ------ */
static inline bool cm_c_isnan(cm_c64_t z) { return isnan(crealf(z)) || isnan(cimagf(z)); }
static inline bool cm_c_lt(cm_c64_t a, cm_c64_t b) {
  return crealf(a) < crealf(b) || (crealf(a) == crealf(b) && cimagf(a) < cimagf(b));
}
static inline bool cm_c_le(cm_c64_t a, cm_c64_t b) {
  return crealf(a) < crealf(b) || (crealf(a) == crealf(b) && cimagf(a) <= cimagf(b));
}
static inline bool cm_c_gt(cm_c64_t a, cm_c64_t b) { return cm_c_lt(b, a); }
static inline bool cm_c_ge(cm_c64_t a, cm_c64_t b) { return cm_c_le(b, a); }

#endif
