#include "primitives/binary.h"
#include "primitives/export_desc.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

/* MLX's printed names (mx.export_to_dot labels); logical_xor's code never
 * reaches a node (the op builds NotEqual, as MLX). */
static const char *const names[CM_BINARY_NUM_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_BINARY_##CODE] = Name,
    CM_BINARY_OPS(CM_X)
#undef CM_X
};

const char *cm_binary_op_name(cm_binary_op op) {
  return (unsigned)op < CM_BINARY_NUM_OPS ? names[op] : "Binary";
}

static const char *op_name(const cm_params *p, size_t size) {
  return cm_binary_op_name(cm_binary_params_of_block(p, size)->op);
}

const cm_prim cm_prim_binary = {.name = "Binary",
                                .export = &cm_export_binary,
                                .output_shape = cm_shape_of_broadcast,
                                CM_PARAMS_OF(cm_binary_params),
                                .op_name = op_name,
                                .vjp = cm_rule_binary_vjp,
                                .jvp = cm_rule_binary_jvp,
                                .vmap = cm_rule_binary_vmap};
