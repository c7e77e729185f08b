/* Helpers shared by the op tables (ops/binary_ops.h, ops/unary_ops.h,
 * ...).  Each family lists its operations once, as an X-macro whose rows
 * have one column per fact; a consumer defines X to pick the columns it
 * needs.  A column that selects code holds a token the consumer pastes
 * onto its own prefix (KIND_##col), so an unknown value does not compile.
 * The ones every family shares are here. */
#ifndef CMLX_OPS_OP_TABLE_H
#define CMLX_OPS_OP_TABLE_H

/* The mlxc column: CM_IF_<mlxc>(...) keeps its arguments for the rows
 * whose mlx_<name> mlx-c declares in the family's usual form (MLXC) and
 * drops them for the rows mlx-c lacks (NO_MLXC) and the ones whose adapter
 * is written by hand (OWN). */
#define CM_IF_MLXC(...) __VA_ARGS__
#define CM_IF_NO_MLXC(...)
#define CM_IF_OWN(...)

#endif
