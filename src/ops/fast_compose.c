/* mx.fast ops that cmlx computes as MLX's CPU does: the composition of
 * ops MLX falls back to where it has no fused kernel (the same values,
 * dtypes and gradients, through the ops' own rules).
 *
 * cross_entropy: logsumexp(logits, -1) - logits[..., target], reduced in
 * the logits' dtype and given as float32 (MLX's CPU path; its fused GPU
 * kernels accumulate in float32).
 *
 * gated_delta_update: the gated delta rule, one step per time index t over
 * a float32 state S (B, Hv, Dv, Dk), heads of q and k repeated Hv / Hk
 * times:
 *   S = S * g_t                       (g_t per head, or per head and key)
 *   d = (v_t - (S k_t)) * beta_t
 *   S = S + d k_t^T,   y_t = S q_t
 * A masked-out step keeps the state and gives y_t = 0.  y has the dtype of
 * q, k and v together (float32 when that is not inexact); the state stays
 * float32 unless an input is float64. */
#include <stdlib.h>

#include "ops/fast.h"
#include "ops/ops.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

static cm_array *finish(cm_rt *t, cm_array *r) {
  cm_array *out;
  cm_rt_done(t, r, &out);
  return out;
}

/* ---- cross_entropy ---- */

static int check_cross_entropy(const cm_array *logits, const cm_array *targets) {
  char a[128], b[128];
  if (logits->ndim < 1)
    return cm_error(CM_ERR_VALUE,
                    "[cross_entropy] logits must have at least 1 dimension but got input with %d "
                    "dimensions.",
                    logits->ndim);
  if (!cm_shape_equal(targets->ndim, targets->shape, logits->ndim - 1, logits->shape))
    return cm_error(CM_ERR_VALUE,
                    "[cross_entropy] targets shape %s does not match logits shape %s with the "
                    "last axis removed.",
                    cm_shape_str(a, sizeof a, targets->ndim, targets->shape),
                    cm_shape_str(b, sizeof b, logits->ndim, logits->shape));
  cm_dtype lt = logits->dtype;
  if (lt != CM_FLOAT16 && lt != CM_BFLOAT16 && lt != CM_FLOAT32 && lt != CM_FLOAT64)
    return cm_error(CM_ERR_VALUE, "[cross_entropy] Received unsupported logits type %s.",
                    cm_dtype_name(lt));
  if (!cm_dtype_is_integral(targets->dtype))
    return cm_error(CM_ERR_VALUE,
                    "[cross_entropy] targets must be integer class indices but got %s.",
                    cm_dtype_name(targets->dtype));
  return 0;
}

cm_array *cm_fast_cross_entropy(cm_array *logits, cm_array *targets, cm_stream s) {
  if (cm_op_stream(&s) || check_cross_entropy(logits, targets)) return NULL;
  cm_rt t = {.n = 0};
  int last = -1;
  cm_array *lse = T(cm_logsumexp(logits, CM_AXIS(-1), false, s));
  cm_array *idx = T(cm_expand_dims(targets, 1, &last, s));
  cm_array *picked = T(cm_take_along_axis(logits, idx, -1, s));
  cm_array *target_logit = T(cm_squeeze(picked, 1, &last, s));
  cm_array *loss = T(cm_subtract(lse, target_logit, s));
  return finish(&t, T(cm_astype(loss, CM_FLOAT32, s)));
}

/* ---- gated_delta_update ---- */

/* x[:, t] of a (B, T, ...) array. */
static cm_array *at_step(cm_array *x, int step, cm_stream s) {
  return cm_take_index(x, step, 1, s);
}

/* x with size-1 axes inserted at the given (output) positions. */
static cm_array *with_axes(cm_array *x, int n, const int *axes, cm_stream s) {
  return cm_expand_dims(x, n, axes, s);
}

/* One step: *state (owned, replaced) and y_t (B, H, Dv) as a new reference. */
static cm_array *delta_step(cm_array **state, cm_array *q, cm_array *k, cm_array *v, cm_array *g,
                            cm_array *beta, cm_array *mask, cm_stream s) {
  cm_rt t = {.n = 0};
  static const int last2[2] = {-2, -1}, dv_axis[1] = {-2}, lastax[1] = {-1};
  static const int mask_axes[3] = {1, 2, 3}, ymask_axes[2] = {1, 2};
  cm_array *old = *state;
  cm_array *decay = T(g->ndim == 2 ? with_axes(g, 2, last2, s) : with_axes(g, 1, dv_axis, s));
  cm_array *kk = T(with_axes(k, 1, dv_axis, s)); /* (B, H, 1, Dk) */
  cm_array *sd = T(cm_multiply(old, decay, s));
  cm_array *skk = T(cm_multiply(sd, kk, s));
  cm_array *kv_mem = T(cm_sum(skk, CM_AXIS(-1), false, s)); /* (B, H, Dv) */
  cm_array *diff = T(cm_subtract(v, kv_mem, s));
  cm_array *bb = T(with_axes(beta, 1, lastax, s));
  cm_array *delta = T(cm_multiply(diff, bb, s));
  cm_array *dd = T(with_axes(delta, 1, lastax, s)); /* (B, H, Dv, 1) */
  cm_array *upd = T(cm_multiply(kk, dd, s));
  cm_array *next = T(cm_add(sd, upd, s));
  cm_array *qq = T(with_axes(q, 1, dv_axis, s));
  cm_array *sq = T(cm_multiply(next, qq, s));
  cm_array *y = T(cm_sum(sq, CM_AXIS(-1), false, s));
  if (mask) {
    cm_array *m = T(with_axes(mask, 3, mask_axes, s));
    next = T(cm_where(m, next, old, s));
    cm_array *my = T(with_axes(mask, 2, ymask_axes, s));
    cm_array *zero = T(cm_zeros_like(y, s));
    y = T(cm_where(my, y, zero, s));
  }
  cm_array *new_state = t.fail ? NULL : cm_retain(next);
  cm_array *out = finish(&t, y);
  if (!out || !new_state) {
    cm_release(out);
    cm_release(new_state);
    return NULL;
  }
  cm_release(old);
  *state = new_state;
  return out;
}

static int check_gated_delta(const cm_array *q, const cm_array *k, const cm_array *v) {
  if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
    return cm_error(CM_ERR_INDEX,
                    "[gated_delta_update] q, k and v must have 4 dimensions (B, T, H, D).");
  return 0;
}

/* The heads of x (B, T, Hk, D) repeated to Hv when Hv is a multiple. */
static cm_array *repeat_heads(cm_array *x, int hk, int hv, cm_stream s) {
  int r = hk > 0 ? hv / hk : 0;
  return r > 1 ? cm_repeat(x, r, -2, s) : cm_retain(x);
}

int cm_fast_gated_delta_update(cm_array *q, cm_array *k, cm_array *v, cm_array *gamma,
                               cm_array *beta, cm_array *state, cm_array *mask, cm_array **y_out,
                               cm_array **state_out, cm_stream s) {
  *y_out = *state_out = NULL;
  if (cm_op_stream(&s) || check_gated_delta(q, k, v)) return -1;
  int B = q->shape[0], steps = q->shape[1], hk = q->shape[2], dk = q->shape[3];
  int hv = v->shape[2], dv = v->shape[3];
  if (steps == 0) return cm_error(CM_ERR_VALUE, "[stack] No arrays provided for stacking");
  cm_dtype qkv[3] = {q->dtype, k->dtype, v->dtype}, ydt;
  if (cm_result_type(3, qkv, &ydt)) return -1;
  if (!cm_dtype_is_inexact(ydt)) ydt = CM_FLOAT32;
  int32_t sshape[4] = {B, hv, dv, dk};
  cm_array *S = state ? cm_astype(state, CM_FLOAT32, s) : cm_zeros(4, sshape, CM_FLOAT32, s);
  cm_array *qr = repeat_heads(q, hk, hv, s), *kr = repeat_heads(k, hk, hv, s);
  cm_array **ys = calloc((size_t)steps, sizeof *ys);
  int rc = S && qr && kr && ys ? 0 : -1;
  if (!ys && S && qr && kr) cm_error(CM_ERR_MEMORY, "[gated_delta_update] Out of memory.");
  for (int i = 0; i < steps && !rc; i++) {
    cm_array *in[5] = {at_step(qr, i, s), at_step(kr, i, s), at_step(v, i, s),
                       at_step(gamma, i, s), at_step(beta, i, s)};
    cm_array *m = mask ? at_step(mask, i, s) : NULL;
    bool ok = in[0] && in[1] && in[2] && in[3] && in[4] && (!mask || m);
    ys[i] = ok ? delta_step(&S, in[0], in[1], in[2], in[3], in[4], m, s) : NULL;
    for (int j = 0; j < 5; j++) cm_release(in[j]);
    cm_release(m);
    if (!ys[i]) rc = -1;
  }
  cm_array *y = rc ? NULL : cm_stack(ys, steps, 1, s);
  for (int i = 0; ys && i < steps; i++) cm_release(ys[i]);
  free(ys);
  cm_release(qr);
  cm_release(kr);
  *y_out = y ? cm_astype(y, ydt, s) : NULL;
  cm_release(y);
  if (!*y_out) {
    cm_release(S);
    return -1;
  }
  *state_out = S;
  return 0;
}
