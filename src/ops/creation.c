#include "ops/creation.h"

#include <math.h>

#include "primitives/creation.h"
#include "primitives/layout.h"

cm_array *cm_full(int ndim, const int32_t *shape, cm_array *vals, cm_dtype dtype, cm_stream s) {
  if (cm_check_shape("full", ndim, shape) || cm_op_stream(&s)) return NULL;
  int nout;
  int32_t out[CM_MAX_DIMS];
  /* vals must broadcast to shape without changing it */
  if (cm_broadcast_shapes(vals->ndim, vals->shape, ndim, shape, &nout, out)) return NULL;
  if (nout != ndim || cm_shape_size(nout, out) != cm_shape_size(ndim, shape)) {
    char sa[256], sb[256];
    cm_error(CM_ERR_VALUE, "[full] Cannot broadcast array of shape %s into shape %s.",
             cm_shape_str(sa, sizeof sa, vals->ndim, vals->shape),
             cm_shape_str(sb, sizeof sb, ndim, shape));
    return NULL;
  }
  if (!cm_dynamic_shapes() || cm_shape_equal(vals->ndim, vals->shape, ndim, shape))
    return cm_op_node(dtype, ndim, shape, &cm_prim_full, NULL, 0, &vals, 1, s);
  /* a shapeless trace: Full's input has the output's shape (its replay
   * shape), as MLX builds it */
  cm_array *b = cm_broadcast_to(vals, ndim, shape, s);
  cm_array *r = b ? cm_op_node(dtype, ndim, shape, &cm_prim_full, NULL, 0, &b, 1, s) : NULL;
  cm_release(b);
  return r;
}

cm_array *cm_full_double(int ndim, const int32_t *shape, double v, cm_dtype dtype, cm_stream s) {
  cm_array *val = cm_array_scalar_double(v, dtype);
  if (!val) return NULL;
  cm_array *r = cm_full(ndim, shape, val, dtype, s);
  cm_release(val);
  return r;
}

cm_array *cm_zeros(int ndim, const int32_t *shape, cm_dtype dtype, cm_stream s) {
  return cm_full_double(ndim, shape, 0.0, dtype, s);
}

cm_array *cm_ones(int ndim, const int32_t *shape, cm_dtype dtype, cm_stream s) {
  return cm_full_double(ndim, shape, 1.0, dtype, s);
}

/* full(a.shape, v): in a shapeless trace v is broadcast against a itself
 * (MLX's full_like), so that a replay takes a's new shape. */
static cm_array *like(cm_array *a, cm_array *vals, cm_dtype dtype, cm_stream s) {
  if (!cm_dynamic_shapes()) return cm_full(a->ndim, a->shape, vals, dtype, s);
  if (cm_op_stream(&s)) return NULL;
  cm_array *pair[2] = {a, vals}, *b[2];
  if (cm_broadcast_and_cast(pair, 2, -1, b, s)) return NULL;
  cm_array *r = cm_full(a->ndim, a->shape, b[1], dtype, s);
  cm_release(b[0]);
  cm_release(b[1]);
  return r;
}

cm_array *cm_fill_like(cm_array *a, double v, cm_dtype dtype, cm_stream s) {
  cm_array *val = cm_array_scalar_double(v, dtype);
  cm_array *r = val ? like(a, val, dtype, s) : NULL;
  cm_release(val);
  return r;
}

cm_array *cm_zeros_like(cm_array *a, cm_stream s) { return cm_fill_like(a, 0.0, a->dtype, s); }
cm_array *cm_ones_like(cm_array *a, cm_stream s) { return cm_fill_like(a, 1.0, a->dtype, s); }
cm_array *cm_full_like(cm_array *a, cm_array *vals, cm_dtype dtype, cm_stream s) {
  return like(a, vals, dtype, s);
}

/* ---- ranges ---- */

cm_array *cm_arange(double start, double stop, double step, cm_dtype dtype, cm_stream s) {
  if (!cm_dtype_valid((int)dtype)) return cm_error(CM_ERR_VALUE, "[arange] Invalid dtype."), NULL;
  if (dtype == CM_BOOL) return cm_error(CM_ERR_VALUE, "bool not supported for arange."), NULL;
  if (isnan(start) || isnan(stop) || isnan(step) || isinf(start) || isinf(stop))
    return cm_error(CM_ERR_VALUE, "[arange] Cannot compute length."), NULL;
  if (step == 0) return cm_error(CM_ERR_VALUE, "[arange] step must be nonzero."), NULL;
  if (cm_op_stream(&s)) return NULL;
  int32_t size;
  if (isinf(step)) {
    /* one element (start) if the range is non-empty, like MLX */
    size = (step > 0 && start < stop) || (step < 0 && start > stop) ? 1 : 0;
    step = 0;
  } else {
    double real_size = ceil((stop - start) / step);
    if (real_size > INT32_MAX)
      return cm_error(CM_ERR_VALUE, "[arange] Maximum size exceeded."), NULL;
    size = real_size > 0 ? (int32_t)real_size : 0;
  }
  cm_arange_params p = {start, step};
  return cm_op_node(dtype, 1, &size, &cm_prim_arange, &p, sizeof p, NULL, 0, s);
}

cm_array *cm_linspace(double start, double stop, int num, cm_dtype dtype, cm_stream s) {
  if (!cm_dtype_valid((int)dtype)) return cm_error(CM_ERR_VALUE, "[linspace] Invalid dtype."), NULL;
  if (num < 0)
    return cm_error(CM_ERR_VALUE, "[linspace] number of samples, %d, must be non-negative.", num),
           NULL;
  if (cm_op_stream(&s)) return NULL;
  int32_t size = num;
  cm_linspace_params p = {start, stop};
  return cm_op_node(dtype, 1, &size, &cm_prim_linspace, &p, sizeof p, NULL, 0, s);
}

/* ---- matrices ---- */

cm_array *cm_eye(int n, int m, int k, cm_dtype dtype, cm_stream s) {
  if (!cm_dtype_valid((int)dtype)) return cm_error(CM_ERR_VALUE, "[eye] Invalid dtype."), NULL;
  if (n < 0 || m < 0)
    return cm_error(CM_ERR_VALUE, "[eye] N and M must be positive integers."), NULL;
  if (cm_op_stream(&s)) return NULL;
  int32_t shape[2] = {n, m};
  cm_band_params p = {k};
  return cm_op_node(dtype, 2, shape, &cm_prim_eye, &p, sizeof p, NULL, 0, s);
}

cm_array *cm_identity(int n, cm_dtype dtype, cm_stream s) { return cm_eye(n, n, 0, dtype, s); }

cm_array *cm_tri(int n, int m, int k, cm_dtype dtype, cm_stream s) {
  if (!cm_dtype_valid((int)dtype)) return cm_error(CM_ERR_VALUE, "[tri] Invalid dtype."), NULL;
  if (cm_op_stream(&s)) return NULL;
  /* MLX builds tri from aranges, so negative sizes give empty axes */
  int32_t shape[2] = {n > 0 ? n : 0, m > 0 ? m : 0};
  cm_band_params p = {k};
  return cm_op_node(dtype, 2, shape, &cm_prim_tri, &p, sizeof p, NULL, 0, s);
}
