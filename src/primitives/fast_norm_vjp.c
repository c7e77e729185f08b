/* The norms' gradients: RMSNormVJP and LayerNormVJP, one multi-output node
 * (dx, and dw / db when the norm has a weight / bias and they are asked
 * for) with a fused CPU kernel (backend/cpu/fast_norm_vjp.c).  Its own
 * rules (second derivatives, forward mode, vmap) work on MLX's
 * composition of ops for the same gradient, which is also the path for
 * float64, for cotangents of another dtype or shape and while exporting.
 * CMLX_FAST_NORM_VJP=0 always takes the composition. */
#include <stdlib.h>

#include "core/error.h"
#include "core/export_tracing.h"
#include "ops/fast.h"
#include "ops/ops.h"
#include "primitives/fast_norm.h"
#include "transforms/autodiff.h"

#define LAST CM_AXIS(-1)

/* a summed over its axes lead .. ndim - 2 (the rows), the last kept. */
static cm_array *sum_rows(cm_array *a, int lead, cm_stream s) {
  int ax[CM_MAX_DIMS], n = 0;
  for (int i = lead; i < a->ndim - 1; i++) ax[n++] = i;
  return cm_sum(a, (cm_axes){ax, n, false}, false, s);
}

/* The gradient as ops (MLX's formulas): r[0] = dx, r[1] = dw (when dw),
 * r[2] = db (when db), their rows summed over every axis from lead on. */
static void composed(cm_rt *t, cm_array *x, cm_array *w, cm_array *g, float eps, bool layer,
                     bool dw, bool db, int lead, cm_array **r, cm_stream s) {
  cm_array *xc, *n;
  cm_norm_stats(t, x, eps, layer, &xc, &n, s);
  cm_array *nn = RT(t, cm_square(n, s));
  cm_array *n3 = RT(t, cm_multiply(n, nn, s));
  cm_array *gw = RT(t, cm_multiply(g, w, s));
  cm_array *gwx = RT(t, cm_multiply(gw, xc, s));
  cm_array *mx = RT(t, cm_mean(gwx, LAST, true, s));
  cm_array *a = gw;
  if (layer) {
    cm_array *mg = RT(t, cm_mean(gw, LAST, true, s));
    a = RT(t, cm_subtract(gw, mg, s));
  }
  cm_array *an = RT(t, cm_multiply(a, n, s));
  cm_array *xm = RT(t, cm_multiply(xc, mx, s));
  cm_array *xmn = RT(t, cm_multiply(xm, n3, s));
  r[0] = RT(t, cm_subtract(an, xmn, s));
  if (dw) {
    cm_array *xn = RT(t, cm_multiply(xc, n, s));
    cm_array *gxn = RT(t, cm_multiply(g, xn, s));
    r[1] = RT(t, gxn ? sum_rows(gxn, lead, s) : NULL);
  }
  if (db) r[2] = RT(t, sum_rows(g, lead, s));
}

/* The node's outputs in order from r (dx, dw?, db?): new references in o,
 * the temporaries released.  Returns the count, or -1. */
static int node_outputs(cm_rt *t, cm_array **r, const cm_norm_vjp_params *p, cm_array **o) {
  int n = 0;
  if (!t->fail) {
    o[n++] = cm_retain(r[0]);
    if (p->has_dw) o[n++] = cm_retain(r[1]);
    if (p->has_db) o[n++] = cm_retain(r[2]);
  }
  for (int i = 0; i < t->n; i++) cm_release(t->a[i]);
  t->n = 0;
  return t->fail ? -1 : n;
}

/* Read per gradient built (a rule call, not per element), so a benchmark
 * can compare both paths in one process. */
static bool fused_enabled(void) {
  const char *e = getenv("CMLX_FAST_NORM_VJP");
  return !(e && e[0] == '0' && !e[1]);
}

/* The kernel handles float32 and half rows with a cotangent like x; an
 * exported function gets the composition (there is no such node to load). */
static bool fusable(cm_array *x, cm_array *w, cm_array *g) {
  cm_dtype dt = x->dtype;
  return fused_enabled() && !cm_in_export_tracing() &&
         (dt == CM_FLOAT32 || dt == CM_FLOAT16 || dt == CM_BFLOAT16) && w->dtype == dt &&
         g->dtype == dt && cm_same_shape(g, x);
}

int cm_norm_vjp_grads(cm_array *const *in, int nin, float eps, cm_array *g, const int *argnums,
                      int nargs, cm_array **grads, cm_stream s) {
  bool layer = nin == 3, want[3] = {false, false, false};
  for (int i = 0; i < nargs; i++) want[argnums[i]] = true;
  cm_array *x = in[0], *w = in[1], *r[3] = {NULL, NULL, NULL};
  bool dw = want[1] && w->ndim > 0, db = layer && want[2] && in[2]->ndim > 0;
  cm_rt t = {0};
  if (fusable(x, w, g)) {
    cm_array *o[3] = {NULL, NULL, NULL};
    if (cm_fast_norm_vjp(x, w, g, eps, layer, dw, db, o, s)) {
      t.fail = true;
    } else {
      for (int k = 0; k < 1 + dw + db; k++) cm_rt_keep(&t, o[k]);
      r[0] = o[0];
      r[1] = dw ? o[1] : NULL;
      r[2] = db ? o[dw ? 2 : 1] : NULL;
    }
  } else {
    composed(&t, x, w, g, eps, layer, dw, db, 0, r, s);
  }
  for (int i = 1; i < nin; i++)
    if (want[i] && !r[i]) r[i] = RT(&t, cm_zeros_like(in[i], s));
  for (int i = 0; i < nargs; i++) grads[i] = t.fail ? NULL : cm_retain(r[argnums[i]]);
  for (int i = 0; i < t.n; i++) cm_release(t.a[i]);
  return t.fail ? -1 : 0;
}

/* ---- the node's rules: transforms of the composition ---- */

/* The composition as a function of (x, w, g), for cm_vjp / cm_jvp. */
typedef struct nv_fn {
  const cm_norm_vjp_params *p;
  cm_stream s;
} nv_fn;

static int composed_call(void *ctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  (void)nin;
  const cm_norm_vjp_params *p = ((const nv_fn *)ctx)->p;
  cm_rt t = {0};
  cm_array *r[3] = {NULL, NULL, NULL}, **o = malloc(3 * sizeof *o);
  if (!o) return cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  composed(&t, in[0], in[1], in[2], p->eps, p->layer, p->has_dw, p->has_db, 0, r,
           ((const nv_fn *)ctx)->s);
  if ((*nout = node_outputs(&t, r, p, o)) < 0) {
    free(o);
    return -1;
  }
  *out = o;
  return 0;
}

static int nv_vjp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                  const cm_params *pp, cm_array *const *cotans, const int *argnums, int nargs,
                  cm_array **grads, cm_stream s) {
  (void)pp;
  nv_fn fn = {cm_norm_vjp_params_of(outs[0]), s};
  cm_closure f = {composed_call, &fn};
  cm_array *c[3] = {NULL, NULL, NULL}, **o = NULL, **all = NULL;
  int no = 0, rc = 0;
  for (int k = 0; !rc && k < nout; k++)
    if (!(c[k] = cotans[k] ? cm_retain(cotans[k]) : cm_zeros_like(outs[k], s))) rc = -1;
  if (!rc) rc = cm_vjp(f, in, nin, c, nout, &o, &no, &all);
  for (int i = 0; !rc && i < nargs; i++) grads[i] = cm_retain(all[argnums[i]]);
  for (int k = 0; k < nout; k++) cm_release(c[k]);
  cm_array_list_free(o, no);
  if (all) cm_array_list_free(all, nin);
  return rc;
}

static int nv_jvp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                  const cm_params *pp, cm_array *const *tangents, cm_array **tangents_out,
                  cm_stream s) {
  (void)pp;
  nv_fn fn = {cm_norm_vjp_params_of(outs[0]), s};
  cm_closure f = {composed_call, &fn};
  cm_array *tn[3] = {NULL, NULL, NULL}, **o = NULL, **res = NULL;
  int no = 0, rc = 0;
  for (int i = 0; !rc && i < nin; i++)
    if (!(tn[i] = tangents[i] ? cm_retain(tangents[i]) : cm_zeros_like(in[i], s))) rc = -1;
  if (!rc) rc = cm_jvp(f, in, nin, tn, nin, &o, &no, &res);
  for (int k = 0; !rc && k < nout; k++) tangents_out[k] = cm_retain(res[k]);
  for (int i = 0; i < nin; i++) cm_release(tn[i]);
  cm_array_list_free(o, no);
  if (res) cm_array_list_free(res, no);
  return rc;
}

/* vmap: x and g get the batch first; a batched weight multiplies as
 * (V, 1, ..., D); the composition then keeps the batch in dw and db. */
static int nv_vmap(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                   const cm_params *pp, const int *axes, cm_array **outs_b, int *out_axes,
                   cm_stream s) {
  (void)nin, (void)pp;
  const cm_norm_vjp_params *p = cm_norm_vjp_params_of(outs[0]);
  if (axes[1] >= 0 && in[1]->ndim < 2)
    return cm_error(CM_ERR_VALUE, "[%s::vmap] vmap over a scalar weight is not supported.",
                    p->layer ? "LayerNormVJP" : "RMSNormVJP");
  int V = 0;
  for (int i = 0; i < 3; i++)
    if (axes[i] >= 0) V = in[i]->shape[axes[i]];
  cm_rt t = {0};
  cm_array *x = RT(&t, cm_fast_batch_front(in[0], axes[0], V, s));
  cm_array *g = RT(&t, cm_fast_batch_front(in[2], axes[2], V, s));
  cm_array *w = in[1];
  if (axes[1] >= 0) w = RT(&t, x ? cm_fast_vec_for(in[1], axes[1], x->ndim, s) : NULL);
  cm_array *r[3] = {NULL, NULL, NULL};
  if (!t.fail) composed(&t, x, w, g, p->eps, p->layer, p->has_dw, p->has_db, 1, r, s);
  if (node_outputs(&t, r, p, outs_b) < 0) return -1;
  for (int k = 0; k < nout; k++) out_axes[k] = 0;
  return 0;
}

const cm_prim cm_prim_rms_norm_vjp = {.name = "RMSNormVJP",
                                      CM_PARAMS_OF(cm_norm_vjp_params),
                                      .vjp_multi = nv_vjp,
                                      .jvp_multi = nv_jvp,
                                      .vmap_multi = nv_vmap};
const cm_prim cm_prim_layer_norm_vjp = {.name = "LayerNormVJP",
                                        CM_PARAMS_OF(cm_norm_vjp_params),
                                        .vjp_multi = nv_vjp,
                                        .jvp_multi = nv_jvp,
                                        .vmap_multi = nv_vmap};
