/* hadamard_transform's constructor (see ops/hadamard.h). */
#include "ops/hadamard.h"

#include <math.h>

#include "ops/binary.h"
#include "primitives/hadamard.h"

cm_array *cm_hadamard_transform(cm_array *a, bool has_scale, float scale, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[hadamard_transform] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  if (a->size == 0)
    return cm_error(CM_ERR_VALUE, "[hadamard_transform] Does not support empty arrays."), NULL;
  int n = a->ndim > 0 ? a->shape[a->ndim - 1] : 1;
  if (!has_scale) scale = (float)(1.0 / sqrt((double)n));
  cm_dtype dt = cm_dtype_is_float(a->dtype) ? a->dtype : CM_FLOAT32;
  if (n == 1) {
    if (scale == 1.0f) return cm_retain(a);
    cm_array *c = cm_array_scalar_double(scale, dt);
    cm_array *r = c ? cm_multiply(a, c, s) : NULL;
    cm_release(c);
    return r;
  }
  int m, pow2;
  if (cm_hadamard_decompose(n, &m, &pow2)) return NULL;
  if (dt == CM_FLOAT64) return cm_error(CM_ERR_VALUE, "[hadamard] Unsupported type."), NULL;
  cm_array *x = cm_astype(a, dt, s);
  if (!x) return NULL;
  cm_hadamard_params p = {scale};
  cm_array *r = cm_op_node(dt, x->ndim, x->shape, &cm_prim_hadamard, &p, sizeof p, &x, 1, s);
  cm_release(x);
  return r;
}
