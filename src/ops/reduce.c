/* The primitive reductions: axis handling, result dtypes and node
 * construction for sum, prod, max, min, all, any, argmax, argmin, and
 * count_nonzero (a cast and a sum). */
#include "ops/reduce.h"

#include "primitives/reduce.h"

int cm_axes_mask(const char *errop, int ndim, cm_axes axes, uint64_t *mask) {
  uint64_t m = 0;
  if (axes.all) {
    *mask = ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << ndim) - 1);
    return 0;
  }
  if (axes.n < 0) return cm_error(CM_ERR_VALUE, "Invalid number of axes %d.", axes.n);
  bool dup = false;
  /* Range errors win over duplicates, as in MLX, which checks each axis
   * before looking for repeats. */
  for (int i = 0; i < axes.n; i++) {
    int ax = axes.axes[i];
    if (ax < -ndim || ax >= ndim) {
      if (errop)
        return cm_error(CM_ERR_INDEX, "[%s] axis %d is out of bounds for array with %d dimensions.",
                        errop, ax, ndim);
      return cm_error(CM_ERR_INDEX, "Invalid axis %d for array with %d dimensions.", ax, ndim);
    }
    if (ax < 0) ax += ndim;
    if ((m >> ax) & 1) dup = true;
    m |= (uint64_t)1 << ax;
  }
  if (dup) return cm_error(CM_ERR_VALUE, "Duplicate axes detected in reduction.");
  *mask = m;
  return 0;
}

int cm_reduced_shape(const cm_array *a, uint64_t mask, bool keepdims, int32_t *shape) {
  int n = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (!((mask >> i) & 1)) shape[n++] = a->shape[i];
    else if (keepdims) shape[n++] = 1;
  }
  return n;
}

int64_t cm_reduced_count(const cm_array *a, uint64_t mask) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim; i++)
    if ((mask >> i) & 1) n *= a->shape[i];
  return n;
}

/* Each op's name (for messages) and the checks of its class and empty
 * column (ops/reduce_ops.h). */
enum reduce_class { CLASS_WIDE, CLASS_SAME, CLASS_LOGIC, CLASS_ARG };
#define EMPTY_IDENTITY false
#define EMPTY_ERROR true
static const struct reduce_info {
  const char *name;
  unsigned char cls;
  bool empty_error; /* a reduced axis of size 0 is a ValueError */
} info[CM_REDUCE_NUM_OPS] = {
#define CM_X(CODE, name, Name, class, empty, ...) \
  [CM_REDUCE_##CODE] = {#name, CLASS_##class, EMPTY_##empty},
    CM_REDUCE_OPS(CM_X)
#undef CM_X
};

cm_array *cm_reduce_mask(cm_reduce_op op, cm_array *a, uint64_t mask, bool keepdims,
                         cm_stream s) {
  if ((unsigned)op >= CM_REDUCE_NUM_OPS)
    return cm_error(CM_ERR_VALUE, "[reduce] Invalid reduction %d.", (int)op), NULL;
  if (cm_op_stream(&s)) return NULL;
  if (a->ndim < 64) mask &= ((uint64_t)1 << a->ndim) - 1;
  const struct reduce_info *in = &info[op];
  bool arg = in->cls == CLASS_ARG;
  if (arg && a->size == 0)
    return cm_error(CM_ERR_VALUE, "[%s] Cannot %s reduce zero size array.", in->name, in->name),
           NULL;
  if (!arg && mask == 0) /* nothing to reduce: MLX hands back the input */
    return in->cls == CLASS_LOGIC ? cm_astype(a, CM_BOOL, s) : cm_retain(a);
  if (in->empty_error)
    for (int i = 0; i < a->ndim; i++)
      if (((mask >> i) & 1) && a->shape[i] == 0)
        return cm_error(CM_ERR_VALUE, "[%s] Cannot %s reduce over axis %d with size 0.", in->name,
                        in->name, i),
               NULL;
  int32_t shape[CM_MAX_DIMS];
  int nd = cm_reduced_shape(a, mask, keepdims, shape);
  cm_reduce_params p = {.op = op, .keepdims = keepdims, .axes = mask};
  cm_dtype dt = arg ? CM_UINT32 : cm_reduce_result_type(op, a->dtype);
  return cm_op_node(dt, nd, shape, arg ? &cm_prim_arg_reduce : &cm_prim_reduce, &p, sizeof p, &a, 1,
                    s);
}

cm_array *cm_reduce(cm_reduce_op op, cm_array *a, cm_axes axes, bool keepdims, cm_stream s) {
  if ((unsigned)op >= CM_REDUCE_NUM_OPS)
    return cm_error(CM_ERR_VALUE, "[reduce] Invalid reduction %d.", (int)op), NULL;
  const char *name = info[op].name;
  bool arg = info[op].cls == CLASS_ARG;
  if (arg && a->size == 0) /* MLX checks this before the axis */
    return cm_error(CM_ERR_VALUE, "[%s] Cannot %s reduce zero size array.", name, name), NULL;
  uint64_t mask;
  if (cm_axes_mask(NULL, a->ndim, axes, &mask)) return NULL;
  if (arg && !axes.all && axes.n != 1)
    return cm_error(CM_ERR_VALUE, "[%s] Expected one axis or all axes, got %d.", name, axes.n),
           NULL;
  return cm_reduce_mask(op, a, mask, keepdims, s);
}

/* The named constructors of ops/reduce.h. */
#define CM_X(CODE, name, ...)                                                 \
  cm_array *cm_##name(cm_array *a, cm_axes axes, bool keepdims, cm_stream s) { \
    return cm_reduce(CM_REDUCE_##CODE, a, axes, keepdims, s);                  \
  }
CM_REDUCE_OPS(CM_X)
#undef CM_X

/* sum(a != 0) as int32.  The cast to bool is the nonzero test (NaN and
 * either part of a complex count); with no axes the sum hands back the
 * bool array, which the final cast turns into 0/1 int32 like MLX. */
cm_array *cm_count_nonzero(cm_array *a, cm_axes axes, bool keepdims, cm_stream s) {
  uint64_t mask;
  if (cm_axes_mask(NULL, a->ndim, axes, &mask)) return NULL;
  cm_array *nz = cm_astype(a, CM_BOOL, s);
  cm_array *n = nz ? cm_reduce_mask(CM_REDUCE_SUM, nz, mask, keepdims, s) : NULL;
  cm_release(nz);
  cm_array *r = n ? cm_astype(n, CM_INT32, s) : NULL;
  cm_release(n);
  return r;
}
