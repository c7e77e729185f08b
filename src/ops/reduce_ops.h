/* The primitive reductions (op codes of Reduce and ArgReduce), one row
 * each.  Generated from this list:
 *
 *   ops/reduce.h            the enum cm_reduce_op, the cm_<name> declarations
 *   ops/reduce.c            the constructors, the checks of each class, the
 *                           "[name]" of their messages
 *   primitives/reduce.c     the printed name, the result dtype, which ops
 *                           have a zero derivative (the rules of the others
 *                           are code, in switches that must cover them)
 *   backend/cpu/reduce_table.h  checks that the CPU table has one row per
 *                           op code, in this order, with the class's
 *                           accumulators
 *   capi/ops_reduce.c       mlx_<name>, mlx_<name>_axis (, mlx_<name>_axes)
 *   python/src/ops_reduce.c the cmlx.core.<name> signature rows
 *
 * The compositions (mean, var, std, logsumexp, median, softmax, ...) are
 * ops of their own, written by hand; the array methods are rows of
 * python/src/ops_methods.c.
 *
 * Columns of X(CODE, name, Name, class, empty, grad, mlxc, py):
 *   CODE    the op code CM_REDUCE_<CODE> (rows in the enum's order)
 *   name    cm_<name>, mlx_<name>..., cmlx.core.<name>, "[name]" in messages
 *   Name    MLX's printed primitive name
 *   class   WIDE: bool and integers narrower than 64 bits accumulate and
 *           give 32 bits (int32, uint32), other dtypes keep theirs;
 *           SAME: the input's dtype; LOGIC: bool (NaN counts as true);
 *           ARG: the ArgReduce primitive, a uint32 index over every axis or
 *           exactly one, zero-size input an error
 *   empty   IDENTITY: a reduced axis of size 0 gives the op's identity;
 *           ERROR: it is MLX's ValueError (and for ARG, any empty input)
 *   grad    DIFF (rules in primitives/reduce.c) or ZERO
 *   mlxc    MLXC: mlx-c declares mlx_<name>, _axis and _axes; MLXC_AXIS:
 *           only mlx_<name> and _axis (one axis or all)
 *   py      the Python row's form: AXES (axis: None | int | Sequence[int]),
 *           AXIS (axis: None | int)
 */
#ifndef CMLX_OPS_REDUCE_OPS_H
#define CMLX_OPS_REDUCE_OPS_H

/* clang-format off */
#define CM_REDUCE_OPS(X)                                              \
  X(SUM,    sum,    "Sum",    WIDE,  IDENTITY, DIFF, MLXC,      AXES) \
  X(PROD,   prod,   "Prod",   WIDE,  IDENTITY, DIFF, MLXC,      AXES) \
  X(MAX,    max,    "Max",    SAME,  ERROR,    DIFF, MLXC,      AXES) \
  X(MIN,    min,    "Min",    SAME,  ERROR,    DIFF, MLXC,      AXES) \
  X(AND,    all,    "And",    LOGIC, IDENTITY, ZERO, MLXC,      AXES) \
  X(OR,     any,    "Or",     LOGIC, IDENTITY, ZERO, MLXC,      AXES) \
  X(ARGMAX, argmax, "ArgMax", ARG,   ERROR,    ZERO, MLXC_AXIS, AXIS) \
  X(ARGMIN, argmin, "ArgMin", ARG,   ERROR,    ZERO, MLXC_AXIS, AXIS)
/* clang-format on */

/* Every row has all 8 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_REDUCE_ARITY_(CODE, name, Name, class, empty, grad, mlxc, py) +1
enum { CM_REDUCE_ROWS_ = 0 CM_REDUCE_OPS(CM_REDUCE_ARITY_) };

#endif
