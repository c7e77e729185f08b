/* The sorting ops (op codes of the Sort primitive), one row each.
 * Generated from this list:
 *
 *   primitives/sort.h       the enum cm_sort_op and what each code gives
 *   primitives/sort.c       the printed name, which ops move values (their
 *                           derivative goes through the permutation; the
 *                           index ops have a zero one)
 *   ops/sort.h, ops/sort.c  cm_<name> and cm_<name>_flat of the AXIS and KTH
 *                           forms, the result dtype, "[name]"
 *   backend/cpu/sort.c      full sort or selection, values or indices
 *   capi/ops_sort.c         mlx_<name> and mlx_<name>_axis
 *   python/src/ops_sortscan.c  the cmlx.core.<name> signature rows
 *
 * topk (a slice of a partition) is a composition, written by hand.
 *
 * Columns of X(CODE, name, Name, form, out, mlxc, py):
 *   CODE    the op code CM_SORT_<CODE> (rows in the enum's order)
 *   name    cm_<name>, mlx_<name>, cmlx.core.<name>, "[name]" in messages
 *   Name    MLX's printed primitive name
 *   form    AXIS: a full sort along an axis, cm_<name>(a, axis, s) and the
 *           axis=None form cm_<name>_flat(a, s); KTH: a selection,
 *           cm_<name>(a, kth, axis, s) and cm_<name>_flat(a, kth, s); OWN:
 *           its own constructor, by hand (searchsorted)
 *   out     VALUES: the input's elements, in its dtype; INDICES: uint32
 *           positions
 *   mlxc    MLXC: mlx-c declares mlx_<name> (axis=None) and
 *           mlx_<name>_axis; NO_MLXC: it has neither
 *   py      the Python row: AXIS, KTH (the form's), OWN (by hand)
 */
#ifndef CMLX_OPS_SORT_OPS_H
#define CMLX_OPS_SORT_OPS_H

#include "ops/op_table.h"

/* clang-format off */
#define CM_SORT_OPS(X)                                                           \
  X(SORT,         sort,         "Sort",         AXIS, VALUES,  MLXC,    AXIS)    \
  X(ARGSORT,      argsort,      "ArgSort",      AXIS, INDICES, MLXC,    AXIS)    \
  X(PARTITION,    partition,    "Partition",    KTH,  VALUES,  MLXC,    KTH)     \
  X(ARGPARTITION, argpartition, "ArgPartition", KTH,  INDICES, MLXC,    KTH)     \
  X(SEARCHSORTED, searchsorted, "SearchSorted", OWN,  INDICES, NO_MLXC, OWN)
/* clang-format on */

/* Every row has all 7 columns (consumers that name only the first few
 * would not notice a short row): a row with another count does not
 * compile here. */
#define CM_SORT_ARITY_(CODE, name, Name, form, out, mlxc, py) +1
enum { CM_SORT_ROWS_ = 0 CM_SORT_OPS(CM_SORT_ARITY_) };

#endif
