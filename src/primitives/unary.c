#include "primitives/unary.h"
#include "primitives/rules.h"

#include "backend/cpu/unary.h"

/* Printed names follow MLX's primitive names where MLX has the primitive;
 * the added codes get names of the same style. */
static const char *const names[CM_UNARY_NUM_OPS] = {
    [CM_UNARY_ABS] = "Abs",
    [CM_UNARY_NEGATIVE] = "Negative",
    [CM_UNARY_SIGN] = "Sign",
    [CM_UNARY_SQUARE] = "Square",
    [CM_UNARY_SQRT] = "Sqrt",
    [CM_UNARY_RSQRT] = "Rsqrt",
    [CM_UNARY_RECIPROCAL] = "Reciprocal",
    [CM_UNARY_EXP] = "Exp",
    [CM_UNARY_EXPM1] = "Expm1",
    [CM_UNARY_LOG] = "Log",
    [CM_UNARY_LOG2] = "Log2",
    [CM_UNARY_LOG10] = "Log10",
    [CM_UNARY_LOG1P] = "Log1p",
    [CM_UNARY_SIN] = "Sin",
    [CM_UNARY_COS] = "Cos",
    [CM_UNARY_TAN] = "Tan",
    [CM_UNARY_ARCSIN] = "ArcSin",
    [CM_UNARY_ARCCOS] = "ArcCos",
    [CM_UNARY_ARCTAN] = "ArcTan",
    [CM_UNARY_SINH] = "Sinh",
    [CM_UNARY_COSH] = "Cosh",
    [CM_UNARY_TANH] = "Tanh",
    [CM_UNARY_ARCSINH] = "ArcSinh",
    [CM_UNARY_ARCCOSH] = "ArcCosh",
    [CM_UNARY_ARCTANH] = "ArcTanh",
    [CM_UNARY_SIGMOID] = "Sigmoid",
    [CM_UNARY_ERF] = "Erf",
    [CM_UNARY_ERFINV] = "ErfInv",
    [CM_UNARY_FLOOR] = "Floor",
    [CM_UNARY_CEIL] = "Ceil",
    [CM_UNARY_ROUND] = "Round",
    [CM_UNARY_ISNAN] = "IsNaN",
    [CM_UNARY_ISINF] = "IsInf",
    [CM_UNARY_ISPOSINF] = "IsPosInf",
    [CM_UNARY_ISNEGINF] = "IsNegInf",
    [CM_UNARY_LOGICAL_NOT] = "LogicalNot",
    [CM_UNARY_BITWISE_INVERT] = "BitwiseInvert",
    [CM_UNARY_REAL] = "Real",
    [CM_UNARY_IMAG] = "Imag",
    [CM_UNARY_CONJ] = "Conjugate",
    [CM_UNARY_ISFINITE] = "IsFinite",
    [CM_UNARY_DEGREES] = "Degrees",
    [CM_UNARY_RADIANS] = "Radians",
    [CM_UNARY_ROUND_DECIMALS] = "Round",
    [CM_UNARY_NAN_TO_NUM] = "NanToNum",
};

const char *cm_unary_op_name(cm_unary_op op) {
  return (unsigned)op < CM_UNARY_NUM_OPS && names[op] ? names[op] : "Unary";
}

static const char *op_name(const cm_params *p) {
  return cm_unary_op_name(((const cm_unary_params *)p)->op);
}

const cm_prim cm_prim_unary = {.name = "Unary", .params_size = sizeof(cm_unary_params), .op_name = op_name, .eval_cpu = cm_cpu_unary, .vjp = cm_rule_unary_vjp, .jvp = cm_rule_unary_jvp, .vmap = cm_rule_unary_vmap};
const cm_prim cm_prim_stop_gradient = {.name = "StopGradient", .eval_cpu = cm_cpu_stop_gradient, .vjp = cm_rule_stop_gradient_vjp, .jvp = cm_rule_stop_gradient_jvp, .vmap = cm_rule_stop_gradient_vmap};
