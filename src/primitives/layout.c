#include "primitives/layout.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

#include "backend/cpu/layout.h"
#include "ops/creation.h"
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
                                   .output_shape = broadcast_shape,
                                   .moves_bytes = true,
                                   .eval_cpu = cm_cpu_broadcast,
                                   .vjp = cm_rule_broadcast_vjp,
                                   .jvp = cm_rule_broadcast_jvp,
                                   .vmap = cm_rule_broadcast_vmap};
const cm_prim cm_prim_astype = {.name = "AsType",
                                .output_shape = cm_shape_of_first,
                                .eval_cpu = cm_cpu_copy,
                                .vjp = cm_rule_astype_vjp,
                                .jvp = cm_rule_astype_jvp,
                                .vmap = cm_rule_astype_vmap};
const cm_prim cm_prim_copy = {.name = "Copy",
                              .output_shape = cm_shape_of_first,
                              .moves_bytes = true,
                              .eval_cpu = cm_cpu_copy,
                              .vjp = cm_rule_copy_vjp,
                              .jvp = cm_rule_copy_jvp,
                              .vmap = cm_rule_copy_vmap};
const cm_prim cm_prim_full = {.name = "Full",
                              .eval_cpu = cm_cpu_copy,
                              .vjp = cm_rule_full_vjp,
                              .jvp = cm_rule_full_jvp,
                              .vmap = cm_rule_full_vmap};
const cm_prim cm_prim_identity = {.name = "Identity",
                                  .moves_bytes = true,
                                  .eval_cpu = cm_cpu_identity,
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
    .name = "Depends", .eval_cpu = cm_cpu_depends, .vjp_multi = depends_vjp};
