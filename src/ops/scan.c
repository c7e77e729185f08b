/* Scan op constructors: axis checks, MLX's result dtypes (bool sums in
 * int32, logcumsumexp in a float type), and the axis=None flattening. */
#include "ops/scan.h"

#include <string.h>

#include "ops/shape.h"
#include "primitives/scan.h"

static const char *const public_names[CM_SCAN_NUM_PUBLIC_OPS] = {
#define CM_X(CODE, name, ...) [CM_SCAN_##CODE] = #name,
    CM_SCAN_OPS(CM_X)
#undef CM_X
};

/* The dtype column: the dtype the scan of a runs in. */
static inline cm_dtype dtype_SAME(cm_dtype t) { return t; }
static inline cm_dtype dtype_SUM(cm_dtype t) { return t == CM_BOOL ? CM_INT32 : t; }
static inline cm_dtype dtype_TO_FLOAT(cm_dtype t) { return cm_float_result_type(t); }

static cm_dtype scan_dtype(cm_scan_op op, cm_dtype t) {
  switch (op) {
#define CM_X(CODE, name, Name, dtype, ...) \
  case CM_SCAN_##CODE: return dtype_##dtype(t);
    CM_SCAN_OPS(CM_X)
#undef CM_X
  default: return t;
  }
}

cm_array *cm_scan(cm_scan_op op, cm_array *a, int axis, bool reverse, bool inclusive,
                  cm_stream s) {
  if ((unsigned)op >= CM_SCAN_NUM_PUBLIC_OPS)
    return cm_error(CM_ERR_VALUE, "[scan] Invalid op code %d.", (int)op), NULL;
  const char *name = public_names[op];
  if (!a) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", name), NULL;
  if (cm_op_stream(&s)) return NULL;
  int ax;
  if (cm_normalize_axis(name, axis, a->ndim, &ax)) return NULL;
  cm_dtype t = scan_dtype(op, a->dtype);
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

#define CM_X(CODE, name, ...)                                                               \
  cm_array *cm_##name(cm_array *a, int axis, bool reverse, bool inclusive, cm_stream s) {    \
    return cm_scan(CM_SCAN_##CODE, a, axis, reverse, inclusive, s);                          \
  }                                                                                          \
  cm_array *cm_##name##_flat(cm_array *a, bool reverse, bool inclusive, cm_stream s) {       \
    return scan_flat(CM_SCAN_##CODE, a, reverse, inclusive, s);                              \
  }
CM_SCAN_OPS(CM_X)
#undef CM_X
