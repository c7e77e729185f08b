/* Sorting and selection: sort, argsort, partition, argpartition, topk and
 * searchsorted.
 *
 * Order (MLX 0.32): ascending; NaN sorts last; -0.0 and 0.0 are equal;
 * complex64 orders by real part, then imaginary part, with any NaN last;
 * bool sorts false before true.  sort and argsort are stable (equal
 * elements keep their order), so argsort of [0.0, -0.0] is [0, 1].
 *
 * Axes: `axis` may be negative; out of range is an IndexError ("[sort]
 * Axis 2 is out of bounds for array with 2 dimensions.").  The _flat
 * variants are MLX's axis=None: the array is flattened first (a 0-d array
 * becomes shape (1,)), and errors then name axis 0.
 *
 * Result dtypes: sort, partition and topk keep the input's dtype; argsort
 * and argpartition give uint32.
 *
 * partition(a, kth) puts the element that a full sort would put at kth
 * there, everything not greater before it and everything not smaller
 * after it; the order within each side is unspecified (as in MLX).  kth may
 * be negative (counted from the end); outside [-n, n) it is a ValueError,
 * worded as MLX words it (note MLX's missing space in partition's):
 *   "[partition] Received invalid kth 7along axis -1 for array with shape: (7)"
 *   "[argpartition] Received invalid kth 7 along axis -1 for array with shape: (7)"
 *
 * topk(a, k) is the last k elements of partition(a, -k) along the axis:
 * the k largest, in unspecified order (MLX's order is unspecified too);
 * k == n returns a itself.  k outside [0, n] is a ValueError "[topk]
 * Received invalid k=4 along axis -1 for array with shape: (3)".
 *
 * searchsorted(seq, values, side) gives, for each value, the insertion
 * index into the 1-D sorted seq: "left" (NULL) the first index i with
 * seq[i] >= v, "right" the first with seq[i] > v, both under the order
 * above (NaN largest).  Both are promoted to their common dtype first; the
 * result is uint32 with values' shape.  seq not 1-D and side not
 * left/right are ValueErrors with MLX's messages.
 *
 * mlx-c mapping: mlx_sort(a) -> cm_sort_flat(a), mlx_sort_axis(a, axis)
 * -> cm_sort(a, axis), and the same for argsort, partition, argpartition
 * and topk. */
#ifndef CMLX_OPS_SORT_H
#define CMLX_OPS_SORT_H

#include "ops/common.h"
#include "ops/sort_ops.h"

/* The AXIS and KTH rows of ops/sort_ops.h: cm_sort, cm_sort_flat, ...,
 * cm_argpartition_flat. */
#define CM_SORT_DECLARE_AXIS(name)                           \
  cm_array *cm_##name(cm_array *a, int axis, cm_stream s); \
  cm_array *cm_##name##_flat(cm_array *a, cm_stream s);
#define CM_SORT_DECLARE_KTH(name)                                     \
  cm_array *cm_##name(cm_array *a, int kth, int axis, cm_stream s); \
  cm_array *cm_##name##_flat(cm_array *a, int kth, cm_stream s);
#define CM_SORT_DECLARE_OWN(name)
#define CM_X(CODE, name, Name, form, ...) CM_SORT_DECLARE_##form(name)
CM_SORT_OPS(CM_X)
#undef CM_X
cm_array *cm_topk(cm_array *a, int k, int axis, cm_stream s);
cm_array *cm_topk_flat(cm_array *a, int k, cm_stream s);
/* side: "left" (or NULL) or "right". */
cm_array *cm_searchsorted(cm_array *sorted, cm_array *values, const char *side, cm_stream s);

/* unique(a, size, fill) (ops/unique.c): out[0] the sorted unique elements
 * of the flattened a (a's dtype), out[1] the index of each one's first
 * occurrence (uint32), out[2] the inverse (uint32, a's shape), out[3] the
 * counts (int32); all but the inverse have shape (size,).  Entries past
 * the last unique element hold fill (one element, cast to a's dtype) or,
 * with fill NULL, the smallest element; their count is 0.  A truncated
 * output keeps the smallest size elements and clamps the inverse to the
 * last entry.  ValueErrors: a negative size; an empty a with size > 0 and
 * no fill; a fill of more than one element.  0, or -1 with none left. */
int cm_unique(cm_array *a, int size, cm_array *fill, cm_array *out[4], cm_stream s);

#endif
