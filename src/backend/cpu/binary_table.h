/* How the CPU computes each binary op (the op codes of ops/binary_ops.h):
 * one row per op code, in that table's order (checked below, when this
 * header compiles).  Generated from this list:
 *
 *   backend/cpu/binary.c      the cost per element
 *   backend/cpu/binary_arith.c, binary_cmp.c   the row-function tables
 *                             (CM_ROW_TABLE, backend/cpu/binary_impl.h)
 *
 * Columns of X(CODE, cost, file, rows, types):
 *   CODE    the op code CM_BINARY_<CODE>
 *   cost    rough work per element relative to an add, for sizing parallel
 *           chunks (complex64 counts four times)
 *   file    where its row functions are: ARITH binary_arith.c, CMP
 *           binary_cmp.c
 *   rows    the prefix of its row functions: <rows>_f32, <rows>_i8, ...
 *   types   the input dtypes with a row (CM_ROW_<types> in binary_impl.h):
 *           ALL, INEXACT (floats, complex), REAL (bool, integers, floats),
 *           FLOATS, BOOL, BOOL_INTS, INTS; any other dtype is a
 *           NotImplemented error naming the op
 */
#ifndef CMLX_BACKEND_CPU_BINARY_TABLE_H
#define CMLX_BACKEND_CPU_BINARY_TABLE_H

#include "ops/binary.h"

/* clang-format off */
#define CM_CPU_BINARY_OPS(X)                    \
  X(ADD,           1,  ARITH, add,   ALL)       \
  X(SUBTRACT,      1,  ARITH, sub,   ALL)       \
  X(MULTIPLY,      1,  ARITH, mul,   ALL)       \
  X(DIVIDE,        2,  ARITH, div,   INEXACT)   \
  X(FLOOR_DIVIDE,  10, ARITH, fdiv,  ALL)       \
  X(REMAINDER,     10, ARITH, rem,   REAL)      \
  X(POWER,         30, ARITH, pow,   ALL)       \
  X(MAXIMUM,       1,  ARITH, max,   ALL)       \
  X(MINIMUM,       1,  ARITH, min,   ALL)       \
  X(ARCTAN2,       30, ARITH, atan2, FLOATS)    \
  X(LOGADDEXP,     30, ARITH, lae,   INEXACT)   \
  X(EQUAL,         1,  CMP,   eq,    ALL)       \
  X(NOT_EQUAL,     1,  CMP,   ne,    ALL)       \
  X(LESS,          1,  CMP,   lt,    ALL)       \
  X(LESS_EQUAL,    1,  CMP,   le,    ALL)       \
  X(GREATER,       1,  CMP,   gt,    ALL)       \
  X(GREATER_EQUAL, 1,  CMP,   ge,    ALL)       \
  X(LOGICAL_AND,   1,  CMP,   land,  BOOL)      \
  X(LOGICAL_OR,    1,  CMP,   lor,   BOOL)      \
  X(LOGICAL_XOR,   1,  CMP,   lxor,  BOOL)      \
  X(BITWISE_AND,   1,  CMP,   band,  BOOL_INTS) \
  X(BITWISE_OR,    1,  CMP,   bor,   BOOL_INTS) \
  X(BITWISE_XOR,   1,  CMP,   bxor,  BOOL_INTS) \
  X(LEFT_SHIFT,    1,  CMP,   shl,   INTS)      \
  X(RIGHT_SHIFT,   1,  CMP,   shr,   INTS)
/* clang-format on */

/* Exactly one row per op code, in the op table's order: each row's
 * position is its code, and there are as many rows as codes.  (The
 * enum's X takes exactly five columns, so a short row does not compile
 * either.) */
enum cm_cpu_binary_row {
#define CM_X(CODE, cost, file, rows, types) CM_CPU_BINARY_ROW_##CODE,
  CM_CPU_BINARY_OPS(CM_X)
#undef CM_X
  CM_CPU_BINARY_NUM_ROWS
};
#define CM_X(CODE, ...)                                                  \
  _Static_assert((int)CM_CPU_BINARY_ROW_##CODE == (int)CM_BINARY_##CODE, \
                 "backend/cpu/binary_table.h: " #CODE " is out of ops/binary_ops.h's order");
CM_CPU_BINARY_OPS(CM_X)
#undef CM_X
_Static_assert((int)CM_CPU_BINARY_NUM_ROWS == (int)CM_BINARY_NUM_OPS,
               "backend/cpu/binary_table.h needs a row for every op code of ops/binary_ops.h");

#endif
