/* Diagonals and the shape ops that need arithmetic: diagonal (a view),
 * diag, trace, tril/triu, kron, diff, outer, inner, and the window
 * functions.  They compose the binary, ternary, creation and reduction
 * ops the way MLX does, so dtypes and promotion follow those ops. */
#include "ops/shape.h"

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/ternary.h"
#include "primitives/shape.h"

/* ---- diagonals ---- */

/* Check diagonal/trace's axes (MLX's messages, with op's name). */
static int diag_axes(const char *op, const cm_array *a, int axis1, int axis2, int *ax1, int *ax2) {
  int nd = a->ndim;
  if (nd < 2)
    return cm_error(CM_ERR_VALUE, "[%s] Array must have at least two dimensions, but got %d "
                                  "dimensions.", op, nd);
  *ax1 = axis1 < 0 ? axis1 + nd : axis1;
  if (*ax1 < 0 || *ax1 >= nd)
    return cm_error(CM_ERR_INDEX, "[%s] Invalid axis1 %d for array with %d dimensions.", op, axis1,
                    nd);
  *ax2 = axis2 < 0 ? axis2 + nd : axis2;
  if (*ax2 < 0 || *ax2 >= nd)
    return cm_error(CM_ERR_INDEX, "[%s] Invalid axis2 %d for array with %d dimensions.", op, axis2,
                    nd);
  if (*ax1 == *ax2)
    return cm_error(CM_ERR_VALUE, "[%s] axis1 and axis2 cannot be the same axis", op);
  return 0;
}

cm_array *cm_diagonal(cm_array *a, int offset, int axis1, int axis2, cm_stream s) {
  int ax1, ax2;
  if (cm_op_stream(&s) || diag_axes("diagonal", a, axis1, axis2, &ax1, &ax2)) return NULL;
  int64_t off1 = offset < 0 ? -(int64_t)offset : 0, off2 = offset > 0 ? offset : 0;
  int64_t d1 = a->shape[ax1] - off1, d2 = a->shape[ax2] - off2;
  int64_t len = d1 < d2 ? d1 : d2;
  int32_t shape[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->ndim; i++)
    if (i != ax1 && i != ax2) shape[n++] = a->shape[i];
  shape[n++] = len > 0 ? (int32_t)len : 0;
  /* an empty diagonal needs no offset (and a huge one must not overflow) */
  cm_diagonal_params p = {len > 0 ? offset : 0, ax1, ax2};
  return cm_op_node(a->dtype, n, shape, &cm_prim_diagonal, &p, sizeof p, &a, 1, s);
}

/* a with b's values on the flattened positions start, start+step, ...: a
 * strided SliceUpdate over a flat view (the flat buffer is fresh, so the
 * update writes into it in place). */
cm_array *cm_diag(cm_array *a, int k, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (a->ndim == 2) return cm_diagonal(a, k, 0, 1, s);
  if (a->ndim != 1)
    return cm_error(CM_ERR_VALUE, "[diag] array must be 1-D or 2-D, got array with %d dimensions.",
                    a->ndim),
           NULL;
  int64_t len = a->shape[0], ak = k < 0 ? -(int64_t)k : k, n = len + ak;
  if (n * n > INT32_MAX)
    return cm_error(CM_ERR_VALUE, "[diag] The result would have %lld elements.",
                    (long long)(n * n)),
           NULL;
  /* element i goes to (i + s1, i + s2): flat (s1 * n + s2) + i * (n + 1) */
  int64_t s1 = k < 0 ? ak : 0, s2 = k > 0 ? ak : 0;
  int32_t nn = (int32_t)(n * n), first = (int32_t)(s1 * n + s2);
  int32_t last = len ? (int32_t)(first + (len - 1) * (n + 1) + 1) : first;
  int32_t step = (int32_t)(n + 1), shape[2] = {(int32_t)n, (int32_t)n};
  cm_array *flat = cm_zeros(1, &nn, a->dtype, s);
  cm_array *upd = flat ? cm_slice_update(flat, a, 1, &first, 1, &last, 1, &step, s) : NULL;
  cm_array *r = upd ? cm_reshape(upd, 2, shape, s) : NULL;
  cm_release(flat);
  cm_release(upd);
  return r;
}

cm_array *cm_trace(cm_array *a, int offset, int axis1, int axis2, int dtype, cm_stream s) {
  int ax1, ax2;
  if (cm_op_stream(&s) || diag_axes("trace", a, axis1, axis2, &ax1, &ax2)) return NULL;
  cm_array *d = cm_diagonal(a, offset, ax1, ax2, s);
  cm_array *c = d ? cm_astype(d, dtype < 0 ? a->dtype : (cm_dtype)dtype, s) : NULL;
  cm_array *r = c ? cm_sum(c, CM_AXIS(-1), false, s) : NULL;
  cm_release(d);
  cm_release(c);
  return r;
}

/* x where tri(k) says keep (lower) or drop (upper), zero elsewhere. */
static cm_array *triangle(const char *op, cm_array *x, int k, bool lower, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (x->ndim < 2) return cm_error(CM_ERR_VALUE, "[%s] array must be at least 2-D", op), NULL;
  cm_array *mask = cm_tri(x->shape[x->ndim - 2], x->shape[x->ndim - 1], lower ? k : k - 1,
                          CM_BOOL, s);
  cm_array *zero = mask ? cm_array_scalar_int(0, x->dtype) : NULL;
  cm_array *r = zero ? (lower ? cm_where(mask, x, zero, s) : cm_where(mask, zero, x, s)) : NULL;
  cm_release(mask);
  cm_release(zero);
  return r;
}

cm_array *cm_tril(cm_array *x, int k, cm_stream s) { return triangle("tril", x, k, true, s); }
cm_array *cm_triu(cm_array *x, int k, cm_stream s) { return triangle("triu", x, k, false, s); }

/* ---- products ---- */

/* a (shape A) and b (shape B), aligned at the end, are reshaped to
 * interleaved (A0,1,A1,1,..) and (1,B0,1,B1,..); their product has shape
 * (A0,B0,A1,B1,..), which merges to (A0*B0, A1*B1, ..). */
cm_array *cm_kron(cm_array *a, cm_array *b, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (a->size == 0 || b->size == 0)
    return cm_error(CM_ERR_VALUE, "[kron] Input arrays cannot be empty."), NULL;
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (2 * nd > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[kron] Too many dimensions."), NULL;
  int32_t as[CM_MAX_DIMS], bs[CM_MAX_DIMS], out[CM_MAX_DIMS];
  for (int i = 0; i < 2 * nd; i++) as[i] = bs[i] = 1;
  for (int i = nd - 1, j = a->ndim - 1; j >= 0; i--, j--) as[2 * i] = a->shape[j];
  for (int i = nd - 1, j = b->ndim - 1; j >= 0; i--, j--) bs[2 * i + 1] = b->shape[j];
  for (int i = 0; i < nd; i++) {
    if (cm_shape_dim("kron", (int64_t)as[2 * i] * bs[2 * i + 1], &out[i])) return NULL;
  }
  cm_array *x = cm_reshape(a, 2 * nd, as, s);
  cm_array *y = x ? cm_reshape(b, 2 * nd, bs, s) : NULL;
  cm_array *p = y ? cm_multiply(x, y, s) : NULL;
  cm_array *r = p ? cm_reshape(p, nd, out, s) : NULL;
  cm_release(x);
  cm_release(y);
  cm_release(p);
  return r;
}

cm_array *cm_outer(cm_array *a, cm_array *b, cm_stream s) {
  int32_t col[2] = {-1, 1};
  cm_array *x = cm_reshape(a, 2, col, s);
  cm_array *y = x ? cm_flatten(b, 0, -1, s) : NULL;
  cm_array *r = y ? cm_multiply(x, y, s) : NULL;
  cm_release(x);
  cm_release(y);
  return r;
}

/* MLX computes inner with tensordot, i.e. matmul, so it accepts what
 * matmul accepts (inexact dtypes) and says so in matmul's words.  Here it
 * is a broadcast product summed over the shared last axis. */
cm_array *cm_inner(cm_array *a, cm_array *b, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (a->ndim == 0 || b->ndim == 0) return cm_multiply(a, b, s);
  if (a->shape[a->ndim - 1] != b->shape[b->ndim - 1])
    return cm_error(CM_ERR_VALUE, "[inner] a and b must have the same last dimension."), NULL;
  cm_dtype t = cm_promote_types(a->dtype, b->dtype);
  if (!cm_dtype_is_inexact(t))
    return cm_error(CM_ERR_VALUE, "[matmul] Only inexact types are supported but %s and %s were "
                                  "provided which results in %s, which is not a floating point "
                                  "type.", cm_dtype_name(a->dtype), cm_dtype_name(b->dtype),
                    cm_dtype_name(t)),
           NULL;
  if (a->ndim + b->ndim - 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[inner] Too many dimensions."), NULL;
  /* a: (A.., 1.., K), b: (B.., K) -> product (A.., B.., K) -> sum K */
  int32_t as[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->ndim - 1; i++) as[n++] = a->shape[i];
  for (int i = 0; i < b->ndim - 1; i++) as[n++] = 1;
  as[n++] = a->shape[a->ndim - 1];
  cm_array *x = cm_reshape(a, n, as, s);
  cm_array *p = x ? cm_multiply(x, b, s) : NULL;
  cm_array *r = p ? cm_sum(p, CM_AXIS(-1), false, s) : NULL;
  cm_release(x);
  cm_release(p);
  return r;
}

/* ---- diff ---- */

cm_array *cm_diff(cm_array *a, int n, int axis, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int ax = axis < 0 ? axis + a->ndim : axis;
  if (ax < 0 || ax >= a->ndim)
    return cm_error(CM_ERR_INDEX, "[diff] Axis is out of bounds for the array."), NULL;
  if (n < 0) return cm_error(CM_ERR_VALUE, "[diff] Order `n` must be non-negative."), NULL;
  cm_array *x = cm_retain(a);
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS];
  for (int k = 0; k < n && x; k++) {
    for (int i = 0; i < x->ndim; i++) {
      start[i] = 0;
      stop[i] = x->shape[i];
    }
    start[ax] = 1;
    cm_array *hi = cm_slice(x, x->ndim, start, x->ndim, stop, 0, NULL, s);
    start[ax] = 0;
    stop[ax] = x->shape[ax] > 0 ? x->shape[ax] - 1 : 0;
    cm_array *lo = hi ? cm_slice(x, x->ndim, start, x->ndim, stop, 0, NULL, s) : NULL;
    cm_array *y = NULL;
    if (lo) y = a->dtype == CM_BOOL ? cm_not_equal(hi, lo, s) : cm_subtract(hi, lo, s);
    cm_release(hi);
    cm_release(lo);
    cm_release(x);
    x = y;
  }
  return x;
}

/* ---- window functions ---- */

static cm_array *window(cm_window_kind kind, int m, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int32_t len = m > 0 ? m : 0;
  if (m < 1) return cm_array_from_data(NULL, 1, &len, CM_FLOAT32);
  if (m == 1) return cm_ones(1, &len, CM_FLOAT32, s);
  cm_window_params p = {kind, m};
  return cm_op_node(CM_FLOAT32, 1, &len, &cm_prim_window, &p, sizeof p, NULL, 0, s);
}

cm_array *cm_bartlett(int m, cm_stream s) { return window(CM_WINDOW_BARTLETT, m, s); }
cm_array *cm_blackman(int m, cm_stream s) { return window(CM_WINDOW_BLACKMAN, m, s); }
cm_array *cm_hamming(int m, cm_stream s) { return window(CM_WINDOW_HAMMING, m, s); }
cm_array *cm_hanning(int m, cm_stream s) { return window(CM_WINDOW_HANNING, m, s); }
