/* The quantization primitives: descriptors and transform rules (see
 * primitives/quantized.h).  As in MLX:
 *   - QuantizedMatmul: vjp for x (the product with the other transpose),
 *     for affine scales and biases (from the outer product cotan^T x, one
 *     sum per group); the packed weights have none (RuntimeError), fp-mode
 *     scales neither (ValueError).  jvp for x only.  No vmap (MLX's NYI).
 *   - GatherQMM: the same vjp, scattered back through the indices.
 *   - Dequantize: vjp and jvp for affine scales and biases, vmap (MLX's
 *     CPU build composes it of ops, which have both).
 *   - Quantize, FpQuantize, ConvertFP8: no rules (an error naming them). */
#include "primitives/quantized.h"
#include "primitives/export_desc.h"

#include <string.h>

#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/matmul.h"
#include "ops/ops.h"
#include "ops/quantized.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "primitives/rules_util.h"

static const char *mode_str(const cm_quant_params *p) {
  static const char *names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
  return names[p->mode];
}

static void clear(cm_array **g, int n) {
  for (int i = 0; i < n; i++) cm_release(g[i]), g[i] = NULL;
}

/* sum over each group of the last axis: dsb (..., G*gs) -> (..., G) */
static cm_array *group_sum(cm_rt *t, cm_array *x, int gs, cm_stream s) {
  int32_t sh[2] = {-1, gs};
  cm_array *u = RT(t, cm_unflatten(x, -1, 2, sh, s));
  return RT(t, cm_sum(u, CM_AXIS(-1), false, s));
}

/* The gradients of scales (with the codes of w) and biases from dw, the
 * cotangent of the dequantized weights (w's shape, unpacked). */
static int scale_bias_grads(cm_array *dw, cm_array *w, cm_array *scales, cm_array *biases,
                            const cm_quant_params *p, int arg, cm_array **g, cm_stream s) {
  cm_rt t = {.n = 0};
  cm_array *r;
  if (arg == 3) {
    r = group_sum(&t, dw, p->group_size, s);
  } else {
    cm_array *one = RT(&t, cm_ones_like(scales, s)), *zero = RT(&t, cm_zeros_like(biases, s));
    cm_array *q =
        RT(&t, cm_dequantize(w, one, zero, p->group_size, p->bits, "affine", NULL, dw->dtype, s));
    r = group_sum(&t, RT(&t, cm_multiply(dw, q, s)), p->group_size, s);
  }
  cm_array *target = arg == 3 ? biases : scales;
  r = RT(&t, cm_astype(r, target->dtype, s));
  return cm_rt_done(&t, r, g);
}

static int no_scales_grad(const char *prim, const cm_quant_params *p) {
  return cm_error(CM_ERR_VALUE, "[%s::vjp] no gradient wrt scales in %s quantization.", prim,
                  mode_str(p));
}

/* ---- QuantizedMatmul ---- */

static int qmm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                   cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)pp;
  const cm_quant_params *p = cm_quant_params_of(out);
  bool affine = p->mode == CM_QMODE_AFFINE;
  cm_array *biases = affine ? in[3] : NULL, *dw = NULL;
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    int a = argnums[i];
    if (a == 0) {
      grads[i] = cm_quantized_matmul(cotan, in[1], in[2], biases, !p->transpose, p->group_size,
                                     p->bits, mode_str(p), s);
    } else if (a == 1) {
      cm_error(CM_ERR_RUNTIME, "[QuantizedMatmul::vjp] no gradient wrt the quantized weights.");
    } else if (!affine) {
      no_scales_grad("QuantizedMatmul", p);
    } else {
      if (!dw) {
        cm_rt t = {.n = 0};
        int nd = in[1]->ndim;
        cm_array *fc = RT(&t, cm_flatten(cotan, 0, -nd, s));
        cm_array *fx = RT(&t, cm_flatten(in[0], 0, -nd, s));
        cm_array *l = RT(&t, cm_swapaxes(p->transpose ? fc : fx, -1, -2, s));
        cm_array *d = RT(&t, cm_matmul(l, p->transpose ? fx : fc, s));
        cm_rt_done(&t, d, &dw);
      }
      if (dw) scale_bias_grads(dw, in[1], in[2], biases, p, a, &grads[i], s);
    }
    if (!grads[i]) {
      cm_release(dw);
      return clear(grads, nargs), -1;
    }
  }
  cm_release(dw);
  return 0;
}

static int qmm_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                   cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)pp;
  const cm_quant_params *p = cm_quant_params_of(out);
  for (int i = 1; i < nin; i++)
    if (tangents[i])
      return cm_error(CM_ERR_RUNTIME,
                      "[QuantizedMatmul::jvp] No JVP wrt the quantized matrix yet.");
  *tangent =
      cm_quantized_matmul(tangents[0], in[1], in[2], p->mode == CM_QMODE_AFFINE ? in[3] : NULL,
                          p->transpose, p->group_size, p->bits, mode_str(p), s);
  return *tangent ? 0 : -1;
}

/* ---- GatherQMM ---- */

/* The cotangent of x: the product of cotan with the other transpose,
 * added back into the x matrices the lhs indices chose. */
static cm_array *gqmm_dx(cm_array *const *in, int nin, const cm_quant_params *p, cm_array *cotan,
                         cm_stream s) {
  bool affine = p->mode == CM_QMODE_AFFINE;
  cm_array *x = in[0], *lhs = in[nin - 2], *rhs = in[nin - 1];
  int64_t M = cotan->shape[cotan->ndim - 2], K = x->shape[x->ndim - 1];
  cm_rt t = {.n = 0};
  cm_array *g =
      RT(&t, cm_gather_qmm(cotan, in[1], in[2], affine ? in[3] : NULL, NULL, rhs, !p->transpose,
                           p->group_size, p->bits, mode_str(p), p->sorted, s));
  cm_array *r = g;
  if (!(p->sorted && rhs->size * M * K == x->size)) {
    cm_array *z = RT(&t, cm_zeros_like(x, s));
    cm_array *zf = RT(&t, cm_flatten(z, 0, -3, s));
    int ax = -3, axis0 = 0;
    cm_array *u = RT(&t, cm_expand_dims(g, 1, &ax, s));
    cm_array *sc = t.fail ? NULL : RT(&t, cm_scatter(zf, &lhs, 1, u, &axis0, 1, CM_SCATTER_SUM, s));
    r = RT(&t, cm_reshape(sc, x->ndim, x->shape, s));
  }
  cm_array *res;
  return cm_rt_done(&t, r, &res) ? NULL : res;
}

/* The cotangent of the dequantized weights, per W matrix: the outer
 * products of cotan and the gathered x, added into the matrices the rhs
 * indices chose (w's batch shape, unpacked). */
static cm_array *gqmm_dw(cm_array *const *in, int nin, const cm_quant_params *p, cm_array *cotan,
                         int32_t cols, cm_stream s) {
  cm_array *x = in[0], *w = in[1], *lhs = in[nin - 2], *rhs = in[nin - 1];
  cm_rt t = {.n = 0};
  int axis0 = 0, ax = -3;
  cm_array *xf = RT(&t, cm_flatten(x, 0, -3, s));
  cm_array *xg = RT(&t, cm_take(xf, lhs, 0, s));
  cm_array *l = RT(&t, cm_swapaxes(p->transpose ? cotan : xg, -1, -2, s));
  cm_array *d = RT(&t, cm_matmul(l, p->transpose ? xg : cotan, s));
  int nb = w->ndim - 2;
  int32_t sh[CM_MAX_DIMS];
  sh[0] = (int32_t)cm_shape_size(nb, w->shape);
  sh[1] = w->shape[nb], sh[2] = cols;
  cm_array *z = t.fail ? NULL : RT(&t, cm_zeros(3, sh, d->dtype, s));
  cm_array *u = RT(&t, cm_expand_dims(d, 1, &ax, s));
  cm_array *sc = t.fail ? NULL : RT(&t, cm_scatter(z, &rhs, 1, u, &axis0, 1, CM_SCATTER_SUM, s));
  memcpy(sh, w->shape, sizeof(int32_t) * (size_t)(nb + 1));
  sh[nb + 1] = cols;
  cm_array *r = RT(&t, cm_reshape(sc, nb + 2, sh, s)), *res;
  return cm_rt_done(&t, r, &res) ? NULL : res;
}

static int gqmm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)pp;
  const cm_quant_params *p = cm_quant_params_of(out);
  bool affine = p->mode == CM_QMODE_AFFINE;
  cm_array *dw = NULL;
  int32_t cols = (int32_t)((int64_t)in[1]->shape[in[1]->ndim - 1] * 32 / p->bits);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    int a = argnums[i];
    if (a == 0) {
      grads[i] = gqmm_dx(in, nin, p, cotan, s);
    } else if (a >= nin - 2) {
      cm_error(CM_ERR_RUNTIME, "[GatherQMM::vjp] cannot compute the gradient wrt the indices.");
    } else if (a == 1) {
      cm_error(CM_ERR_RUNTIME, "[GatherQMM::vjp] no gradient wrt the quantized weights.");
    } else if (!affine) {
      no_scales_grad("GatherQMM", p);
    } else {
      if (!dw) dw = gqmm_dw(in, nin, p, cotan, cols, s);
      if (dw) scale_bias_grads(dw, in[1], in[2], in[3], p, a, &grads[i], s);
    }
    if (!grads[i]) {
      cm_release(dw);
      return clear(grads, nargs), -1;
    }
  }
  cm_release(dw);
  return 0;
}

/* ---- Dequantize ---- */

static int dq_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp, cm_array *cotan,
                  const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)pp;
  const cm_quant_params *p = cm_quant_params_of(out);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    int a = argnums[i];
    if (a == 0)
      cm_error(CM_ERR_RUNTIME, "[Dequantize::vjp] no gradient wrt the quantized weights.");
    else if (p->mode != CM_QMODE_AFFINE) no_scales_grad("Dequantize", p);
    else scale_bias_grads(cotan, in[0], in[1], in[2], p, a == 2 ? 3 : 2, &grads[i], s);
    if (!grads[i]) return clear(grads, nargs), -1;
  }
  return 0;
}

/* Dequantize is linear in (scales, biases): the tangent is the codes
 * dequantized with the tangents as scales and biases. */
static int dq_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp,
                  cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)pp;
  const cm_quant_params *p = cm_quant_params_of(out);
  if (tangents[0])
    return cm_error(CM_ERR_RUNTIME, "[Dequantize::jvp] no derivative wrt the quantized weights.");
  if (p->mode != CM_QMODE_AFFINE) return no_scales_grad("Dequantize", p);
  (void)nin;
  cm_rt t = {.n = 0};
  cm_array *ts = tangents[1] ? tangents[1] : RT(&t, cm_zeros_like(in[1], s));
  cm_array *tb = tangents[2] ? tangents[2] : RT(&t, cm_zeros_like(in[2], s));
  cm_array *r = t.fail ? NULL
                       : RT(&t, cm_dequantize(in[0], ts, tb, p->group_size, p->bits, "affine", NULL,
                                              out->dtype, s));
  return cm_rt_done(&t, r, tangent);
}

/* Batching: every operand gets the batch on axis 0 (unbatched ones are
 * broadcast along it), then dequantize the stack. */
static int dq_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *pp,
                   const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)pp;
  const cm_quant_params *p = cm_quant_params_of(node);
  int32_t B = 0;
  for (int i = 0; i < nin; i++)
    if (axes[i] >= 0) B = in[i]->shape[axes[i]];
  if (p->has_global && axes[nin - 1] >= 0)
    return cm_error(CM_ERR_NOT_IMPLEMENTED,
                    "[Dequantize::vmap] a batched global scale is not supported in cmlx.");
  cm_rt t = {.n = 0};
  cm_array *x[3] = {NULL, NULL, NULL};
  int nq = p->mode == CM_QMODE_AFFINE ? 3 : 2; /* the operands that carry the matrix */
  for (int i = 0; i < nq; i++) {
    if (axes[i] >= 0) {
      x[i] = RT(&t, cm_moveaxis(in[i], axes[i], 0, s));
      continue;
    }
    int zero = 0;
    cm_array *e = RT(&t, cm_expand_dims(in[i], 1, &zero, s));
    int32_t sh[CM_MAX_DIMS];
    sh[0] = B;
    if (e) memcpy(sh + 1, in[i]->shape, sizeof(int32_t) * (size_t)in[i]->ndim);
    x[i] = e ? RT(&t, cm_broadcast_to(e, in[i]->ndim + 1, sh, s)) : NULL;
  }
  const char *mode = mode_str(p);
  cm_array *g = p->has_global ? in[nin - 1] : NULL;
  cm_array *r = t.fail ? NULL
                       : RT(&t, cm_dequantize(x[0], x[1], x[2], p->group_size, p->bits, mode, g,
                                              node->dtype, s));
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

/* ---- shapeless compile: MLX's output_shapes ---- */

static int32_t w_outer(const cm_array *w, const cm_quant_params *p) {
  return p->transpose ? w->shape[w->ndim - 2]
                      : (int32_t)((int64_t)w->shape[w->ndim - 1] * 32 / p->bits);
}

static int qmm_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *pp,
                     int *ndim, int32_t *shape) {
  (void)nin, (void)pp;
  const cm_array *x = in[0];
  *ndim = x->ndim;
  memcpy(shape, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  shape[x->ndim - 1] = w_outer(in[1], cm_quant_params_of(node));
  return 0;
}

static int gqmm_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *pp,
                      int *ndim, int32_t *shape) {
  (void)pp;
  const cm_array *idx = in[nin - 2], *x = in[0];
  if (idx->ndim + 2 > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[GatherQMM] Too many dims.");
  *ndim = idx->ndim + 2;
  memcpy(shape, idx->shape, sizeof(int32_t) * (size_t)idx->ndim);
  shape[idx->ndim] = x->shape[x->ndim - 2];
  shape[idx->ndim + 1] = w_outer(in[1], cm_quant_params_of(node));
  return 0;
}

const cm_prim cm_prim_quantize = {
    .name = "Quantize",
    .export = &cm_export_quantize,
    CM_PARAMS_OF(cm_quant_params),
};

const cm_prim cm_prim_fp_quantize = {
    .name = "FpQuantize",
    .export = &cm_export_fp_quantize,
    CM_PARAMS_OF(cm_quant_params),
};

const cm_prim cm_prim_dequantize = {
    .name = "Dequantize",
    .export = &cm_export_dequantize,
    CM_PARAMS_OF(cm_quant_params),
    .vjp = dq_vjp,
    .jvp = dq_jvp,
    .vmap = dq_vmap,
};

const cm_prim cm_prim_quantized_matmul = {
    .name = "QuantizedMatmul",
    .export = &cm_export_quantized_matmul,
    CM_PARAMS_OF(cm_quant_params),
    .output_shape = qmm_shape,
    .vjp = qmm_vjp,
    .jvp = qmm_jvp,
};

const cm_prim cm_prim_gather_qmm = {
    .name = "GatherQMM",
    .export = &cm_export_gather_qmm,
    CM_PARAMS_OF(cm_quant_params),
    .output_shape = gqmm_shape,
    .vjp = gqmm_vjp,
};

const cm_prim cm_prim_convert_fp8 = {
    .name = "ConvertFP8",
    .export = &cm_export_convert_fp8,
    CM_PARAMS_OF(cm_quant_params),
};
