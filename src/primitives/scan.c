/* The Scan primitive: names and transform rules.  Every rule is built from
 * ops (scans, where, slices, scatters), as MLX 0.32's are, so a rule's
 * graph differentiates again and higher-order derivatives work.
 *
 *   cumsum        vjp: cumsum of the cotangent the other way (same
 *                 inclusive flag); jvp: cumsum of the tangent
 *   cumprod       vjp (MLX's): sums of cumprod * cotangent the other way,
 *                 divided by x before the first zero; at the first zero
 *                 the same with that zero set to 1; 0 after it.  jvp: the
 *                 same split, forwards
 *   cummax/min    each output's cotangent goes to the element holding its
 *                 running extreme (the latest one in scan order on ties,
 *                 as MLX), found by a running max of matching indices
 *                 (stop_gradient: it is locally constant); jvp: the
 *                 tangent gathered from that element
 *   logcumsumexp  vjp (MLX's): the cotangent split by sign into logs, so
 *                 that only logcumsumexp and exp of bounded values appear;
 *                 jvp: the same split, forwards
 * vmap moves the scanned axis past the batch axis. */
#include "primitives/scan.h"
#include "primitives/export_desc.h"

#include <float.h>
#include <math.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/shape.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/rules_util.h"

static const char *const names[CM_SCAN_NUM_PUBLIC_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_SCAN_##CODE] = Name,
    CM_SCAN_OPS(CM_X)
#undef CM_X
};

const char *cm_scan_op_name(int op) {
  return op >= 0 && op < CM_SCAN_NUM_PUBLIC_OPS ? names[op] : "Scan";
}

static const char *op_name(const cm_params *p, size_t size) {
  return cm_scan_op_name(cm_scan_params_of_block(p, size)->op);
}

#define T(e) RT(&t, (e))

/* The most negative finite value of a floating dtype (a complex one's
 * parts): the log of a zero cotangent part in the logcumsumexp rules, as
 * MLX's finfo(dtype).min. */
static double lowest(cm_dtype dt) {
  switch (dt) {
  case CM_FLOAT16: return -65504.0;
  case CM_BFLOAT16: return -3.3895313892515355e38;
  case CM_FLOAT64: return -DBL_MAX;
  default: return -FLT_MAX;
  }
}

/* x[lo:hi] along axis. */
static cm_array *window(cm_array *x, int axis, int32_t lo, int32_t hi, cm_stream s) {
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) start[d] = 0, stop[d] = x->shape[d];
  start[axis] = lo;
  stop[axis] = hi;
  return cm_slice(x, x->ndim, start, x->ndim, stop, 0, NULL, s);
}

/* For each output of a cummax/cummin, the index along the axis of the
 * element holding its running extreme, the latest in scan order when
 * tied: where x equals the inclusive running extreme its own index,
 * carried on by a running max (a running min for a reverse scan).  An
 * exclusive scan's first output (scan order) has no element: the result
 * covers the other n - 1, whose running extremes are the output shifted
 * by one.  An index no element matched (a NaN opened the scan) is clipped
 * to the opening element.  Registered in *tp. */
static cm_array *extreme_owner(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                               cm_stream s) {
  cm_rt t = *tp;
  int ax = sp->axis;
  int32_t n = x->shape[ax], lo = 0, hi = n;
  bool rev = sp->reverse;
  cm_array *xw = x, *ow = out;
  if (!sp->inclusive) {
    lo = rev ? 1 : 0;
    hi = rev ? n : n - 1;
    xw = T(window(x, ax, lo, hi, s));
    ow = T(window(out, ax, rev ? 0 : 1, rev ? n - 1 : n, s));
  }
  int32_t shape[CM_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) shape[d] = d == ax ? hi - lo : 1;
  cm_array *iota = T(cm_arange(lo, hi, 1, CM_INT32, s));
  cm_array *pos = T(cm_reshape(iota, x->ndim, shape, s));
  cm_array *eq = T(cm_equal(xw, ow, s));
  cm_array *none = T(cm_rule_scalar(rev ? n : -1, CM_INT32));
  cm_array *marked = T(cm_where(eq, pos, none, s));
  cm_array *run = T(cm_scan(rev ? CM_SCAN_MIN : CM_SCAN_MAX, marked, ax, rev, true, s));
  cm_array *first = T(cm_rule_scalar(0, CM_INT32)), *last = T(cm_rule_scalar(n - 1, CM_INT32));
  cm_array *clipped = T(cm_clip(run, first, last, s));
  cm_array *r = T(cm_stop_gradient(clipped, s));
  *tp = t;
  return r;
}

static cm_array *extreme_vjp(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                             cm_array *cotan, cm_stream s) {
  cm_rt t = *tp;
  int ax = sp->axis;
  int32_t n = x->shape[ax];
  cm_array *owner = extreme_owner(&t, x, out, sp, s);
  cm_array *c = cotan;
  if (!sp->inclusive) c = T(window(cotan, ax, sp->reverse ? 0 : 1, sp->reverse ? n - 1 : n, s));
  cm_array *z = T(cm_zeros(x->ndim, x->shape, cotan->dtype, s));
  cm_array *r = T(cm_scatter_add_axis(z, owner, c, ax, s));
  *tp = t;
  return r;
}

/* The tangent of the owning element; an exclusive scan's first output is
 * a constant (the op's identity), with a zero tangent. */
static cm_array *extreme_jvp(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                             cm_array *tan, cm_stream s) {
  cm_rt t = *tp;
  int ax = sp->axis;
  cm_array *owner = extreme_owner(&t, x, out, sp, s);
  cm_array *r = T(cm_take_along_axis(tan, owner, ax, s));
  if (!sp->inclusive) {
    int32_t low = sp->reverse ? 0 : 1, high = sp->reverse ? 1 : 0;
    r = T(cm_pad(r, 1, &ax, 1, &low, 1, &high, NULL, "constant", s));
  }
  *tp = t;
  return r;
}

/* MLX's cumprod vjp (see the file comment). */
static cm_array *prod_vjp(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                          cm_array *cotan, cm_stream s) {
  cm_rt t = *tp;
  int ax = sp->axis;
  bool rev = sp->reverse, incl = sp->inclusive;
  cm_array *other = T(cm_cumprod(x, ax, rev, !incl, s));
  cm_array *excl = incl ? other : out, *inclp = incl ? out : other;
  cm_array *zero = T(cm_rule_scalar(0, x->dtype)), *one = T(cm_rule_scalar(1, x->dtype));
  cm_array *eqz = T(cm_equal(inclp, zero, s));
  cm_array *nez = T(cm_not_equal(excl, zero, s));
  cm_array *first = T(cm_logical_and(eqz, nez, s)); /* x's first zero */
  cm_array *x1 = T(cm_where(first, one, x, s));
  cm_array *with_one = T(cm_cumprod(x1, ax, rev, incl, s));
  cm_array *w1c = T(cm_multiply(with_one, cotan, s));
  cm_array *g1 = T(cm_cumsum(w1c, ax, !rev, incl, s));
  cm_array *oc = T(cm_multiply(out, cotan, s));
  cm_array *part = T(cm_cumsum(oc, ax, !rev, incl, s));
  /* x is 0 only where the result is masked out; dividing by 1 there keeps
   * inf out of the graph, so a second derivative is not NaN */
  cm_array *xz = T(cm_equal(x, zero, s));
  cm_array *safe_x = T(cm_where(xz, one, x, s));
  cm_array *g0 = T(cm_divide(part, safe_x, s));
  cm_array *before = T(cm_where(eqz, zero, g0, s));
  cm_array *r = T(cm_where(first, g1, before, s));
  *tp = t;
  return r;
}

/* The tangent of cumprod: out * cumsum(t / x) where no zero is in range;
 * with one zero in range, t at that (first) zero times the product of the
 * others (cumprod with it set to 1, 0 once a second zero comes). */
static cm_array *prod_jvp(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                          cm_array *tan, cm_stream s) {
  cm_rt t = *tp;
  int ax = sp->axis;
  bool rev = sp->reverse, incl = sp->inclusive;
  cm_array *zero = T(cm_rule_scalar(0, x->dtype)), *one = T(cm_rule_scalar(1, x->dtype));
  cm_array *tzero = T(cm_rule_scalar(0, tan->dtype));
  cm_array *xz = T(cm_equal(x, zero, s));
  cm_array *before_x = T(cm_cumprod(x, ax, rev, false, s));
  cm_array *nz_before = T(cm_not_equal(before_x, zero, s));
  cm_array *first = T(cm_logical_and(xz, nz_before, s));
  cm_array *safe_x = T(cm_where(xz, one, x, s));
  cm_array *safe_t = T(cm_where(xz, tzero, tan, s));
  cm_array *ratio = T(cm_divide(safe_t, safe_x, s));
  cm_array *rsum = T(cm_cumsum(ratio, ax, rev, incl, s));
  cm_array *no_zero = T(cm_multiply(out, rsum, s));
  cm_array *tz = T(cm_where(first, tan, tzero, s));
  cm_array *tz_run = T(cm_cumsum(tz, ax, rev, incl, s));
  cm_array *x1 = T(cm_where(first, one, x, s));
  cm_array *others = T(cm_cumprod(x1, ax, rev, incl, s));
  cm_array *one_zero = T(cm_multiply(tz_run, others, s));
  cm_array *dead = T(cm_equal(out, zero, s));
  cm_array *r = T(cm_where(dead, one_zero, no_zero, s));
  *tp = t;
  return r;
}

/* log|v| where v > 0 (positive) or v < 0 (!positive), the dtype's lowest
 * value elsewhere: one sign of v, ready for logcumsumexp. */
static cm_array *log_part(cm_rt *tp, cm_array *v, cm_array *log_abs, bool positive, cm_stream s) {
  cm_rt t = *tp;
  cm_array *zero = T(cm_rule_scalar(0, v->dtype));
  cm_array *low = T(cm_rule_scalar(lowest(log_abs->dtype), log_abs->dtype));
  cm_array *m = T(positive ? cm_greater(v, zero, s) : cm_less(v, zero, s));
  cm_array *r = T(cm_where(m, log_abs, low, s));
  *tp = t;
  return r;
}

/* MLX's logcumsumexp vjp: exp(x + logcumsumexp(log c - out)) the other
 * way, for each sign of c. */
static cm_array *lse_vjp(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                         cm_array *cotan, cm_stream s) {
  cm_rt t = *tp;
  cm_array *ab = T(cm_abs(cotan, s));
  cm_array *la = T(cm_log(ab, s));
  cm_array *part[2];
  for (int k = 0; k < 2; k++) {
    cm_array *lp = log_part(&t, cotan, la, k == 0, s);
    cm_array *d = T(cm_subtract(lp, out, s));
    cm_array *run = T(cm_logcumsumexp(d, sp->axis, !sp->reverse, sp->inclusive, s));
    cm_array *e = T(cm_add(run, x, s));
    part[k] = T(cm_exp(e, s));
  }
  cm_array *r = T(cm_subtract(part[0], part[1], s));
  *tp = t;
  return r;
}

/* The tangent of logcumsumexp, sum over the range of exp(x_j - out_k) t_j,
 * as exp(logcumsumexp(x + log t) - out) for each sign of t (bounded by
 * |t|); 0 where out is -inf (an empty range, or all -inf). */
static cm_array *lse_jvp(cm_rt *tp, cm_array *x, cm_array *out, const cm_scan_params *sp,
                         cm_array *tan, cm_stream s) {
  cm_rt t = *tp;
  cm_array *ab = T(cm_abs(tan, s));
  cm_array *la = T(cm_log(ab, s));
  cm_array *dead = T(cm_isneginf(out, s));
  cm_array *ninf = T(cm_rule_scalar(-INFINITY, out->dtype));
  cm_array *part[2];
  for (int k = 0; k < 2; k++) {
    cm_array *lp = log_part(&t, tan, la, k == 0, s);
    cm_array *e = T(cm_add(x, lp, s));
    cm_array *run = T(cm_logcumsumexp(e, sp->axis, sp->reverse, sp->inclusive, s));
    cm_array *d = T(cm_subtract(run, out, s));
    cm_array *dd = T(cm_where(dead, ninf, d, s));
    part[k] = T(cm_exp(dd, s));
  }
  cm_array *r = T(cm_subtract(part[0], part[1], s));
  *tp = t;
  return r;
}

static int scan_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_scan_params *sp = cm_scan_params_of(out);
  cm_array *x = in[0], *r = NULL;
  cm_rt t = {.n = 0};
  if (x->shape[sp->axis] == 0) {
    r = T(cm_zeros(x->ndim, x->shape, cotan->dtype, s));
  } else {
    switch ((cm_scan_op)sp->op) {
    case CM_SCAN_SUM: r = T(cm_cumsum(cotan, sp->axis, !sp->reverse, sp->inclusive, s)); break;
    case CM_SCAN_PROD: r = prod_vjp(&t, x, out, sp, cotan, s); break;
    case CM_SCAN_MAX:
    case CM_SCAN_MIN: r = extreme_vjp(&t, x, out, sp, cotan, s); break;
    case CM_SCAN_LOGADDEXP: r = lse_vjp(&t, x, out, sp, cotan, s); break;
    case CM_SCAN_NUM_PUBLIC_OPS: break;
    }
  }
  if (!r && !t.fail)
    cm_error(CM_ERR_NOT_IMPLEMENTED, "[vjp] Not implemented for %s.", cm_scan_op_name(sp->op));
  return cm_rt_done(&t, r, &grads[0]);
}

static int scan_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  const cm_scan_params *sp = cm_scan_params_of(out);
  cm_array *x = in[0], *tan = tangents[0], *r = NULL;
  cm_rt t = {.n = 0};
  if (x->shape[sp->axis] == 0) {
    r = T(cm_zeros(x->ndim, x->shape, tan->dtype, s));
  } else {
    switch ((cm_scan_op)sp->op) {
    case CM_SCAN_SUM: r = T(cm_cumsum(tan, sp->axis, sp->reverse, sp->inclusive, s)); break;
    case CM_SCAN_PROD: r = prod_jvp(&t, x, out, sp, tan, s); break;
    case CM_SCAN_MAX:
    case CM_SCAN_MIN: r = extreme_jvp(&t, x, out, sp, tan, s); break;
    case CM_SCAN_LOGADDEXP: r = lse_jvp(&t, x, out, sp, tan, s); break;
    case CM_SCAN_NUM_PUBLIC_OPS: break;
    }
  }
  if (!r && !t.fail)
    cm_error(CM_ERR_NOT_IMPLEMENTED, "[jvp] Not implemented for %s.", cm_scan_op_name(sp->op));
  return cm_rt_done(&t, r, tangent);
}

/* Batching: the scanned axis moves past the batch axis. */
static int scan_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  cm_scan_params q = *cm_scan_params_of(node);
  cm_array *a = in[0];
  if (axes[0] <= q.axis) q.axis++;
  *out = cm_op_node(node->dtype, a->ndim, a->shape, &cm_prim_scan, &q, sizeof q, &a, 1, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

const cm_prim cm_prim_scan = {
    .name = "Scan",
    .export = &cm_export_scan,
    CM_PARAMS_OF(cm_scan_params),
    .op_name = op_name,
    .vjp = scan_vjp,
    .jvp = scan_jvp,
    .vmap = scan_vmap,
};
