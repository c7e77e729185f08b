/* The fused primitives of mx.fast: RMSNorm, LayerNorm, RoPE and
 * ScaledDotProductAttention (MLX's fast_primitives.h).  Each is one node
 * with a CPU kernel (backend/cpu/fast_*.c); its transform rules are built
 * from op constructors (the gradient of the composition the op replaces),
 * so higher derivatives work.
 *
 * Inputs, as the constructors in ops/fast.c build them:
 *   RMSNorm    x, w            w: (D,) or a 0-d 1 when there is no weight
 *   LayerNorm  x, w, b         w: (D,) or 0-d 1; b: (D,) or 0-d 0
 *   RoPE       x, offset[, freqs]   offset int32, 0-d or (B,); freqs float32
 *   SDPA       q, k, v[, mask][, sinks]  mask broadcast to (B, Hq, qL, kL),
 *              bool or the output dtype; sinks (Hq,)
 * All inputs of a norm share its output dtype. */
#ifndef CMLX_PRIMITIVES_FAST_H
#define CMLX_PRIMITIVES_FAST_H

#include "primitives/primitive.h"

typedef struct cm_norm_params {
  float eps;
} cm_norm_params;
CM_PARAMS_ACCESSOR(cm_norm_params, cm_norm_params_of)

/* RMSNormVJP / LayerNormVJP (fast_norm_vjp.c): inputs x, w, g (w as the
 * norm's, g the cotangent); outputs dx, then dw when has_dw (w is (D,)),
 * then db when has_db (LayerNorm with a bias). */
typedef struct cm_norm_vjp_params {
  float eps;
  int32_t layer; /* LayerNorm (else RMSNorm) */
  int32_t has_dw, has_db;
} cm_norm_vjp_params;
CM_PARAMS_ACCESSOR(cm_norm_vjp_params, cm_norm_vjp_params_of)

typedef struct cm_rope_params {
  int32_t dims;
  int32_t traditional; /* pairs (2i, 2i+1) instead of (i, i + dims/2) */
  int32_t forward;     /* 0: the inverse rotation (the vjp) */
  float base;          /* unused with freqs */
  float scale;
} cm_rope_params;
CM_PARAMS_ACCESSOR(cm_rope_params, cm_rope_params_of)

typedef struct cm_sdpa_params {
  float scale;
  int32_t causal;    /* lower-right aligned: key j <= i + kL - qL */
  int32_t has_mask;  /* input 3 is the mask */
  int32_t has_sinks; /* the last input is the sinks */
} cm_sdpa_params;
CM_PARAMS_ACCESSOR(cm_sdpa_params, cm_sdpa_params_of)

extern const cm_prim cm_prim_rms_norm;
extern const cm_prim cm_prim_layer_norm;
extern const cm_prim cm_prim_rms_norm_vjp;
extern const cm_prim cm_prim_layer_norm_vjp;
extern const cm_prim cm_prim_rope;
extern const cm_prim cm_prim_sdpa;
/* SdpaVJP (fast_sdpa_vjp.c): inputs q, k, v[, mask][, sinks], dO (the
 * output's cotangent, in q's dtype); outputs dq, dk, dv. */
extern const cm_prim cm_prim_sdpa_vjp;

/* The composed gradient of attention (fast.c): MLX's formulas as a graph
 * of ops, for every input (out is unused). */
int cm_fast_sdpa_vjp_composed(cm_array *out, cm_array *const *in, int nin, const cm_sdpa_params *p,
                              cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                              cm_stream s);
/* The fused gradient: grads of q, k, v through one SdpaVJP node.  Returns
 * 1 (and builds nothing) where it does not apply: other arguments asked
 * for, empty inputs, export tracing. */
int cm_fast_sdpa_vjp_fused(cm_array *const *in, int nin, const cm_sdpa_params *p, cm_array *cotan,
                           const int *argnums, int nargs, cm_array **grads, cm_stream s);

#endif
