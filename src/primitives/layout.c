#include "primitives/layout.h"
#include "primitives/rules.h"

#include "backend/cpu/layout.h"

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

const cm_prim cm_prim_broadcast = {.name = "Broadcast", .eval_cpu = cm_cpu_broadcast,
                                   .vjp = cm_rule_broadcast_vjp, .jvp = cm_rule_broadcast_jvp,
                                   .vmap = cm_rule_broadcast_vmap};
const cm_prim cm_prim_astype = {.name = "AsType", .eval_cpu = cm_cpu_copy,
                                .vjp = cm_rule_astype_vjp, .jvp = cm_rule_astype_jvp,
                                .vmap = cm_rule_astype_vmap};
const cm_prim cm_prim_copy = {.name = "Copy", .eval_cpu = cm_cpu_copy, .vjp = cm_rule_copy_vjp,
                              .jvp = cm_rule_copy_jvp, .vmap = cm_rule_copy_vmap};
const cm_prim cm_prim_full = {.name = "Full", .eval_cpu = cm_cpu_copy, .vjp = cm_rule_full_vjp,
                              .jvp = cm_rule_full_jvp, .vmap = cm_rule_full_vmap};
const cm_prim cm_prim_identity = {.name = "Identity", .eval_cpu = cm_cpu_identity,
                                   .vjp = identity_vjp, .jvp = identity_jvp, .vmap = identity_vmap};
