/* The cumulative scans (the public op codes of the Scan primitive), one row
 * each.  Generated from this list:
 *
 *   ops/scan.h              the enum cm_scan_op, cm_<name> and cm_<name>_flat
 *   ops/scan.c              their definitions, the dtype rule, "[name]"
 *   primitives/scan.c       the printed name
 *   backend/cpu/scan.c      the kernel table
 *   capi/ops_sort.c         mlx_<name>
 *   python/src/ops_sortscan.c  the cmlx.core.<name> signature rows
 *
 * The derivative scans the transform rules build are internal op codes
 * (CM_SCAN_DERIV_OPS in primitives/scan.h); each public op's rule (which of
 * them it builds) is code in primitives/scan.c.
 *
 * Columns of X(CODE, name, Name, dtype, kern, types, mlxc, py):
 *   CODE    the op code CM_SCAN_<CODE> (rows in the enum's order)
 *   name    cm_<name>(_flat), mlx_<name>, cmlx.core.<name>, "[name]"
 *   Name    the printed primitive name (MLX prints its Scan primitive as
 *           CumSum, CumProd, ...)
 *   dtype   the dtype the scan runs in and gives: SAME; SUM (bool -> int32);
 *           TO_FLOAT (integers and bool -> float32)
 *   kern    the kernel prefix: scan_<kern>_f32, ... in backend/cpu/scan.c
 *   types   the dtypes with a kernel after the dtype rule: ALL, NUMERIC (not
 *           bool), INEXACT
 *   mlxc    MLXC: mlx-c declares mlx_<name>(res, a, axis, reverse,
 *           inclusive, s)
 *   py      the Python row: DTYPE (takes dtype=, a cast before the scan) or
 *           PLAIN
 */
#ifndef CMLX_OPS_SCAN_OPS_H
#define CMLX_OPS_SCAN_OPS_H

#include "ops/op_table.h"

/* clang-format off */
#define CM_SCAN_OPS(X)                                                                 \
  X(SUM,       cumsum,       "CumSum",       SUM,      sum,  NUMERIC, MLXC, DTYPE)     \
  X(PROD,      cumprod,      "CumProd",      SAME,     prod, ALL,     MLXC, DTYPE)     \
  X(MAX,       cummax,       "CumMax",       SAME,     max,  ALL,     MLXC, PLAIN)     \
  X(MIN,       cummin,       "CumMin",       SAME,     min,  ALL,     MLXC, PLAIN)     \
  X(LOGADDEXP, logcumsumexp, "CumLogaddexp", TO_FLOAT, lae,  INEXACT, MLXC, PLAIN)
/* clang-format on */

/* Every row has all 8 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_SCAN_ARITY_(CODE, name, Name, dtype, kern, types, mlxc, py) +1
enum { CM_SCAN_ROWS_ = 0 CM_SCAN_OPS(CM_SCAN_ARITY_) };

#endif
