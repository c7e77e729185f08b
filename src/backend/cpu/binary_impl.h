/* Internals of the elementwise binary kernels: the row-loop template, the
 * per-type traits it is stamped with, and the scalar helpers whose C
 * versions would be undefined (signed overflow, INT_MIN / -1, shifts past
 * the width) or slow (half-precision conversions that gcc cannot inline).
 * Only backend/cpu/binary*.c include this. */
#ifndef CMLX_BACKEND_CPU_BINARY_IMPL_H
#define CMLX_BACKEND_CPU_BINARY_IMPL_H

#include <math.h>
#include <string.h>

#include "backend/cpu/binary_table.h"
#include "backend/cpu/types.h"
#include "ops/binary.h"

/* What one call of a row function covers: `rows` rows of n elements.
 * Operand k (0 the output, 1 a, 2 b) steps s[k] elements along a row and
 * r[k] elements from one row to the next; a stride of 0 is a broadcast.
 * Many short rows go in one call, so (N, 3) + (3,) costs no call per row. */
typedef struct cm_bin_run {
  int64_t n, rows;
  int64_t s[3], r[3];
} cm_bin_run;

/* The output may be exactly a or b (a donated input): each element is
 * read before it is written, so same-index aliasing is safe. */
typedef void (*cm_binary_row_fn)(void *o, const void *a, const void *b, const cm_bin_run *run);

/* Row functions by op and (input) dtype; NULL where MLX has none.  The
 * _avx2 tables hold the same loops built for AVX2 (binary_avx2.c), for
 * CPUs that have it. */
cm_binary_row_fn cm_binary_arith_row(cm_binary_op op, cm_dtype t);
cm_binary_row_fn cm_binary_cmp_row(cm_binary_op op, cm_dtype t);
cm_binary_row_fn cm_binary_arith_row_avx2(cm_binary_op op, cm_dtype t);
cm_binary_row_fn cm_binary_cmp_row_avx2(cm_binary_op op, cm_dtype t);
/* The row the Binary kernel runs for (op, input dtype) on this CPU (AVX2
 * or baseline, arithmetic or comparison table); NULL where MLX has none. */
cm_binary_row_fn cm_binary_row_for(cm_binary_op op, cm_dtype t);
#ifdef CM_BINARY_AVX2_BUILD
#define CM_ROW_LOOKUP(name) name##_avx2
#else
#define CM_ROW_LOOKUP(name) name
#endif

/* Table rows: designated initialisers naming P_<suffix> for each dtype of
 * a types column of backend/cpu/binary_table.h. */
#define CM_ROW_BOOL(P) [CM_BOOL] = P##_b8
#define CM_ROW_INTS(P)                                                                      \
  [CM_UINT8] = P##_u8, [CM_UINT16] = P##_u16, [CM_UINT32] = P##_u32, [CM_UINT64] = P##_u64, \
  [CM_INT8] = P##_i8, [CM_INT16] = P##_i16, [CM_INT32] = P##_i32, [CM_INT64] = P##_i64
#define CM_ROW_FLOATS(P) \
  [CM_FLOAT16] = P##_f16, [CM_FLOAT32] = P##_f32, [CM_FLOAT64] = P##_f64, [CM_BFLOAT16] = P##_bf16
#define CM_ROW_BOOL_INTS(P) CM_ROW_BOOL(P), CM_ROW_INTS(P)
#define CM_ROW_REAL(P) CM_ROW_BOOL(P), CM_ROW_INTS(P), CM_ROW_FLOATS(P)
#define CM_ROW_INEXACT(P) CM_ROW_FLOATS(P), [CM_COMPLEX64] = P##_c64
#define CM_ROW_ALL(P) CM_ROW_REAL(P), [CM_COMPLEX64] = P##_c64

/* The row table of a kernel file, generated from the CPU's op table: in the file
 * HERE (ARITH or CMP), CM_ROW_ENTRY(HERE, file, CODE, rows, types) is the
 * entry [CM_BINARY_<CODE>] = {<rows>_<dtype>, ...} when the op's file
 * column names this file, and nothing otherwise.  A row function the types
 * column promises but the file lacks is an undeclared identifier. */
#define CM_ROW_FILE_ARITH_ARITH(...) __VA_ARGS__
#define CM_ROW_FILE_ARITH_CMP(...)
#define CM_ROW_FILE_CMP_ARITH(...)
#define CM_ROW_FILE_CMP_CMP(...) __VA_ARGS__
#define CM_ROW_ENTRY(HERE, file, CODE, rows, types) \
  CM_ROW_FILE_##HERE##_##file([CM_BINARY_##CODE] = {CM_ROW_##types(rows)}, )
#define CM_ROW_TABLE(NAME, HERE)                                           \
  static const cm_binary_row_fn NAME[CM_BINARY_NUM_OPS][CM_NUM_DTYPES] = { \
      CM_CPU_BINARY_OPS(CM_ROW_TABLE_X_##HERE)}
#define CM_ROW_TABLE_X_ARITH(CODE, cost, file, rows, types) \
  CM_ROW_ENTRY(ARITH, file, CODE, rows, types)
#define CM_ROW_TABLE_X_CMP(CODE, cost, file, rows, types) CM_ROW_ENTRY(CMP, file, CODE, rows, types)

/* float16 / bfloat16 (t) rows through a float32 row: chunks are widened,
 * f32 runs on them, and the result is narrowed (half_out) or, for
 * comparisons, written as bool directly (binary_half.c). */
void cm_half_row(cm_dtype t, cm_binary_row_fn f32, bool half_out, void *o, const void *a,
                 const void *b, const cm_bin_run *run);
#define CM_HALF_ROWS(NAME, HALF_OUT)                                                      \
  static void NAME##_f16(void *o, const void *a, const void *b, const cm_bin_run *run) {  \
    cm_half_row(CM_FLOAT16, NAME##_f32, HALF_OUT, o, a, b, run);                          \
  }                                                                                       \
  static void NAME##_bf16(void *o, const void *a, const void *b, const cm_bin_run *run) { \
    cm_half_row(CM_BFLOAT16, NAME##_f32, HALF_OUT, o, a, b, run);                         \
  }

/* ---- the row template ----------------------------------------------------
 * Four loops: vector-vector, scalar-vector, vector-scalar (all with a unit
 * output stride) and the general strided one.  The first three are plain
 * indexed loops over restrict pointers (restrict on the parameters: gcc
 * ignores it on locals), run as blocks of 16 with a constant inner trip
 * count plus a short tail: gcc's -O2 cost model vectorises only loops that
 * need no scalar epilogue, and the inner block loop qualifies for every
 * element type (a plain loop, or one split at n & ~15, does not reliably).
 * EXPR computes the result from x and y (of type IT) and is stored as OT. */
#define CM_BIN_LOOP(N, ...)                        \
  {                                                \
    int64_t i0 = 0;                                \
    for (; i0 + 16 <= (N); i0 += 16)               \
      for (int k = 0; k < 16; k++) {               \
        int64_t i = i0 + k;                        \
        __VA_ARGS__                                \
      }                                            \
    for (int64_t i = i0; i < (N); i++) __VA_ARGS__ \
  }
#define CM_BIN_ROW(NAME, IT, OT, EXPR)                                                  \
  static void NAME(void *restrict o_, const void *restrict a_, const void *restrict b_, \
                   const cm_bin_run *run) {                                             \
    const int64_t n = run->n, rows = run->rows, so = run->s[0], sa = run->s[1],         \
                  sb = run->s[2], ro = run->r[0], ra = run->r[1], rb = run->r[2];       \
    for (int64_t r = 0; r < rows; r++) {                                                \
      OT *o = (OT *)o_ + r * ro;                                                        \
      const IT *a = (const IT *)a_ + r * ra;                                            \
      const IT *b = (const IT *)b_ + r * rb;                                            \
      if (so == 1 && sa == 1 && sb == 1) {                                              \
        CM_BIN_LOOP(n, {                                                                \
          IT x = a[i], y = b[i];                                                        \
          o[i] = (EXPR);                                                                \
        })                                                                              \
      } else if (so == 1 && sa == 0 && sb == 1) {                                       \
        const IT x = a[0];                                                              \
        CM_BIN_LOOP(n, {                                                                \
          IT y = b[i];                                                                  \
          o[i] = (EXPR);                                                                \
        })                                                                              \
      } else if (so == 1 && sa == 1 && sb == 0) {                                       \
        const IT y = b[0];                                                              \
        CM_BIN_LOOP(n, {                                                                \
          IT x = a[i];                                                                  \
          o[i] = (EXPR);                                                                \
        })                                                                              \
      } else {                                                                          \
        for (int64_t i = 0; i < n; i++) {                                               \
          IT x = a[i * sa], y = b[i * sb];                                              \
          o[i * so] = (EXPR);                                                           \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }

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
#define CM_UINT_TYPES(X)              \
  X(u8, uint8_t, uint32_t, int32_t)   \
  X(u16, uint16_t, uint32_t, int32_t) \
  X(u32, uint32_t, uint32_t, int32_t) \
  X(u64, uint64_t, uint64_t, int64_t)
#define CM_SINT_TYPES(X)             \
  X(i8, int8_t, uint32_t, int32_t)   \
  X(i16, int16_t, uint32_t, int32_t) \
  X(i32, int32_t, uint32_t, int32_t) \
  X(i64, int64_t, uint64_t, int64_t)
#define CM_INT_TYPES(X) CM_UINT_TYPES(X) CM_SINT_TYPES(X)

/* Floats with native rows: X(suffix, type, math suffix) where the math
 * suffix picks floorf/floor etc.  float16 and bfloat16 go through float32
 * (CM_HALF_ROWS). */
#define CM_FLOAT_TYPES(X) \
  X(f32, float, f)        \
  X(f64, double, )

/* ---- integer helpers: defined results where C's are not ------------------ */
#define CM_DEF_INT_HELPERS_COMMON(S, T, U, W)                             \
  static inline T cm_shl_##S(T x, T y) {                                  \
    return (T)((U)x << ((U)y & (sizeof(U) * 8 - 1)));                     \
  }                                                                       \
  /* x ** y by squaring, wrapping; negative exponents give 0 as in MLX */ \
  static inline T cm_ipow_mag_##S(U base, U e) {                          \
    U r = 1;                                                              \
    while (e) {                                                           \
      if (e & 1u) r *= base;                                              \
      base *= base;                                                       \
      e >>= 1;                                                            \
    }                                                                     \
    return (T)r;                                                          \
  }

/* Unsigned: x // 0 = 0, x % 0 = x (MLX's results; C traps). */
#define CM_DEF_UINT_HELPERS(S, T, U, W)                                         \
  CM_DEF_INT_HELPERS_COMMON(S, T, U, W)                                         \
  static inline T cm_fdiv_##S(T x, T y) { return y == 0 ? (T)0 : (T)(x / y); }  \
  static inline T cm_rem_##S(T x, T y) { return y == 0 ? x : (T)(x % y); }      \
  static inline T cm_ipow_##S(T x, T y) { return cm_ipow_mag_##S((U)x, (U)y); } \
  static inline T cm_shr_##S(T x, T y) {                                        \
    return (T)((U)x >> ((U)y & (sizeof(U) * 8 - 1)));                           \
  }

/* Signed: floor division and Python's sign rule for the remainder; a zero
 * divisor gives 0 and x like MLX; a -1 divisor is special-cased so that
 * INT_MIN // -1 wraps to INT_MIN (and % gives 0) instead of trapping. */
#define CM_DEF_SINT_HELPERS(S, T, U, W)                                       \
  CM_DEF_INT_HELPERS_COMMON(S, T, U, W)                                       \
  static inline T cm_fdiv_##S(T x, T y) {                                     \
    if (y == 0) return 0;                                                     \
    if (y == -1) return (T)(0u - (U)x);                                       \
    T q = (T)(x / y);                                                         \
    if ((T)(x % y) != 0 && ((x < 0) != (y < 0))) q = (T)(q - 1);              \
    return q;                                                                 \
  }                                                                           \
  static inline T cm_rem_##S(T x, T y) {                                      \
    if (y == 0) return x;                                                     \
    if (y == -1) return 0;                                                    \
    T r = (T)(x % y);                                                         \
    if (r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);                       \
    return r;                                                                 \
  }                                                                           \
  static inline T cm_ipow_##S(T x, T y) {                                     \
    return y < 0 ? (T)0 : cm_ipow_mag_##S((U)x, (U)y);                        \
  }                                                                           \
  /* arithmetic shift of the value widened to int (or int64), count masked */ \
  static inline T cm_shr_##S(T x, T y) {                                      \
    return (T)((W)x >> ((U)y & (sizeof(U) * 8 - 1)));                         \
  }

CM_UINT_TYPES(CM_DEF_UINT_HELPERS)
CM_SINT_TYPES(CM_DEF_SINT_HELPERS)

/* ---- complex helpers: MLX orders complex numbers lexicographically ------ */
/* CMPLXF is missing under clang with glibc; a union builds the value
 * exactly (re + im * I would turn inf * I into NaN). */
static inline cm_c64_t cm_cmplx(float re, float im) {
  union { cm_c64_t c; float f[2]; } u = {.f = {re, im}};
  return u.c;
}
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
