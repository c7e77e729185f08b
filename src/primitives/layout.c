#include "primitives/layout.h"
#include "primitives/export_desc.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

#include "ops/creation.h"
#include "ops/shape.h"
#include <stdlib.h>
#include <string.h>

static int identity_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                        cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                        cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)argnums, (void)s;
  for (int i = 0; i < nargs; i++) grads[i] = cm_retain(cotan);
  return 0;
}

static int identity_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                        cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)s;
  *tangent = cm_retain(tangents[0]);
  return 0;
}

static int identity_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                         const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node, (void)nin, (void)p, (void)s;
  *out = cm_retain(in[0]);
  *out_axis = axes[0];
  return 0;
}

/* Shapeless compile: the common shape of every input (a dynamic
 * broadcast, ops/common.h), or the traced shape if it still fits. */
static int broadcast_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                           int *ndim, int32_t *shape) {
  if (nin > 1) return cm_shape_of_broadcast(node, in, nin, p, ndim, shape);
  int nd;
  int32_t out[CM_MAX_DIMS];
  if (cm_broadcast_shapes(in[0]->ndim, in[0]->shape, node->ndim, node->shape, &nd, out) ||
      !cm_shape_equal(nd, out, node->ndim, node->shape)) {
    cm_error_clear();
    return cm_error(CM_ERR_VALUE, "[Broadcast] Unable to infer broadcast shape");
  }
  *ndim = nd;
  if (nd) memcpy(shape, out, sizeof *shape * (size_t)nd);
  return 0;
}

const cm_prim cm_prim_broadcast = {.name = "Broadcast",
                                   .export = &cm_export_broadcast,
                                   .output_shape = broadcast_shape,
                                   .moves_bytes = true,
                                   .vjp = cm_rule_broadcast_vjp,
                                   .jvp = cm_rule_broadcast_jvp,
                                   .vmap = cm_rule_broadcast_vmap};
/* ---- BroadcastAxes ---- */

/* A node without parameters: a Broadcast against other inputs (nothing
 * ignored). */
static int nignore_of(const cm_array *node) {
  return node->params ? cm_broadcast_axes_params_of(node)->nignore : 0;
}

/* MLX's BroadcastAxes::output_shape: the inputs broadcast together without
 * their last nignore axes, then the first input's last nignore axes. */
static int broadcast_axes_shape(const cm_array *node, cm_array *const *in, int nin,
                                const cm_params *p, int *ndim, int32_t *shape) {
  (void)p;
  int k = nignore_of(node), nd = 0;
  for (int i = 0; i < nin; i++) {
    if (in[i]->ndim < k)
      return cm_error(CM_ERR_VALUE, "[broadcast_arrays] Received invalid axes to ignore.");
    if (cm_broadcast_shapes(nd, shape, in[i]->ndim - k, in[i]->shape, &nd, shape)) return -1;
  }
  if (nd + k > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[broadcast] Arrays may have at most %d dimensions.",
                    CM_MAX_DIMS);
  if (k) memcpy(shape + nd, in[0]->shape + in[0]->ndim - k, sizeof *shape * (size_t)k);
  *ndim = nd + k;
  return 0;
}

/* A node like node (a BroadcastAxes, or a Broadcast) on ins (the shape
 * worked out from them). */
static cm_array *broadcast_axes_node(const cm_array *node, cm_array *const *ins, int n,
                                     cm_stream s) {
  const cm_params *p = node->params;
  int nd;
  int32_t shape[CM_MAX_DIMS];
  if (broadcast_axes_shape(node, ins, n, p, &nd, shape)) return NULL;
  if (!p) return cm_op_node(ins[0]->dtype, nd, shape, &cm_prim_broadcast, NULL, 0, ins, n, s);
  return cm_op_node(ins[0]->dtype, nd, shape, &cm_prim_broadcast_axes, p,
                    sizeof(cm_broadcast_axes_params), ins, n, s);
}

static int broadcast_axes_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)p;
  if (!tangents[0]) /* only the stop_gradient inputs moved */
    return (*tangent = cm_rule_zeros(out, cm_rule_tangent_dtype(tangents, nin), s)) ? 0 : -1;
  cm_array *ins[8], **xs = nin <= 8 ? ins : malloc(sizeof *xs * (size_t)nin);
  if (!xs) return cm_error(CM_ERR_MEMORY, "[BroadcastAxes] Out of memory.");
  xs[0] = tangents[0];
  for (int i = 1; i < nin; i++) xs[i] = in[i];
  *tangent = broadcast_axes_node(out, xs, nin, s);
  if (xs != ins) free(xs);
  return *tangent ? 0 : -1;
}

/* Every input gets its batch axis in front (a size-1 one when it has
 * none), then size-1 axes behind it up to one per-example rank; the
 * ignored trailing axes are untouched, so the node's batch is axis 0. */
static int broadcast_axes_vmap(const cm_array *node, cm_array *const *in, int nin,
                               const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                               cm_stream s) {
  (void)p;
  cm_array *st[8], **xs = nin <= 8 ? st : calloc((size_t)nin, sizeof *xs);
  if (!xs) return cm_error(CM_ERR_MEMORY, "[BroadcastAxes] Out of memory.");
  int rank = 0, rc = 0, made = 0;
  for (int i = 0; i < nin; i++) {
    int r = in[i]->ndim - (axes[i] >= 0);
    if (r > rank) rank = r;
  }
  for (; !rc && made < nin; made++) {
    int zero = 0, pe = in[made]->ndim - (axes[made] >= 0), add[CM_MAX_DIMS];
    cm_array *x = axes[made] >= 0 ? cm_moveaxis(in[made], axes[made], 0, s)
                                  : cm_expand_dims(in[made], 1, &zero, s);
    for (int j = 0; j < rank - pe; j++) add[j] = j + 1;
    xs[made] = x ? cm_expand_dims(x, rank - pe, add, s) : NULL;
    cm_release(x);
    if (!xs[made]) rc = -1;
  }
  *out = rc ? NULL : broadcast_axes_node(node, xs, nin, s);
  *out_axis = 0;
  for (int i = 0; i < made; i++) cm_release(xs[i]);
  if (xs != st) free(xs);
  return *out ? 0 : -1;
}

const cm_prim cm_prim_broadcast_axes = {.name = "BroadcastAxes",
                                        .export = &cm_export_broadcast_axes,
                                        CM_PARAMS_OF(cm_broadcast_axes_params),
                                        .output_shape = broadcast_axes_shape,
                                        .moves_bytes = true,
                                        .vjp = cm_rule_broadcast_vjp,
                                        .jvp = broadcast_axes_jvp,
                                        .vmap = broadcast_axes_vmap};
const cm_prim cm_prim_astype = {.name = "AsType",
                                .export = &cm_export_astype,
                                .output_shape = cm_shape_of_first,
                                .vjp = cm_rule_astype_vjp,
                                .jvp = cm_rule_astype_jvp,
                                .vmap = cm_rule_astype_vmap};
const cm_prim cm_prim_copy = {.name = "Copy",
                              .export = &cm_export_copy,
                              .output_shape = cm_shape_of_first,
                              .moves_bytes = true,
                              .vjp = cm_rule_copy_vjp,
                              .jvp = cm_rule_copy_jvp,
                              .vmap = cm_rule_copy_vmap};
const cm_prim cm_prim_full = {.name = "Full",
                              .export = &cm_export_full,
                              .output_shape = cm_shape_of_first,
                              .vjp = cm_rule_full_vjp,
                              .jvp = cm_rule_full_jvp,
                              .vmap = cm_rule_full_vmap};
const cm_prim cm_prim_identity = {.name = "Identity",
                                  .export = &cm_export_identity,
                                  .output_shape = cm_shape_of_first,
                                  .moves_bytes = true,
                                  .vjp = identity_vjp,
                                  .jvp = identity_jvp,
                                  .vmap = identity_vmap};

/* Cotangents of the outputs go to the inputs they pass through; the
 * dependencies get zeros, as in MLX. */
static int depends_vjp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                       const cm_params *p, cm_array *const *cotans, const int *argnums, int nargs,
                       cm_array **grads, cm_stream s) {
  (void)nin, (void)p;
  for (int k = 0; k < nargs; k++) {
    int i = argnums[k];
    if (i < nout) grads[k] = cotans[i] ? cm_retain(cotans[i]) : cm_zeros_like(outs[i], s);
    else grads[k] = cm_zeros_like(in[i], s);
    if (!grads[k]) return -1;
  }
  return 0;
}

/* No jvp or vmap rule: MLX has none for Depends either, and a missing rule
 * is an error naming the primitive. */
const cm_prim cm_prim_depends = {
    .name = "Depends", .export = &cm_export_depends, .vjp_multi = depends_vjp};
