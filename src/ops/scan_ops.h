/* The cumulative scans (the public op codes of the Scan primitive), one row
 * each.  Generated from this list:
 *
 *   ops/scan.h              the enum cm_scan_op, cm_<name> and cm_<name>_flat
 *   ops/scan.c              their definitions, the dtype rule, "[name]"
 *   primitives/scan.c       the printed name
 *   backend/cpu/scan_table.h  checks that the CPU table has one row per op
 *                           code, in this order
 *   capi/ops_sort.c         mlx_<name>
 *   python/src/ops_sortscan.c  the cmlx.core.<name> signature rows
 *
 * Each op's derivative rule (primitives/scan.c) is code, built from ops
 * (scans among them).
 *
 * Columns of X(CODE, name, Name, dtype, mlxc, py):
 *   CODE    the op code CM_SCAN_<CODE> (rows in the enum's order)
 *   name    cm_<name>(_flat), mlx_<name>, cmlx.core.<name>, "[name]"
 *   Name    the printed primitive name (MLX prints its Scan primitive as
 *           CumSum, CumProd, ...)
 *   dtype   the dtype the scan runs in and gives: SAME; SUM (bool -> int32);
 *           TO_FLOAT (integers and bool -> float32)
 *   mlxc    MLXC: mlx-c declares mlx_<name>(res, a, axis, reverse,
 *           inclusive, s)
 *   py      the Python row: DTYPE (takes dtype=, a cast before the scan) or
 *           PLAIN
 */
#ifndef CMLX_OPS_SCAN_OPS_H
#define CMLX_OPS_SCAN_OPS_H

#include "ops/op_table.h"

/* clang-format off */
#define CM_SCAN_OPS(X)                                              \
  X(SUM,       cumsum,       "CumSum",       SUM,      MLXC, DTYPE) \
  X(PROD,      cumprod,      "CumProd",      SAME,     MLXC, DTYPE) \
  X(MAX,       cummax,       "CumMax",       SAME,     MLXC, PLAIN) \
  X(MIN,       cummin,       "CumMin",       SAME,     MLXC, PLAIN) \
  X(LOGADDEXP, logcumsumexp, "CumLogaddexp", TO_FLOAT, MLXC, PLAIN)
/* clang-format on */

/* Every row has all 6 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_SCAN_ARITY_(CODE, name, Name, dtype, mlxc, py) +1
enum { CM_SCAN_ROWS_ = 0 CM_SCAN_OPS(CM_SCAN_ARITY_) };

#endif
