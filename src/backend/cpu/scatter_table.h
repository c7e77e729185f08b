/* How the CPU applies each combining mode of Scatter (the op codes of
 * ops/scatter_ops.h): one row per op code, in that table's order, copying
 * exactly where the mode combines nothing (both checked below, when this
 * header compiles).  Generated from this list:
 *
 *   backend/cpu/scatter.c   the kernel tables
 *
 * Columns of X(CODE, apply, kern):
 *   CODE    the op code CM_SCATTER_<CODE>
 *   apply   COPY: a plain write, copied by element size (the mode whose
 *           combine is NONE); ROWS: the mode's kernels
 *   kern    the kernel prefix in scatter.c (ROWS): <kern>_f32 (runs) and
 *           <kern>_p_f32 (single elements); _ for COPY
 */
#ifndef CMLX_BACKEND_CPU_SCATTER_TABLE_H
#define CMLX_BACKEND_CPU_SCATTER_TABLE_H

#include "primitives/indexing.h"

/* clang-format off */
#define CM_CPU_SCATTER_OPS(X) \
  X(NONE, COPY, _)            \
  X(SUM,  ROWS, sum)          \
  X(PROD, ROWS, prod)         \
  X(MAX,  ROWS, max)          \
  X(MIN,  ROWS, min)
/* clang-format on */

/* CM_CPU_SCATTER_IF_ROWS_<apply>(...) keeps its arguments for the ROWS
 * rows. */
#define CM_CPU_SCATTER_IF_ROWS_COPY(...)
#define CM_CPU_SCATTER_IF_ROWS_ROWS(...) __VA_ARGS__

/* Exactly one row per op code, in the op table's order: each row's
 * position is its code, and there are as many rows as codes.  (The
 * enum's X takes exactly three columns, so a short row does not compile
 * either.) */
enum cm_cpu_scatter_row {
#define CM_X(CODE, apply, kern) CM_CPU_SCATTER_ROW_##CODE,
  CM_CPU_SCATTER_OPS(CM_X)
#undef CM_X
  CM_CPU_SCATTER_NUM_ROWS
};
#define CM_X(CODE, ...)                                                    \
  _Static_assert((int)CM_CPU_SCATTER_ROW_##CODE == (int)CM_SCATTER_##CODE, \
                 "backend/cpu/scatter_table.h: " #CODE " is out of ops/scatter_ops.h's order");
CM_CPU_SCATTER_OPS(CM_X)
#undef CM_X
_Static_assert((int)CM_CPU_SCATTER_NUM_ROWS == (int)CM_SCATTER_NUM_OPS,
               "backend/cpu/scatter_table.h needs a row for every op code of ops/scatter_ops.h");

/* A mode has kernels exactly when it combines (its combine column is not
 * NONE): the copy writes the last update, a combining mode must not. */
enum cm_cpu_scatter_combines {
#define CM_X(CODE, name, Name, combine, ...) \
  CM_CPU_SCATTER_COMBINES_##CODE = 0 CM_SCATTER_IF_COMBINES_##combine(+1),
  CM_SCATTER_OPS(CM_X)
#undef CM_X
};
#define CM_X(CODE, apply, kern)                                                            \
  _Static_assert((0 CM_CPU_SCATTER_IF_ROWS_##apply(+1)) == CM_CPU_SCATTER_COMBINES_##CODE, \
                 "backend/cpu/scatter_table.h: " #CODE " copies where it combines or the " \
                 "other way round");
CM_CPU_SCATTER_OPS(CM_X)
#undef CM_X

#endif
