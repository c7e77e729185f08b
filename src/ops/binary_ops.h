/* The elementwise binary ops, one row each.  Every device-neutral fact
 * about an op other than its derivative is in its row (how the CPU
 * computes it is backend/cpu/binary_table.h), and every place that needs
 * one is generated from this list, so nothing can drift:
 *
 *   ops/binary.h            the enum cm_binary_op, the cm_<name> declarations
 *   ops/binary.c            the constructors, the dtype rule of each op, the
 *                           "[name]" of its messages
 *   primitives/binary.c     the printed name
 *   primitives/binary_rules.c  which ops have a zero derivative (the partial
 *                           of the others is code; a DIFF row without one,
 *                           or a ZERO row with one, does not compile)
 *   backend/cpu/binary_table.h  checks that the CPU table has one row per
 *                           op code, in this order
 *   capi/ops_binary.c       mlx_<name> for the rows mlx-c declares
 *   python/src/ops_binary.c the cmlx.core.<name> signature rows
 *   python/src/array_ops.c  the operators (+, +=, 2 + a, <, ...)
 *
 * So a new op is one row here, (if DIFF) its partials in binary_rules.c,
 * and for the CPU its row in backend/cpu/binary_table.h and its row
 * functions in the kernel file that row names.  (divmod, two
 * outputs, is not in the family; its bindings are written by hand.)
 *
 * Columns of X(CODE, name, Name, dtype,
 *              grad, mlxc, py, dunder, slot, what), a row on two lines (the
 *              op; its derivative and front doors):
 *   CODE    the op code CM_BINARY_<CODE>; rows keep their order, which is
 *           the enum's
 *   name    cm_<name>, mlx_<name>, cmlx.core.<name>, "[name]" in messages
 *   Name    MLX's printed primitive name (export_to_dot)
 *   dtype   compute / result dtype rule of ops/binary.c, with the error MLX
 *           gives: PROMOTE (the promoted type), TO_FLOAT (integers and bool
 *           become float32), TO_FLOAT_REAL (and complex is "Not supported
 *           for complex64."), REAL_ONLY (complex is "Complex type not
 *           supported."), COMPARE (promoted in, bool out), LOGICAL (bool),
 *           LOGICAL_XOR (bool, built as NOT_EQUAL, as MLX), BITS (integers
 *           and bool only), SHIFT_L (and bool shifts as uint8), SHIFT_R (the
 *           same, its message names the promoted type)
 *   grad    DIFF (partials in binary_rules.c) or a zero derivative whose
 *           tangent has MLX's dtype: ZERO (the tangent's), ZERO_BOOL (bool),
 *           ZERO_BOOL_IN (bool when the inputs are bool)
 *   mlxc    MLXC: mlx-c declares mlx_<name>; NO_MLXC: it does not
 *   py      MLX's displayed Python signature: PLAIN, MARKED (with / and *),
 *           ARRAYS (operands typed array); see python/src/ops_binary.c
 *   dunder  the array operator: NB (a + b, 2 + a, a += b), NB_DIV (NB, and
 *           /= on a non-floating array is an error), NB_POW (the ternary
 *           pow slot), NB_BITS (no reflected form, floats rejected), CMP
 *           (a rich comparison), NONE
 *   slot    the number slot nb_<slot> (NB kinds), the comparison Py_LT, ...
 *           (CMP), _ (NONE)
 *   what    MLX's word in "Cannot perform <what> on an array and str"
 */
#ifndef CMLX_OPS_BINARY_OPS_H
#define CMLX_OPS_BINARY_OPS_H

#include "ops/op_table.h"

/* clang-format off */
#define CM_BINARY_OPS(X)                                                           \
  X(ADD,           add,           "Add",          PROMOTE,                         \
    DIFF,         MLXC,    PLAIN,  NB,      add,          "addition")              \
  X(SUBTRACT,      subtract,      "Subtract",     PROMOTE,                         \
    DIFF,         MLXC,    PLAIN,  NB,      subtract,     "subtraction")           \
  X(MULTIPLY,      multiply,      "Multiply",     PROMOTE,                         \
    DIFF,         MLXC,    PLAIN,  NB,      multiply,     "multiplication")        \
  X(DIVIDE,        divide,        "Divide",       TO_FLOAT,                        \
    DIFF,         MLXC,    PLAIN,  NB_DIV,  true_divide,  "division")              \
  X(FLOOR_DIVIDE,  floor_divide,  "FloorDivide",  PROMOTE,                         \
    ZERO,         MLXC,    PLAIN,  NB,      floor_divide, "floor division")        \
  X(REMAINDER,     remainder,     "Remainder",    REAL_ONLY,                       \
    DIFF,         MLXC,    PLAIN,  NB,      remainder,    "modulus")               \
  X(POWER,         power,         "Power",        PROMOTE,                         \
    DIFF,         MLXC,    MARKED, NB_POW,  power,        "power")                 \
  X(MAXIMUM,       maximum,       "Maximum",      PROMOTE,                         \
    DIFF,         MLXC,    MARKED, NONE,    _,            _)                       \
  X(MINIMUM,       minimum,       "Minimum",      PROMOTE,                         \
    DIFF,         MLXC,    MARKED, NONE,    _,            _)                       \
  X(ARCTAN2,       arctan2,       "ArcTan2",      TO_FLOAT_REAL,                   \
    DIFF,         MLXC,    ARRAYS, NONE,    _,            _)                       \
  X(LOGADDEXP,     logaddexp,     "LogAddExp",    TO_FLOAT,                        \
    DIFF,         MLXC,    MARKED, NONE,    _,            _)                       \
  X(EQUAL,         equal,         "Equal",        COMPARE,                         \
    ZERO,         MLXC,    PLAIN,  CMP,     Py_EQ,        "equal")                 \
  X(NOT_EQUAL,     not_equal,     "NotEqual",     COMPARE,                         \
    ZERO_BOOL_IN, MLXC,    PLAIN,  CMP,     Py_NE,        "not equal")             \
  X(LESS,          less,          "Less",         COMPARE,                         \
    ZERO,         MLXC,    PLAIN,  CMP,     Py_LT,        "less than")             \
  X(LESS_EQUAL,    less_equal,    "LessEqual",    COMPARE,                         \
    ZERO,         MLXC,    PLAIN,  CMP,     Py_LE,        "less than or equal")    \
  X(GREATER,       greater,       "Greater",      COMPARE,                         \
    ZERO,         MLXC,    PLAIN,  CMP,     Py_GT,        "greater than")          \
  X(GREATER_EQUAL, greater_equal, "GreaterEqual", COMPARE,                         \
    ZERO,         MLXC,    PLAIN,  CMP,     Py_GE,        "greater than or equal") \
  X(LOGICAL_AND,   logical_and,   "LogicalAnd",   LOGICAL,                         \
    ZERO_BOOL,    MLXC,    ARRAYS, NONE,    _,            _)                       \
  X(LOGICAL_OR,    logical_or,    "LogicalOr",    LOGICAL,                         \
    ZERO_BOOL,    MLXC,    ARRAYS, NONE,    _,            _)                       \
  X(LOGICAL_XOR,   logical_xor,   "LogicalXor",   LOGICAL_XOR,                     \
    ZERO_BOOL,    NO_MLXC, MARKED, NONE,    _,            _)                       \
  X(BITWISE_AND,   bitwise_and,   "BitwiseAnd",   BITS,                            \
    ZERO,         MLXC,    PLAIN,  NB_BITS, and,          "bitwise and")           \
  X(BITWISE_OR,    bitwise_or,    "BitwiseOr",    BITS,                            \
    ZERO,         MLXC,    PLAIN,  NB_BITS, or,           "bitwise or")            \
  X(BITWISE_XOR,   bitwise_xor,   "BitwiseXor",   BITS,                            \
    ZERO,         MLXC,    PLAIN,  NB_BITS, xor,          "bitwise xor")           \
  X(LEFT_SHIFT,    left_shift,    "LeftShift",    SHIFT_L,                         \
    ZERO,         MLXC,    PLAIN,  NB_BITS, lshift,       "left shift")            \
  X(RIGHT_SHIFT,   right_shift,   "RightShift",   SHIFT_R,                         \
    ZERO,         MLXC,    PLAIN,  NB_BITS, rshift,       "right shift")
/* clang-format on */

/* Every row has all 10 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_BINARY_ARITY_(CODE, name, Name, dtype, grad, mlxc, py, dunder, slot, what) +1
enum { CM_BINARY_ROWS_ = 0 CM_BINARY_OPS(CM_BINARY_ARITY_) };

#endif
