/* The elementwise unary ops (op codes of the Unary primitive), one row
 * each.  Every device-neutral fact about an op other than its derivative
 * is in its row (how the CPU computes it is backend/cpu/unary_table.h);
 * generated from this list:
 *
 *   ops/unary.h             the enum cm_unary_op, the cm_<name> declarations
 *   ops/unary.c             the constructors, each op's dtype checks and
 *                           result dtype, the "[name]" of its messages
 *   primitives/unary.c      the printed name
 *   primitives/unary_rules.c  the derivative kind (the factors and special
 *                           rules are code: a LINEAR or SPECIAL row without
 *                           its case does not compile) and the zero
 *                           tangent's dtype
 *   backend/cpu/unary_table.h  checks that the CPU table has one row per
 *                           op code, in this order
 *   capi/ops_unary.c        mlx_<name> for the rows mlx-c declares
 *   python/src/ops_unary.c  the cmlx.core.<name> signature rows
 *   python/src/array_ops.c  -a and abs(a)
 *
 * So a new op is one row here, its rule in unary_rules.c, and for the CPU
 * its row in backend/cpu/unary_table.h and its row functions in
 * unary_rows.c (and unary_simd.c if it has a vector loop).
 * The ops that are not op codes (positive, stop_gradient, astype) and the
 * Python alias conj are written by hand where they are used.
 *
 * Columns of X(CODE, name, Name, out, checks,
 *              grad, ctor, mlxc, py, dunder, slot),
 *              a row on two lines (the op; its derivative and front doors):
 *   CODE    the op code CM_UNARY_<CODE>; rows keep their order, which is the
 *           enum's
 *   name    cm_<name>, mlx_<name>, cmlx.core.<name>, "[name]" in messages
 *   Name    the printed primitive name: MLX's where MLX has the primitive,
 *           the same style for the codes cmlx adds
 *   out     result dtype (ops/unary.c): SAME; FLOAT (integers and bool are
 *           cast to float32 first); BOOL; REAL (complex64 -> float32)
 *   checks  dtype checks and pass-throughs, MLX's errors (ops/unary.c):
 *           0, NO_BOOL, NO_COMPLEX, INTEGER_ONLY, IDENTITY_EXACT (integers
 *           and bool come back as they are), IDENTITY_REAL (non-complex
 *           inputs come back as they are), or an | of them
 *   grad    LINEAR (a factor in unary_rules.c), SPECIAL (its own rule
 *           there), NO_RULE (NotImplemented, as MLX), or a zero derivative
 *           whose tangent has MLX's dtype: ZERO_IN (the input's), ZERO_BOOL,
 *           ZERO_TAN (the tangent's)
 *   ctor    NAMED: cm_<name>(a, s) is generated; OWN: written by hand
 *           (constants in the parameters)
 *   mlxc    MLXC: mlx-c declares mlx_<name>(res, a, s); OWN: an adapter by
 *           hand; NO_MLXC: mlx-c has none
 *   py      MLX's displayed Python signature (python/src/ops_unary.c): A,
 *           NOMARK, KW, SCALAR; OWN: a row by hand
 *   dunder  NB: the number slot nb_<slot> is -a / abs(a); NONE
 *   slot    the slot (negative, absolute), _ for NONE
 */
#ifndef CMLX_OPS_UNARY_OPS_H
#define CMLX_OPS_UNARY_OPS_H

#include "ops/op_table.h"

/* clang-format off */
#define CM_UNARY_OPS(X)                                                                  \
  X(ABS,            abs,            "Abs",           REAL,  0,                           \
    SPECIAL,   NAMED, MLXC, A,      NB,   absolute)                                      \
  X(NEGATIVE,       negative,       "Negative",      SAME,  NO_BOOL,                     \
    SPECIAL,   NAMED, MLXC, A,      NB,   negative)                                      \
  X(SIGN,           sign,           "Sign",          SAME,  0,                           \
    ZERO_IN,   NAMED, MLXC, A,      NONE, _)                                             \
  X(SQUARE,         square,         "Square",        SAME,  0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(SQRT,           sqrt,           "Sqrt",          FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(RSQRT,          rsqrt,          "Rsqrt",         FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(RECIPROCAL,     reciprocal,     "Reciprocal",    FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(EXP,            exp,            "Exp",           FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(EXPM1,          expm1,          "Expm1",         FLOAT, NO_COMPLEX,                  \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(LOG,            log,            "Log",           FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(LOG2,           log2,           "Log2",          FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(LOG10,          log10,          "Log10",         FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(LOG1P,          log1p,          "Log1p",         FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(SIN,            sin,            "Sin",           FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(COS,            cos,            "Cos",           FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(TAN,            tan,            "Tan",           FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ARCSIN,         arcsin,         "ArcSin",        FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ARCCOS,         arccos,         "ArcCos",        FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ARCTAN,         arctan,         "ArcTan",        FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(SINH,           sinh,           "Sinh",          FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(COSH,           cosh,           "Cosh",          FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(TANH,           tanh,           "Tanh",          FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ARCSINH,        arcsinh,        "ArcSinh",       FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ARCCOSH,        arccosh,        "ArcCosh",       FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ARCTANH,        arctanh,        "ArcTanh",       FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(SIGMOID,        sigmoid,        "Sigmoid",       FLOAT, NO_COMPLEX,                  \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ERF,            erf,            "Erf",           FLOAT, NO_COMPLEX,                  \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(ERFINV,         erfinv,         "ErfInv",        FLOAT, NO_COMPLEX,                  \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(FLOOR,          floor,          "Floor",         SAME,  NO_COMPLEX | IDENTITY_EXACT, \
    ZERO_IN,   NAMED, MLXC, A,      NONE, _)                                             \
  X(CEIL,           ceil,           "Ceil",          SAME,  NO_COMPLEX | IDENTITY_EXACT, \
    ZERO_IN,   NAMED, MLXC, A,      NONE, _)                                             \
  /* to nearest even, 0 decimals (cm_round builds ROUND_DECIMALS otherwise) */           \
  X(ROUND,          round,          "Round",         SAME,  IDENTITY_EXACT,              \
    ZERO_IN,   OWN,   OWN,  OWN,    NONE, _)                                             \
  X(ISNAN,          isnan,          "IsNaN",         BOOL,  0,                           \
    ZERO_TAN,  NAMED, MLXC, NOMARK, NONE, _)                                             \
  X(ISINF,          isinf,          "IsInf",         BOOL,  0,                           \
    ZERO_BOOL, NAMED, MLXC, NOMARK, NONE, _)                                             \
  X(ISPOSINF,       isposinf,       "IsPosInf",      BOOL,  0,                           \
    ZERO_TAN,  NAMED, MLXC, NOMARK, NONE, _)                                             \
  X(ISNEGINF,       isneginf,       "IsNegInf",      BOOL,  0,                           \
    ZERO_TAN,  NAMED, MLXC, NOMARK, NONE, _)                                             \
  X(LOGICAL_NOT,    logical_not,    "LogicalNot",    BOOL,  0,                           \
    ZERO_BOOL, NAMED, MLXC, A,      NONE, _)                                             \
  X(BITWISE_INVERT, bitwise_invert, "BitwiseInvert", SAME,  INTEGER_ONLY,                \
    NO_RULE,   NAMED, MLXC, SCALAR, NONE, _)                                             \
  X(REAL,           real,           "Real",          REAL,  IDENTITY_REAL,               \
    SPECIAL,   NAMED, MLXC, A,      NONE, _)                                             \
  X(IMAG,           imag,           "Imag",          REAL,  0,                           \
    SPECIAL,   NAMED, MLXC, A,      NONE, _)                                             \
  X(CONJ,           conjugate,      "Conjugate",     SAME,  IDENTITY_REAL,               \
    SPECIAL,   NAMED, MLXC, KW,     NONE, _)                                             \
  /* Added by the implementation: ops that MLX composes from several primitives, */      \
  /* done here in one pass (one kernel, no temporaries). */                              \
  X(ISFINITE,       isfinite,       "IsFinite",      BOOL,  0,                           \
    ZERO_BOOL, NAMED, MLXC, NOMARK, NONE, _)                                             \
  /* x * (180/pi) and x * (pi/180) in the float type */                                  \
  X(DEGREES,        degrees,        "Degrees",       FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  X(RADIANS,        radians,        "Radians",       FLOAT, 0,                           \
    LINEAR,    NAMED, MLXC, A,      NONE, _)                                             \
  /* rint(x * 10^d) * 10^-d; the parameters carry d */                                   \
  X(ROUND_DECIMALS, round,          "Round",         FLOAT, 0,                           \
    ZERO_IN,   OWN,   OWN,  OWN,    NONE, _)                                             \
  /* the parameters carry the nan/posinf/neginf values */                                \
  X(NAN_TO_NUM,     nan_to_num,     "NanToNum",      SAME,  0,                           \
    SPECIAL,   OWN,   OWN,  OWN,    NONE, _)
/* clang-format on */

/* Every row has all 11 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_UNARY_ARITY_(CODE, name, Name, out, checks, grad, ctor, mlxc, py, dunder, slot) +1
enum { CM_UNARY_ROWS_ = 0 CM_UNARY_OPS(CM_UNARY_ARITY_) };

#endif
