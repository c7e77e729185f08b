#include "ops/unary.h"

#include "primitives/unary.h"

cm_array *cm_unary(cm_unary_op op, cm_array *a, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  cm_dtype out = a->dtype;
  cm_array *x = cm_retain(a);
  if (op == CM_UNARY_EXP) {
    out = cm_float_result_type(a->dtype);
    cm_release(x);
    x = cm_astype(a, out, s);
    if (!x) return NULL;
  }
  cm_unary_params p = {op};
  cm_array *r = cm_op_node(out, x->ndim, x->shape, &cm_prim_unary, &p, sizeof p, &x, 1, s);
  cm_release(x);
  return r;
}

cm_array *cm_negative(cm_array *a, cm_stream s) { return cm_unary(CM_UNARY_NEGATIVE, a, s); }
cm_array *cm_exp(cm_array *a, cm_stream s) { return cm_unary(CM_UNARY_EXP, a, s); }
