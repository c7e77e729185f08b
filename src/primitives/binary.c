#include "primitives/binary.h"
#include "primitives/rules.h"

#include "backend/cpu/binary.h"

/* MLX's printed names (mx.export_to_dot labels). */
static const char *const names[CM_BINARY_NUM_OPS] = {
    [CM_BINARY_ADD] = "Add",
    [CM_BINARY_SUBTRACT] = "Subtract",
    [CM_BINARY_MULTIPLY] = "Multiply",
    [CM_BINARY_DIVIDE] = "Divide",
    [CM_BINARY_FLOOR_DIVIDE] = "FloorDivide",
    [CM_BINARY_REMAINDER] = "Remainder",
    [CM_BINARY_POWER] = "Power",
    [CM_BINARY_MAXIMUM] = "Maximum",
    [CM_BINARY_MINIMUM] = "Minimum",
    [CM_BINARY_ARCTAN2] = "ArcTan2",
    [CM_BINARY_LOGADDEXP] = "LogAddExp",
    [CM_BINARY_EQUAL] = "Equal",
    [CM_BINARY_NOT_EQUAL] = "NotEqual",
    [CM_BINARY_LESS] = "Less",
    [CM_BINARY_LESS_EQUAL] = "LessEqual",
    [CM_BINARY_GREATER] = "Greater",
    [CM_BINARY_GREATER_EQUAL] = "GreaterEqual",
    [CM_BINARY_LOGICAL_AND] = "LogicalAnd",
    [CM_BINARY_LOGICAL_OR] = "LogicalOr",
    [CM_BINARY_LOGICAL_XOR] = "LogicalXor", /* the op builds NotEqual, as MLX */
    [CM_BINARY_BITWISE_AND] = "BitwiseAnd",
    [CM_BINARY_BITWISE_OR] = "BitwiseOr",
    [CM_BINARY_BITWISE_XOR] = "BitwiseXor",
    [CM_BINARY_LEFT_SHIFT] = "LeftShift",
    [CM_BINARY_RIGHT_SHIFT] = "RightShift",
};

const char *cm_binary_op_name(cm_binary_op op) {
  return (unsigned)op < CM_BINARY_NUM_OPS ? names[op] : "Binary";
}

static const char *op_name(const cm_params *p) {
  return cm_binary_op_name(((const cm_binary_params *)p)->op);
}

const cm_prim cm_prim_binary = {.name = "Binary", .params_size = sizeof(cm_binary_params), .op_name = op_name, .eval_cpu = cm_cpu_binary, .vjp = cm_rule_binary_vjp, .jvp = cm_rule_binary_jvp, .vmap = cm_rule_binary_vmap};
