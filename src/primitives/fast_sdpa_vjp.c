/* SdpaVJP: the gradient of ScaledDotProductAttention as one node with
 * three outputs (dq, dk, dv), computed by the fused kernel
 * (backend/cpu/fast_sdpa_bwd.c).  Attention's vjp builds it for the
 * gradients of q, k and v; anything else (the mask's or the sinks'
 * gradient, empty inputs, export tracing) takes the composed rule.
 *
 * Its own derivatives are those of the composed gradient: the rules trace
 * cm_fast_sdpa_vjp_composed on the inputs being differentiated and run
 * cm_vjp / cm_jvp over it, so higher orders stay exact.  vmap folds the
 * batch into the kernel's batch axis, as attention's own vmap does. */
#include <stdlib.h>
#include <string.h>

#include "core/export_tracing.h"
#include "ops/ops.h"
#include "primitives/fast.h"
#include "primitives/rules_util.h"
#include "transforms/autodiff.h"

#define NIN_MAX 6 /* q, k, v, mask, sinks, dO */

/* The node: outs[0..2] = dq, dk, dv (new references). */
static int vjp_node(cm_array *const *in, int nin, const cm_sdpa_params *p, cm_array **outs,
                    cm_stream s) {
  cm_dtype dts[3] = {in[0]->dtype, in[0]->dtype, in[0]->dtype};
  int nd[3] = {4, 4, 4};
  const int32_t *shp[3] = {in[0]->shape, in[1]->shape, in[2]->shape};
  return cm_node_new_multi(3, dts, nd, shp, &cm_prim_sdpa_vjp, p, sizeof *p, in, nin, s, outs);
}

int cm_fast_sdpa_vjp_fused(cm_array *const *in, int nin, const cm_sdpa_params *p, cm_array *cotan,
                           const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  for (int i = 0; i < nargs; i++)
    if (argnums[i] > 2) return 1;
  for (int i = 0; i < 3; i++)
    if (in[i]->size == 0) return 1;
  if (cm_in_export_tracing() || nin + 1 > NIN_MAX) return 1;
  cm_array *ins[NIN_MAX], *outs[3];
  memcpy(ins, in, sizeof *in * (size_t)nin);
  ins[nin] = cm_astype(cotan, in[0]->dtype, s);
  if (!ins[nin]) return -1;
  int rc = vjp_node(ins, nin + 1, p, outs, s);
  cm_release(ins[nin]);
  if (rc) return -1;
  for (int i = 0; i < nargs; i++) grads[i] = cm_retain(outs[argnums[i]]);
  for (int i = 0; i < 3; i++) cm_release(outs[i]);
  return 0;
}

/* ---- derivatives: those of the composed gradient ---- */

/* The composed gradient (dq, dk, dv) as a function of the inputs listed
 * in which (the others fixed at in). */
typedef struct composed_ctx {
  cm_array *const *in;
  int nin;
  const cm_sdpa_params *p;
  const int *which;
  int n;
  cm_stream s;
} composed_ctx;

static int composed_call(void *ctx, cm_array *const *x, int nx, cm_array ***out, int *nout) {
  const composed_ctx *c = ctx;
  cm_array *ins[NIN_MAX];
  memcpy(ins, c->in, sizeof *ins * (size_t)c->nin);
  for (int i = 0; i < nx; i++) ins[c->which[i]] = x[i];
  cm_array **r = calloc(3, sizeof *r);
  if (!r) return cm_error(CM_ERR_MEMORY, "[SdpaVJP] Out of memory.");
  int all[3] = {0, 1, 2};
  if (cm_fast_sdpa_vjp_composed(NULL, ins, c->nin - 1, c->p, ins[c->nin - 1], all, 3, r, c->s)) {
    free(r);
    return -1;
  }
  *out = r;
  *nout = 3;
  return 0;
}

static int sdpa_vjp_vjp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                        const cm_params *pp, cm_array *const *cotans, const int *argnums, int nargs,
                        cm_array **grads, cm_stream s) {
  (void)pp;
  composed_ctx c = {in, nin, cm_sdpa_params_of(outs[0]), argnums, nargs, s};
  cm_array *prim[NIN_MAX], *cot[3] = {NULL, NULL, NULL}, **o = NULL, **g = NULL;
  for (int i = 0; i < nargs; i++) prim[i] = in[argnums[i]];
  int rc = 0, no = 0;
  for (int k = 0; k < nout && !rc; k++)
    rc = !(cot[k] = cotans[k] ? cm_retain(cotans[k]) : cm_zeros_like(outs[k], s));
  if (!rc) rc = cm_vjp((cm_closure){composed_call, &c}, prim, nargs, cot, nout, &o, &no, &g);
  for (int k = 0; k < nout; k++) cm_release(cot[k]);
  if (rc) return -1;
  cm_array_list_free(o, no);
  memcpy(grads, g, sizeof *g * (size_t)nargs);
  free(g);
  return 0;
}

static int sdpa_vjp_jvp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                        const cm_params *pp, cm_array *const *tangents, cm_array **tangents_out,
                        cm_stream s) {
  (void)pp;
  int which[NIN_MAX], n = 0;
  cm_array *prim[NIN_MAX], *tan[NIN_MAX], **o = NULL, **t = NULL;
  for (int i = 0; i < nin; i++)
    if (tangents[i]) which[n] = i, prim[n] = in[i], tan[n++] = tangents[i];
  if (n == 0) {
    for (int k = 0; k < nout; k++)
      if (!(tangents_out[k] = cm_zeros_like(outs[k], s))) return -1;
    return 0;
  }
  composed_ctx c = {in, nin, cm_sdpa_params_of(outs[0]), which, n, s};
  int no = 0;
  if (cm_jvp((cm_closure){composed_call, &c}, prim, n, tan, n, &o, &no, &t)) return -1;
  cm_array_list_free(o, no);
  memcpy(tangents_out, t, sizeof *t * (size_t)nout);
  free(t);
  return 0;
}

/* vmap: every input gets the batch first (broadcast where unbatched) and
 * folded into the batch axis; the outputs are unfolded. */
static int sdpa_vjp_vmap(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                         const cm_params *pp, const int *axes, cm_array **outs_b, int *out_axes,
                         cm_stream s) {
  (void)pp;
  const cm_sdpa_params *p = cm_sdpa_params_of(outs[0]);
  int si = p->has_sinks ? nin - 2 : -1, V = 0;
  if (si >= 0 && axes[si] >= 0)
    return cm_error(CM_ERR_VALUE, "[SdpaVJP::vmap] vmap over the sinks is not supported.");
  for (int i = 0; i < nin; i++)
    if (axes[i] >= 0) V = in[i]->shape[axes[i]];
  cm_rt t = {0};
  cm_array *ins[NIN_MAX], *o[3] = {NULL, NULL, NULL};
  for (int i = 0; i < nin; i++) {
    if (i == si) {
      ins[i] = in[i];
      continue;
    }
    cm_array *f;
    if (axes[i] >= 0) {
      f = RT(&t, cm_moveaxis(in[i], axes[i], 0, s));
    } else {
      int32_t sh[5] = {V, in[i]->shape[0], in[i]->shape[1], in[i]->shape[2], in[i]->shape[3]};
      int zero = 0;
      cm_array *e = RT(&t, cm_expand_dims(in[i], 1, &zero, s));
      f = RT(&t, e ? cm_broadcast_to(e, 5, sh, s) : NULL);
    }
    ins[i] = RT(&t, f ? cm_flatten(f, 0, 1, s) : NULL);
  }
  if (!t.fail && vjp_node(ins, nin, p, o, s)) t.fail = true;
  for (int k = 0; k < 3; k++) RT(&t, o[k]);
  int32_t sh[2] = {V, t.fail ? 0 : o[0]->shape[0] / (V ? V : 1)};
  cm_array *r[3];
  for (int k = 0; k < 3; k++) r[k] = RT(&t, cm_unflatten(o[k], 0, 2, sh, s));
  for (int k = 0; k < nout; k++) {
    outs_b[k] = t.fail ? NULL : cm_retain(r[k]);
    out_axes[k] = 0;
  }
  cm_array *r0 = NULL; /* cm_rt_done's extra reference */
  int rc = cm_rt_done(&t, t.fail ? NULL : r[0], &r0);
  cm_release(r0);
  return rc;
}

const cm_prim cm_prim_sdpa_vjp = {.name = "SdpaVJP",
                                  CM_PARAMS_OF(cm_sdpa_params),
                                  .vjp_multi = sdpa_vjp_vjp,
                                  .jvp_multi = sdpa_vjp_jvp,
                                  .vmap_multi = sdpa_vjp_vmap};
