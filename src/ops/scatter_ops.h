/* The combining modes of Scatter (its op codes), one row each.  Generated
 * from this list:
 *
 *   primitives/indexing.h   the enum cm_scatter_op
 *   primitives/indexing.c   the printed name of a Scatter node
 *   ops/indexing.c          how a combining slice update combines
 *   backend/cpu/scatter_table.h  checks that the CPU table has one row per
 *                           op code, in this order, copying exactly where
 *                           combine is NONE
 *   capi/ops_indexing.c     mlx_<name> and mlx_<name>_single
 *
 * The derivative rules (primitives/indexing.c) and the Python x.at[...]
 * methods (python/src/indexing_at.c) choose among the modes in code.
 *
 * Columns of X(CODE, name, Name, combine, mlxc):
 *   CODE    the op code CM_SCATTER_<CODE> (rows in the enum's order)
 *   name    mlx_<name>, "[name]" in the C API's messages
 *   Name    the printed name of the node
 *   combine the binary op that merges an update into what is there
 *           (CM_BINARY_<combine>), NONE for a plain write (the last wins)
 *   mlxc    MLXC: mlx-c declares mlx_<name> and mlx_<name>_single
 */
#ifndef CMLX_OPS_SCATTER_OPS_H
#define CMLX_OPS_SCATTER_OPS_H

#include "ops/op_table.h"

/* clang-format off */
#define CM_SCATTER_OPS(X)                              \
  X(NONE, scatter,      "Scatter",     NONE,     MLXC) \
  X(SUM,  scatter_add,  "ScatterSum",  ADD,      MLXC) \
  X(PROD, scatter_prod, "ScatterProd", MULTIPLY, MLXC) \
  X(MAX,  scatter_max,  "ScatterMax",  MAXIMUM,  MLXC) \
  X(MIN,  scatter_min,  "ScatterMin",  MINIMUM,  MLXC)
/* clang-format on */

/* Every row has all 5 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_SCATTER_ARITY_(CODE, name, Name, combine, mlxc) +1
enum { CM_SCATTER_ROWS_ = 0 CM_SCATTER_OPS(CM_SCATTER_ARITY_) };

/* CM_SCATTER_IF_COMBINES_<combine>(...) keeps its arguments for the rows
 * that combine (every combine column but NONE). */
#define CM_SCATTER_IF_COMBINES_NONE(...)
#define CM_SCATTER_IF_COMBINES_ADD(...) __VA_ARGS__
#define CM_SCATTER_IF_COMBINES_MULTIPLY(...) __VA_ARGS__
#define CM_SCATTER_IF_COMBINES_MAXIMUM(...) __VA_ARGS__
#define CM_SCATTER_IF_COMBINES_MINIMUM(...) __VA_ARGS__

#endif
