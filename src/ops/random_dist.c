/* mx.random samplers built from other samplers: categorical (the inverse
 * CDF of one distribution, or the Gumbel-max trick), permutation (argsort
 * of random bits) and multivariate_normal (normal samples times a square
 * root of the covariance).  As in random.c, each is MLX's composition, op
 * for op, so that a key gives MLX's samples. */
#include <string.h>

#include "ops/binary.h"
#include "ops/indexing.h"
#include "ops/linalg.h"
#include "ops/matmul.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

static cm_array *finish(cm_rt *t, cm_array *r) {
  cm_array *out;
  cm_rt_done(t, r, &out);
  return out;
}

/* ---- categorical --------------------------------------------------------- */

static int valid_axis(int axis, int ndim, int *out) {
  int ax = axis < 0 ? axis + ndim : axis;
  if (ax < 0 || ax >= ndim)
    return cm_error(CM_ERR_INDEX, "[categorical] Invalid axis %d for logits with %d dimensions.",
                    axis, ndim);
  *out = ax;
  return 0;
}

/* One distribution (1-D logits): u * sum(w) located in the exclusive
 * cumulative sum of w = exp(x - max), O(n + samples) memory where the
 * Gumbel trick needs O(n * samples).  With an infinite maximum exp(x - m)
 * is NaN, and the distribution is uniform over the maximal entries. */
static cm_array *inverse_cdf(cm_array *logits, int ndim, const int32_t *shape, cm_array *key,
                             cm_stream s) {
  cm_rt t = {.n = 0};
  cm_dtype dt = cm_promote_types(logits->dtype, CM_FLOAT32);
  cm_array *x = T(cm_astype(logits, dt, s));
  cm_array *m = T(cm_max(x, CM_AXES_ALL, false, s));
  cm_array *inf = T(cm_isinf(m, s));
  cm_array *eq = T(cm_equal(x, m, s));
  cm_array *eqf = T(cm_astype(eq, dt, s));
  cm_array *d = T(cm_subtract(x, m, s));
  cm_array *e = T(cm_exp(d, s));
  cm_array *w = T(cm_where(inf, eqf, e, s));
  cm_array *cdf = T(cm_cumsum(w, 0, false, false, s));
  cm_array *u = T(cm_random_uniform(NULL, NULL, ndim, shape, CM_FLOAT32, key, s));
  /* MLX's sum(w) adds the elements one after another (its CPU reduction
   * is sequential), which is cdf[n - 1] + w[n - 1] exactly; cmlx's own sum
   * is blocked (more accurate), and would move the samples that fall near
   * a boundary of the cdf */
  int32_t n = logits->shape[0], last[1] = {n - 1}, end[1] = {n};
  cm_array *cl = T(cm_slice(cdf, 1, last, 1, end, 0, NULL, s));
  cm_array *wl = T(cm_slice(w, 1, last, 1, end, 0, NULL, s));
  cm_array *tl = T(cm_add(cl, wl, s));
  int zero = 0;
  cm_array *total = T(cm_squeeze(tl, 1, &zero, s));
  cm_array *us = T(cm_multiply(u, total, s));
  cm_array *pos = T(cm_searchsorted(cdf, us, "right", s));
  cm_array *one = T(cm_array_scalar_int(1, CM_UINT32));
  return finish(&t, T(cm_subtract(pos, one, s)));
}

/* axis is valid and shape broadcasts with the logits without the axis. */
static cm_array *categorical_impl(cm_array *logits, int axis, int ndim, const int32_t *shape,
                                  cm_array *key, cm_stream s) {
  int n = logits->shape[axis];
  if (n > 0 && logits->size == n && ndim > 0) {
    int32_t flat[1] = {n};
    cm_array *l = cm_reshape(logits, 1, flat, s);
    cm_array *r = l ? inverse_cdf(l, ndim, shape, key, s) : NULL;
    cm_release(l);
    return r;
  }
  /* the Gumbel-max trick: argmax over a new axis of logits + noise */
  int offset = axis + ndim - logits->ndim + 1;
  if (ndim + 1 > CM_MAX_DIMS || offset < 0)
    return cm_error(CM_ERR_VALUE, "[categorical] Too many dimensions."), NULL;
  int32_t gshape[CM_MAX_DIMS];
  memcpy(gshape, shape, sizeof *gshape * (size_t)offset);
  gshape[offset] = n;
  memcpy(gshape + offset + 1, shape + offset, sizeof *gshape * (size_t)(ndim - offset));
  cm_rt t = {.n = 0};
  cm_array *g = T(cm_random_gumbel(ndim + 1, gshape, CM_FLOAT32, key, s));
  cm_array *a = T(cm_add(g, logits, s));
  return finish(&t, T(cm_argmax(a, cm_axes_list(&offset, 1), false, s)));
}

cm_array *cm_random_categorical_shape(cm_array *logits, int axis, int ndim, const int32_t *shape,
                                      cm_array *key, cm_stream s) {
  if (cm_op_stream(&s) || valid_axis(axis, logits->ndim, &axis)) return NULL;
  int32_t reduced[CM_MAX_DIMS], b[CM_MAX_DIMS];
  int nr = 0, nb;
  for (int d = 0; d < logits->ndim; d++)
    if (d != axis) reduced[nr++] = logits->shape[d];
  if (cm_broadcast_shapes(ndim, shape, nr, reduced, &nb, b)) return NULL;
  if (nb != ndim || (ndim && memcmp(b, shape, sizeof *b * (size_t)ndim))) {
    char sa[256], sr[256];
    return cm_error(CM_ERR_VALUE,
                    "[categorical] Requested shape %s is not broadcast compatible with reduced "
                    "logits shape%s.",
                    cm_shape_str(sa, sizeof sa, ndim, shape),
                    cm_shape_str(sr, sizeof sr, nr, reduced)),
           NULL;
  }
  return categorical_impl(logits, axis, ndim, shape, key, s);
}

cm_array *cm_random_categorical_num_samples(cm_array *logits, int axis, int num_samples,
                                            cm_array *key, cm_stream s) {
  if (cm_op_stream(&s) || valid_axis(axis, logits->ndim, &axis)) return NULL;
  int last = -1;
  cm_array *l = cm_expand_dims(logits, 1, &last, s);
  if (!l) return NULL;
  int32_t shape[CM_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < l->ndim; d++)
    if (d != axis) shape[nd++] = l->shape[d];
  shape[nd - 1] = num_samples;
  cm_array *r = categorical_impl(l, axis, nd, shape, key, s);
  cm_release(l);
  return r;
}

cm_array *cm_random_categorical(cm_array *logits, int axis, cm_array *key, cm_stream s) {
  if (cm_op_stream(&s) || valid_axis(axis, logits->ndim, &axis)) return NULL;
  int32_t shape[CM_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < logits->ndim; d++)
    if (d != axis) shape[nd++] = logits->shape[d];
  return categorical_impl(logits, axis, nd, shape, key, s);
}

/* ---- permutation --------------------------------------------------------- */

cm_array *cm_random_permutation_arange(int n, cm_array *key, cm_stream s) {
  int32_t shape[1] = {n};
  cm_array *b = cm_random_bits(1, shape, 4, key, s);
  cm_array *r = b ? cm_argsort(b, -1, s) : NULL;
  cm_release(b);
  return r;
}

cm_array *cm_random_permutation(cm_array *x, int axis, cm_array *key, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int ax = axis < 0 ? axis + x->ndim : axis;
  /* MLX reads the length with shape(axis), whose range error this is */
  if (ax < 0 || ax >= x->ndim) return cm_error(CM_ERR_INDEX, "SmallVector out of range."), NULL;
  cm_array *perm = cm_random_permutation_arange(x->shape[ax], key, s);
  cm_array *r = perm ? cm_take(x, perm, axis, s) : NULL;
  cm_release(perm);
  return r;
}

/* ---- multivariate normal ------------------------------------------------- */

static int check_mvn(const cm_array *mean, const cm_array *cov, cm_dtype dtype) {
  const char *msg = NULL;
  if (dtype != CM_FLOAT32) msg = "dtype must be float32.";
  else if (mean->ndim < 1) msg = "mean must have at least one dimension.";
  else if (cov->ndim < 2) msg = "cov must have at least two dimensions.";
  else if (cov->shape[cov->ndim - 1] != cov->shape[cov->ndim - 2])
    msg = "last two dimensions of cov must be equal.";
  else if (mean->shape[mean->ndim - 1] != cov->shape[cov->ndim - 1])
    msg = "mean and cov must have compatible shapes.";
  return msg ? cm_error(CM_ERR_VALUE, "[multivariate_normal] %s", msg) : 0;
}

/* mean + z @ sqrt(cov) for standard normal z, with the square root
 * U diag(sqrt(S)) V^T from the SVD of cov, as MLX computes it. */
cm_array *cm_random_multivariate_normal(cm_array *mean, cm_array *cov, int ndim,
                                        const int32_t *shape, cm_dtype dtype, cm_array *key,
                                        cm_stream s) {
  if (cm_op_stream(&s) || check_mvn(mean, cov, dtype)) return NULL;
  int n = mean->shape[mean->ndim - 1];
  int32_t out[CM_MAX_DIMS];
  int nout;
  if (cm_broadcast_shapes(cov->ndim - 2, cov->shape, mean->ndim - 1, mean->shape, &nout, out) ||
      cm_broadcast_shapes(nout, out, ndim, shape, &nout, out))
    return NULL;
  if (nout + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[multivariate_normal] Too many dimensions."), NULL;
  out[nout++] = n;
  cm_rt t = {.n = 0};
  cm_array *c = T(cm_astype(cov, CM_FLOAT32, s));
  cm_array *usv[3] = {NULL, NULL, NULL};
  if (!t.fail && cm_linalg_svd(c, usv, s)) t.fail = true;
  for (int i = 0; i < 3; i++) T(usv[i]);
  int m2 = -2;
  cm_array *sq = T(cm_sqrt(usv[1], s));
  cm_array *sqe = T(cm_expand_dims(sq, 1, &m2, s));
  cm_array *us = T(cm_multiply(usv[0], sqe, s));
  cm_array *sd = T(cm_matmul(us, usv[2], s));
  cm_array *sdt = T(cm_astype(sd, dtype, s));
  cm_array *z = T(cm_random_normal(nout, out, dtype, NULL, NULL, key, s));
  cm_array *ze = T(cm_expand_dims(z, 1, &m2, s));
  cm_array *prod = T(cm_matmul(ze, sdt, s));
  cm_array *sc = T(cm_squeeze(prod, 1, &m2, s));
  return finish(&t, T(cm_add(mean, sc, s)));
}
