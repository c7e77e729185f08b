#include "primitives/unary.h"
#include "primitives/export_desc.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

/* Printed names (the Name column): MLX's primitive names where MLX has
 * the primitive; the added codes get names of the same style. */
static const char *const names[CM_UNARY_NUM_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_UNARY_##CODE] = Name,
    CM_UNARY_OPS(CM_X)
#undef CM_X
};

const char *cm_unary_op_name(cm_unary_op op) {
  return (unsigned)op < CM_UNARY_NUM_OPS && names[op] ? names[op] : "Unary";
}

static const char *op_name(const cm_params *p, size_t size) {
  return cm_unary_op_name(cm_unary_params_of_block(p, size)->op);
}

const cm_prim cm_prim_unary = {.name = "Unary",
                               .export = &cm_export_unary,
                               .output_shape = cm_shape_of_first,
                               CM_PARAMS_OF(cm_unary_params),
                               .op_name = op_name,
                               .vjp = cm_rule_unary_vjp,
                               .jvp = cm_rule_unary_jvp,
                               .vmap = cm_rule_unary_vmap};
const cm_prim cm_prim_stop_gradient = {.name = "StopGradient",
                                       .export = &cm_export_stop_gradient,
                                       .output_shape = cm_shape_of_first,
                                       .vjp = cm_rule_stop_gradient_vjp,
                                       .jvp = cm_rule_stop_gradient_jvp,
                                       .vmap = cm_rule_stop_gradient_vmap};
