/* Reductions composed from other ops, following MLX's definitions so that
 * values, dtypes, special cases and gradients match: mean, var, std,
 * logsumexp, softmax, median (its own primitive after a cast), isclose,
 * allclose, array_equal. */
#include <string.h>

#include "ops/binary.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/count.h"
#include "primitives/reduce.h"
#include "primitives/rules_util.h"

/* Temporaries are collected in a cm_rt t and released together; after the
 * first failure nothing more is built (T(e) does not evaluate e). */
#define T(e) RT(&t, (e))

/* Release the temporaries; a new reference to r, or NULL after a failure. */
static cm_array *finish(cm_rt *t, cm_array *r) {
  cm_array *out;
  cm_rt_done(t, r, &out);
  return out;
}

static cm_array *scalar(double v, cm_dtype dt) { return cm_array_scalar_double(v, dt); }
static bool is_half(cm_dtype t) { return t == CM_FLOAT16 || t == CM_BFLOAT16; }

/* ---- mean, var, std ---- */

/* The count of a's elements over mask (its reciprocal if inverted) as a
 * 0-d array of dtype: a constant, or in a shapeless trace a
 * NumberOfElements node behind stop_gradient, counted again on a replay
 * (MLX's number_of_elements). */
static cm_array *count_of(cm_array *a, uint64_t mask, bool inverted, cm_dtype dt, cm_stream s) {
  double n = (double)cm_reduced_count(a, mask);
  if (!cm_dynamic_shapes()) return scalar(inverted ? 1.0 / n : n, dt);
  cm_count_params p = {.axes = mask, .inverted = inverted, .dtype = (int32_t)dt};
  cm_array *c = cm_op_node(dt, 0, NULL, &cm_prim_number_of_elements, &p, sizeof p, &a, 1, s);
  cm_array *r = c ? cm_stop_gradient(c, s) : NULL;
  cm_release(c);
  return r;
}

/* sum * (1/n), the factor rounded to the result type first as MLX does. */
static cm_array *mean_mask(cm_array *a, uint64_t mask, bool keepdims, cm_stream s) {
  cm_rt t = {.n = 0};
  cm_dtype dt = cm_float_result_type(a->dtype);
  cm_array *sum = T(cm_reduce_mask(CM_REDUCE_SUM, a, mask, keepdims, s));
  cm_array *inv = T(count_of(a, mask, true, dt, s));
  cm_array *r = T(cm_multiply(sum, inv, s));
  /* an integer sum times a float32 factor is float32 already; make sure */
  r = T(r ? cm_astype(r, dt, s) : NULL);
  return finish(&t, r);
}

cm_array *cm_mean(cm_array *a, cm_axes axes, bool keepdims, cm_stream s) {
  uint64_t mask;
  if (cm_op_stream(&s) || cm_axes_mask("mean", a->ndim, axes, &mask)) return NULL;
  return mean_mask(a, mask, keepdims, s);
}

/* sum(|a - mean|^2) / max(n - ddof, 0); times 1/n when ddof is 0. */
static cm_array *var_mask(cm_array *a, uint64_t mask, bool keepdims, int ddof, cm_stream s) {
  cm_rt t = {.n = 0};
  bool cplx = a->dtype == CM_COMPLEX64;
  cm_array *mu = T(mean_mask(a, mask, true, s));
  cm_array *d = T(cm_subtract(a, mu, s));
  cm_array *mag = cplx ? T(cm_abs(d, s)) : d;
  cm_array *d2 = T(cm_square(mag, s));
  cm_array *v = T(cm_reduce_mask(CM_REDUCE_SUM, d2, mask, keepdims, s));
  cm_array *r = NULL;
  if (!t.fail) {
    if (ddof != 0 && cm_dynamic_shapes()) {
      cm_array *n = T(count_of(a, mask, false, v->dtype, s));
      cm_array *k = T(scalar((double)ddof, v->dtype)), *zero = T(scalar(0.0, v->dtype));
      cm_array *f = T(cm_subtract(n, k, s));
      cm_array *den = T(cm_maximum(f, zero, s));
      r = T(cm_divide(v, den, s));
    } else if (ddof != 0) {
      double n = (double)cm_reduced_count(a, mask);
      double f = n - ddof > 0 ? n - ddof : 0.0;
      cm_array *den = T(scalar(f, v->dtype));
      r = T(cm_divide(v, den, s));
    } else {
      cm_array *inv = T(count_of(a, mask, true, v->dtype, s));
      r = T(cm_multiply(v, inv, s));
    }
  }
  return finish(&t, r);
}

cm_array *cm_var(cm_array *a, cm_axes axes, bool keepdims, int ddof, cm_stream s) {
  uint64_t mask;
  if (cm_op_stream(&s) || cm_axes_mask("mean", a->ndim, axes, &mask)) return NULL;
  return var_mask(a, mask, keepdims, ddof, s);
}

cm_array *cm_std(cm_array *a, cm_axes axes, bool keepdims, int ddof, cm_stream s) {
  cm_array *v = cm_var(a, axes, keepdims, ddof, s);
  if (!v) return NULL;
  cm_array *r = cm_sqrt(v, s);
  cm_release(v);
  return r;
}

/* ---- logsumexp, softmax ---- */

/* log(sum(exp(a - m))) + m with m = max (no gradient through m); where
 * the max is infinite the result is that infinity (a - m would be NaN). */
cm_array *cm_logsumexp(cm_array *a, cm_axes axes, bool keepdims, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (a->size == 0) return cm_error(CM_ERR_VALUE, "[logsumexp] Received empty array."), NULL;
  if (a->ndim == 0 && !axes.all && axes.n > 0)
    return cm_error(CM_ERR_VALUE,
                    "[logsumexp] Received non-empty axes for array with 0 dimensions."),
           NULL;
  uint64_t mask;
  if (cm_axes_mask(NULL, a->ndim, axes, &mask)) return NULL;
  cm_rt t = {.n = 0};
  /* in the float type from the start: a - max must not wrap around */
  cm_array *x = T(cm_astype(a, cm_float_result_type(a->dtype), s));
  if (!t.fail && a->ndim > 0 && mask == (uint64_t)1 << (a->ndim - 1) &&
      cm_dtype_is_float(x->dtype))
    return finish(&t, T(cm_logsumexp_last(x, keepdims, s)));
  cm_array *mx = T(cm_reduce_mask(CM_REDUCE_MAX, x, mask, true, s));
  cm_array *m = T(cm_stop_gradient(mx, s));
  cm_array *d = T(cm_subtract(x, m, s));
  cm_array *e = T(cm_exp(d, s));
  cm_array *sum = T(cm_reduce_mask(CM_REDUCE_SUM, e, mask, keepdims, s));
  cm_array *lg = T(cm_log(sum, s));
  cm_array *m2 = T(lg ? cm_reshape(m, lg->ndim, lg->shape, s) : NULL);
  cm_array *out = T(cm_add(lg, m2, s));
  cm_array *inf = T(cm_isinf(m2, s));
  cm_array *r = T(cm_where(inf, m2, out, s));
  return finish(&t, r);
}

/* Whether MLX takes its fused last-axis path, whose result has the float
 * result type (the general path casts back to the input's dtype, which
 * only matters for integer and bool inputs): the axes, in the order
 * given, are the trailing axes and all but the last have size 1. */
static bool softmax_last_axis(const cm_array *a, cm_axes axes) {
  int n = axes.all ? a->ndim : axes.n;
  if (n == 0) return false;
  for (int i = 0; i < n; i++) {
    int ax = axes.all ? i : axes.axes[i];
    if (ax < 0) ax += a->ndim;
    if (ax != a->ndim - n + i || (i < n - 1 && a->shape[ax] != 1)) return false;
  }
  return true;
}

/* exp(x - max) / sum(exp(x - max)), computed in float32 for half types
 * when precise. */
cm_array *cm_softmax(cm_array *a, cm_axes axes, bool precise, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (a->size == 0) return cm_retain(a);
  if (a->ndim == 0 && !axes.all && axes.n > 0)
    return cm_error(CM_ERR_VALUE, "[softmax] Received non-empty axes for array with 0 dimensions."),
           NULL;
  uint64_t mask;
  if (cm_axes_mask(NULL, a->ndim, axes, &mask)) return NULL;
  bool last = softmax_last_axis(a, axes);
  cm_dtype final = last ? cm_float_result_type(a->dtype) : a->dtype;
  cm_rt t = {.n = 0};
  cm_array *x = T(last ? cm_astype(a, final, s) : cm_retain(a));
  if (last && cm_dtype_is_float(final)) return finish(&t, T(cm_softmax_last(x, s)));
  if (precise && !t.fail && is_half(x->dtype)) x = T(cm_astype(x, CM_FLOAT32, s));
  cm_array *mx = T(cm_reduce_mask(CM_REDUCE_MAX, x, mask, true, s));
  cm_array *m = T(cm_stop_gradient(mx, s));
  cm_array *d = T(cm_subtract(x, m, s));
  cm_array *e = T(cm_exp(d, s));
  cm_array *sum = T(cm_reduce_mask(CM_REDUCE_SUM, e, mask, true, s));
  cm_array *q = T(cm_divide(e, sum, s));
  cm_array *r = T(cm_astype(q, final, s));
  return finish(&t, r);
}

/* The fused primitives; the axis parameter marks the last axis. */
static cm_array *last_axis_node(const cm_prim *prim, cm_array *a, bool reduce, bool keepdims,
                                cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!cm_dtype_is_float(a->dtype))
    return cm_error(CM_ERR_VALUE, "[%s] Expected a floating array, got %s.", prim->name,
                    cm_dtype_name(a->dtype)),
           NULL;
  uint64_t last = a->ndim ? (uint64_t)1 << (a->ndim - 1) : 0;
  cm_reduce_params p = {.op = CM_REDUCE_SUM, .keepdims = keepdims, .axes = last};
  int32_t shape[CM_MAX_DIMS];
  int nd = reduce ? cm_reduced_shape(a, last, keepdims, shape) : a->ndim;
  if (!reduce) memcpy(shape, a->shape, sizeof(int32_t) * (size_t)nd);
  return cm_op_node(a->dtype, nd, shape, prim, &p, sizeof p, &a, 1, s);
}

cm_array *cm_softmax_last(cm_array *a, cm_stream s) {
  return last_axis_node(&cm_prim_softmax, a, false, false, s);
}

cm_array *cm_logsumexp_last(cm_array *a, bool keepdims, cm_stream s) {
  return last_axis_node(&cm_prim_logsumexp, a, true, keepdims, s);
}

/* ---- median ---- */

cm_array *cm_median_mask(cm_array *a, uint64_t mask, bool keepdims, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  cm_dtype dt = cm_float_result_type(a->dtype);
  if (a->ndim < 64) mask &= ((uint64_t)1 << a->ndim) - 1;
  if (cm_reduced_count(a, mask) == 0)
    return cm_error(CM_ERR_VALUE, "[median] Cannot take median along empty axis."), NULL;
  cm_array *x = cm_astype(a, dt, s);
  if (!x || mask == 0) return x;
  int32_t shape[CM_MAX_DIMS];
  int nd = cm_reduced_shape(a, mask, keepdims, shape);
  cm_reduce_params p = {.op = CM_REDUCE_SUM, .keepdims = keepdims, .axes = mask};
  cm_array *r = cm_op_node(dt, nd, shape, &cm_prim_median, &p, sizeof p, &x, 1, s);
  cm_release(x);
  return r;
}

cm_array *cm_median(cm_array *a, cm_axes axes, bool keepdims, cm_stream s) {
  uint64_t mask;
  if (cm_axes_mask("median", a->ndim, axes, &mask)) {
    if (cm_error_kind_get() == CM_ERR_VALUE && strstr(cm_error_message(), "Duplicate"))
      cm_error(CM_ERR_VALUE, "[median] Received duplicate axis.");
    return NULL;
  }
  return cm_median_mask(a, mask, keepdims, s);
}

/* ---- closeness and equality ---- */

/* MLX: |a - b| <= atol + rtol * |b| (tolerances as float32 arrays), then
 * false wherever either side is infinite, true where both are the same
 * infinity, and (equal_nan) true where both are NaN. */
cm_array *cm_isclose(cm_array *a, cm_array *b, double rtol, double atol, bool equal_nan,
                     cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  cm_rt t = {.n = 0};
  cm_array *rt = T(scalar(rtol, CM_FLOAT32)), *at = T(scalar(atol, CM_FLOAT32));
  cm_array *diff = T(cm_subtract(a, b, s));
  cm_array *lhs = T(cm_abs(diff, s));
  cm_array *absb = T(cm_abs(b, s));
  cm_array *scaled = T(cm_multiply(rt, absb, s));
  cm_array *rhs = T(cm_add(at, scaled, s));
  cm_array *out = T(cm_less_equal(lhs, rhs, s));
  cm_array *ia = T(cm_isinf(a, s)), *ib = T(cm_isinf(b, s));
  cm_array *any_inf = T(cm_logical_or(ia, ib, s));
  cm_array *pa = T(cm_isposinf(a, s)), *pb = T(cm_isposinf(b, s));
  cm_array *na = T(cm_isneginf(a, s)), *nb = T(cm_isneginf(b, s));
  cm_array *pp = T(cm_logical_and(pa, pb, s)), *nn = T(cm_logical_and(na, nb, s));
  cm_array *both_inf = T(cm_logical_or(pp, nn, s));
  cm_array *finite = T(cm_logical_not(any_inf, s));
  out = T(cm_logical_and(out, finite, s));
  out = T(cm_logical_or(out, both_inf, s));
  if (equal_nan) {
    cm_array *xa = T(cm_isnan(a, s)), *xb = T(cm_isnan(b, s));
    cm_array *both_nan = T(cm_logical_and(xa, xb, s));
    out = T(cm_logical_or(out, both_nan, s));
  }
  return finish(&t, out);
}

cm_array *cm_allclose(cm_array *a, cm_array *b, double rtol, double atol, bool equal_nan,
                      cm_stream s) {
  cm_array *c = cm_isclose(a, b, rtol, atol, equal_nan, s);
  if (!c) return NULL;
  cm_array *r = cm_reduce(CM_REDUCE_AND, c, CM_AXES_ALL, false, s);
  cm_release(c);
  return r;
}

cm_array *cm_array_equal(cm_array *a, cm_array *b, bool equal_nan, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!cm_same_shape(a, b)) return cm_array_scalar_int(0, CM_BOOL);
  cm_dtype dt = cm_promote_types(a->dtype, b->dtype);
  equal_nan = equal_nan && cm_dtype_is_inexact(dt);
  cm_rt t = {.n = 0};
  cm_array *x = T(cm_astype(a, dt, s)), *y = T(cm_astype(b, dt, s));
  cm_array *eq = T(cm_equal(x, y, s));
  if (equal_nan) {
    cm_array *nx = T(cm_isnan(x, s)), *ny = T(cm_isnan(y, s));
    cm_array *both = T(cm_logical_and(nx, ny, s));
    eq = T(cm_logical_or(eq, both, s));
  }
  cm_array *r = T(cm_reduce(CM_REDUCE_AND, eq, CM_AXES_ALL, false, s));
  return finish(&t, r);
}
