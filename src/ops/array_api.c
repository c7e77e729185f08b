/* The array-API additions of MLX 0.32 (see ops/array_api.h), composed
 * from other op constructors with MLX's argument checks and messages. */
#include "ops/array_api.h"

#include "ops/binary.h"
#include "ops/shape.h"
#include "ops/ternary.h"
#include "ops/unary.h"

cm_array *cm_trunc(cm_array *a, cm_stream s) {
  if (a->dtype == CM_COMPLEX64)
    return cm_error(CM_ERR_VALUE, "[trunc] Not supported for complex64."), NULL;
  if (cm_op_stream(&s)) return NULL;
  if (!cm_dtype_is_inexact(a->dtype)) return cm_retain(a);
  cm_array *zero = cm_array_scalar_double(0.0, a->dtype);
  cm_array *neg = zero ? cm_less(a, zero, s) : NULL;
  cm_array *up = neg ? cm_ceil(a, s) : NULL;
  cm_array *down = up ? cm_floor(a, s) : NULL;
  cm_array *r = down ? cm_where(neg, up, down, s) : NULL;
  cm_release(zero);
  cm_release(neg);
  cm_release(up);
  cm_release(down);
  return r;
}

cm_array *cm_flip(cm_array *a, int naxes, const int *axes, cm_stream s) {
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS], step[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) {
    start[i] = 0;
    stop[i] = a->shape[i];
    step[i] = 1;
  }
  /* start at the last element; a stop of -n-1 is "before the first", as
   * MLX writes it */
  for (int k = 0; k < (naxes < 0 ? a->ndim : naxes); k++) {
    int ax = k;
    if (naxes >= 0 && cm_normalize_axis("flip", axes[k], a->ndim, &ax)) return NULL;
    start[ax] = a->shape[ax] - 1;
    stop[ax] = -a->shape[ax] - 1;
    step[ax] = -1;
  }
  return cm_slice(a, a->ndim, start, a->ndim, stop, a->ndim, step, s);
}

cm_array *cm_matrix_transpose(cm_array *a, cm_stream s) {
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[matrix_transpose] Input array must have at least 2 dimensions."),
           NULL;
  return cm_swapaxes(a, -1, -2, s);
}

cm_array *cm_vecdot(cm_array *a, cm_array *b, int axis, cm_stream s) {
  if (a->ndim == 0 || b->ndim == 0)
    return cm_error(CM_ERR_VALUE, "[vecdot] inputs must be at least 1D."), NULL;
  /* MLX 0.32: an axis outside a is an IndexError, one that names another
   * axis of b (or none) a ValueError, with the same words */
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return cm_error(CM_ERR_INDEX, "[vecdot] axis is out of bounds."), NULL;
  if (axis < 0 ? axis + b->ndim != ax : axis >= b->ndim)
    return cm_error(CM_ERR_VALUE, "[vecdot] axis is out of bounds."), NULL;
  if (a->shape[ax] != b->shape[ax])
    return cm_error(CM_ERR_VALUE, "[vecdot] a and b must have the same size along axis."), NULL;
  cm_array *ca = cm_conjugate(a, s);
  cm_array *prod = ca ? cm_multiply(ca, b, s) : NULL;
  cm_array *r = prod ? cm_sum(prod, CM_AXIS(ax), false, s) : NULL;
  cm_release(ca);
  cm_release(prod);
  return r;
}

int cm_minmax(cm_array *a, cm_axes axes, bool keepdims, cm_array **min, cm_array **max,
              cm_stream s) {
  *min = cm_min(a, axes, keepdims, s);
  *max = *min ? cm_max(a, axes, keepdims, s) : NULL;
  if (*max) return 0;
  cm_release(*min);
  *min = NULL;
  return -1;
}
