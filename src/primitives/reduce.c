/* Reduce, ArgReduce and Median: descriptors, result types and the
 * transform rules (vjp, jvp, vmap), which build graphs from ops. */
#include "primitives/reduce.h"
#include "primitives/export_desc.h"

#include <stdlib.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/rules_util.h"

static const char *const names[CM_REDUCE_NUM_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_REDUCE_##CODE] = Name,
    CM_REDUCE_OPS(CM_X)
#undef CM_X
};

const char *cm_reduce_op_name(cm_reduce_op op) {
  return (unsigned)op < CM_REDUCE_NUM_OPS ? names[op] : "Reduce";
}

static const char *op_name(const cm_params *p, size_t size) {
  return cm_reduce_op_name(cm_reduce_params_of_block(p, size)->op);
}
static const char *median_name(const cm_params *p, size_t size) {
  (void)p, (void)size;
  return "Median";
}

/* The result dtype of each class (ops/reduce_ops.h). */
static inline cm_dtype result_WIDE(cm_dtype t) {
  switch (t) {
  case CM_BOOL:
  case CM_INT8:
  case CM_INT16:
  case CM_INT32: return CM_INT32;
  case CM_UINT8:
  case CM_UINT16:
  case CM_UINT32: return CM_UINT32;
  default: return t;
  }
}
static inline cm_dtype result_SAME(cm_dtype t) { return t; }
static inline cm_dtype result_LOGIC(cm_dtype t) { return (void)t, CM_BOOL; }
static inline cm_dtype result_ARG(cm_dtype t) { return (void)t, CM_UINT32; }

cm_dtype cm_reduce_result_type(cm_reduce_op op, cm_dtype t) {
  switch (op) {
#define CM_X(CODE, name, Name, class, ...) \
  case CM_REDUCE_##CODE: return result_##class(t);
    CM_REDUCE_OPS(CM_X)
#undef CM_X
  default: return t;
  }
}

/* The reduce rules below switch over every op with no default, so a DIFF
 * row without its rule does not compile; the ZERO rows get case labels
 * from the table. */
#pragma GCC diagnostic error "-Wswitch"
#define ZERO_CASE_DIFF(CODE)
#define ZERO_CASE_ZERO(CODE) case CM_REDUCE_##CODE:
#define ZERO_CASES_X(CODE, name, Name, class, empty, grad, ...) ZERO_CASE_##grad(CODE)

/* ------------------------------------------------------------------ */
/* Graph-building helpers: temporaries are collected in a cm_rt t and
 * released at the end by cm_rt_done; after the first failure nothing more
 * is built.  Helpers taking a cm_rt register their own results in it (do
 * not wrap them in T). */
#define T(e) RT(&t, (e))

/* x (the reduction's output shape) reshaped so that the reduced axes are
 * back as size-1 axes: it then broadcasts against the input. */
static cm_array *with_kept_dims(cm_array *x, const cm_array *in, const cm_reduce_params *rp,
                                cm_stream s) {
  if (rp->keepdims) return cm_retain(x);
  int axes[CM_MAX_DIMS], n = 0; /* an expand_dims, which a shapeless replay redoes */
  for (int d = 0; d < in->ndim; d++)
    if ((rp->axes >> d) & 1) axes[n++] = d;
  return cm_expand_dims(x, n, axes, s);
}

/* c broadcast to x's shape, against x itself (MLX's broadcast_arrays: in
 * a shapeless trace the replay broadcasts to x's new shape). */
static cm_array *broadcast_like(cm_array *c, cm_array *x, cm_stream s) {
  cm_array *pair[2] = {c, x}, *b[2];
  if (cm_broadcast_and_cast(pair, 2, -1, b, s)) return NULL;
  cm_release(b[1]);
  return b[0];
}

static cm_array *scalar(double v, cm_dtype dt) { return cm_array_scalar_double(v, dt); }

/* For each element, the product of the other elements of its reduction
 * group, as MLX computes it: with the reduced axes moved last and merged
 * into one, a forward and a reverse exclusive cumprod multiplied, and the
 * layout restored.  No division, so zeros (any number of them) and
 * integers are exact, and the scans differentiate again. */
static cm_array *prod_of_others(cm_rt *tp, cm_array *x, uint64_t mask, cm_stream s) {
  cm_rt t = *tp;
  int nd = x->ndim, perm[CM_MAX_DIMS], inv[CM_MAX_DIMS], nk = 0;
  for (int d = 0; d < nd; d++)
    if (!((mask >> d) & 1)) perm[nk++] = d;
  int nr = nk;
  for (int d = 0; d < nd; d++)
    if ((mask >> d) & 1) perm[nr++] = d;
  cm_array *r = NULL;
  if (nr == nk) { /* nothing reduced: each element's "others" are none */
    r = T(cm_ones_like(x, s));
  } else if (nr - nk == 1) {
    int ax = perm[nk];
    cm_array *p1 = T(cm_cumprod(x, ax, false, false, s));
    cm_array *p2 = T(cm_cumprod(x, ax, true, false, s));
    r = T(cm_multiply(p1, p2, s));
  } else {
    for (int d = 0; d < nd; d++) inv[perm[d]] = d;
    cm_array *xt = T(cm_transpose(x, nd, perm, s));
    cm_array *xf = T(cm_flatten(xt, nk, nd - 1, s));
    cm_array *p1 = T(cm_cumprod(xf, nk, false, false, s));
    cm_array *p2 = T(cm_cumprod(xf, nk, true, false, s));
    cm_array *pf = T(cm_multiply(p1, p2, s));
    cm_array *pt = T(xt ? cm_reshape(pf, nd, xt->shape, s) : NULL);
    r = T(cm_transpose(pt, nd, inv, s));
  }
  *tp = t;
  return r;
}

/* ------------------------------------------------------------------ */
/* Reduce */

static int reduce_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                      cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0];
  cm_rt t = {.n = 0};
  cm_array *c = T(with_kept_dims(cotan, x, rp, s)), *r = NULL;
  switch (rp->op) {
  case CM_REDUCE_SUM: r = T(broadcast_like(c, x, s)); break;
  case CM_REDUCE_PROD: { /* MLX's conj(others) * cotangent (complex: as multiply's) */
    cm_array *others = prod_of_others(&t, x, rp->axes, s); /* registered in t */
    cm_array *oc = x->dtype == CM_COMPLEX64 ? T(cm_conjugate(others, s)) : others;
    r = T(cm_multiply(oc, c, s));
    break;
  }
  case CM_REDUCE_MAX:
  case CM_REDUCE_MIN: {
    /* MLX's rule: the cotangent is shared equally by every element equal
     * to the extreme (a NaN extreme matches nothing and gives NaN). */
    cm_array *o = T(with_kept_dims(out, x, rp, s));
    cm_array *eq = T(cm_equal(x, o, s));
    cm_array *cnt = T(cm_reduce_mask(CM_REDUCE_SUM, eq, rp->axes, true, s));
    cm_array *num = T(cm_multiply(c, eq, s));
    r = T(cm_divide(num, cnt, s));
    break;
  }
    CM_REDUCE_OPS(ZERO_CASES_X) /* no gradient */
  case CM_REDUCE_NUM_OPS: break;
  }
  bool failed = t.fail; /* and/or leave r NULL: a zero gradient */
  cm_rt_done(&t, r, &grads[0]);
  return failed ? -1 : 0;
}

static int reduce_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0], *tan = tangents[0];
  cm_rt t = {.n = 0};
  cm_array *r = NULL;
  switch (rp->op) {
  case CM_REDUCE_SUM: r = T(cm_reduce_mask(CM_REDUCE_SUM, tan, rp->axes, rp->keepdims, s)); break;
  case CM_REDUCE_PROD: {
    cm_array *others = prod_of_others(&t, x, rp->axes, s); /* registered in t */
    cm_array *w = T(cm_multiply(tan, others, s));
    r = T(cm_reduce_mask(CM_REDUCE_SUM, w, rp->axes, rp->keepdims, s));
    break;
  }
  case CM_REDUCE_MAX:
  case CM_REDUCE_MIN: {
    /* The tangent at the first extreme element (MLX takes it at argmax /
     * argmin): compare each element's row-major position within its group
     * with the arg-reduction's index. */
    cm_reduce_op aop = rp->op == CM_REDUCE_MAX ? CM_REDUCE_ARGMAX : CM_REDUCE_ARGMIN;
    cm_array *idx = T(cm_reduce_mask(aop, x, rp->axes, true, s));
    int32_t shape[CM_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = (rp->axes >> i) & 1 ? x->shape[i] : 1;
    cm_array *iota = T(cm_arange(0, (double)cm_reduced_count(x, rp->axes), 1, CM_UINT32, s));
    cm_array *pos = T(cm_reshape(iota, x->ndim, shape, s));
    cm_array *hit = T(cm_equal(pos, idx, s));
    cm_array *zero = T(scalar(0, tan->dtype));
    cm_array *w = T(cm_where(hit, tan, zero, s));
    r = T(cm_reduce_mask(CM_REDUCE_SUM, w, rp->axes, rp->keepdims, s));
    break;
  }
    CM_REDUCE_OPS(ZERO_CASES_X) /* a zero tangent of the output's dtype (bool for and / or) */
  case CM_REDUCE_NUM_OPS: r = T(cm_zeros(out->ndim, out->shape, out->dtype, s)); break;
  }
  return cm_rt_done(&t, r, tangent);
}

/* Batching: the batch axis is never reduced; shift the mask around it. */
static uint64_t insert_axis(uint64_t mask, int bd) {
  uint64_t low = mask & (((uint64_t)1 << bd) - 1);
  return low | ((mask & ~low) << 1);
}

static int vmap_common(cm_array *const *in, const cm_reduce_params *rp, const int *axes,
                       cm_array **out, int *out_axis, cm_stream s, bool median) {
  int bd = axes[0];
  uint64_t mask = insert_axis(rp->axes, bd);
  *out = median ? cm_median_mask(in[0], mask, rp->keepdims, s)
                : cm_reduce_mask(rp->op, in[0], mask, rp->keepdims, s);
  if (!*out) return -1;
  int below = __builtin_popcountll(mask & (((uint64_t)1 << bd) - 1));
  *out_axis = rp->keepdims ? bd : bd - below;
  return 0;
}

static int reduce_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                       const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  return vmap_common(in, cm_reduce_params_of(node), axes, out, out_axis, s, false);
}

/* Shapeless compile: the reduced axes (by position) of inputs of another
 * shape and the same number of dimensions. */
static int reduce_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  const cm_reduce_params *q = cm_reduce_params_of(node);
  int n = 0;
  for (int d = 0; d < in[0]->ndim; d++) {
    bool reduced = (q->axes >> d) & 1;
    if (!reduced) shape[n++] = in[0]->shape[d];
    else if (q->keepdims) shape[n++] = 1;
  }
  *ndim = n;
  return 0;
}

const cm_prim cm_prim_reduce = {
    .name = "Reduce",
    .export = &cm_export_reduce,
    .output_shape = reduce_shape,
    CM_PARAMS_OF(cm_reduce_params),
    .op_name = op_name,
    .vjp = reduce_vjp,
    .jvp = reduce_jvp,
    .vmap = reduce_vmap,
};

/* ------------------------------------------------------------------ */
/* ArgReduce: piecewise constant; the input's gradient is zero (NULL) and
 * the output's tangent a uint32 zero, as MLX gives. */

static int arg_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                   const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)cotan, (void)argnums, (void)s;
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  return 0;
}

static int arg_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                   cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p, (void)tangents;
  *tangent = cm_zeros(out->ndim, out->shape, out->dtype, s);
  return *tangent ? 0 : -1;
}

const cm_prim cm_prim_arg_reduce = {
    .name = "ArgReduce",
    .export = &cm_export_arg_reduce,
    .output_shape = reduce_shape,
    CM_PARAMS_OF(cm_reduce_params),
    .op_name = op_name,
    .vjp = arg_vjp,
    .jvp = arg_jvp,
    .vmap = reduce_vmap,
};

/* ------------------------------------------------------------------ */
/* Median: like MLX, derivatives flow through the sort.  The reduced axes
 * are moved to the end and merged into one; in sorted order the median
 * takes weight 1/2 from each of the two middle elements (1 from the middle
 * one when the count is odd), and the permutation of a stable argsort maps
 * those weights back to the input positions. */

typedef struct median_layout {
  int perm[CM_MAX_DIMS], inverse[CM_MAX_DIMS];
  int32_t flat_shape[CM_MAX_DIMS]; /* kept axes, then n */
  int flat_ndim;
  int64_t n;
} median_layout;

static void median_layout_of(const cm_array *x, uint64_t mask, median_layout *m) {
  int k = 0;
  m->n = 1;
  for (int d = 0; d < x->ndim; d++)
    if (!(mask >> d & 1)) {
      m->flat_shape[k] = x->shape[d];
      m->perm[k++] = d;
    }
  m->flat_ndim = k + 1;
  for (int d = 0; d < x->ndim; d++)
    if (mask >> d & 1) {
      m->n *= x->shape[d];
      m->perm[k++] = d;
    }
  m->flat_shape[m->flat_ndim - 1] = (int32_t)m->n;
  for (int d = 0; d < x->ndim; d++) m->inverse[m->perm[d]] = d;
}

/* x with the reduced axes merged last, and the weights of the sorted
 * positions (shape (n,)). */
static cm_array *median_flat(cm_rt *t, cm_array *x, const median_layout *m, cm_stream s) {
  cm_array *xt = RT(t, cm_transpose(x, x->ndim, m->perm, s));
  return RT(t, xt ? cm_reshape(xt, m->flat_ndim, m->flat_shape, s) : NULL);
}

static cm_array *median_weights(cm_rt *t, const median_layout *m, cm_dtype dt) {
  double *w = calloc((size_t)(m->n ? m->n : 1), sizeof *w);
  if (!w) return cm_error(CM_ERR_MEMORY, "[Median] Out of memory."), t->fail = true, NULL;
  if (m->n) {
    w[(m->n - 1) / 2] += 0.5;
    w[m->n / 2] += 0.5;
  }
  int32_t n = (int32_t)m->n;
  cm_array *wd = cm_array_from_data(w, 1, &n, CM_FLOAT64);
  free(w);
  cm_array *r = RT(t, wd ? cm_astype(wd, dt, CM_STREAM_DEFAULT) : NULL);
  cm_release(wd);
  return r;
}

static int median_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                      cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0];
  median_layout m;
  median_layout_of(x, rp->axes, &m);
  cm_rt t = {.n = 0};
  cm_array *xf = median_flat(&t, x, &m, s);
  /* the order is locally constant: cut its gradient (a second derivative
   * would otherwise ask for one with respect to the indices) */
  cm_array *order0 = RT(&t, xf ? cm_argsort(xf, -1, s) : NULL);
  cm_array *order = RT(&t, order0 ? cm_stop_gradient(order0, s) : NULL);
  cm_array *w = median_weights(&t, &m, cotan->dtype);
  int32_t cshape[CM_MAX_DIMS];
  for (int d = 0; d < m.flat_ndim - 1; d++) cshape[d] = m.flat_shape[d];
  cshape[m.flat_ndim - 1] = 1;
  cm_array *c = RT(&t, cm_reshape(cotan, m.flat_ndim, cshape, s));
  cm_array *sorted_grad = RT(&t, c && w ? cm_multiply(c, w, s) : NULL);
  cm_array *zero = RT(&t, xf ? cm_zeros(m.flat_ndim, m.flat_shape, cotan->dtype, s) : NULL);
  bool have = zero && order && sorted_grad;
  cm_array *gf = RT(&t, have ? cm_put_along_axis(zero, order, sorted_grad, -1, s) : NULL);
  int32_t tshape[CM_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) tshape[d] = x->shape[m.perm[d]];
  cm_array *gt = RT(&t, gf ? cm_reshape(gf, x->ndim, tshape, s) : NULL);
  cm_array *g = RT(&t, gt ? cm_transpose(gt, x->ndim, m.inverse, s) : NULL);
  return cm_rt_done(&t, g, &grads[0]);
}

static int median_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *x = in[0];
  median_layout m;
  median_layout_of(x, rp->axes, &m);
  cm_rt t = {.n = 0};
  cm_array *xf = median_flat(&t, x, &m, s);
  cm_array *tf = median_flat(&t, tangents[0], &m, s);
  /* the order is locally constant: cut its gradient (a second derivative
   * would otherwise ask for one with respect to the indices) */
  cm_array *order0 = RT(&t, xf ? cm_argsort(xf, -1, s) : NULL);
  cm_array *order = RT(&t, order0 ? cm_stop_gradient(order0, s) : NULL);
  cm_array *ts = RT(&t, tf && order ? cm_take_along_axis(tf, order, -1, s) : NULL);
  cm_array *w = median_weights(&t, &m, tangents[0]->dtype);
  cm_array *tw = RT(&t, ts && w ? cm_multiply(ts, w, s) : NULL);
  cm_array *r = RT(&t, tw ? cm_sum(tw, CM_AXIS(-1), false, s) : NULL);
  cm_array *shaped = RT(&t, r ? cm_reshape(r, out->ndim, out->shape, s) : NULL);
  return cm_rt_done(&t, shaped, tangent);
}

static int median_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                       const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  return vmap_common(in, cm_reduce_params_of(node), axes, out, out_axis, s, true);
}

const cm_prim cm_prim_median = {
    .name = "Median",
    .export = &cm_export_median,
    CM_PARAMS_OF(cm_reduce_params),
    .op_name = median_name,
    .vjp = median_vjp,
    .jvp = median_jvp,
    .vmap = median_vmap,
};

/* ------------------------------------------------------------------ */
/* Softmax and LogSumExp over the last axis (fused kernels).  Their rules
 * follow MLX's: with s = softmax(x) over the last axis,
 *   softmax   vjp  s*c - s*sum(s*c)      jvp  s*t - s*sum(s*t)
 *   logsumexp vjp  c*s                   jvp  sum(t*s)
 * where for logsumexp s = exp(x - out), taken as 0 on rows whose result
 * is infinite (the composed form's where() sends no gradient there). */

static uint64_t last_axis(const cm_array *x) { return x->ndim ? (uint64_t)1 << (x->ndim - 1) : 0; }

static int softmax_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                       cm_stream s) {
  (void)nin, (void)p, (void)argnums, (void)nargs;
  cm_rt t = {.n = 0};
  uint64_t m = last_axis(in[0]);
  cm_array *sv = T(cm_multiply(out, cotan, s));
  cm_array *sum = T(cm_reduce_mask(CM_REDUCE_SUM, sv, m, true, s));
  cm_array *ss = T(cm_multiply(out, sum, s));
  cm_array *g = T(cm_subtract(sv, ss, s));
  return cm_rt_done(&t, g, &grads[0]);
}

static int softmax_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  cm_rt t = {.n = 0};
  uint64_t m = last_axis(in[0]);
  cm_array *st = T(cm_multiply(out, tangents[0], s));
  cm_array *sum = T(cm_reduce_mask(CM_REDUCE_SUM, st, m, true, s));
  cm_array *ss = T(cm_multiply(out, sum, s));
  cm_array *r = T(cm_subtract(st, ss, s));
  return cm_rt_done(&t, r, tangent);
}

/* exp(x - out) with out broadcast back over the last axis, 0 on rows
 * whose logsumexp is infinite. */
static cm_array *lse_weights(cm_rt *tp, cm_array *x, cm_array *out, const cm_reduce_params *rp,
                             cm_stream s) {
  cm_rt t = *tp;
  cm_array *o = T(with_kept_dims(out, x, rp, s));
  cm_array *d = T(cm_subtract(x, o, s));
  cm_array *e = T(cm_exp(d, s));
  cm_array *inf = T(cm_isinf(o, s));
  cm_array *zero = T(scalar(0, x->dtype));
  cm_array *w = T(cm_where(inf, zero, e, s));
  *tp = t;
  return w;
}

static int lse_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                   const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_rt t = {.n = 0};
  cm_array *c = T(with_kept_dims(cotan, in[0], rp, s));
  cm_array *w = lse_weights(&t, in[0], out, rp, s); /* registered in t */
  cm_array *g = T(cm_multiply(c, w, s));
  return cm_rt_done(&t, g, &grads[0]);
}

static int lse_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                   cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_rt t = {.n = 0};
  cm_array *w = lse_weights(&t, in[0], out, rp, s); /* registered in t */
  cm_array *tw = T(cm_multiply(tangents[0], w, s));
  cm_array *r = T(cm_reduce_mask(CM_REDUCE_SUM, tw, rp->axes, rp->keepdims, s));
  return cm_rt_done(&t, r, tangent);
}

/* Batching: the reduced axis is the last one of the unbatched input; a
 * batch axis in last place is moved to the front first. */
static int last_axis_vmap(cm_array *const *in, const cm_reduce_params *rp, const int *axes,
                          cm_array **out, int *out_axis, cm_stream s, bool lse) {
  cm_array *x = in[0];
  int bd = axes[0];
  cm_array *moved = NULL;
  if (bd == x->ndim - 1) {
    moved = cm_moveaxis(x, bd, 0, s);
    if (!moved) return -1;
    x = moved;
    bd = 0;
  }
  *out = lse ? cm_logsumexp_last(x, rp->keepdims, s) : cm_softmax_last(x, s);
  cm_release(moved);
  *out_axis = bd;
  return *out ? 0 : -1;
}

static int softmax_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  return last_axis_vmap(in, cm_reduce_params_of(node), axes, out, out_axis, s, false);
}

static int lse_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                    const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  return last_axis_vmap(in, cm_reduce_params_of(node), axes, out, out_axis, s, true);
}

static const char *softmax_name(const cm_params *p, size_t size) {
  (void)p, (void)size;
  return "Softmax";
}
static const char *lse_name(const cm_params *p, size_t size) {
  (void)p, (void)size;
  return "LogSumExp";
}

const cm_prim cm_prim_softmax = {
    .name = "Softmax",
    .export = &cm_export_softmax,
    CM_PARAMS_OF(cm_reduce_params),
    .op_name = softmax_name,
    .vjp = softmax_vjp,
    .jvp = softmax_jvp,
    .vmap = softmax_vmap,
};

const cm_prim cm_prim_logsumexp = {
    .name = "LogSumExp",
    .export = &cm_export_logsumexp,
    CM_PARAMS_OF(cm_reduce_params),
    .op_name = lse_name,
    .vjp = lse_vjp,
    .jvp = lse_jvp,
    .vmap = lse_vmap,
};
