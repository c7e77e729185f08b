/* Which elementwise ops the CUDA backend computes, and with which device
 * function of kernels/ops.cuh: one row per op code of ops/unary_ops.h and
 * ops/binary_ops.h, in their order (checked below).
 *
 * Columns of X(CODE, fn, types):
 *   CODE   the op code (CM_UNARY_<CODE>, CM_BINARY_<CODE>)
 *   fn     the device function: u_<fn> / b_<fn> in kernels/ops.cuh
 *   types  the input dtypes it has a kernel for: ALL, NUMERIC (not bool),
 *          REAL (not complex), INEXACT (floats and complex), FLOATS,
 *          COMPLEX, INTS, BOOL_INTS, BOOL.  Any other dtype is MLX's
 *          RuntimeError naming the primitive and the device, never a
 *          compile error at run time: tests/core/test_cuda_kernels.c
 *          compiles every (op, dtype) the table promises. */
#ifndef CMLX_BACKEND_CUDA_ELEMENTWISE_TABLE_H
#define CMLX_BACKEND_CUDA_ELEMENTWISE_TABLE_H

#include <stdbool.h>

#include "core/dtype.h"
#include "ops/binary.h"
#include "ops/unary.h"

/* clang-format off */
#define CM_CUDA_UNARY_OPS(X)          \
  X(ABS,            abs,      ALL)       \
  X(NEGATIVE,       neg,      NUMERIC)   \
  X(SIGN,           sign,     ALL)       \
  X(SQUARE,         sq,       ALL)       \
  X(SQRT,           sqrt,     INEXACT)   \
  X(RSQRT,          rsqrt,    INEXACT)   \
  X(RECIPROCAL,     recip,    INEXACT)   \
  X(EXP,            exp,      INEXACT)   \
  X(EXPM1,          expm1,    FLOATS)    \
  X(LOG,            log,      INEXACT)   \
  X(LOG2,           log2,     INEXACT)   \
  X(LOG10,          log10,    INEXACT)   \
  X(LOG1P,          log1p,    FLOATS)    \
  X(SIN,            sin,      INEXACT)   \
  X(COS,            cos,      INEXACT)   \
  X(TAN,            tan,      FLOATS)    \
  X(ARCSIN,         asin,     FLOATS)    \
  X(ARCCOS,         acos,     FLOATS)    \
  X(ARCTAN,         atan,     FLOATS)    \
  X(SINH,           sinh,     INEXACT)   \
  X(COSH,           cosh,     INEXACT)   \
  X(TANH,           tanh,     FLOATS)    \
  X(ARCSINH,        asinh,    FLOATS)    \
  X(ARCCOSH,        acosh,    FLOATS)    \
  X(ARCTANH,        atanh,    FLOATS)    \
  X(SIGMOID,        sigmoid,  FLOATS)    \
  X(ERF,            erf,      FLOATS)    \
  X(ERFINV,         erfinv,   FLOATS)    \
  X(FLOOR,          floor,    FLOATS)    \
  X(CEIL,           ceil,     FLOATS)    \
  X(ROUND,          round,    INEXACT)   \
  X(ISNAN,          isnan,    ALL)       \
  X(ISINF,          isinf,    ALL)       \
  X(ISPOSINF,       isposinf, ALL)       \
  X(ISNEGINF,       isneginf, ALL)       \
  X(LOGICAL_NOT,    lnot,     ALL)       \
  X(BITWISE_INVERT, inv,      BOOL_INTS) \
  X(REAL,           real,     COMPLEX)   \
  X(IMAG,           imag,     ALL)       \
  X(CONJ,           conj,     COMPLEX)   \
  X(ISFINITE,       isfinite, ALL)       \
  X(DEGREES,        deg,      INEXACT)   \
  X(RADIANS,        rad,      INEXACT)   \
  X(ROUND_DECIMALS, rdec,     INEXACT)   \
  X(NAN_TO_NUM,     n2n,      INEXACT)

#define CM_CUDA_BINARY_OPS(X)         \
  X(ADD,           add,   ALL)       \
  X(SUBTRACT,      sub,   ALL)       \
  X(MULTIPLY,      mul,   ALL)       \
  X(DIVIDE,        div,   INEXACT)   \
  X(FLOOR_DIVIDE,  fdiv,  REAL)      \
  X(REMAINDER,     rem,   REAL)      \
  X(POWER,         pow,   REAL)      \
  X(MAXIMUM,       max,   ALL)       \
  X(MINIMUM,       min,   ALL)       \
  X(ARCTAN2,       atan2, FLOATS)    \
  X(LOGADDEXP,     lae,   FLOATS)    \
  X(EQUAL,         eq,    ALL)       \
  X(NOT_EQUAL,     ne,    ALL)       \
  X(LESS,          lt,    ALL)       \
  X(LESS_EQUAL,    le,    ALL)       \
  X(GREATER,       gt,    ALL)       \
  X(GREATER_EQUAL, ge,    ALL)       \
  X(LOGICAL_AND,   land,  BOOL)      \
  X(LOGICAL_OR,    lor,   BOOL)      \
  X(LOGICAL_XOR,   lxor,  BOOL)      \
  X(BITWISE_AND,   band,  BOOL_INTS) \
  X(BITWISE_OR,    bor,   BOOL_INTS) \
  X(BITWISE_XOR,   bxor,  BOOL_INTS) \
  X(LEFT_SHIFT,    shl,   INTS)      \
  X(RIGHT_SHIFT,   shr,   INTS)
/* clang-format on */

/* dtype sets as bit masks (bit d: cm_dtype d) */
#define CM_CUDA_T(d) (1u << (d))
#define CM_CUDA_INTS                                                                   \
  (CM_CUDA_T(CM_UINT8) | CM_CUDA_T(CM_UINT16) | CM_CUDA_T(CM_UINT32) |                 \
   CM_CUDA_T(CM_UINT64) | CM_CUDA_T(CM_INT8) | CM_CUDA_T(CM_INT16) | CM_CUDA_T(CM_INT32) | \
   CM_CUDA_T(CM_INT64))
#define CM_CUDA_BOOL CM_CUDA_T(CM_BOOL)
#define CM_CUDA_FLOATS                                                                 \
  (CM_CUDA_T(CM_FLOAT16) | CM_CUDA_T(CM_BFLOAT16) | CM_CUDA_T(CM_FLOAT32) |            \
   CM_CUDA_T(CM_FLOAT64))
#define CM_CUDA_COMPLEX CM_CUDA_T(CM_COMPLEX64)
#define CM_CUDA_INEXACT (CM_CUDA_FLOATS | CM_CUDA_COMPLEX)
#define CM_CUDA_BOOL_INTS (CM_CUDA_BOOL | CM_CUDA_INTS)
#define CM_CUDA_REAL (CM_CUDA_BOOL | CM_CUDA_INTS | CM_CUDA_FLOATS)
#define CM_CUDA_NUMERIC (CM_CUDA_INTS | CM_CUDA_INEXACT)
#define CM_CUDA_ALL (CM_CUDA_REAL | CM_CUDA_COMPLEX)

/* One row per op code, in the op tables' order. */
enum cm_cuda_unary_row {
#define CM_X(CODE, fn, types) CM_CUDA_UNARY_ROW_##CODE,
  CM_CUDA_UNARY_OPS(CM_X)
#undef CM_X
  CM_CUDA_UNARY_NUM_ROWS
};
enum cm_cuda_binary_row {
#define CM_X(CODE, fn, types) CM_CUDA_BINARY_ROW_##CODE,
  CM_CUDA_BINARY_OPS(CM_X)
#undef CM_X
  CM_CUDA_BINARY_NUM_ROWS
};
#define CM_X(CODE, ...)                                                  \
  _Static_assert((int)CM_CUDA_UNARY_ROW_##CODE == (int)CM_UNARY_##CODE, \
                 "backend/cuda/elementwise_table.h: " #CODE " is out of ops/unary_ops.h's order");
CM_CUDA_UNARY_OPS(CM_X)
#undef CM_X
#define CM_X(CODE, ...)                                                    \
  _Static_assert((int)CM_CUDA_BINARY_ROW_##CODE == (int)CM_BINARY_##CODE, \
                 "backend/cuda/elementwise_table.h: " #CODE " is out of ops/binary_ops.h's order");
CM_CUDA_BINARY_OPS(CM_X)
#undef CM_X
_Static_assert((int)CM_CUDA_UNARY_NUM_ROWS == (int)CM_UNARY_NUM_OPS,
               "backend/cuda/elementwise_table.h: one unary row per op code");
_Static_assert((int)CM_CUDA_BINARY_NUM_ROWS == (int)CM_BINARY_NUM_OPS,
               "backend/cuda/elementwise_table.h: one binary row per op code");

#endif
