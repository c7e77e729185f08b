/* mx.fast: fused normalisations, rotary embeddings and attention, with
 * MLX's checks, dtypes and messages (mlx/fast.cpp).  Optional arrays are
 * NULL when absent.  Each returns a new reference, or NULL with the error
 * set. */
#ifndef CMLX_OPS_FAST_H
#define CMLX_OPS_FAST_H

#include "ops/common.h"

cm_array *cm_fast_rms_norm(cm_array *x, cm_array *weight, float eps, cm_stream s);
cm_array *cm_fast_layer_norm(cm_array *x, cm_array *weight, cm_array *bias, float eps, cm_stream s);
/* has_base false is MLX's base=None (then freqs must be given, and only
 * one of the two may be).  offset: an integer array, 0-d or one per
 * x.shape[0]. */
cm_array *cm_fast_rope(cm_array *x, int dims, bool traditional, bool has_base, float base,
                       float scale, cm_array *offset, cm_array *freqs, cm_stream s);
/* mask_mode: "" (none, or mask given), "causal" or "array" (MLX's names);
 * mask: bool or additive, broadcastable to (B, Hq, qL, kL). */
cm_array *cm_fast_sdpa(cm_array *q, cm_array *k, cm_array *v, float scale, const char *mask_mode,
                       cm_array *mask, cm_array *sinks, bool force_fused, cm_stream s);

/* Compositions of ops, MLX's CPU path (ops/fast_compose.c).
 * cross_entropy: logits (..., C) of a float dtype, targets (...) integer
 * class indices; the float32 loss logsumexp - logits[target]. */
cm_array *cm_fast_cross_entropy(cm_array *logits, cm_array *targets, cm_stream s);
/* gated_delta_update: q, k (B, T, Hk, Dk), v (B, T, Hv, Dv), gamma
 * (B, T, Hv) or (B, T, Hv, Dk), beta (B, T, Hv), state (B, Hv, Dv, Dk) or
 * NULL (zeros), mask (B, T) or NULL; *y (B, T, Hv, Dv) and *state_out,
 * new references.  0, or -1 with neither set. */
int cm_fast_gated_delta_update(cm_array *q, cm_array *k, cm_array *v, cm_array *gamma,
                               cm_array *beta, cm_array *state, cm_array *mask, cm_array **y,
                               cm_array **state_out, cm_stream s);

/* ---- for the transform rules (primitives/fast.c) ---- */
/* The norms' gradient as one node (x, w as the norm's inputs, g the
 * cotangent, all of one float dtype): outs get dx, then dw (when dw), then
 * db (when db, LayerNorm). */
int cm_fast_norm_vjp(cm_array *x, cm_array *w, cm_array *g, float eps, bool layer, bool dw, bool db,
                     cm_array **outs, cm_stream s);
/* Attention as MLX's composition of ops (its CPU fallback): the float64
 * path, and the base of the derivative rules.  mask/sinks as the node's
 * inputs (mask already broadcast); NULL when absent. */
cm_array *cm_fast_sdpa_compose(cm_array *q, cm_array *k, cm_array *v, cm_array *mask,
                               cm_array *sinks, float scale, bool causal, cm_stream s);
/* The grouped-query layout of those rules: q (B, Hq, qL, D) as
 * (B, Hkv, R, qL, D) and k or v (B, Hkv, kL, D) as (B, Hkv, 1, kL, D). */
cm_array *cm_fast_sdpa_group_q(cm_array *q, int hkv, cm_stream s);
cm_array *cm_fast_sdpa_group_kv(cm_array *k, cm_stream s);
/* The attention probabilities of that composition in the grouped shape
 * (B, Hkv, R, qL, kL) (R = Hq / Hkv; sinks dropped), and the masked-out
 * positions' keep mask (bool, NULL when nothing is masked). */
int cm_fast_sdpa_probs(cm_array *q, cm_array *k, cm_array *mask, cm_array *sinks, float scale,
                       bool causal, cm_array **probs, cm_array **keep, cm_stream s);

#endif
