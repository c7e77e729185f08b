/* What the norms' rules (fast.c) and their fused gradient's rules
 * (fast_norm_vjp.c) share. */
#ifndef CMLX_PRIMITIVES_FAST_NORM_H
#define CMLX_PRIMITIVES_FAST_NORM_H

#include "primitives/fast.h"
#include "primitives/rules_util.h"

/* In x's dtype: *n = rsqrt(var + eps) and *xc = x - mean (x itself for
 * RMSNorm, whose var is mean(x^2)), over the last axis, kept in t. */
void cm_norm_stats(cm_rt *t, cm_array *x, float eps, bool layer, cm_array **xc, cm_array **n,
                   cm_stream s);

/* The vjp of RMSNorm (nin 2: x, w) or LayerNorm (nin 3: x, w, b) for the
 * cotangent g: the fused node where the dtypes allow, else MLX's
 * composition of ops. */
int cm_norm_vjp_grads(cm_array *const *in, int nin, float eps, cm_array *g, const int *argnums,
                      int nargs, cm_array **grads, cm_stream s);

/* From fast.c's vmap rules: a with its batch axis ax moved first (ax < 0:
 * broadcast to V first), and a batched (V, D) weight shaped (V, 1, ..., D)
 * for rank nd. */
cm_array *cm_fast_batch_front(cm_array *a, int ax, int V, cm_stream s);
cm_array *cm_fast_vec_for(cm_array *w, int ax, int nd, cm_stream s);

#endif
