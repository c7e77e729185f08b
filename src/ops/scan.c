/* Scan op constructors: axis checks, MLX's result dtypes (bool sums in
 * int32, logcumsumexp in a float type), and the axis=None flattening. */
#include "ops/scan.h"

#include <string.h>

#include "ops/shape.h"
#include "primitives/scan.h"

static const char *const public_names[CM_SCAN_NUM_PUBLIC_OPS] = {
    [CM_SCAN_SUM] = "cumsum",
    [CM_SCAN_PROD] = "cumprod",
    [CM_SCAN_MAX] = "cummax",
    [CM_SCAN_MIN] = "cummin",
    [CM_SCAN_LOGADDEXP] = "logcumsumexp",
};

cm_array *cm_scan(cm_scan_op op, cm_array *a, int axis, bool reverse, bool inclusive,
                  cm_stream s) {
  if ((unsigned)op >= CM_SCAN_NUM_PUBLIC_OPS)
    return cm_error(CM_ERR_VALUE, "[scan] Invalid op code %d.", (int)op), NULL;
  const char *name = public_names[op];
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  if (cm_op_stream(&s)) return NULL;
  int ax;
  if (cm_normalize_axis(name, axis, a->ndim, &ax)) return NULL;
  cm_dtype t = a->dtype;
  if (op == CM_SCAN_SUM && t == CM_BOOL) t = CM_INT32;
  if (op == CM_SCAN_LOGADDEXP) t = cm_float_result_type(t);
  cm_array *x = cm_astype(a, t, s);
  if (!x) return NULL;
  cm_scan_params p;
  memset(&p, 0, sizeof p);
  p.op = op;
  p.axis = ax;
  p.reverse = reverse;
  p.inclusive = inclusive;
  cm_array *r = cm_op_node(t, x->ndim, x->shape, &cm_prim_scan, &p, sizeof p, &x, 1, s);
  cm_release(x);
  return r;
}

static cm_array *scan_flat(cm_scan_op op, cm_array *a, bool reverse, bool inclusive, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", public_names[op]), NULL;
  cm_array *x = cm_flatten(a, 0, -1, s);
  if (!x) return NULL;
  cm_array *r = cm_scan(op, x, 0, reverse, inclusive, s);
  cm_release(x);
  return r;
}

#define SCAN_OPS(NAME, OP)                                                                   \
  cm_array *cm_##NAME(cm_array *a, int axis, bool reverse, bool inclusive, cm_stream s) {    \
    return cm_scan(OP, a, axis, reverse, inclusive, s);                                      \
  }                                                                                          \
  cm_array *cm_##NAME##_flat(cm_array *a, bool reverse, bool inclusive, cm_stream s) {       \
    return scan_flat(OP, a, reverse, inclusive, s);                                          \
  }
SCAN_OPS(cumsum, CM_SCAN_SUM)
SCAN_OPS(cumprod, CM_SCAN_PROD)
SCAN_OPS(cummax, CM_SCAN_MAX)
SCAN_OPS(cummin, CM_SCAN_MIN)
SCAN_OPS(logcumsumexp, CM_SCAN_LOGADDEXP)
