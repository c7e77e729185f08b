#include "primitives/rules_util.h"

#include <string.h>

#include "ops/common.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/shape.h"

cm_array *cm_rt_keep(cm_rt *t, cm_array *x) {
  if (!x) {
    t->fail = true;
    return NULL;
  }
  if (t->n == CM_RT_MAX) {
    /* a programming limit, not a user error: the rules stay well below it */
    cm_release(x);
    cm_error(CM_ERR_RUNTIME, "[transforms] Too many temporaries in a rule.");
    t->fail = true;
    return NULL;
  }
  return t->a[t->n++] = x;
}

static void cm_rt_free(cm_rt *t) {
  for (int i = 0; i < t->n; i++) cm_release(t->a[i]);
  t->n = 0;
}

int cm_rt_done(cm_rt *t, cm_array *r, cm_array **out) {
  bool ok = !t->fail && r;
  *out = ok ? cm_retain(r) : NULL;
  cm_rt_free(t);
  return ok ? 0 : -1;
}

cm_array *cm_rule_scalar(double v, cm_dtype dtype) { return cm_array_scalar_double(v, dtype); }

cm_array *cm_rule_sum_to_shape(cm_array *x, int ndim, const int32_t *shape, cm_stream s) {
  if (x->ndim == ndim && !memcmp(x->shape, shape, sizeof(int32_t) * (size_t)ndim))
    return cm_retain(x);
  int axes[CM_MAX_DIMS], n = 0, diff = x->ndim - ndim;
  for (int i = 0; i < x->ndim; i++)
    if (i < diff || (shape[i - diff] == 1 && x->shape[i] != 1)) axes[n++] = i;
  if (!n) return cm_reshape(x, ndim, shape, s); /* only size-1 axes differ */
  cm_array *r = cm_sum(x, cm_axes_list(axes, n), true, s);
  /* the leading axes go by a squeeze (MLX's), which a shapeless replay
   * redoes at other sizes */
  int lead[CM_MAX_DIMS];
  for (int i = 0; i < diff; i++) lead[i] = i;
  cm_array *y = r && diff > 0 ? cm_squeeze(r, diff, lead, s) : r ? cm_retain(r) : NULL;
  cm_release(r);
  if (y && !cm_shape_equal(y->ndim, y->shape, ndim, shape)) {
    cm_array *z = cm_reshape(y, ndim, shape, s);
    cm_release(y);
    y = z;
  }
  return y;
}

/* x with k leading size-1 axes (a view). */
static cm_array *lead_ones(cm_array *x, int k, cm_stream s) {
  if (k <= 0) return cm_retain(x);
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < k; i++) shape[i] = 1;
  memcpy(shape + k, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  return cm_reshape(x, x->ndim + k, shape, s);
}

int cm_rule_align(cm_array *const *in, int n, const int *axes, cm_array **outs, int *out_axis,
                  cm_stream s) {
  int rank = 0, to = -1;
  for (int i = 0; i < n; i++) {
    int r = in[i]->ndim + (axes[i] < 0);
    if (r > rank) rank = r;
  }
  if (rank > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[vmap] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
  /* the target: the first batched operand's batch axis once padded */
  for (int i = 0; i < n && to < 0; i++)
    if (axes[i] >= 0) to = rank - in[i]->ndim + axes[i];
  for (int i = 0; i < n; i++) {
    int pad = rank - in[i]->ndim;
    int at = axes[i] >= 0 ? pad + axes[i] : pad - 1; /* pad >= 1 when unbatched */
    cm_array *x = lead_ones(in[i], pad, s);
    outs[i] = x && to >= 0 && at != to ? cm_moveaxis(x, at, to, s) : cm_retain(x);
    cm_release(x);
    if (!outs[i]) {
      for (int j = 0; j < i; j++) cm_release(outs[j]);
      return -1;
    }
  }
  *out_axis = to;
  return 0;
}

cm_dtype cm_rule_tangent_dtype(cm_array *const *tangents, int n) {
  for (int i = 0; i < n; i++)
    if (tangents[i]) return tangents[i]->dtype;
  return CM_FLOAT32;
}

cm_array *cm_rule_zeros(const cm_array *shape_of, cm_dtype dtype, cm_stream s) {
  return cm_zeros(shape_of->ndim, shape_of->shape, dtype, s);
}

int cm_shape_of_first(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      int *ndim, int32_t *shape) {
  (void)node, (void)nin, (void)p;
  *ndim = in[0]->ndim;
  if (*ndim) memcpy(shape, in[0]->shape, sizeof *shape * (size_t)*ndim);
  return 0;
}

int cm_shape_of_broadcast(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                          int *ndim, int32_t *shape) {
  (void)node, (void)p;
  *ndim = 0;
  for (int i = 0; i < nin; i++)
    if (cm_broadcast_shapes(*ndim, shape, in[i]->ndim, in[i]->shape, ndim, shape)) return -1;
  return 0;
}
