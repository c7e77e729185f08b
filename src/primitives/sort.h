/* The Sort primitive family: one descriptor for sort, argsort, partition,
 * argpartition (one input, along one axis) and searchsorted (two inputs:
 * a 1-D sorted sequence and the values to place).  Printed names follow
 * MLX's primitives: Sort, ArgSort, Partition, ArgPartition, SearchSorted.
 *
 * Derivatives: the arg ops and searchsorted are piecewise constant (zero
 * gradient, zero uint32 tangent).  Sort and Partition move tangents
 * through the permutation (take_along_axis with the argsort/argpartition
 * indices) and put cotangents back through it (put_along_axis). */
#ifndef CMLX_PRIMITIVES_SORT_H
#define CMLX_PRIMITIVES_SORT_H

#include "ops/sort.h"
#include "primitives/primitive.h"

typedef enum cm_sort_op {
  CM_SORT_SORT,
  CM_SORT_ARGSORT,
  CM_SORT_PARTITION,
  CM_SORT_ARGPARTITION,
  CM_SORT_SEARCHSORTED,
  CM_SORT_NUM_OPS
} cm_sort_op;

/* Zeroed before filling, so equal nodes compare equal bytewise. */
typedef struct cm_sort_params {
  cm_sort_op op;
  int axis;  /* normalised, >= 0 (unused by searchsorted) */
  int kth;   /* partition ops: normalised, in [0, n) */
  int right; /* searchsorted: 1 for side="right" */
} cm_sort_params;

extern const cm_prim cm_prim_sort;
const char *cm_sort_op_name(cm_sort_op op); /* "ArgSort" */

#endif
