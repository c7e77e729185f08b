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
#include "ops/sort_ops.h"
#include "primitives/primitive.h"

/* The op codes, in the table's order (ops/sort_ops.h). */
typedef enum cm_sort_op {
#define CM_X(CODE, ...) CM_SORT_##CODE,
  CM_SORT_OPS(CM_X)
#undef CM_X
  CM_SORT_NUM_OPS
} cm_sort_op;

/* The form and out columns: a full sort (not a selection), and a result
 * of uint32 indices (not the input's values). */
#define CM_SORT_FORM_FULL_AXIS true
#define CM_SORT_FORM_FULL_KTH false
#define CM_SORT_FORM_FULL_OWN false
#define CM_SORT_OUT_INDICES_VALUES false
#define CM_SORT_OUT_INDICES_INDICES true

static inline bool cm_sort_op_full(cm_sort_op op) {
  switch (op) {
#define CM_X(CODE, name, Name, form, ...) \
  case CM_SORT_##CODE: return CM_SORT_FORM_FULL_##form;
    CM_SORT_OPS(CM_X)
#undef CM_X
  default: return false;
  }
}
static inline bool cm_sort_op_indices(cm_sort_op op) {
  switch (op) {
#define CM_X(CODE, name, Name, form, out, ...) \
  case CM_SORT_##CODE: return CM_SORT_OUT_INDICES_##out;
    CM_SORT_OPS(CM_X)
#undef CM_X
  default: return false;
  }
}
/* Zeroed before filling, so equal nodes compare equal bytewise. */
typedef struct cm_sort_params {
  cm_sort_op op;
  int axis;  /* normalised, >= 0 (unused by searchsorted) */
  int kth;   /* partition ops: normalised, in [0, n) */
  int right; /* searchsorted: 1 for side="right" */
} cm_sort_params;
CM_PARAMS_ACCESSOR(cm_sort_params, cm_sort_params_of)

extern const cm_prim cm_prim_sort;
const char *cm_sort_op_name(cm_sort_op op); /* "ArgSort" */

#endif
