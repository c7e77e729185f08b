/* Sorting op constructors: argument checks with MLX's messages, the
 * axis=None flattening, and topk as a slice of a partition (as MLX builds
 * it).  The kernels are in backend/cpu/sort.c. */
#include "ops/sort.h"

#include <string.h>

#include "ops/shape.h"
#include "primitives/sort.h"

static cm_array *sort_node(cm_sort_op op, cm_array *a, int axis, int kth, cm_stream s) {
  cm_sort_params p;
  memset(&p, 0, sizeof p);
  p.op = op;
  p.axis = axis;
  p.kth = kth;
  cm_dtype dt = cm_sort_op_indices(op) ? CM_UINT32 : a->dtype;
  return cm_op_node(dt, a->ndim, a->shape, &cm_prim_sort, &p, sizeof p, &a, 1, s);
}

static cm_array *sort_axis(cm_sort_op op, const char *name, cm_array *a, int axis, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  if (cm_op_stream(&s)) return NULL;
  int ax;
  if (cm_normalize_axis(name, axis, a->ndim, &ax)) return NULL;
  return sort_node(op, a, ax, 0, s);
}

/* axis=None: sort the flattened array along its only axis. */
typedef cm_array *(*axis_op)(cm_array *a, int axis, cm_stream s);
static cm_array *flat(axis_op f, const char *name, cm_array *a, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  cm_array *x = cm_flatten(a, 0, -1, s);
  if (!x) return NULL;
  cm_array *r = f(x, 0, s);
  cm_release(x);
  return r;
}

static cm_array *partition_axis(cm_sort_op op, const char *name, cm_array *a, int kth, int axis,
                                cm_stream s) {
  bool arg = op == CM_SORT_ARGPARTITION;
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  if (cm_op_stream(&s)) return NULL;
  int ax;
  if (cm_normalize_axis(name, axis, a->ndim, &ax)) return NULL;
  int n = a->shape[ax];
  if (kth < -n || kth >= n) {
    char sh[256];
    /* MLX's partition message lacks the space before "along"; argpartition's has it */
    return cm_error(CM_ERR_VALUE,
                    "[%s] Received invalid kth %d%salong axis %d for array with shape: %s", name,
                    kth, arg ? " " : "", axis, cm_shape_str(sh, sizeof sh, a->ndim, a->shape)),
           NULL;
  }
  return sort_node(op, a, ax, kth < 0 ? kth + n : kth, s);
}

typedef cm_array *(*kth_op)(cm_array *a, int kth, int axis, cm_stream s);
static cm_array *flat_kth(kth_op f, const char *name, cm_array *a, int kth, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  cm_array *x = cm_flatten(a, 0, -1, s);
  if (!x) return NULL;
  cm_array *r = f(x, kth, 0, s);
  cm_release(x);
  return r;
}
/* The constructors of the AXIS and KTH rows of ops/sort_ops.h. */
#define CTORS_AXIS(CODE, name)                                                             \
  cm_array *cm_##name(cm_array *a, int axis, cm_stream s) {                              \
    return sort_axis(CM_SORT_##CODE, #name, a, axis, s);                                 \
  }                                                                                      \
  cm_array *cm_##name##_flat(cm_array *a, cm_stream s) { return flat(cm_##name, #name, a, s); }
#define CTORS_KTH(CODE, name)                                                              \
  cm_array *cm_##name(cm_array *a, int kth, int axis, cm_stream s) {                     \
    return partition_axis(CM_SORT_##CODE, #name, a, kth, axis, s);                       \
  }                                                                                      \
  cm_array *cm_##name##_flat(cm_array *a, int kth, cm_stream s) {                        \
    return flat_kth(cm_##name, #name, a, kth, s);                                        \
  }
#define CTORS_OWN(CODE, name)
#define CM_X(CODE, name, Name, form, ...) CTORS_##form(CODE, name)
CM_SORT_OPS(CM_X)
#undef CM_X

cm_array *cm_topk(cm_array *a, int k, int axis, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[topk] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  int ax;
  if (cm_normalize_axis("topk", axis, a->ndim, &ax)) return NULL;
  int n = a->shape[ax];
  if (k < 0 || k > n) {
    char sh[256];
    return cm_error(CM_ERR_VALUE,
                    "[topk] Received invalid k=%d along axis %d for array with shape: %s", k, axis,
                    cm_shape_str(sh, sizeof sh, a->ndim, a->shape)),
           NULL;
  }
  if (k == n) return cm_retain(a); /* the whole axis: MLX returns a as is */
  cm_array *part = sort_node(CM_SORT_PARTITION, a, ax, n - k, s);
  if (!part) return NULL;
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) start[i] = 0, stop[i] = a->shape[i];
  start[ax] = n - k;
  cm_array *r = cm_slice(part, a->ndim, start, a->ndim, stop, 0, NULL, s);
  cm_release(part);
  return r;
}
cm_array *cm_topk_flat(cm_array *a, int k, cm_stream s) {
  return flat_kth(cm_topk, "topk", a, k, s);
}

cm_array *cm_searchsorted(cm_array *sorted, cm_array *values, const char *side, cm_stream s) {
  if (!sorted || !values) return cm_error(CM_ERR_VALUE, "[searchsorted] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  bool right;
  if (!side || strcmp(side, "left") == 0) right = false;
  else if (strcmp(side, "right") == 0) right = true;
  else
    return cm_error(CM_ERR_VALUE, "[searchsorted] Invalid side '%s'. Expected 'left' or 'right'.",
                    side),
           NULL;
  if (sorted->ndim != 1)
    return cm_error(CM_ERR_VALUE,
                    "[searchsorted] The sorted sequence must be 1-D but has %d dimensions.",
                    sorted->ndim),
           NULL;
  cm_dtype t = cm_promote_types(sorted->dtype, values->dtype);
  cm_array *in[2] = {cm_astype(sorted, t, s), NULL};
  if (!in[0]) return NULL;
  if (!(in[1] = cm_astype(values, t, s))) {
    cm_release(in[0]);
    return NULL;
  }
  cm_sort_params p;
  memset(&p, 0, sizeof p);
  p.op = CM_SORT_SEARCHSORTED;
  p.right = right;
  cm_array *r = cm_op_node(CM_UINT32, values->ndim, values->shape, &cm_prim_sort, &p, sizeof p, in,
                           2, s);
  cm_release(in[0]);
  cm_release(in[1]);
  return r;
}
