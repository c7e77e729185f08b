#include "ops/creation.h"

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
             cm_shape_str(sa, sizeof sa, vals->ndim, vals->shape), cm_shape_str(sb, sizeof sb, ndim, shape));
    return NULL;
  }
  return cm_op_node(dtype, ndim, shape, &cm_prim_full, NULL, 0, &vals, 1, s);
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

cm_array *cm_zeros_like(cm_array *a, cm_stream s) { return cm_zeros(a->ndim, a->shape, a->dtype, s); }
cm_array *cm_ones_like(cm_array *a, cm_stream s) { return cm_ones(a->ndim, a->shape, a->dtype, s); }
cm_array *cm_full_like(cm_array *a, cm_array *vals, cm_dtype dtype, cm_stream s) {
  return cm_full(a->ndim, a->shape, vals, dtype, s);
}
