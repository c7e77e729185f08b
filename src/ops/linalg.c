#include "ops/linalg.h"

#include "primitives/linalg.h"

int cm_linalg_svd(cm_array *a, cm_array **outs, cm_stream s) {
  outs[0] = outs[1] = outs[2] = NULL;
  if (cm_op_stream(&s)) return -1;
  if (s.device.type == CM_GPU)
    return cm_error(CM_ERR_VALUE, "[linalg::svd] This op is not yet supported on the GPU. "
                                  "Explicitly pass a CPU stream to run it.");
  if (a->dtype != CM_FLOAT32 && a->dtype != CM_FLOAT64)
    return cm_error(CM_ERR_VALUE,
                    "[linalg::svd] Arrays must have type float32 or float64. Received array "
                    "with type %s.",
                    cm_dtype_name(a->dtype));
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[linalg::svd] Input array must have >= 2 dimensions. Received array with "
                    "%d dimensions.",
                    a->ndim);
  int nd = a->ndim;
  int32_t m = a->shape[nd - 2], n = a->shape[nd - 1];
  int32_t us[CM_MAX_DIMS], ss[CM_MAX_DIMS], vs[CM_MAX_DIMS];
  for (int d = 0; d < nd; d++) us[d] = ss[d] = vs[d] = a->shape[d];
  us[nd - 1] = m;
  vs[nd - 2] = n;
  ss[nd - 2] = m < n ? m : n;
  const cm_dtype dts[3] = {a->dtype, a->dtype, a->dtype};
  const int ndims[3] = {nd, nd - 1, nd};
  const int32_t *shapes[3] = {us, ss, vs};
  return cm_node_new_multi(3, dts, ndims, shapes, &cm_prim_svd, NULL, 0, &a, 1, s, outs);
}
