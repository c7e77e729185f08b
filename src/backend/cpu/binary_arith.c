/* Row loops of the arithmetic binary ops, one per (op, dtype) that MLX
 * supports: add, subtract, multiply, divide, floor_divide, remainder,
 * power, maximum, minimum, arctan2, logaddexp. */
#include <complex.h>

#include "backend/cpu/binary_impl.h"

/* ---- scalar helpers ------------------------------------------------------- */

/* Python's remainder: the result takes the divisor's sign (MLX: fmod, then
 * add y when the signs differ; so -1 % inf is inf and x % 0 is NaN). */
static inline float cm_fremf(float x, float y) {
  float r = fmodf(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
static inline double cm_frem(double x, double y) {
  double r = fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

/* log(exp(x) + exp(y)) without overflow; NaN in, NaN out; an infinite
 * bound decides alone. */
static inline float cm_laef(float x, float y) {
  if (x != x || y != y) return NAN;
  float mx = x > y ? x : y, mn = x > y ? y : x;
  if (mn == -INFINITY || mx == INFINITY) return mx;
  return mx + log1pf(expf(mn - mx));
}
static inline double cm_lae(double x, double y) {
  if (x != x || y != y) return NAN;
  double mx = x > y ? x : y, mn = x > y ? y : x;
  if (mn == -INFINITY || mx == INFINITY) return mx;
  return mx + log1p(exp(mn - mx));
}

/* log1p for complex z, accurate for small |z| (clog(1 + z) loses it):
 * |1+z|^2 = 1 + (2x + x^2 + y^2), computed in double. */
static inline cm_c64_t cm_c_log1p(cm_c64_t z) {
  double x = crealf(z), y = cimagf(z);
  double re = 0.5 * log1p(x * (2.0 + x) + y * y), im = atan2(y, 1.0 + x);
  return cm_cmplx((float)re, (float)im);
}

/* MLX's complex logaddexp: the lexicographic max plus log1p(exp(min - max)). */
static inline cm_c64_t cm_c_lae(cm_c64_t x, cm_c64_t y) {
  if (cm_c_isnan(x) || cm_c_isnan(y)) return cm_cmplx(NAN, NAN);
  bool xg = cm_c_gt(x, y);
  cm_c64_t mx = xg ? x : y, mn = xg ? y : x;
  if (crealf(mn) == -INFINITY || crealf(mx) == INFINITY) return mx;
  return mx + cm_c_log1p(cexpf(mn - mx));
}

static inline cm_c64_t cm_c_max(cm_c64_t x, cm_c64_t y) {
  return cm_c_isnan(x) ? x : cm_c_gt(x, y) ? x : y;
}
static inline cm_c64_t cm_c_min(cm_c64_t x, cm_c64_t y) {
  return cm_c_isnan(x) ? x : cm_c_lt(x, y) ? x : y;
}

/* ---- rows ------------------------------------------------------------------ */

/* bool: arithmetic is logic (what int arithmetic cast back to bool gives) */
CM_BIN_ROW(add_b8, bool, bool, x | y)
CM_BIN_ROW(sub_b8, bool, bool, x ^ y)
CM_BIN_ROW(mul_b8, bool, bool, x & y)
CM_BIN_ROW(fdiv_b8, bool, bool, x & y) /* x // False = 0 */
CM_BIN_ROW(rem_b8, bool, bool, x & !y) /* x % False = x */
CM_BIN_ROW(pow_b8, bool, bool, x | !y) /* x ** False = 1 */
CM_BIN_ROW(max_b8, bool, bool, x | y)
CM_BIN_ROW(min_b8, bool, bool, x & y)

#define INT_ROWS(S, T, U, W)                    \
  CM_BIN_ROW(add_##S, T, T, (T)((U)x + (U)y))   \
  CM_BIN_ROW(sub_##S, T, T, (T)((U)x - (U)y))   \
  CM_BIN_ROW(mul_##S, T, T, (T)((U)x * (U)y))   \
  CM_BIN_ROW(fdiv_##S, T, T, cm_fdiv_##S(x, y)) \
  CM_BIN_ROW(rem_##S, T, T, cm_rem_##S(x, y))   \
  CM_BIN_ROW(pow_##S, T, T, cm_ipow_##S(x, y))  \
  CM_BIN_ROW(max_##S, T, T, x > y ? x : y)      \
  CM_BIN_ROW(min_##S, T, T, x < y ? x : y)
CM_INT_TYPES(INT_ROWS)

/* maximum/minimum propagate NaN from either side: x's by the first test,
 * y's because every comparison with NaN is false. */
#define FLOAT_ROWS(S, T, M)                               \
  CM_BIN_ROW(add_##S, T, T, x + y)                        \
  CM_BIN_ROW(sub_##S, T, T, x - y)                        \
  CM_BIN_ROW(mul_##S, T, T, x * y)                        \
  CM_BIN_ROW(div_##S, T, T, x / y)                        \
  CM_BIN_ROW(fdiv_##S, T, T, floor##M(x / y))             \
  CM_BIN_ROW(rem_##S, T, T, cm_frem##M(x, y))             \
  CM_BIN_ROW(pow_##S, T, T, pow##M(x, y))                 \
  CM_BIN_ROW(max_##S, T, T, x != x ? x : (x > y ? x : y)) \
  CM_BIN_ROW(min_##S, T, T, x != x ? x : (x < y ? x : y)) \
  CM_BIN_ROW(atan2_##S, T, T, atan2##M(x, y))             \
  CM_BIN_ROW(lae_##S, T, T, cm_lae##M(x, y))
CM_FLOAT_TYPES(FLOAT_ROWS)

/* float16 and bfloat16 compute in float32 */
CM_HALF_ROWS(add, true)
CM_HALF_ROWS(sub, true)
CM_HALF_ROWS(mul, true)
CM_HALF_ROWS(div, true)
CM_HALF_ROWS(fdiv, true)
CM_HALF_ROWS(rem, true)
CM_HALF_ROWS(pow, true)
CM_HALF_ROWS(max, true)
CM_HALF_ROWS(min, true)
CM_HALF_ROWS(atan2, true)
CM_HALF_ROWS(lae, true)

/* complex64: floor_divide is plain division in MLX; power is cpow. */
CM_BIN_ROW(add_c64, cm_c64_t, cm_c64_t, x + y)
CM_BIN_ROW(sub_c64, cm_c64_t, cm_c64_t, x - y)
CM_BIN_ROW(mul_c64, cm_c64_t, cm_c64_t, x * y)
CM_BIN_ROW(div_c64, cm_c64_t, cm_c64_t, x / y)
CM_BIN_ROW(pow_c64, cm_c64_t, cm_c64_t, cpowf(x, y))
CM_BIN_ROW(max_c64, cm_c64_t, cm_c64_t, cm_c_max(x, y))
CM_BIN_ROW(min_c64, cm_c64_t, cm_c64_t, cm_c_min(x, y))
CM_BIN_ROW(lae_c64, cm_c64_t, cm_c64_t, cm_c_lae(x, y))

/* ---- table ------------------------------------------------------------------ */

/* floor_divide on complex64 is plain division in MLX */
#define fdiv_c64 div_c64

/* the rows of the ops whose file column is ARITH (backend/cpu/binary_table.h) */
CM_ROW_TABLE(arith_table, ARITH);
#undef fdiv_c64

cm_binary_row_fn CM_ROW_LOOKUP(cm_binary_arith_row)(cm_binary_op op, cm_dtype t) {
  if ((unsigned)op >= CM_BINARY_NUM_OPS || (unsigned)t >= CM_NUM_DTYPES) return NULL;
  return arith_table[op][t];
}
