/* How the CPU computes each scan (the op codes of ops/scan_ops.h): one
 * row per op code, in that table's order (checked below, when this
 * header compiles).  Generated from this list:
 *
 *   backend/cpu/scan.c      the kernel table
 *
 * Columns of X(CODE, kern, types):
 *   CODE    the op code CM_SCAN_<CODE>
 *   kern    the kernel prefix: scan_<kern>_f32, ... in scan.c
 *   types   the dtypes with a kernel after the op's dtype rule: ALL,
 *           NUMERIC (not bool), INEXACT
 */
#ifndef CMLX_BACKEND_CPU_SCAN_TABLE_H
#define CMLX_BACKEND_CPU_SCAN_TABLE_H

#include "ops/scan.h"

/* clang-format off */
#define CM_CPU_SCAN_OPS(X)    \
  X(SUM,       sum,  NUMERIC) \
  X(PROD,      prod, ALL)     \
  X(MAX,       max,  ALL)     \
  X(MIN,       min,  ALL)     \
  X(LOGADDEXP, lae,  INEXACT)
/* clang-format on */

/* Exactly one row per op code, in the op table's order: each row's
 * position is its code, and there are as many rows as codes.  (The
 * enum's X takes exactly three columns, so a short row does not compile
 * either.) */
enum cm_cpu_scan_row {
#define CM_X(CODE, kern, types) CM_CPU_SCAN_ROW_##CODE,
  CM_CPU_SCAN_OPS(CM_X)
#undef CM_X
  CM_CPU_SCAN_NUM_ROWS
};
#define CM_X(CODE, ...)                                              \
  _Static_assert((int)CM_CPU_SCAN_ROW_##CODE == (int)CM_SCAN_##CODE, \
                 "backend/cpu/scan_table.h: " #CODE " is out of ops/scan_ops.h's order");
CM_CPU_SCAN_OPS(CM_X)
#undef CM_X
_Static_assert((int)CM_CPU_SCAN_NUM_ROWS == (int)CM_SCAN_NUM_PUBLIC_OPS,
               "backend/cpu/scan_table.h needs a row for every op code of ops/scan_ops.h");

#endif
