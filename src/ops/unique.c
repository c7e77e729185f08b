/* unique: the sorted unique elements of the flattened array, with the
 * first-occurrence index, the inverse and the counts (MLX 0.32.4's
 * mx.unique).  The output has the caller's size whatever the values, so
 * the op is a graph of sort, scan and scatter nodes that is never
 * evaluated here (and differentiates through take and where).
 *
 * Over the stably sorted elements sorted = a[perm], a group starts where an
 * element differs from the one before (so NaNs, equal to nothing, are each
 * their own group, and -0.0 joins 0.0, keeping the first in sorted order).
 * The group of each sorted element is gid = cumsum(starts) - 1.  Group k's
 * start position lands in slot k of a (size + 1)-slot table; every
 * non-start, and every start past size (a truncation), lands in the spare
 * last slot, so no write is dropped or duplicated where it matters.  The
 * table starts at zeros: slots past the last group point at sorted
 * position 0, which is why MLX pads values with the smallest element (the
 * default fill) and index with its first occurrence. */
#include "ops/ops.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

/* fill as a 0-d array of dtype: MLX's one-element rule. */
static cm_array *fill_scalar(cm_array *fill, cm_dtype dtype, cm_stream s) {
  if (fill->size != 1) {
    char b[128];
    cm_error(CM_ERR_VALUE, "[unique] Fill value must have one element, but got shape %s.",
             cm_shape_str(b, sizeof b, fill->ndim, fill->shape));
    return NULL;
  }
  cm_array *r = cm_reshape(fill, 0, NULL, s);
  cm_array *c = r ? cm_astype(r, dtype, s) : NULL;
  cm_release(r);
  return c;
}

/* An empty a: values are fill, index and counts zeros, inverse empty. */
static int unique_empty(cm_array *a, int size, cm_array *fill, cm_array *out[4], cm_stream s) {
  if (size > 0 && !fill)
    return cm_error(CM_ERR_VALUE,
                    "[unique] A fill value is required for an empty input with a non-zero size.");
  int32_t n = size;
  cm_array *f = fill ? fill_scalar(fill, a->dtype, s) : NULL;
  if (fill && !f) return -1;
  out[0] = f ? cm_full(1, &n, f, a->dtype, s) : cm_zeros(1, &n, a->dtype, s);
  out[1] = cm_zeros(1, &n, CM_UINT32, s);
  out[2] = cm_zeros(a->ndim, a->shape, CM_UINT32, s);
  out[3] = cm_zeros(1, &n, CM_INT32, s);
  cm_release(f);
  if (out[0] && out[1] && out[2] && out[3]) return 0;
  for (int i = 0; i < 4; i++) cm_release(out[i]), out[i] = NULL;
  return -1;
}

int cm_unique(cm_array *a, int size, cm_array *fill, cm_array *out[4], cm_stream s) {
  for (int i = 0; i < 4; i++) out[i] = NULL;
  if (cm_op_stream(&s)) return -1;
  if (size < 0) return cm_error(CM_ERR_VALUE, "[unique] Received negative size %d.", size);
  if (a->size == 0) return unique_empty(a, size, fill, out, s);
  cm_rt t = {.n = 0};
  int32_t n = (int32_t)a->size, m = n - 1, k1 = size + 1;
  int32_t zero = 0, one = 1, stop = size;
  cm_array *flat = T(cm_reshape(a, 1, &n, s));
  /* the positions are integers: no gradient flows into them (the take
   * of values differentiates with respect to a only) */
  cm_array *order = T(cm_argsort(flat, 0, s));
  cm_array *perm = T(cm_stop_gradient(order, s));
  cm_array *sorted = T(cm_take(flat, perm, 0, s));
  /* starts: true at 0 and where sorted[i] != sorted[i - 1] */
  cm_array *head = T(cm_slice(sorted, 1, &one, 1, &n, 0, NULL, s));
  cm_array *tail = T(cm_slice(sorted, 1, &zero, 1, &m, 0, NULL, s));
  cm_array *differs = T(cm_not_equal(head, tail, s));
  cm_array *first = T(cm_ones(1, &one, CM_BOOL, s));
  cm_array *parts[2] = {first, differs};
  cm_array *starts = T(t.fail ? NULL : cm_concatenate(parts, 2, 0, s));
  cm_array *starts32 = T(cm_astype(starts, CM_INT32, s));
  cm_array *csum = T(cm_cumsum(starts32, 0, false, true, s));
  cm_array *ione = T(cm_array_scalar_int(1, CM_INT32));
  cm_array *gid = T(cm_subtract(csum, ione, s));
  cm_array *isize = T(cm_array_scalar_int(size, CM_INT32));
  cm_array *slot = T(cm_minimum(gid, isize, s));
  /* start positions: group k's in slot k, the rest in the spare slot */
  cm_array *spare = T(cm_where(starts, slot, isize, s));
  cm_array *pos = T(cm_arange(0, n, 1, CM_INT32, s));
  cm_array *table0 = T(cm_zeros(1, &k1, CM_INT32, s));
  cm_array *table = T(cm_put_along_axis(table0, spare, pos, 0, s));
  cm_array *at_all = T(cm_slice(table, 1, &zero, 1, &stop, 0, NULL, s));
  cm_array *at = T(cm_stop_gradient(at_all, s));
  cm_array *values = T(cm_take(sorted, at, 0, s));
  out[1] = T(cm_take(perm, at, 0, s));
  cm_array *ones = T(cm_ones(1, &n, CM_INT32, s));
  cm_array *count0 = T(cm_zeros(1, &k1, CM_INT32, s));
  cm_array *count_all = T(cm_scatter_add_axis(count0, slot, ones, 0, s));
  out[3] = T(cm_slice(count_all, 1, &zero, 1, &stop, 0, NULL, s));
  /* inverse: each element's group, clamped to the last entry (and all
   * zeros for a size of 0, where there is no entry) */
  cm_array *ilast = T(cm_array_scalar_int(size > 0 ? size - 1 : 0, CM_INT32));
  cm_array *clamped = T(cm_minimum(gid, ilast, s));
  cm_array *clamped32 = T(cm_astype(clamped, CM_UINT32, s));
  cm_array *inv0 = T(cm_zeros(1, &n, CM_UINT32, s));
  cm_array *inv = T(cm_put_along_axis(inv0, perm, clamped32, 0, s));
  out[2] = T(cm_reshape(inv, a->ndim, a->shape, s));
  if (fill && !t.fail) { /* entries without a group hold fill */
    cm_array *f = T(fill_scalar(fill, a->dtype, s));
    cm_array *izero = T(cm_array_scalar_int(0, CM_INT32));
    cm_array *used = T(cm_greater(out[3], izero, s));
    values = T(cm_where(used, values, f, s));
  }
  out[0] = values;
  bool failed = t.fail;
  for (int i = 0; i < 4; i++) /* the temporaries' references go below */
    out[i] = failed ? NULL : cm_retain(out[i]);
  cm_array *none;
  cm_rt_done(&t, NULL, &none);
  return failed ? -1 : 0;
}
