/* How the CPU computes each reduction (the op codes of ops/reduce_ops.h):
 * one row per op code, in that table's order, with the accumulators its
 * class needs (both checked below, when this header compiles).  Generated
 * from this list:
 *
 *   backend/cpu/reduce.c      the kernel sets of the Reduce ops
 *   backend/cpu/reduce_arg.c  the kernel sets of the ArgReduce ops
 *
 * Columns of X(CODE, acc, kern):
 *   CODE    the op code CM_REDUCE_<CODE>
 *   acc     the kernel set, which is the op's class (ops/reduce_ops.h):
 *           WIDE (bool and integers narrower than 64 bits accumulate in 32
 *           bits), SAME (the input's dtype), LOGIC (bool), all in
 *           reduce.c; ARG (an index and a value, reduce_arg.c)
 *   kern    the kernel prefix: <kern>_f32, ... in the file of its set
 */
#ifndef CMLX_BACKEND_CPU_REDUCE_TABLE_H
#define CMLX_BACKEND_CPU_REDUCE_TABLE_H

#include "ops/reduce.h"

/* clang-format off */
#define CM_CPU_REDUCE_OPS(X) \
  X(SUM,    WIDE,  sum)      \
  X(PROD,   WIDE,  prod)     \
  X(MAX,    SAME,  max)      \
  X(MIN,    SAME,  min)      \
  X(AND,    LOGIC, and)      \
  X(OR,     LOGIC, or)       \
  X(ARGMAX, ARG,   max)      \
  X(ARGMIN, ARG,   min)
/* clang-format on */

/* Exactly one row per op code, in the op table's order: each row's
 * position is its code, and there are as many rows as codes.  (The
 * enum's X takes exactly three columns, so a short row does not compile
 * either.) */
enum cm_cpu_reduce_row {
#define CM_X(CODE, acc, kern) CM_CPU_REDUCE_ROW_##CODE,
  CM_CPU_REDUCE_OPS(CM_X)
#undef CM_X
  CM_CPU_REDUCE_NUM_ROWS
};
#define CM_X(CODE, ...)                                                  \
  _Static_assert((int)CM_CPU_REDUCE_ROW_##CODE == (int)CM_REDUCE_##CODE, \
                 "backend/cpu/reduce_table.h: " #CODE " is out of ops/reduce_ops.h's order");
CM_CPU_REDUCE_OPS(CM_X)
#undef CM_X
_Static_assert((int)CM_CPU_REDUCE_NUM_ROWS == (int)CM_REDUCE_NUM_OPS,
               "backend/cpu/reduce_table.h needs a row for every op code of ops/reduce_ops.h");

/* Each row's accumulators are its class's: the kernel set decides the
 * result's dtype as much as the class does, so they must not drift. */
enum cm_cpu_reduce_acc {
  CM_CPU_REDUCE_ACC_WIDE,
  CM_CPU_REDUCE_ACC_SAME,
  CM_CPU_REDUCE_ACC_LOGIC,
  CM_CPU_REDUCE_ACC_ARG
};
enum cm_cpu_reduce_class_of {
#define CM_X(CODE, name, Name, class, ...) \
  CM_CPU_REDUCE_CLASS_OF_##CODE = CM_CPU_REDUCE_ACC_##class,
  CM_REDUCE_OPS(CM_X)
#undef CM_X
};
#define CM_X(CODE, acc, kern)                                                   \
  _Static_assert(CM_CPU_REDUCE_ACC_##acc == (int)CM_CPU_REDUCE_CLASS_OF_##CODE, \
                 "backend/cpu/reduce_table.h: " #CODE "'s accumulators are not its class");
CM_CPU_REDUCE_OPS(CM_X)
#undef CM_X

#endif
