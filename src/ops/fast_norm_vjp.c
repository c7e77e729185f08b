/* The node of the norms' fused gradient (primitives/fast.h,
 * RMSNormVJP / LayerNormVJP), for their vjp rules. */
#include "ops/fast.h"
#include "primitives/fast.h"

int cm_fast_norm_vjp(cm_array *x, cm_array *w, cm_array *g, float eps, bool layer, bool dw, bool db,
                     cm_array **outs, cm_stream s) {
  if (cm_op_stream(&s)) return -1;
  int32_t D = x->shape[x->ndim - 1];
  cm_norm_vjp_params p = {.eps = eps, .layer = layer, .has_dw = dw, .has_db = db};
  int n = 1 + dw + db, ndims[3] = {x->ndim, 1, 1};
  cm_dtype dts[3] = {x->dtype, x->dtype, x->dtype};
  const int32_t *shapes[3] = {x->shape, &D, &D};
  cm_array *in[3] = {x, w, g};
  return cm_node_new_multi(n, dts, ndims, shapes,
                           layer ? &cm_prim_layer_norm_vjp : &cm_prim_rms_norm_vjp, &p, sizeof p,
                           in, 3, s, outs);
}
