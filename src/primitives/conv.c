/* Convolution: descriptor and transform rules (see primitives/conv.h).
 *
 * The rules build Convolution nodes straight from a parameter block
 * (cm_conv_from_params), not through conv_general: their paddings can be
 * negative, which the kernel reads as cropping the dilated input (taps
 * outside it are zeros), exactly what the derivative needs whatever the
 * input dilation.  MLX's public op instead crops whole input elements, so
 * conv_general keeps its checks for users.
 *
 * Derivatives (MLX's Convolution::vjp), per spatial axis with
 * Kd = 1 + kdil (K - 1), Sd = 1 + idil (S - 1) and Yd = 1 + stride (Y - 1):
 * - input: the cotangent convolved with the weight (in and out channels
 *   swapped per group), flip toggled, stride idil, input dilation stride,
 *   padding Kd - 1 - lo below and Sd - Yd + lo above;
 * - weight: the input with batch and channels swapped (channels per group)
 *   convolved with the cotangent seen the same way, stride kdil, kernel
 *   dilation stride, padding lo below and Yd - Sd + Kd - 1 - lo above; the
 *   spatial axes reversed when flip is set, then the axes swapped back.
 * Both are linear in each input, so the jvp is the sum of the two
 * convolutions with one tangent each. */
#include "primitives/conv.h"
#include "primitives/export_desc.h"

#include <string.h>

#include "ops/binary.h"
#include "ops/conv.h"
#include "ops/shape.h"
#include "primitives/rules_util.h"

size_t cm_conv_params_size(const cm_params *p) {
  int32_t n = cm_conv_params_of_block(p, cm_prim_conv.params_size)->ndim;
  if (n < 1 || n > CM_CONV_MAX_SPATIAL) return SIZE_MAX;
  return offsetof(cm_conv_params, ax) + sizeof(cm_conv_axis) * (size_t)n;
}

cm_conv_params cm_conv_params_copy(const cm_conv_params *p) {
  cm_conv_params q;
  memset(&q, 0, sizeof q);
  size_t n = cm_conv_params_size((const cm_params *)(const void *)p);
  memcpy(&q, p, n <= sizeof q ? n : offsetof(cm_conv_params, ax));
  return q;
}

static int64_t dilated(int64_t len, int64_t dil) { return 1 + dil * (len - 1); }

int64_t cm_conv_out_len(int64_t in_len, int64_t k_len, const cm_conv_axis *a) {
  int64_t span = dilated(in_len, a->idil) + a->pad_lo + a->pad_hi - dilated(k_len, a->kdil);
  return span / a->stride + 1; /* truncation, as MLX's (a short input can give 1) */
}

/* (a group's channels first) x with axis `at` split into (groups, rest)
 * and axes a, b swapped, then the split axes merged again; groups == 1:
 * axes 0 and -1 swapped. */
static cm_array *group_transpose(cm_rt *t, cm_array *x, int groups, int at, int a, int b,
                                 cm_stream s) {
  if (groups == 1) return RT(t, cm_swapaxes(x, 0, -1, s));
  int32_t split[2] = {groups, -1};
  if (at < 0) at += x->ndim;
  cm_array *u = RT(t, cm_unflatten(x, at, 2, split, s));
  cm_array *w = RT(t, cm_swapaxes(u, a, b, s));
  return RT(t, cm_flatten(w, at, at + 1, s));
}

static int conv_vjp_input(const cm_conv_params *p, cm_array *in, cm_array *wt, cm_array *cotan,
                          cm_array **grad, cm_stream s) {
  cm_rt t = {0};
  cm_conv_params q = cm_conv_params_copy(p);
  q.flip = !p->flip;
  for (int i = 0; i < p->ndim; i++) {
    const cm_conv_axis *a = &p->ax[i];
    int64_t kd = dilated(wt->shape[i + 1], a->kdil), sd = dilated(in->shape[i + 1], a->idil);
    int64_t yd = dilated(cotan->shape[i + 1], a->stride);
    int32_t lo, hi;
    if (cm_shape_dim("conv", kd - 1 - a->pad_lo, &lo) ||
        cm_shape_dim("conv", sd - yd + a->pad_lo, &hi))
      return -1;
    q.ax[i] = (cm_conv_axis){a->idil, lo, hi, a->kdil, a->stride};
  }
  cm_array *w = group_transpose(&t, wt, p->groups, 0, 1, -1, s);
  cm_array *g = RT(&t, cm_conv_from_params(cotan, w, &q, s));
  return cm_rt_done(&t, g, grad);
}

/* The weight gradient: one node of kind CM_CONV_WEIGHT_GRAD. */
static int conv_vjp_weight(const cm_conv_params *p, cm_array *in, cm_array *wt, cm_array *cotan,
                           cm_array **grad, cm_stream s) {
  cm_array *g = cm_conv_weight_grad(in, cotan, wt->shape + 1, p, s);
  *grad = g;
  return g ? 0 : -1;
}

static int conv_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)p;
  const cm_conv_params *cp = cm_conv_params_of(out);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  bool wgrad = cp->kind == CM_CONV_WEIGHT_GRAD;
  for (int i = 0; i < nargs; i++) {
    int rc;
    if (!wgrad)
      rc = argnums[i] == 0 ? conv_vjp_input(cp, in[0], in[1], cotan, &grads[i], s)
                           : conv_vjp_weight(cp, in[0], in[1], cotan, &grads[i], s);
    else if (argnums[i] == 0) /* <G, dW(x, c)> = <conv(x, G), c>: x's gradient */
      rc = conv_vjp_input(cp, in[0], cotan, in[1], &grads[i], s);
    else /* and the cotangent's */
      rc = (grads[i] = cm_conv_from_params(in[0], cotan, cp, s)) ? 0 : -1;
    if (rc) {
      for (int j = 0; j < i; j++) cm_release(grads[j]), grads[j] = NULL;
      return -1;
    }
  }
  return 0;
}

/* The node's function of its two inputs (linear in each). */
static cm_array *bilinear(const cm_conv_params *p, cm_array *x, cm_array *b, const cm_array *node,
                          cm_stream s) {
  if (p->kind == CM_CONV_WEIGHT_GRAD) return cm_conv_weight_grad(x, b, node->shape + 1, p, s);
  return cm_conv_from_params(x, b, p, s);
}

static int conv_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  const cm_conv_params *cp = cm_conv_params_of(out);
  cm_rt t = {0};
  cm_array *a = tangents[0] ? RT(&t, bilinear(cp, tangents[0], in[1], out, s)) : NULL;
  cm_array *b = tangents[1] ? RT(&t, bilinear(cp, in[0], tangents[1], out, s)) : NULL;
  cm_array *r = a && b ? RT(&t, cm_add(a, b, s)) : (a ? a : b);
  return cm_rt_done(&t, r, tangent);
}

/* Batching (MLX's Convolution::vmap): a batched input joins the batch
 * axis N; a batched weight joins the output channels (group by group, so
 * that every output channel keeps its group); both batched make a grouped
 * convolution with groups * B groups. */
/* The weight gradient batched: the batch becomes groups (as both
 * operands batched do for the forward), an unbatched operand broadcast
 * along it first. */
static int wgrad_vmap(const cm_array *node, cm_array *const *in, const cm_conv_params *cp,
                      const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  cm_rt t = {0};
  int32_t B = axes[0] >= 0 ? in[0]->shape[axes[0]] : in[1]->shape[axes[1]];
  cm_array *m[2];
  for (int i = 0; i < 2; i++) {
    cm_array *x = in[i];
    if (axes[i] >= 0) {
      m[i] = RT(&t, cm_moveaxis(x, axes[i], -2, s));
    } else {
      int32_t shape[CM_CONV_MAX_SPATIAL + 3];
      memcpy(shape, x->shape, sizeof(int32_t) * (size_t)(x->ndim - 1));
      shape[x->ndim - 1] = B;
      shape[x->ndim] = x->shape[x->ndim - 1];
      m[i] = RT(
          &t, cm_broadcast_to(RT(&t, cm_expand_dims(x, 1, (int[]){-2}, s)), x->ndim + 1, shape, s));
    }
    m[i] = RT(&t, cm_flatten(m[i], -2, -1, s));
  }
  cm_conv_params q = cm_conv_params_copy(cp);
  q.groups = cp->groups * B;
  cm_array *g = RT(&t, cm_conv_weight_grad(m[0], m[1], node->shape + 1, &q, s));
  int32_t bo[2] = {B, node->shape[0]};
  cm_array *r = RT(&t, cm_unflatten(g, 0, 2, bo, s));
  *out_axis = 0;
  return cm_rt_done(&t, r, out);
}

static int conv_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  const cm_conv_params *cp = cm_conv_params_of(node);
  if (cp->kind == CM_CONV_WEIGHT_GRAD) return wgrad_vmap(node, in, cp, axes, out, out_axis, s);
  cm_conv_params q = cm_conv_params_copy(cp);
  cm_rt t = {0};
  cm_array *x = in[0], *w = in[1], *r = NULL;
  int G = cp->groups;
  if (axes[0] >= 0 && axes[1] < 0) {
    cm_array *xb = RT(&t, cm_moveaxis(x, axes[0], 0, s));
    int32_t bn[2] = {xb ? xb->shape[0] : 0, xb ? xb->shape[1] : 0};
    cm_array *o = RT(&t, cm_conv_from_params(RT(&t, cm_flatten(xb, 0, 1, s)), w, cp, s));
    r = RT(&t, cm_unflatten(o, 0, 2, bn, s));
    *out_axis = 0;
  } else if (axes[0] < 0) {
    /* (B, O, ...) -> (G, B, O / G, ...) -> (G * B * O / G, ...) */
    cm_array *wb = RT(&t, cm_moveaxis(w, axes[1], 0, s));
    int32_t B = wb ? wb->shape[0] : 0, O = wb ? wb->shape[1] : 0;
    int32_t gsplit[2] = {G, O / G}, back[3] = {G, B, O / G};
    cm_array *wg = RT(&t, cm_unflatten(wb, 1, 2, gsplit, s));
    cm_array *wf = RT(&t, cm_flatten(RT(&t, cm_swapaxes(wg, 0, 1, s)), 0, 2, s));
    cm_array *o = RT(&t, cm_conv_from_params(x, wf, cp, s));
    cm_array *ou = RT(&t, cm_unflatten(o, -1, 3, back, s));
    r = RT(&t, cm_flatten(RT(&t, cm_swapaxes(ou, -3, -2, s)), -2, -1, s));
    *out_axis = r ? r->ndim - 2 : 0;
  } else {
    cm_array *xb = RT(&t, cm_flatten(RT(&t, cm_moveaxis(x, axes[0], -2, s)), -2, -1, s));
    cm_array *wb = RT(&t, cm_moveaxis(w, axes[1], 0, s));
    int32_t bo[2] = {wb ? wb->shape[0] : 0, wb ? wb->shape[1] : 0};
    q.groups = G * bo[0];
    cm_array *o = RT(&t, cm_conv_from_params(xb, RT(&t, cm_flatten(wb, 0, 1, s)), &q, s));
    r = RT(&t, cm_unflatten(o, -1, 2, bo, s));
    *out_axis = r ? r->ndim - 2 : 0;
  }
  return cm_rt_done(&t, r, out);
}

static const char *conv_name(const cm_params *p, size_t size) {
  (void)p, (void)size;
  return "Convolution";
}

const cm_prim cm_prim_conv = {
    .name = "Convolution",
    .export = &cm_export_conv,
    .op_name = conv_name,
    CM_PARAMS_OF_VAR(cm_conv_params, ax),
    .params_extent = cm_conv_params_size,
    .vjp = conv_vjp,
    .jvp = conv_jvp,
    .vmap = conv_vmap,
};
