/* where (the Select primitive) and clip (maximum then minimum, as MLX
 * composes it). */
#include "ops/ternary.h"

#include "ops/binary.h"
#include "primitives/ternary.h"

cm_array *cm_where(cm_array *cond, cm_array *x, cm_array *y, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  /* cond goes to bool, x and y to their promotion; then all three are
   * broadcast together (shape errors name the shapes folded so far) */
  cm_dtype t = cm_promote_types(x->dtype, y->dtype);
  cm_array *c = cm_astype(cond, CM_BOOL, s);
  cm_array *xc = c ? cm_astype(x, t, s) : NULL;
  cm_array *yc = xc ? cm_astype(y, t, s) : NULL;
  cm_array *r = NULL;
  if (yc) {
    cm_array *ins[3] = {c, xc, yc}, *b[3];
    if (cm_broadcast_and_cast(ins, 3, -1, b, s) == 0) {
      r = cm_op_node(t, b[0]->ndim, b[0]->shape, &cm_prim_select, NULL, 0, b, 3, s);
      for (int i = 0; i < 3; i++) cm_release(b[i]);
    }
  }
  cm_release(c);
  cm_release(xc);
  cm_release(yc);
  return r;
}

cm_array *cm_clip(cm_array *a, cm_array *a_min, cm_array *a_max, cm_stream s) {
  /* MLX's message has no "[clip]" prefix */
  if (!a_min && !a_max)
    return cm_error(CM_ERR_VALUE, "At most one of a_min and a_max may be None"), NULL;
  cm_array *r = cm_retain(a);
  if (a_min) {
    cm_array *t = cm_maximum(r, a_min, s);
    cm_release(r);
    if (!(r = t)) return NULL;
  }
  if (a_max) {
    cm_array *t = cm_minimum(r, a_max, s);
    cm_release(r);
    r = t;
  }
  return r;
}
