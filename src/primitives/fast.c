/* The mx.fast primitives' descriptors and transform rules.  Every rule is
 * a graph of ops (so derivatives of derivatives work): the vjps are MLX's
 * formulas (mlx/fast.cpp), the jvps the matching forward derivatives, and
 * the vmaps move the batch to an axis the fused kernel treats as a batch. */
#include "primitives/fast.h"
#include "primitives/export_desc.h"

#include <math.h>

#include "ops/fast.h"
#include "ops/ops.h"
#include "primitives/fast_norm.h"
#include "primitives/rules_util.h"

#define LAST CM_AXIS(-1)

/* The leading axes of a (all but the last), as a reduction. */
static cm_array *sum_leading(cm_array *a, cm_stream s) {
  int ax[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim - 1; i++) ax[i] = i;
  return cm_sum(a, (cm_axes){ax, a->ndim - 1, false}, false, s);
}

/* grads[i] = r[argnums[i]] (new references) and the temporaries released;
 * -1 (no grads set) if a step failed. */
static int take_grads(cm_rt *t, cm_array *const *r, const int *argnums, int nargs,
                      cm_array **grads) {
  bool ok = !t->fail;
  for (int i = 0; i < nargs; i++) grads[i] = ok ? cm_retain(r[argnums[i]]) : NULL;
  for (int i = 0; i < t->n; i++) cm_release(t->a[i]);
  t->n = 0;
  return ok ? 0 : -1;
}

/* The pieces both norms' rules use (fast_norm.h). */
void cm_norm_stats(cm_rt *t, cm_array *x, float eps, bool layer, cm_array **xc, cm_array **n,
                   cm_stream s) {
  cm_dtype dt = x->dtype;
  cm_array *v;
  if (layer) {
    /* mean(xc^2), not mean(x^2) - mean^2: the difference cancels when
     * the mean is large against the spread (x in [0, 1) loses 2-3 bits). */
    cm_array *mu = RT(t, cm_mean(x, LAST, true, s));
    *xc = RT(t, cm_subtract(x, mu, s));
    cm_array *xc2 = RT(t, cm_square(*xc, s));
    v = RT(t, cm_mean(xc2, LAST, true, s));
  } else {
    cm_array *x2 = RT(t, cm_square(x, s));
    v = RT(t, cm_mean(x2, LAST, true, s));
    *xc = x;
  }
  cm_array *e = RT(t, cm_rule_scalar(eps, dt));
  cm_array *ve = RT(t, cm_add(v, e, s));
  *n = RT(t, cm_rsqrt(ve, s));
}

/* vjp of both norms: MLX's RMSNormVJP / LayerNormVJP (fast_norm_vjp.c). */
static int norm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp, cm_array *g,
                    const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)pp;
  float eps = cm_norm_params_of(out)->eps;
  return cm_norm_vjp_grads(in, nin, eps, g, argnums, nargs, grads, s);
}

/* jvp: y = (xc n) w + b, so dy = w (dxc n + xc dn) + dw xc n + db with
 * dxc = dx - mean(dx) (RMSNorm: dx) and dn = -n^3 mean(xc dxc). */
static int norm_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                    cm_array *const *tan, cm_array **tangent, cm_stream s) {
  (void)pp;
  bool layer = nin == 3;
  float eps = cm_norm_params_of(out)->eps;
  cm_array *x = in[0], *w = in[1], *xc, *n, *r = NULL;
  cm_rt t = {0};
  cm_norm_stats(&t, x, eps, layer, &xc, &n, s);
  if (tan[0]) {
    cm_array *dxc = tan[0];
    if (layer) {
      cm_array *m = RT(&t, cm_mean(dxc, LAST, true, s));
      dxc = RT(&t, cm_subtract(dxc, m, s));
    }
    cm_array *nn = RT(&t, cm_square(n, s));
    cm_array *n3 = RT(&t, cm_multiply(n, nn, s));
    cm_array *xd = RT(&t, cm_multiply(xc, dxc, s));
    cm_array *mxd = RT(&t, cm_mean(xd, LAST, true, s));
    cm_array *dn0 = RT(&t, cm_multiply(n3, mxd, s));
    cm_array *dn = RT(&t, cm_negative(dn0, s));
    cm_array *d1 = RT(&t, cm_multiply(dxc, n, s));
    cm_array *d2 = RT(&t, cm_multiply(xc, dn, s));
    cm_array *d = RT(&t, cm_add(d1, d2, s));
    r = RT(&t, cm_multiply(w, d, s));
  }
  if (tan[1]) {
    cm_array *xn = RT(&t, cm_multiply(xc, n, s));
    cm_array *d = RT(&t, cm_multiply(tan[1], xn, s));
    r = r ? RT(&t, cm_add(r, d, s)) : d;
  }
  if (layer && tan[2])
    r = r ? RT(&t, cm_add(r, tan[2], s))
          : RT(&t, cm_broadcast_to(tan[2], out->ndim, out->shape, s));
  if (!r && !t.fail) r = RT(&t, cm_zeros_like(out, s));
  if (r && !t.fail && r->dtype != out->dtype) r = RT(&t, cm_astype(r, out->dtype, s));
  return cm_rt_done(&t, r, tangent);
}

/* a with its batch axis moved to the front (ax >= 0), or given one of size
 * V by broadcasting (ax < 0). */
cm_array *cm_fast_batch_front(cm_array *a, int ax, int V, cm_stream s) {
  if (ax >= 0) return cm_moveaxis(a, ax, 0, s);
  int zero = 0;
  cm_array *e = cm_expand_dims(a, 1, &zero, s);
  if (!e) return NULL;
  int32_t sh[CM_MAX_DIMS];
  sh[0] = V;
  for (int i = 0; i < a->ndim; i++) sh[i + 1] = a->shape[i];
  cm_array *r = cm_broadcast_to(e, a->ndim + 1, sh, s);
  cm_release(e);
  return r;
}

/* A batched weight or bias (V, D) shaped to multiply a batched x of rank
 * nd with its batch first: (V, 1, ..., 1, D). */
cm_array *cm_fast_vec_for(cm_array *w, int ax, int nd, cm_stream s) {
  cm_array *f = cm_moveaxis(w, ax, 0, s);
  if (!f) return NULL;
  int32_t sh[CM_MAX_DIMS];
  for (int i = 0; i < nd; i++) sh[i] = 1;
  sh[0] = f->shape[0];
  sh[nd - 1] = f->shape[1];
  cm_array *r = cm_reshape(f, nd, sh, s);
  cm_release(f);
  return r;
}

/* vmap: the batch goes first in x (a batch axis the kernel normalises row
 * by row); a batched weight or bias is applied after normalising. */
static int norm_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *pp,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)pp;
  bool layer = nin == 3;
  float eps = cm_norm_params_of(node)->eps;
  int V = 0;
  for (int i = 0; i < nin; i++)
    if (axes[i] >= 0) V = in[i]->shape[axes[i]];
  cm_rt t = {0};
  cm_array *x = axes[0] >= 0 ? RT(&t, cm_moveaxis(in[0], axes[0], 0, s))
                             : RT(&t, cm_fast_batch_front(in[0], -1, V, s));
  cm_array *vec[2] = {NULL, NULL};
  bool batched_vec = false;
  for (int i = 1; i < nin; i++) {
    batched_vec |= axes[i] >= 0;
    if (axes[i] < 0 && in[i]->ndim == 1) vec[i - 1] = in[i];
  }
  cm_array *y = NULL;
  if (!t.fail) {
    cm_array *w0 = batched_vec ? NULL : vec[0], *b0 = batched_vec ? NULL : vec[1];
    y = RT(&t, layer ? cm_fast_layer_norm(x, w0, b0, eps, s) : cm_fast_rms_norm(x, w0, eps, s));
  }
  for (int i = 1; batched_vec && i < nin && !t.fail; i++) {
    cm_array *v = axes[i] >= 0 ? RT(&t, cm_fast_vec_for(in[i], axes[i], y->ndim, s)) : in[i];
    y = RT(&t, i == 1 ? cm_multiply(y, v, s) : cm_add(y, v, s));
  }
  *out_axis = 0;
  return cm_rt_done(&t, y, out);
}

/* ---- RoPE ---- */

static cm_array *rope_node(cm_array *x, cm_array *const *in, int nin, cm_rope_params p,
                           cm_stream s) {
  cm_array *ins[3] = {x, in[1], nin > 2 ? in[2] : NULL};
  return cm_op_node(x->dtype, x->ndim, x->shape, &cm_prim_rope, &p, sizeof p, ins, nin, s);
}

/* The two halves of each rotated pair of a (..., T, D): even/odd lanes
 * (traditional) or the first and second dims/2. */
static void rope_halves(cm_rt *t, cm_array *a, const cm_rope_params *p, cm_array **h1,
                        cm_array **h2, cm_stream s) {
  int nd = a->ndim, half = p->dims / 2;
  int32_t st[CM_MAX_DIMS] = {0}, sp[CM_MAX_DIMS], step[CM_MAX_DIMS];
  for (int i = 0; i < nd; i++) sp[i] = a->shape[i], step[i] = 1;
  sp[nd - 1] = p->traditional ? p->dims : half;
  if (p->traditional) step[nd - 1] = 2;
  *h1 = RT(t, cm_slice(a, nd, st, nd, sp, nd, step, s));
  st[nd - 1] = p->traditional ? 1 : half;
  sp[nd - 1] = p->dims;
  *h2 = RT(t, cm_slice(a, nd, st, nd, sp, nd, step, s));
}

/* d loss / d angle of every (..., t, i), from the output y and its
 * cotangent g: the rotation's derivative maps (y1, y2) to (-y2, y1), and
 * to its negative for the inverse rotation. */
static cm_array *rope_dtheta(cm_rt *t, cm_array *y, cm_array *g, const cm_rope_params *p,
                             cm_stream s) {
  cm_array *y1, *y2, *g1, *g2;
  rope_halves(t, y, p, &y1, &y2, s);
  rope_halves(t, g, p, &g1, &g2, s);
  cm_array *a = RT(t, cm_multiply(g2, y1, s));
  cm_array *b = RT(t, cm_multiply(g1, y2, s));
  cm_array *d = RT(t, p->forward ? cm_subtract(a, b, s) : cm_subtract(b, a, s));
  return RT(t, d ? cm_astype(d, CM_FLOAT32, s) : NULL);
}

/* Positions (t + offset) * scale shaped to broadcast against (..., T, 1)
 * of an input of rank nd: (T, 1), or (B, 1, ..., T, 1) for one offset per
 * batch entry. */
static cm_array *rope_positions(cm_rt *t, cm_array *off, int nd, int T, float scale, cm_stream s) {
  cm_array *ar = RT(t, cm_arange(0, T, 1, CM_FLOAT32, s));
  int32_t sh[CM_MAX_DIMS];
  int n = 0;
  if (off->size > 1) {
    sh[n++] = off->shape[0];
    for (int i = 1; i < nd - 2; i++) sh[n++] = 1;
  }
  sh[n++] = 1;
  sh[n++] = 1;
  cm_array *o = RT(t, cm_reshape(off, n, sh, s));
  sh[n - 2] = T;
  cm_array *ar2 = RT(t, ar ? cm_reshape(ar, 2, sh + n - 2, s) : NULL);
  cm_array *pos = RT(t, cm_add(ar2, o, s));
  cm_array *sc = RT(t, cm_rule_scalar(scale, CM_FLOAT32));
  return RT(t, cm_multiply(pos, sc, s));
}

/* The cotangent of x is the inverse rotation of the output's; those of
 * freqs and offset come through the angles theta = (t + offset) * scale /
 * freqs, as in MLX's composition (its CPU path). */
static int rope_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)pp;
  const cm_rope_params *p = cm_rope_params_of(out);
  cm_rope_params inv = *p;
  inv.forward = !p->forward;
  cm_rt t = {0};
  cm_array *r[3] = {NULL, NULL, NULL};
  bool want[3] = {false, false, false};
  for (int i = 0; i < nargs; i++) want[argnums[i]] = true;
  if (want[0]) r[0] = RT(&t, rope_node(cotan, in, nin, inv, s));
  if (want[1] || want[2]) {
    int nd = out->ndim, T = out->shape[nd - 2], half = p->dims / 2;
    cm_array *dth = rope_dtheta(&t, out, cotan, p, s);
    cm_array *ifr;
    if (nin > 2) {
      ifr = RT(&t, cm_reciprocal(in[2], s));
    } else {
      cm_array *ar = RT(&t, cm_arange(0, -half, -1, CM_FLOAT32, s));
      cm_array *c = RT(&t, cm_rule_scalar(log(p->base) / half, CM_FLOAT32));
      cm_array *e = RT(&t, cm_multiply(ar, c, s));
      ifr = RT(&t, cm_exp(e, s));
    }
    cm_array *pos = rope_positions(&t, in[1], nd, T, p->scale, s);
    if (want[2]) { /* d/dfreqs = sum(dtheta * pos) * -(1 / freqs)^2 */
      cm_array *dp = RT(&t, cm_multiply(dth, pos, s));
      cm_array *di = RT(&t, dp ? sum_leading(dp, s) : NULL);
      cm_array *i2 = RT(&t, cm_square(ifr, s));
      cm_array *d = RT(&t, cm_multiply(di, i2, s));
      r[2] = RT(&t, cm_negative(d, s));
    }
    if (want[1]) { /* d/doffset = scale * sum(dtheta * inv_freqs), per batch entry if many */
      cm_array *dq = RT(&t, cm_multiply(dth, ifr, s));
      cm_array *sc = RT(&t, cm_rule_scalar(p->scale, CM_FLOAT32));
      cm_array *d = RT(&t, cm_multiply(dq, sc, s));
      cm_array *tot;
      if (in[1]->size > 1) {
        int ax[CM_MAX_DIMS];
        for (int i = 1; i < nd; i++) ax[i - 1] = i;
        tot = RT(&t, d ? cm_sum(d, (cm_axes){ax, nd - 1, false}, false, s) : NULL);
      } else {
        tot = RT(&t, d ? cm_sum(d, CM_AXES_ALL, false, s) : NULL);
      }
      cm_array *rs = RT(&t, tot ? cm_reshape(tot, in[1]->ndim, in[1]->shape, s) : NULL);
      r[1] = RT(&t, rs ? cm_astype(rs, in[1]->dtype, s) : NULL);
    }
  }
  return take_grads(&t, r, argnums, nargs, grads);
}

/* The rotation is linear in x; offset and freqs are not differentiated. */
static int rope_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                    cm_array *const *tan, cm_array **tangent, cm_stream s) {
  (void)pp;
  if (!tan[0]) return (*tangent = cm_zeros_like(out, s)) ? 0 : -1;
  return (*tangent = rope_node(tan[0], in, nin, *cm_rope_params_of(out), s)) ? 0 : -1;
}

/* The batch becomes a head-like axis: first for one offset, second (after
 * the axis the offsets index) for one offset per example. */
static int rope_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *pp,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)pp;
  for (int i = 1; i < nin; i++)
    if (axes[i] >= 0)
      return cm_error(CM_ERR_VALUE,
                      "[RoPE::vmap] vmap over offset or frequencies is not supported.");
  int to = in[1]->size > 1 ? 1 : 0;
  cm_array *x = cm_moveaxis(in[0], axes[0], to, s);
  if (!x) return -1;
  *out = rope_node(x, in, nin, *cm_rope_params_of(node), s);
  cm_release(x);
  *out_axis = to;
  return *out ? 0 : -1;
}

/* ---- attention ---- */

/* a^T over the last two axes (NULL, and nothing built, after a failure). */
static cm_array *tmat(cm_rt *t, cm_array *a, cm_stream s) {
  return RT(t, a ? cm_swapaxes(a, -1, -2, s) : NULL);
}

int cm_fast_sdpa_vjp_composed(cm_array *out, cm_array *const *in, int nin, const cm_sdpa_params *p,
                              cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                              cm_stream s) {
  (void)out;
  cm_array *q = in[0], *k = in[1], *v = in[2], *P, *keep;
  int hkv = k->shape[1];
  if (cm_fast_sdpa_probs(q, k, p->has_mask ? in[3] : NULL, p->has_sinks ? in[nin - 1] : NULL,
                         p->scale, p->causal, &P, &keep, s))
    return -1;
  cm_rt t = {0};
  cm_rt_keep(&t, P);
  if (keep) cm_rt_keep(&t, keep);
  cm_array *sc = RT(&t, cm_rule_scalar(p->scale, q->dtype));
  cm_array *dO = RT(&t, cm_fast_sdpa_group_q(cotan, hkv, s));
  cm_array *r[5] = {NULL, NULL, NULL, NULL, NULL};
  cm_array *zero = RT(&t, cm_rule_scalar(0, q->dtype));
  cm_array *Pt = tmat(&t, P, s);
  cm_array *dv = RT(&t, cm_matmul(Pt, dO, s));
  r[2] = RT(&t, cm_sum(dv, CM_AXIS(2), false, s));
  cm_array *v5 = RT(&t, cm_fast_sdpa_group_kv(v, s));
  cm_array *vt = tmat(&t, v5, s);
  cm_array *dP = RT(&t, cm_matmul(dO, vt, s));
  cm_array *dPP = RT(&t, cm_multiply(dP, P, s));
  cm_array *row = RT(&t, cm_sum(dPP, LAST, true, s));
  cm_array *dc = RT(&t, cm_subtract(dP, row, s));
  cm_array *dS = RT(&t, cm_multiply(P, dc, s));
  if (keep) dS = RT(&t, cm_where(keep, dS, zero, s));
  cm_array *k5 = RT(&t, cm_fast_sdpa_group_kv(k, s));
  cm_array *dq = RT(&t, cm_matmul(dS, k5, s));
  cm_array *dqf = RT(&t, cm_flatten(dq, 1, 2, s));
  r[0] = RT(&t, cm_multiply(sc, dqf, s));
  cm_array *dSt = tmat(&t, dS, s);
  cm_array *qg = RT(&t, cm_fast_sdpa_group_q(q, hkv, s));
  cm_array *dk = RT(&t, cm_matmul(dSt, qg, s));
  cm_array *dks = RT(&t, cm_sum(dk, CM_AXIS(2), false, s));
  r[1] = RT(&t, cm_multiply(sc, dks, s));
  /* the mask's (additive: the scores'; boolean: none) and the sinks' (the
   * sink's probability 1 - sum(P) times -sum(P dP), per head), as MLX's
   * composition differentiates them */
  if (p->has_mask) {
    cm_array *m = in[3];
    r[3] = m->dtype == CM_BOOL ? RT(&t, cm_zeros_like(m, s))
                               : RT(&t, dS ? cm_flatten(dS, 1, 2, s) : NULL);
  }
  if (p->has_sinks) {
    cm_array *ps = RT(&t, cm_sum(P, LAST, true, s));
    cm_array *one = RT(&t, cm_rule_scalar(1, q->dtype));
    cm_array *p0 = RT(&t, cm_subtract(ps, one, s)); /* -(1 - sum P) */
    cm_array *d = RT(&t, cm_multiply(p0, row, s));
    int ax[3] = {0, 3, 4};
    cm_array *ds = RT(&t, d ? cm_sum(d, (cm_axes){ax, 3, false}, false, s) : NULL);
    int32_t hq = q->shape[1];
    r[nin - 1] = RT(&t, ds ? cm_reshape(ds, 1, &hq, s) : NULL);
  }
  return take_grads(&t, r, argnums, nargs, grads);
}

static int sdpa_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)pp;
  const cm_sdpa_params *p = cm_sdpa_params_of(out);
  int rc = cm_fast_sdpa_vjp_fused(in, nin, p, cotan, argnums, nargs, grads, s);
  if (rc <= 0) return rc;
  return cm_fast_sdpa_vjp_composed(out, in, nin, p, cotan, argnums, nargs, grads, s);
}

/* jvp: dS = scale (dQ K^T + Q dK^T), dP = P (dS - sum(P dS)), dO = dP V + P dV. */
static int sdpa_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                    cm_array *const *tan, cm_array **tangent, cm_stream s) {
  (void)pp;
  const cm_sdpa_params *p = cm_sdpa_params_of(out);
  cm_array *q = in[0], *k = in[1], *v = in[2], *P, *keep;
  int hkv = k->shape[1];
  if (cm_fast_sdpa_probs(q, k, p->has_mask ? in[3] : NULL, p->has_sinks ? in[nin - 1] : NULL,
                         p->scale, p->causal, &P, &keep, s))
    return -1;
  cm_rt t = {0};
  cm_rt_keep(&t, P);
  if (keep) cm_rt_keep(&t, keep);
  cm_array *dS = NULL, *dO = NULL;
  if (tan[0]) {
    cm_array *tq = RT(&t, cm_fast_sdpa_group_q(tan[0], hkv, s));
    cm_array *k5 = RT(&t, cm_fast_sdpa_group_kv(k, s));
    cm_array *kt = tmat(&t, k5, s);
    dS = RT(&t, cm_matmul(tq, kt, s));
  }
  if (tan[1]) {
    cm_array *qg = RT(&t, cm_fast_sdpa_group_q(q, hkv, s));
    cm_array *tk = RT(&t, cm_fast_sdpa_group_kv(tan[1], s));
    cm_array *tkt = tmat(&t, tk, s);
    cm_array *d = RT(&t, cm_matmul(qg, tkt, s));
    dS = dS ? RT(&t, cm_add(dS, d, s)) : d;
  }
  if (dS) {
    cm_array *sc = RT(&t, cm_rule_scalar(p->scale, q->dtype));
    dS = RT(&t, cm_multiply(sc, dS, s));
    cm_array *zero = RT(&t, cm_rule_scalar(0, q->dtype));
    if (keep) dS = RT(&t, cm_where(keep, dS, zero, s));
    cm_array *PdS = RT(&t, cm_multiply(P, dS, s));
    cm_array *row = RT(&t, cm_sum(PdS, LAST, true, s));
    cm_array *dc = RT(&t, cm_subtract(dS, row, s));
    cm_array *dP = RT(&t, cm_multiply(P, dc, s));
    cm_array *v5 = RT(&t, cm_fast_sdpa_group_kv(v, s));
    dO = RT(&t, cm_matmul(dP, v5, s));
  }
  if (tan[2]) {
    cm_array *tv = RT(&t, cm_fast_sdpa_group_kv(tan[2], s));
    cm_array *d = RT(&t, cm_matmul(P, tv, s));
    dO = dO ? RT(&t, cm_add(dO, d, s)) : d;
  }
  cm_array *r = dO ? RT(&t, cm_flatten(dO, 1, 2, s)) : RT(&t, cm_zeros_like(out, s));
  return cm_rt_done(&t, r, tangent);
}

/* vmap: every input gets the batch first (broadcast where unbatched), the
 * batch is folded into the kernel's batch axis, and unfolded after. */
static int sdpa_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *pp,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)pp;
  const cm_sdpa_params *p = cm_sdpa_params_of(node);
  if (p->has_sinks && axes[nin - 1] >= 0)
    return cm_error(CM_ERR_VALUE,
                    "[ScaledDotProductAttention::vmap] vmap over the sinks is not supported.");
  int V = 0;
  for (int i = 0; i < nin; i++)
    if (axes[i] >= 0) V = in[i]->shape[axes[i]];
  cm_rt t = {0};
  cm_array *ins[5];
  int nb = p->has_sinks ? nin - 1 : nin;
  for (int i = 0; i < nb; i++) {
    cm_array *f = RT(&t, cm_fast_batch_front(in[i], axes[i], V, s));
    ins[i] = RT(&t, f ? cm_flatten(f, 0, 1, s) : NULL);
  }
  if (p->has_sinks) ins[nin - 1] = in[nin - 1];
  cm_array *r = NULL;
  if (!t.fail) {
    int32_t shp[4] = {ins[0]->shape[0], ins[0]->shape[1], ins[0]->shape[2], ins[2]->shape[3]};
    cm_array *o = RT(&t, cm_op_node(node->dtype, 4, shp, &cm_prim_sdpa, p, sizeof *p, ins, nin, s));
    int32_t sh[2] = {V, shp[0] / (V ? V : 1)};
    r = RT(&t, cm_unflatten(o, 0, 2, sh, s));
  }
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

const cm_prim cm_prim_rms_norm = {.name = "RMSNorm",
                                  .export = &cm_export_rms_norm,
                                  CM_PARAMS_OF(cm_norm_params),
                                  .vjp = norm_vjp,
                                  .jvp = norm_jvp,
                                  .vmap = norm_vmap};
const cm_prim cm_prim_layer_norm = {.name = "LayerNorm",
                                    .export = &cm_export_layer_norm,
                                    CM_PARAMS_OF(cm_norm_params),
                                    .vjp = norm_vjp,
                                    .jvp = norm_jvp,
                                    .vmap = norm_vmap};
const cm_prim cm_prim_rope = {.name = "RoPE",
                              .export = &cm_export_rope,
                              CM_PARAMS_OF(cm_rope_params),
                              .vjp = rope_vjp,
                              .jvp = rope_jvp,
                              .vmap = rope_vmap};
const cm_prim cm_prim_sdpa = {.name = "ScaledDotProductAttention",
                              CM_PARAMS_OF(cm_sdpa_params),
                              .vjp = sdpa_vjp,
                              .jvp = sdpa_jvp,
                              .vmap = sdpa_vmap};
