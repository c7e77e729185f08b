/* How the CPU computes each unary op (the op codes of ops/unary_ops.h):
 * one row per op code, in that table's order (checked below, when this
 * header compiles).  Generated from this list:
 *
 *   backend/cpu/unary.c       the cost per element
 *   backend/cpu/unary_rows.c  the row-function table
 *   backend/cpu/unary_simd.c  the AVX2 row-function table
 *
 * Columns of X(CODE, cost, rows, types, simd):
 *   CODE    the op code CM_UNARY_<CODE>
 *   cost    work per element for sizing parallel chunks (unary.c): CHEAP,
 *           EXACT (rounding, sqrt and division: exact float operations),
 *           TRANS (libm), HEAVY
 *   rows    the prefix of its row functions in unary_rows.c: <rows>_f32, ...
 *   types   the input dtypes with a row: ALL, NUMERIC (not bool), INEXACT,
 *           FLOATS, COMPLEX, BOOL_INTS; any other dtype is a NotImplemented
 *           error naming the op
 *   simd    SIMD: unary_simd.c has contiguous AVX2 loops <rows>_f32, _f16
 *           and _bf16; SCALAR: it has none
 */
#ifndef CMLX_BACKEND_CPU_UNARY_TABLE_H
#define CMLX_BACKEND_CPU_UNARY_TABLE_H

#include "ops/unary.h"

/* clang-format off */
#define CM_CPU_UNARY_OPS(X)                             \
  X(ABS,            CHEAP, abs,      ALL,       SCALAR) \
  X(NEGATIVE,       CHEAP, neg,      NUMERIC,   SCALAR) \
  X(SIGN,           CHEAP, sign,     ALL,       SCALAR) \
  X(SQUARE,         CHEAP, sq,       ALL,       SCALAR) \
  X(SQRT,           EXACT, sqrt,     INEXACT,   SIMD)   \
  X(RSQRT,          EXACT, rsqrt,    INEXACT,   SIMD)   \
  X(RECIPROCAL,     EXACT, recip,    INEXACT,   SIMD)   \
  X(EXP,            TRANS, exp,      INEXACT,   SIMD)   \
  X(EXPM1,          TRANS, expm1,    FLOATS,    SIMD)   \
  X(LOG,            TRANS, log,      INEXACT,   SCALAR) \
  X(LOG2,           TRANS, log2,     INEXACT,   SIMD)   \
  X(LOG10,          TRANS, log10,    INEXACT,   SIMD)   \
  X(LOG1P,          TRANS, log1p,    INEXACT,   SCALAR) \
  X(SIN,            TRANS, sin,      INEXACT,   SIMD)   \
  X(COS,            TRANS, cos,      INEXACT,   SIMD)   \
  X(TAN,            TRANS, tan,      INEXACT,   SCALAR) \
  X(ARCSIN,         TRANS, asin,     INEXACT,   SCALAR) \
  X(ARCCOS,         TRANS, acos,     INEXACT,   SCALAR) \
  X(ARCTAN,         TRANS, atan,     INEXACT,   SCALAR) \
  X(SINH,           TRANS, sinh,     INEXACT,   SCALAR) \
  X(COSH,           TRANS, cosh,     INEXACT,   SCALAR) \
  X(TANH,           TRANS, tanh,     INEXACT,   SIMD)   \
  X(ARCSINH,        TRANS, asinh,    INEXACT,   SCALAR) \
  X(ARCCOSH,        TRANS, acosh,    INEXACT,   SCALAR) \
  X(ARCTANH,        TRANS, atanh,    INEXACT,   SCALAR) \
  X(SIGMOID,        TRANS, sigmoid,  FLOATS,    SIMD)   \
  X(ERF,            TRANS, erf,      FLOATS,    SIMD)   \
  X(ERFINV,         HEAVY, erfinv,   FLOATS,    SIMD)   \
  X(FLOOR,          EXACT, floor,    FLOATS,    SIMD)   \
  X(CEIL,           EXACT, ceil,     FLOATS,    SIMD)   \
  X(ROUND,          EXACT, round,    INEXACT,   SIMD)   \
  X(ISNAN,          CHEAP, isnan,    ALL,       SCALAR) \
  X(ISINF,          CHEAP, isinf,    ALL,       SCALAR) \
  X(ISPOSINF,       CHEAP, isposinf, ALL,       SCALAR) \
  X(ISNEGINF,       CHEAP, isneginf, ALL,       SCALAR) \
  X(LOGICAL_NOT,    CHEAP, lnot,     ALL,       SCALAR) \
  X(BITWISE_INVERT, CHEAP, inv,      BOOL_INTS, SCALAR) \
  X(REAL,           CHEAP, real,     COMPLEX,   SCALAR) \
  X(IMAG,           CHEAP, imag,     ALL,       SCALAR) \
  X(CONJ,           CHEAP, conj,     COMPLEX,   SCALAR) \
  X(ISFINITE,       CHEAP, isfinite, ALL,       SCALAR) \
  X(DEGREES,        CHEAP, deg,      INEXACT,   SCALAR) \
  X(RADIANS,        CHEAP, rad,      INEXACT,   SCALAR) \
  X(ROUND_DECIMALS, EXACT, rdec,     INEXACT,   SCALAR) \
  X(NAN_TO_NUM,     CHEAP, n2n,      INEXACT,   SCALAR)
/* clang-format on */

/* Exactly one row per op code, in the op table's order: each row's
 * position is its code, and there are as many rows as codes.  (The
 * enum's X takes exactly five columns, so a short row does not compile
 * either.) */
enum cm_cpu_unary_row {
#define CM_X(CODE, cost, rows, types, simd) CM_CPU_UNARY_ROW_##CODE,
  CM_CPU_UNARY_OPS(CM_X)
#undef CM_X
  CM_CPU_UNARY_NUM_ROWS
};
#define CM_X(CODE, ...)                                                \
  _Static_assert((int)CM_CPU_UNARY_ROW_##CODE == (int)CM_UNARY_##CODE, \
                 "backend/cpu/unary_table.h: " #CODE " is out of ops/unary_ops.h's order");
CM_CPU_UNARY_OPS(CM_X)
#undef CM_X
_Static_assert((int)CM_CPU_UNARY_NUM_ROWS == (int)CM_UNARY_NUM_OPS,
               "backend/cpu/unary_table.h needs a row for every op code of ops/unary_ops.h");

#endif
