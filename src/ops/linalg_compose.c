/* mx.linalg functions composed from the factorisations and other ops, as
 * MLX composes them (mlx/linalg.cpp): cholesky_inv, pinv, cross, det and
 * slogdet.  Their derivatives are those of their parts. */
#include <string.h>

#include "core/error.h"
#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/linalg.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

#define finish cm_linalg_finish
#define at_least_float cm_linalg_at_least_float

/* ---- cholesky_inv, pinv -------------------------------------------------- */

cm_array *cm_linalg_cholesky_inv(cm_array *l, bool upper, cm_stream s) {
  const char *fn = "[linalg::cholesky_inv]";
  if (cm_linalg_check_cpu(&s, fn) || cm_linalg_check_float(l->dtype, fn, false)) return NULL;
  if (l->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "%s Arrays must have >= 2 dimensions. Received array with %d dimensions.", fn,
                    l->ndim),
           NULL;
  if (l->shape[l->ndim - 1] != l->shape[l->ndim - 2])
    return cm_error(CM_ERR_VALUE, "%s Cholesky inverse is only defined for square matrices.", fn),
           NULL;
  cm_rt t = {.n = 0};
  cm_array *li = T(cm_linalg_tri_inv(l, upper, s));
  cm_array *lt = T(cm_swapaxes(li, -1, -2, s));
  return finish(&t, T(upper ? cm_matmul(li, lt, s) : cm_matmul(lt, li, s)));
}

cm_array *cm_linalg_pinv(cm_array *a, cm_stream s) {
  const char *fn = "[linalg::pinv]";
  if (cm_linalg_check_cpu(&s, fn) || cm_linalg_check_float(a->dtype, fn, false)) return NULL;
  int nd = a->ndim;
  if (nd < 2)
    return cm_error(CM_ERR_VALUE,
                    "%s Arrays must have >= 2 dimensions. Received array with %d dimensions.", fn,
                    nd),
           NULL;
  int32_t m = a->shape[nd - 2], n = a->shape[nd - 1], k = m < n ? m : n;
  int32_t shape[CM_MAX_DIMS], start[CM_MAX_DIMS] = {0};
  memcpy(shape, a->shape, sizeof(int32_t) * nd);
  if (a->size == 0) {
    shape[nd - 2] = n, shape[nd - 1] = m;
    return cm_zeros(nd, shape, a->dtype, s);
  }
  cm_array *usv[3];
  if (cm_linalg_svd(a, usv, s)) return NULL;
  cm_rt t = {.n = 0};
  for (int i = 0; i < 3; i++) T(usv[i]);
  shape[nd - 2] = m, shape[nd - 1] = k;
  cm_array *U = T(cm_slice(usv[0], nd, start, nd, shape, 0, NULL, s));
  U = T(cm_swapaxes(U, -1, -2, s));
  shape[nd - 2] = k, shape[nd - 1] = n;
  cm_array *V = T(cm_slice(usv[2], nd, start, nd, shape, 0, NULL, s));
  V = T(cm_swapaxes(V, -1, -2, s));
  int m2 = -2;
  cm_array *S = T(cm_expand_dims(usv[1], 1, &m2, s));
  double eps = a->dtype == CM_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
  cm_array *rc = T(cm_array_scalar_double(10.0 * (m > n ? m : n) * eps, a->dtype));
  cm_array *mx = T(cm_max(S, CM_AXIS(-1), true, s));
  cm_array *cut = T(cm_multiply(rc, mx, s));
  cm_array *keep = T(cm_greater(S, cut, s));
  cm_array *inv = T(cm_reciprocal(S, s));
  cm_array *zero = T(cm_array_scalar_double(0.0, a->dtype));
  cm_array *rS = T(cm_where(keep, inv, zero, s));
  cm_array *Vs = T(cm_multiply(V, rS, s));
  return finish(&t, T(cm_matmul(Vs, U, s)));
}

/* ---- cross --------------------------------------------------------------- */

static int cross_axis(cm_array *x, int axis, int *ax) {
  if (axis < -x->ndim || axis >= x->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[linalg::cross] Axis %d is out of bounds for array with %d dimensions.", axis,
                    x->ndim);
  *ax = axis < 0 ? axis + x->ndim : axis;
  if (x->shape[*ax] < 2 || x->shape[*ax] > 3)
    return cm_error(CM_ERR_VALUE, "[linalg::cross] The specified axis must have size 2 or 3.");
  return 0;
}

/* a * b - c * d */
static cm_array *minor(cm_rt *tp, cm_array *a, cm_array *b, cm_array *c, cm_array *d, cm_stream s) {
  cm_array *ab = RT(tp, cm_multiply(a, b, s));
  cm_array *cd = RT(tp, cm_multiply(c, d, s));
  return RT(tp, cm_subtract(ab, cd, s));
}

cm_array *cm_linalg_cross(cm_array *a, cm_array *b, int axis, cm_stream s) {
  int axa, axb;
  if (cm_op_stream(&s) || cross_axis(a, axis, &axa) || cross_axis(b, axis, &axb)) return NULL;
  bool a2 = a->shape[axa] == 2, b2 = b->shape[axb] == 2;
  cm_dtype dt = cm_promote_types(a->dtype, b->dtype);
  int32_t sa[CM_MAX_DIMS], sb[CM_MAX_DIMS], out[CM_MAX_DIMS];
  memcpy(sa, a->shape, sizeof(int32_t) * a->ndim);
  memcpy(sb, b->shape, sizeof(int32_t) * b->ndim);
  sa[axa] = sb[axb] = 3;
  int nout;
  if (cm_broadcast_shapes(a->ndim, sa, b->ndim, sb, &nout, out)) return NULL;
  int ax = axis < 0 ? axis + nout : axis;
  cm_rt t = {.n = 0};
  out[ax] = a2 ? 2 : 3;
  cm_array *ac = T(cm_astype(a, dt, s));
  cm_array *ab = T(cm_broadcast_to(ac, nout, out, s));
  out[ax] = b2 ? 2 : 3;
  cm_array *bc = T(cm_astype(b, dt, s));
  cm_array *bb = T(cm_broadcast_to(bc, nout, out, s));
  if (t.fail) return finish(&t, NULL);
  /* the components along the axis */
  cm_array *x[3] = {NULL, NULL, NULL}, *y[3] = {NULL, NULL, NULL};
  int32_t st[CM_MAX_DIMS] = {0}, en[CM_MAX_DIMS];
  for (int i = 0; i < (a2 ? 2 : 3); i++) {
    memcpy(en, ab->shape, sizeof(int32_t) * nout);
    st[ax] = i, en[ax] = i + 1;
    x[i] = T(cm_slice(ab, nout, st, nout, en, 0, NULL, s));
  }
  for (int i = 0; i < (b2 ? 2 : 3); i++) {
    memcpy(en, bb->shape, sizeof(int32_t) * nout);
    st[ax] = i, en[ax] = i + 1;
    y[i] = T(cm_slice(bb, nout, st, nout, en, 0, NULL, s));
  }
  cm_array *o[3];
  if (a2 && b2) {
    o[0] = o[1] = T(cm_zeros_like(x[0], s));
  } else if (b2) {
    cm_array *p = T(cm_multiply(x[2], y[1], s));
    o[0] = T(cm_negative(p, s));
    o[1] = T(cm_multiply(x[2], y[0], s));
  } else if (a2) {
    o[0] = T(cm_multiply(x[1], y[2], s));
    cm_array *p = T(cm_multiply(x[0], y[2], s));
    o[1] = T(cm_negative(p, s));
  } else {
    o[0] = minor(&t, x[1], y[2], x[2], y[1], s);
    o[1] = minor(&t, x[2], y[0], x[0], y[2], s);
  }
  o[2] = minor(&t, x[0], y[1], x[1], y[0], s);
  if (t.fail) return finish(&t, NULL);
  return finish(&t, T(cm_concatenate(o, 3, ax, s)));
}

/* ---- det, slogdet -------------------------------------------------------- */

static int check_det(cm_array *a, cm_stream *s, const char *fn) {
  if (cm_linalg_check_cpu(s, fn)) return -1;
  if (a->dtype == CM_COMPLEX64)
    return cm_error(CM_ERR_VALUE, "%s Complex inputs are not supported.", fn);
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "%s Arrays must have >= 2 dimensions. Received array with %d dimensions.", fn,
                    a->ndim);
  if (a->shape[a->ndim - 1] != a->shape[a->ndim - 2])
    return cm_error(CM_ERR_VALUE, "%s Only defined for square matrices.", fn);
  return 0;
}

/* a[..., i, j] */
static cm_array *elem(cm_rt *tp, cm_array *a, int i, int j, cm_stream s) {
  int nd = a->ndim;
  int32_t st[CM_MAX_DIMS] = {0}, en[CM_MAX_DIMS];
  memcpy(en, a->shape, sizeof(int32_t) * nd);
  st[nd - 2] = i, en[nd - 2] = i + 1, st[nd - 1] = j, en[nd - 1] = j + 1;
  int ax[2] = {-2, -1};
  cm_array *x = RT(tp, cm_slice(a, nd, st, nd, en, 0, NULL, s));
  return RT(tp, cm_squeeze(x, 2, ax, s));
}

/* the determinant of an n <= 3 matrix by its formula (MLX's fast path) */
static cm_array *det_small(cm_array *a, cm_stream s) {
  int n = a->shape[a->ndim - 1];
  cm_rt t = {.n = 0};
  if (n == 0) {
    cm_array *one = T(cm_array_scalar_double(1.0, a->dtype));
    return finish(&t, T(cm_broadcast_to(one, a->ndim - 2, a->shape, s)));
  }
  if (n == 1) return finish(&t, elem(&t, a, 0, 0, s));
  cm_array *e[3][3];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) e[i][j] = elem(&t, a, i, j, s);
  if (t.fail) return finish(&t, NULL);
  if (n == 2) return finish(&t, minor(&t, e[0][0], e[1][1], e[0][1], e[1][0], s));
  cm_array *c0 = minor(&t, e[1][1], e[2][2], e[1][2], e[2][1], s);
  cm_array *c1 = minor(&t, e[1][0], e[2][2], e[1][2], e[2][0], s);
  cm_array *c2 = minor(&t, e[1][0], e[2][1], e[1][1], e[2][0], s);
  cm_array *d = minor(&t, e[0][0], c0, e[0][1], c1, s);
  cm_array *p = T(cm_multiply(e[0][2], c2, s));
  return finish(&t, T(cm_add(d, p, s)));
}

static int slogdet_impl(cm_array *x, cm_array **sign, cm_array **logabs, cm_stream s) {
  int n = x->shape[x->ndim - 1];
  cm_dtype dt = x->dtype;
  cm_rt t = {.n = 0};
  cm_array *sg, *la;
  if (n <= 3) {
    cm_array *raw = T(det_small(x, s));
    sg = T(cm_sign(raw, s));
    cm_array *ab = T(cm_abs(raw, s));
    la = T(cm_log(ab, s));
  } else {
    cm_array *lu = NULL, *piv = NULL;
    if (cm_linalg_lu_factor(x, &lu, &piv, s)) return -1;
    T(lu), T(piv);
    cm_array *diag = T(cm_diagonal(lu, 0, -2, -1, s));
    cm_array *iota = T(cm_arange(0, n, 1, CM_UINT32, s));
    cm_array *moved = T(cm_not_equal(piv, iota, s));
    cm_array *nmoved = T(cm_sum(moved, CM_AXIS(-1), false, s));
    cm_array *parity = T(cm_astype(nmoved, CM_INT32, s));
    cm_array *zero = T(cm_array_scalar_double(0.0, dt));
    cm_array *neg = T(cm_less(diag, zero, s));
    cm_array *nneg0 = T(cm_sum(neg, CM_AXIS(-1), false, s));
    cm_array *nneg = T(cm_astype(nneg0, CM_INT32, s));
    cm_array *total = T(cm_add(parity, nneg, s));
    cm_array *one = T(cm_array_scalar_int(1, CM_INT32)), *two = T(cm_array_scalar_int(2, CM_INT32));
    cm_array *odd = T(cm_remainder(total, two, s));
    cm_array *odd2 = T(cm_multiply(two, odd, s));
    cm_array *sgi = T(cm_subtract(one, odd2, s));
    sg = T(cm_astype(sgi, dt, s));
    cm_array *ad = T(cm_abs(diag, s));
    cm_array *lg = T(cm_log(ad, s));
    la = T(cm_sum(lg, CM_AXIS(-1), false, s));
    cm_array *eq0 = T(cm_equal(diag, zero, s));
    cm_array *isz = T(cm_any(eq0, CM_AXIS(-1), false, s));
    cm_array *ninf = T(cm_array_scalar_double(-1.0 / 0.0, dt));
    sg = T(cm_where(isz, zero, sg, s));
    la = T(cm_where(isz, ninf, la, s));
  }
  if (t.fail) return cm_linalg_rt_end(&t);
  *sign = cm_retain(sg);
  *logabs = cm_retain(la);
  return cm_linalg_rt_end(&t);
}

int cm_linalg_slogdet(cm_array *a, cm_array **sign, cm_array **logabsdet, cm_stream s) {
  *sign = *logabsdet = NULL;
  if (check_det(a, &s, "[linalg::slogdet]")) return -1;
  cm_array *x = cm_astype(a, at_least_float(a->dtype), s);
  if (!x) return -1;
  int rc = slogdet_impl(x, sign, logabsdet, s);
  cm_release(x);
  return rc;
}

cm_array *cm_linalg_det(cm_array *a, cm_stream s) {
  if (check_det(a, &s, "[linalg::det]")) return NULL;
  cm_rt t = {.n = 0};
  cm_array *x = T(cm_astype(a, at_least_float(a->dtype), s));
  if (t.fail) return finish(&t, NULL);
  if (x->shape[x->ndim - 1] <= 3) return finish(&t, T(det_small(x, s)));
  cm_array *sg = NULL, *la = NULL;
  if (slogdet_impl(x, &sg, &la, s)) return finish(&t, NULL);
  T(sg), T(la);
  cm_array *e = T(cm_exp(la, s));
  return finish(&t, T(cm_multiply(sg, e, s)));
}
