/* Matmul and AddMM: descriptors and transform rules (see
 * primitives/matmul.h). */
#include "primitives/matmul.h"
#include "primitives/export_desc.h"

#include "ops/binary.h"
#include "ops/shape.h"

#include <string.h>

/* x * v, or x itself (a new reference) when v == 1. */
static cm_array *scaled(cm_array *x, float v, cm_stream s) {
  if (v == 1.0f) return cm_retain(x);
  cm_array *k = cm_array_scalar_double((double)v, x->dtype);
  if (!k) return NULL;
  cm_array *r = cm_multiply(x, k, s);
  cm_release(k);
  return r;
}

/* x @ y^T over the last two axes, or x^T @ y. */
static cm_array *mm_t(cm_array *x, cm_array *y, bool transpose_left, cm_stream s) {
  cm_array *t = cm_swapaxes(transpose_left ? x : y, -1, -2, s);
  if (!t) return NULL;
  cm_array *r = transpose_left ? cm_matmul(t, y, s) : cm_matmul(x, t, s);
  cm_release(t);
  return r;
}

static int mm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                  const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)p;
  const cm_matmul_params *mp = cm_matmul_params_of(out);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    cm_array *g = NULL;
    if (argnums[i] == 2) {
      g = scaled(cotan, mp->beta, s);
    } else {
      cm_array *c = scaled(cotan, mp->alpha, s);
      if (c) g = argnums[i] == 0 ? mm_t(c, in[1], false, s) : mm_t(in[0], c, true, s);
      cm_release(c);
    }
    if (!g) {
      for (int j = 0; j < i; j++) cm_release(grads[j]), grads[j] = NULL;
      return -1;
    }
    grads[i] = g;
  }
  return 0;
}

/* acc + x, taking ownership of both (either may be NULL). */
static cm_array *accumulate(cm_array *acc, cm_array *x, cm_stream s) {
  if (!acc) return x;
  if (!x) return acc;
  cm_array *r = cm_add(acc, x, s);
  cm_release(acc);
  cm_release(x);
  return r;
}

static int mm_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                  cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)p;
  (void)out; /* c is already broadcast to the product's shape: so is its tangent */
  const cm_matmul_params *mp = cm_matmul_params_of(out);
  cm_array *sum = NULL;
  bool failed = false;
  if (tangents[0] || tangents[1]) {
    cm_array *prod = NULL;
    if (tangents[0]) prod = cm_matmul(tangents[0], in[1], s), failed |= !prod;
    if (!failed && tangents[1]) {
      cm_array *t = cm_matmul(in[0], tangents[1], s);
      failed |= !t;
      prod = accumulate(prod, t, s);
      failed |= !prod;
    }
    if (!failed) {
      sum = scaled(prod, mp->alpha, s);
      failed |= !sum;
    }
    cm_release(prod);
  }
  if (!failed && nin > 2 && tangents[2]) {
    cm_array *t = scaled(tangents[2], mp->beta, s);
    failed |= !t;
    sum = accumulate(sum, t, s);
    failed |= !sum;
  }
  if (failed) {
    cm_release(sum);
    return -1;
  }
  *tangent = sum;
  return sum ? 0 : -1;
}

/* Batching: move each batched operand's batch axis to the front; the
 * product then broadcasts it against the unbatched operands. */
static int mm_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                   const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p;
  const cm_matmul_params *mp = cm_matmul_params_of(node);
  cm_array *m[3] = {NULL, NULL, NULL};
  int rc = 0;
  for (int i = 0; i < nin && !rc; i++) {
    m[i] = axes[i] >= 0 ? cm_moveaxis(in[i], axes[i], 0, s) : cm_retain(in[i]);
    if (!m[i]) rc = -1;
  }
  if (!rc) {
    *out = nin > 2 ? cm_addmm(m[2], m[0], m[1], mp->alpha, mp->beta, s) : cm_matmul(m[0], m[1], s);
    rc = *out ? 0 : -1;
    *out_axis = 0;
  }
  for (int i = 0; i < nin; i++) cm_release(m[i]);
  return rc;
}

/* Shapeless compile: a's shape with b's last axis (the op broadcast the
 * batch axes already, with BroadcastAxes when tracing shapeless). */
int cm_mm_shape_error(const char *op, const cm_array *a, const cm_array *b) {
  char sa[256], sb[256];
  return cm_error(CM_ERR_VALUE,
                  "[%s] Last dimension of first input with shape %s must match second to last "
                  "dimension of second input with shape %s.",
                  op, cm_shape_str(sa, sizeof sa, a->ndim, a->shape),
                  cm_shape_str(sb, sizeof sb, b->ndim, b->shape));
}

static int mm_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                    int *ndim, int32_t *shape) {
  (void)node, (void)nin, (void)p;
  const cm_array *a = in[0], *b = in[1];
  if (a->ndim != b->ndim || a->ndim < 2 || a->shape[a->ndim - 1] != b->shape[b->ndim - 2] ||
      memcmp(a->shape, b->shape, sizeof(int32_t) * (size_t)(a->ndim - 2)))
    return cm_mm_shape_error("matmul", a, b);
  *ndim = a->ndim;
  memcpy(shape, a->shape, sizeof *shape * (size_t)a->ndim);
  shape[a->ndim - 1] = b->shape[b->ndim - 1];
  if (nin > 2 && !cm_shape_equal(in[2]->ndim, in[2]->shape, *ndim, shape)) {
    char sc[256];
    return cm_error(CM_ERR_VALUE, "[addmm] input c with shape %s must broadcast to the output.",
                    cm_shape_str(sc, sizeof sc, in[2]->ndim, in[2]->shape));
  }
  return 0;
}

const cm_prim cm_prim_matmul = {
    .name = "Matmul",
    .export = &cm_export_matmul,
    CM_PARAMS_OF(cm_matmul_params),
    .output_shape = mm_shape,
    .vjp = mm_vjp,
    .jvp = mm_jvp,
    .vmap = mm_vmap,
};

const cm_prim cm_prim_addmm = {
    .name = "AddMM",
    .export = &cm_export_addmm,
    CM_PARAMS_OF(cm_matmul_params),
    .output_shape = mm_shape,
    .vjp = mm_vjp,
    .jvp = mm_jvp,
    .vmap = mm_vmap,
};
