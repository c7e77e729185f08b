/* mx.linalg.norm, MLX's composition (mlx/linalg.cpp): vector norms over
 * one axis, matrix norms over two (the spectral and nuclear ones through
 * the singular values), the 2-/Frobenius norm by default.  Integer input
 * gives float32, as MLX's at_least_float. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "ops/binary.h"
#include "ops/linalg.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/unary.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

#define finish cm_linalg_finish
#define at_least_float cm_linalg_at_least_float

static cm_array *too_many(void) {
  cm_error(CM_ERR_VALUE, "[linalg::norm] Received too many axes for norm.");
  return NULL;
}

static cm_array *l2(cm_array *a, cm_axes ax, bool keepdims, cm_stream s) {
  cm_rt t = {.n = 0};
  cm_array *sq;
  if (a->dtype == CM_COMPLEX64) {
    cm_array *m = T(cm_abs(a, s));
    sq = T(cm_multiply(m, m, s));
  } else {
    sq = T(cm_square(a, s));
  }
  cm_array *sum = T(cm_sum(sq, ax, keepdims, s));
  return finish(&t, T(cm_sqrt(sum, s)));
}

cm_array *cm_linalg_norm_l2(cm_array *a, const int *axes, int naxes, bool keepdims, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (axes) {
    if (naxes > 2) return too_many();
    return l2(a, cm_axes_list(axes, naxes), keepdims, s);
  }
  cm_rt t = {.n = 0};
  cm_array *f = T(cm_flatten(a, 0, -1, s));
  cm_array *r = T(l2(f, CM_AXIS(0), keepdims, s));
  if (keepdims) {
    int32_t ones[CM_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) ones[d] = 1;
    r = T(cm_reshape(r, a->ndim, ones, s));
  }
  return finish(&t, r);
}

static cm_array *vector_norm(cm_array *a, double ord, cm_axes ax, bool keepdims, cm_stream s) {
  cm_dtype dt = at_least_float(a->dtype);
  cm_rt t = {.n = 0};
  cm_array *r;
  if (ord == 0.0) {
    cm_array *z = T(cm_array_scalar_int(0, CM_INT32));
    cm_array *nz = T(cm_not_equal(a, z, s));
    r = T(cm_sum(nz, ax, keepdims, s));
  } else if (ord == 1.0) {
    cm_array *m = T(cm_abs(a, s));
    r = T(cm_sum(m, ax, keepdims, s));
  } else if (ord == 2.0) {
    return finish(&t, T(l2(a, ax, keepdims, s)));
  } else if (ord == INFINITY) {
    cm_array *m = T(cm_abs(a, s));
    r = T(cm_max(m, ax, keepdims, s));
  } else if (ord == -INFINITY) {
    cm_array *m = T(cm_abs(a, s));
    r = T(cm_min(m, ax, keepdims, s));
  } else {
    cm_array *p = T(cm_array_scalar_double(ord, dt)), *q = T(cm_array_scalar_double(1.0 / ord, dt));
    cm_array *m = T(cm_abs(a, s));
    cm_array *mp = T(cm_power(m, p, s));
    cm_array *sum = T(cm_sum(mp, ax, keepdims, s));
    return finish(&t, T(cm_power(sum, q, s)));
  }
  return finish(&t, T(cm_astype(r, dt, s)));
}

/* a with the matrix axes (row, col) moved last, as MLX's moveaxis pair */
static cm_array *matrix_last(cm_rt *tp, cm_array *a, int row, int col, cm_stream s) {
  cm_array *x = RT(tp, cm_moveaxis(a, row > col ? row : col, -1, s));
  return RT(tp, row > col ? cm_moveaxis(x, col, -1, s) : cm_moveaxis(x, row, -2, s));
}

/* the singular values of the (row, col) matrices reduced by max, min or
 * sum over the last axis, keepdims restoring both axes */
static cm_array *singular_norm(cm_array *a, int row, int col, int which, bool keepdims,
                               cm_stream s) {
  cm_rt t = {.n = 0};
  cm_array *m = matrix_last(&t, a, row, col, s), *sv[1] = {NULL};
  int nout;
  if (t.fail || cm_linalg_svd_uv(m, false, sv, &nout, s)) return finish(&t, NULL);
  T(sv[0]);
  cm_array *r = T(which > 0   ? cm_max(sv[0], CM_AXIS(-1), false, s)
                  : which < 0 ? cm_min(sv[0], CM_AXIS(-1), false, s)
                              : cm_sum(sv[0], CM_AXIS(-1), false, s));
  if (keepdims) {
    int ax[2] = {row < col ? row : col, row < col ? col : row};
    r = T(cm_expand_dims(r, 2, ax, s));
  }
  return finish(&t, r);
}

static cm_array *matrix_norm(cm_array *a, double ord, const int *axes, bool keepdims, cm_stream s) {
  cm_dtype dt = at_least_float(a->dtype);
  int row = axes[0] < 0 ? axes[0] + a->ndim : axes[0];
  int col = axes[1] < 0 ? axes[1] + a->ndim : axes[1];
  cm_rt t = {.n = 0};
  cm_array *r;
  if (ord == 1.0 || ord == -1.0) {
    col -= (!keepdims && col > row && col > 0);
    cm_array *m = T(cm_abs(a, s));
    cm_array *sm = T(cm_sum(m, CM_AXIS(row), keepdims, s));
    r = T(ord > 0 ? cm_max(sm, CM_AXIS(col), keepdims, s) : cm_min(sm, CM_AXIS(col), keepdims, s));
  } else if (ord == INFINITY || ord == -INFINITY) {
    row -= (!keepdims && row > col && row > 0);
    cm_array *m = T(cm_abs(a, s));
    cm_array *sm = T(cm_sum(m, CM_AXIS(col), keepdims, s));
    r = T(ord > 0 ? cm_max(sm, CM_AXIS(row), keepdims, s) : cm_min(sm, CM_AXIS(row), keepdims, s));
  } else if (ord == 2.0 || ord == -2.0) {
    r = T(singular_norm(a, row, col, ord > 0 ? 1 : -1, keepdims, s));
  } else {
    cm_error(CM_ERR_VALUE, "[linalg::norm] Invalid ord %g for matrix norm.", ord);
    return finish(&t, NULL);
  }
  return finish(&t, T(cm_astype(r, dt, s)));
}

cm_array *cm_linalg_norm_ord(cm_array *a, double ord, const int *axes, int naxes, bool keepdims,
                             cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int all[CM_MAX_DIMS];
  if (!axes) {
    for (int d = 0; d < a->ndim; d++) all[d] = d;
    axes = all, naxes = a->ndim;
  }
  if (naxes == 1) return vector_norm(a, ord, cm_axes_list(axes, 1), keepdims, s);
  if (naxes == 2) return matrix_norm(a, ord, axes, keepdims, s);
  return too_many();
}

cm_array *cm_linalg_norm_str(cm_array *a, const char *ord, const int *axes, int naxes,
                             bool keepdims, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int all[CM_MAX_DIMS];
  if (!axes) {
    for (int d = 0; d < a->ndim; d++) all[d] = d;
    axes = all, naxes = a->ndim;
  }
  if (naxes != 2)
    return cm_error(CM_ERR_VALUE,
                    "[linalg::norm] Norm '%s' only supported for matrices, but received %d "
                    "axis/axes.",
                    ord, naxes),
           NULL;
  if (!strcmp(ord, "f") || !strcmp(ord, "fro")) return l2(a, cm_axes_list(axes, 2), keepdims, s);
  if (strcmp(ord, "nuc"))
    return cm_error(CM_ERR_VALUE, "[linalg::norm] Invalid ord value '%s' for matrix norm.", ord),
           NULL;
  int row = axes[0] < 0 ? axes[0] + a->ndim : axes[0];
  int col = axes[1] < 0 ? axes[1] + a->ndim : axes[1];
  return singular_norm(a, row, col, 0, keepdims, s);
}
