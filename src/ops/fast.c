/* mx.fast constructors: MLX's checks and messages (mlx/fast.cpp), then one
 * fused node each (primitives/fast.h).  float64 attention is MLX's
 * composition of ops (cm_fast_sdpa_compose), as MLX's CPU build computes
 * every attention; the fused kernel covers the float32 and half types. */
#include "ops/fast.h"

#include <float.h>
#include <string.h>

#include "core/export_tracing.h"
#include "ops/ops.h"
#include "primitives/fast.h"
#include "primitives/rules_util.h"

#define VERR(...) (cm_error(CM_ERR_VALUE, __VA_ARGS__), (cm_array *)NULL)

/* ---- normalisations ------------------------------------------------------ */

/* The weight/bias checks both norms share: 1-d, of x's last size. */
static int check_vec(const char *op, const char *what, cm_array *w, cm_array *x) {
  if (!w) return 0;
  if (w->ndim != 1)
    return cm_error(CM_ERR_VALUE, "[%s] %s must have 1 dimension but has %d dimensions.", op, what,
                    w->ndim);
  if (w->size != x->shape[x->ndim - 1])
    return cm_error(CM_ERR_VALUE,
                    "[%s] %s must have the same size as the last dimension of x but has %lld "
                    "elements.",
                    op, what, (long long)w->size);
  return 0;
}

/* The norm node: x, then each of the optional vectors cast to dtype (or
 * the 0-d value that leaves x unchanged). */
static cm_array *norm_node(const cm_prim *prim, cm_array *x, cm_array *const *vecs,
                           const double *dflt, int nvec, cm_dtype dt, float eps, cm_stream s) {
  cm_array *in[3] = {NULL, NULL, NULL};
  cm_array *r = NULL;
  bool ok = (in[0] = cm_astype(x, dt, s)) != NULL;
  for (int i = 0; ok && i < nvec; i++)
    ok = (in[1 + i] = vecs[i] ? cm_astype(vecs[i], dt, s) : cm_array_scalar_double(dflt[i], dt)) !=
         NULL;
  cm_norm_params p = {eps};
  if (ok) r = cm_op_node(dt, x->ndim, x->shape, prim, &p, sizeof p, in, 1 + nvec, s);
  for (int i = 0; i < 3; i++) cm_release(in[i]);
  return r;
}

cm_array *cm_fast_rms_norm(cm_array *x, cm_array *weight, float eps, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (x->ndim == 0)
    return VERR("[rms_norm] Input must have at least 1 dimension but got input with 0 "
                "dimensions.");
  if (check_vec("rms_norm", "(*weight)", weight, x)) return NULL;
  cm_dtype dt = weight ? cm_promote_types(x->dtype, weight->dtype) : x->dtype;
  if (!cm_dtype_is_float(dt))
    return VERR("[rms_norm] Received unsupported type %s.", cm_dtype_name(dt));
  static const double one = 1;
  return norm_node(&cm_prim_rms_norm, x, &weight, &one, 1, dt, eps, s);
}

cm_array *cm_fast_layer_norm(cm_array *x, cm_array *weight, cm_array *bias, float eps,
                             cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (x->ndim == 0)
    return VERR("[layer_norm] Input must have at least 1 dimension but got input with 0 "
                "dimensions.");
  if (check_vec("layer_norm", "weight", weight, x) || check_vec("layer_norm", "bias", bias, x))
    return NULL;
  cm_dtype dt = x->dtype;
  if (weight) {
    dt = cm_promote_types(dt, weight->dtype);
    if (bias) dt = cm_promote_types(dt, bias->dtype);
  }
  if (!cm_dtype_is_float(dt))
    return VERR("[layer_norm] Received unsupported type %s.", cm_dtype_name(dt));
  cm_array *vecs[2] = {weight, bias};
  static const double dflt[2] = {1, 0};
  return norm_node(&cm_prim_layer_norm, x, vecs, dflt, 2, dt, eps, s);
}

/* ---- rope ------------------------------------------------------------------ */

static int rope_checks(cm_array *x, int dims, cm_array *offset, cm_array *freqs) {
  char sh[128];
  if (x->ndim < 3)
    return cm_error(CM_ERR_VALUE,
                    "[rope] Input must have at least 3 dimensions but got input with %d "
                    "dimensions.",
                    x->ndim);
  if (!cm_dtype_is_float(x->dtype))
    return cm_error(CM_ERR_VALUE, "[rope] Input must be a floating type but got %s.",
                    cm_dtype_name(x->dtype));
  if (offset->ndim > 1)
    return cm_error(CM_ERR_VALUE, "[rope] offset must have at most one dimension but has shape %s.",
                    cm_shape_str(sh, sizeof sh, offset->ndim, offset->shape));
  if (offset->size != 1 && offset->size != x->shape[0])
    return cm_error(CM_ERR_VALUE,
                    "[rope] offset must be a scalar or vector with %d elements but has shape %s.",
                    x->shape[0], cm_shape_str(sh, sizeof sh, offset->ndim, offset->shape));
  if (!cm_dtype_is_integral(offset->dtype))
    return cm_error(CM_ERR_VALUE, "[rope] offset must be an integer but got type %s.",
                    cm_dtype_name(offset->dtype));
  if (dims <= 0) return cm_error(CM_ERR_VALUE, "[rope] dims must be positive but got %d.", dims);
  if (dims % 2) return cm_error(CM_ERR_VALUE, "[rope] dims must be even but got %d.", dims);
  if (dims > x->shape[x->ndim - 1])
    return cm_error(CM_ERR_VALUE,
                    "[rope] dims must not exceed the input's last dimension (%d) but got %d.",
                    x->shape[x->ndim - 1], dims);
  if (freqs && (freqs->ndim != 1 || freqs->shape[0] != dims / 2))
    return cm_error(CM_ERR_VALUE,
                    "[rope] freqs must be one dimensional with size %d but got shape %s.", dims / 2,
                    cm_shape_str(sh, sizeof sh, freqs->ndim, freqs->shape));
  return 0;
}

cm_array *cm_fast_rope(cm_array *x, int dims, bool traditional, bool has_base, float base,
                       float scale, cm_array *offset, cm_array *freqs, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (freqs && has_base) return VERR("[rope] Only one of base or freqs can have a value.");
  if (!freqs && !has_base) return VERR("[rope] Neither base nor freqs has a value.");
  if (rope_checks(x, dims, offset, freqs)) return NULL;
  cm_array *in[3] = {cm_retain(x), cm_astype(offset, CM_INT32, s),
                     freqs ? cm_astype(freqs, CM_FLOAT32, s) : NULL};
  cm_array *r = NULL;
  cm_rope_params p = {dims, traditional, 1, has_base ? base : 1.0f, scale};
  if (in[1] && (!freqs || in[2]))
    r = cm_op_node(x->dtype, x->ndim, x->shape, &cm_prim_rope, &p, sizeof p, in, freqs ? 3 : 2, s);
  for (int i = 0; i < 3; i++) cm_release(in[i]);
  return r;
}

/* ---- attention ------------------------------------------------------------- */

#define SDPA "[scaled_dot_product_attention]"

static double lowest(cm_dtype t) {
  switch (t) {
  case CM_FLOAT16: return -65504.0;
  case CM_BFLOAT16: return -3.3895313892515355e38;
  case CM_FLOAT64: return -DBL_MAX;
  default: return -FLT_MAX;
  }
}

/* The causal keep mask of shape (qL, kL): key j <= i + kL - qL. */
static cm_array *causal_mask(int qL, int kL, cm_stream s) {
  cm_rt t = {0};
  int ax1 = 1, ax0 = 0;
  cm_array *qi = RT(&t, cm_arange(kL - qL, kL, 1, CM_INT32, s));
  cm_array *ki = RT(&t, cm_arange(0, kL, 1, CM_INT32, s));
  cm_array *a = RT(&t, cm_expand_dims(qi, 1, &ax1, s));
  cm_array *b = RT(&t, cm_expand_dims(ki, 1, &ax0, s));
  cm_array *m = RT(&t, cm_greater_equal(a, b, s));
  cm_array *r;
  return cm_rt_done(&t, m, &r) ? NULL : r;
}

cm_array *cm_fast_sdpa_group_q(cm_array *q, int hkv, cm_stream s) {
  int32_t sh[2] = {hkv, q->shape[1] / hkv};
  return cm_unflatten(q, 1, 2, sh, s);
}
cm_array *cm_fast_sdpa_group_kv(cm_array *k, cm_stream s) {
  int ax = 2;
  return cm_expand_dims(k, 1, &ax, s);
}

int cm_fast_sdpa_probs(cm_array *q, cm_array *k, cm_array *mask, cm_array *sinks, float scale,
                       bool causal, cm_array **probs, cm_array **keep, cm_stream s) {
  cm_rt t = {0};
  int hkv = k->shape[1], qL = q->shape[2], kL = k->shape[2];
  cm_dtype dt = q->dtype;
  cm_array *sc = RT(&t, cm_array_scalar_double(scale, dt));
  cm_array *qs = RT(&t, cm_multiply(sc, q, s));
  cm_array *qg = RT(&t, cm_fast_sdpa_group_q(qs, hkv, s));
  cm_array *kg = RT(&t, cm_fast_sdpa_group_kv(k, s));
  cm_array *kt = RT(&t, cm_swapaxes(kg, -1, -2, s));
  cm_array *S = RT(&t, cm_matmul(qg, kt, s));
  cm_array *m = NULL;
  if (causal) m = RT(&t, causal_mask(qL, kL, s));
  else if (mask) m = RT(&t, cm_fast_sdpa_group_q(mask, hkv, s));
  if (m && m->dtype == CM_BOOL) {
    cm_array *lo = RT(&t, cm_array_scalar_double(lowest(dt), dt));
    S = RT(&t, cm_where(m, S, lo, s));
  } else if (m) {
    S = RT(&t, cm_add(S, m, s));
  }
  if (sinks && !t.fail) {
    int32_t shp[5] = {1, hkv, q->shape[1] / hkv, 1, 1};
    cm_array *sk = RT(&t, cm_reshape(sinks, 5, shp, s));
    int32_t bs[5];
    memcpy(bs, S->shape, sizeof bs);
    bs[4] = 1;
    cm_array *skb = RT(&t, cm_broadcast_to(sk, 5, bs, s));
    cm_array *cat[2] = {skb, S};
    S = t.fail ? NULL : RT(&t, cm_concatenate(cat, 2, -1, s));
  }
  cm_array *P = RT(&t, cm_softmax(S, CM_AXIS(-1), true, s));
  if (sinks && !t.fail) {
    int32_t st[5] = {0, 0, 0, 0, 1};
    P = RT(&t, cm_slice(P, 5, st, 5, P->shape, 0, NULL, s));
  }
  *keep = m && m->dtype == CM_BOOL && !t.fail ? cm_retain(m) : NULL;
  if (cm_rt_done(&t, P, probs)) {
    cm_release(*keep);
    *keep = NULL;
    return -1;
  }
  return 0;
}

cm_array *cm_fast_sdpa_compose(cm_array *q, cm_array *k, cm_array *v, cm_array *mask,
                               cm_array *sinks, float scale, bool causal, cm_stream s) {
  cm_array *P, *keep, *r;
  if (cm_fast_sdpa_probs(q, k, mask, sinks, scale, causal, &P, &keep, s)) return NULL;
  cm_release(keep);
  cm_rt t = {0};
  cm_rt_keep(&t, P);
  cm_array *vg = RT(&t, cm_fast_sdpa_group_kv(v, s));
  cm_array *o = RT(&t, cm_matmul(P, vg, s));
  cm_array *of = RT(&t, cm_flatten(o, 1, 2, s));
  return cm_rt_done(&t, of, &r) ? NULL : r;
}

static int sdpa_checks(cm_array *q, cm_array *k, cm_array *v, const char *mode, cm_array *mask) {
  char sa[128], sb[128];
  cm_array *qkv[3] = {q, k, v};
  for (int i = 0; i < 3; i++)
    if (qkv[i]->ndim != 4)
      return cm_error(CM_ERR_VALUE, SDPA " input with shape %s expected to be rank 4",
                      cm_shape_str(sa, sizeof sa, qkv[i]->ndim, qkv[i]->shape));
  if (strcmp(mode, "") && strcmp(mode, "causal") && strcmp(mode, "array"))
    return cm_error(CM_ERR_VALUE,
                    SDPA " Invalid mask_mode %s. mask_mode must be 'causal', 'array' or ''.", mode);
  if (!strcmp(mode, "causal") && mask)
    return cm_error(CM_ERR_VALUE, SDPA " Invalid mask_arr for mask_mode 'casusal'. No array "
                                       "mask should be passed.");
  if (mask && mask->ndim > 4)
    return cm_error(CM_ERR_VALUE, SDPA " the mask with shape %s expected to have at most rank 4.",
                    cm_shape_str(sa, sizeof sa, mask->ndim, mask->shape));
  for (int i = 1; i < 3; i++)
    if (qkv[i]->shape[0] != q->shape[0])
      return cm_error(CM_ERR_VALUE, SDPA " mismatching batch dimension for input with shape %s.",
                      cm_shape_str(sa, sizeof sa, 4, qkv[i]->shape));
  if (q->shape[3] != k->shape[3])
    return cm_error(CM_ERR_VALUE,
                    SDPA " query, keys expected to have matching last dimension; found query "
                         "shape %s for keys shape %s.",
                    cm_shape_str(sa, sizeof sa, 4, q->shape),
                    cm_shape_str(sb, sizeof sb, 4, k->shape));
  if (k->shape[1] != v->shape[1])
    return cm_error(CM_ERR_VALUE,
                    SDPA " keys, values expected to have matching n_kv_heads; found keys with "
                         "n_heads %d for values with n_heads %d.",
                    k->shape[1], v->shape[1]);
  if (k->shape[1] == 0 || q->shape[1] % k->shape[1])
    return cm_error(CM_ERR_VALUE,
                    SDPA " n_heads must be a multiple of n_kv_heads, found n_heads %d for "
                         "n_kv_heads %d.",
                    q->shape[1], k->shape[1]);
  if (k->shape[2] != v->shape[2])
    return cm_error(CM_ERR_VALUE,
                    SDPA " keys, values expected to have matching sequence lengths; found keys "
                         "shape %s for values shape %s.",
                    cm_shape_str(sa, sizeof sa, 4, k->shape),
                    cm_shape_str(sb, sizeof sb, 4, v->shape));
  return 0;
}

/* The node's inputs after the checks: q, k, v cast to dt, then the mask
 * (cast unless bool, broadcast to (B, Hq, qL, kL)) and the sinks. */
static int sdpa_inputs(cm_array *q, cm_array *k, cm_array *v, cm_array *mask, cm_array *sinks,
                       cm_dtype dt, cm_array **in, int *nin, cm_stream s) {
  cm_array *qkv[3] = {q, k, v};
  int n = 0;
  for (int i = 0; i < 3; i++)
    if (!(in[n++] = cm_astype(qkv[i], dt, s))) goto fail;
  if (mask) {
    if (cm_promote_types(mask->dtype, dt) != dt) {
      cm_error(CM_ERR_VALUE, SDPA " Mask type must promote to output type %s.", cm_dtype_name(dt));
      goto fail;
    }
    cm_array *mc = mask->dtype == CM_BOOL ? cm_retain(mask) : cm_astype(mask, dt, s);
    if (!mc) goto fail;
    int32_t shp[4] = {q->shape[0], q->shape[1], q->shape[2], k->shape[2]};
    in[n++] = cm_broadcast_to(mc, 4, shp, s);
    cm_release(mc);
    if (!in[n - 1]) goto fail;
  }
  if (sinks) {
    char sa[128];
    if (cm_promote_types(sinks->dtype, dt) != dt) {
      cm_error(CM_ERR_VALUE, SDPA " Type of sinks must promote to output type %s.",
               cm_dtype_name(dt));
      goto fail;
    }
    if (sinks->ndim != 1 || sinks->shape[0] != q->shape[1]) {
      cm_error(CM_ERR_VALUE, SDPA " Received invalid shape for sinks %s.",
               cm_shape_str(sa, sizeof sa, sinks->ndim, sinks->shape));
      goto fail;
    }
    if (!(in[n++] = cm_astype(sinks, dt, s))) goto fail;
  }
  *nin = n;
  return 0;
fail:
  for (int i = 0; i < n; i++) cm_release(in[i]);
  return -1;
}

cm_array *cm_fast_sdpa(cm_array *q, cm_array *k, cm_array *v, float scale, const char *mask_mode,
                       cm_array *mask, cm_array *sinks, bool force_fused, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!mask_mode) mask_mode = "";
  if (sdpa_checks(q, k, v, mask_mode, mask)) return NULL;
  bool causal = !strcmp(mask_mode, "causal");
  cm_dtype dts[3] = {q->dtype, k->dtype, v->dtype}, dt;
  if (cm_result_type(3, dts, &dt)) return NULL;
  if (!cm_dtype_is_float(dt)) return VERR(SDPA " Received unsupported type %s.", cm_dtype_name(dt));
  cm_array *in[5];
  int nin;
  if (sdpa_inputs(q, k, v, mask, sinks, dt, in, &nin, s)) return NULL;
  cm_array *r = NULL;
  if (force_fused) {
    cm_error(CM_ERR_VALUE,
             SDPA " force_fused=True but no fused kernel is available in CPU backend.");
  } else if (dt == CM_FLOAT64 || cm_in_export_tracing()) { /* MLX's CPU fallback, as MLX exports */
    r = cm_fast_sdpa_compose(in[0], in[1], in[2], mask ? in[3] : NULL, sinks ? in[nin - 1] : NULL,
                             scale, causal, s);
  } else {
    cm_sdpa_params p = {scale, causal, mask != NULL, sinks != NULL};
    int32_t shp[4] = {q->shape[0], q->shape[1], q->shape[2], v->shape[3]};
    r = cm_op_node(dt, 4, shp, &cm_prim_sdpa, &p, sizeof p, in, nin, s);
  }
  for (int i = 0; i < nin; i++) cm_release(in[i]);
  return r;
}
