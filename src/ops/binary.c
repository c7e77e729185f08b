/* Binary op constructors: decide the compute and output dtypes the way MLX
 * 0.32 does (checked pair by pair against it), cast and broadcast the
 * inputs to them, and build one Binary node. */
#include "ops/binary.h"

#include "primitives/binary.h"
#include "primitives/divmod.h"

/* Python-level names, for error messages. */
static const char *const op_names[CM_BINARY_NUM_OPS] = {
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "maximum",
    "minimum", "arctan2", "logaddexp", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift"};

static bool bits_ok(cm_dtype t) { return t == CM_BOOL || cm_dtype_is_integral(t); }

static int bits_error(cm_binary_op op, cm_dtype a, cm_dtype b) {
  /* MLX raises this as a RuntimeError (std::runtime_error), not ValueError */
  return cm_error(CM_ERR_RUNTIME,
                  "[%s] Only allowed on integer or boolean types but got types %s and %s.",
                  op_names[op], cm_dtype_name(a), cm_dtype_name(b));
}

/* Compute dtype (what the kernel sees) and output dtype of op on (a, b);
 * the op code may change (logical_xor is NotEqual on bools, as in MLX). */
static int resolve(cm_binary_op *op, cm_dtype a, cm_dtype b, cm_dtype *ct, cm_dtype *ot) {
  cm_dtype t = cm_promote_types(a, b);
  switch (*op) {
  case CM_BINARY_REMAINDER:
    if (t == CM_COMPLEX64) return cm_error(CM_ERR_VALUE, "[remainder] Complex type not supported.");
    break;
  case CM_BINARY_ARCTAN2:
    if (t == CM_COMPLEX64) return cm_error(CM_ERR_VALUE, "[arctan2] Not supported for complex64.");
    t = cm_float_result_type(t);
    break;
  case CM_BINARY_DIVIDE:
  case CM_BINARY_LOGADDEXP: t = cm_float_result_type(t); break; /* ints and bool -> float32 */
  case CM_BINARY_EQUAL:
  case CM_BINARY_NOT_EQUAL:
  case CM_BINARY_LESS:
  case CM_BINARY_LESS_EQUAL:
  case CM_BINARY_GREATER:
  case CM_BINARY_GREATER_EQUAL:
    *ct = t;
    *ot = CM_BOOL;
    return 0;
  case CM_BINARY_LOGICAL_XOR: *op = CM_BINARY_NOT_EQUAL; /* fall through */
  case CM_BINARY_LOGICAL_AND:
  case CM_BINARY_LOGICAL_OR: t = CM_BOOL; break;
  case CM_BINARY_BITWISE_AND:
  case CM_BINARY_BITWISE_OR:
  case CM_BINARY_BITWISE_XOR:
    if (!bits_ok(t)) return bits_error(*op, a, b);
    break;
  case CM_BINARY_LEFT_SHIFT:
    if (!bits_ok(t)) return bits_error(*op, a, b);
    if (t == CM_BOOL) t = CM_UINT8;
    break;
  case CM_BINARY_RIGHT_SHIFT:
    /* MLX casts before it checks, so its message names the promoted type */
    if (!bits_ok(t)) return bits_error(*op, t, t);
    if (t == CM_BOOL) t = CM_UINT8;
    break;
  default: break;
  }
  *ct = *ot = t;
  return 0;
}

cm_array *cm_binary(cm_binary_op op, cm_array *a, cm_array *b, cm_stream s) {
  if ((unsigned)op >= CM_BINARY_NUM_OPS)
    return cm_error(CM_ERR_VALUE, "[binary] Invalid op %d.", (int)op), NULL;
  if (cm_op_stream(&s)) return NULL;
  cm_dtype ct = CM_BOOL, ot = CM_BOOL;
  if (resolve(&op, a->dtype, b->dtype, &ct, &ot)) return NULL;
  cm_array *ins[2] = {a, b}, *x[2];
  if (cm_broadcast_and_cast(op_names[op], ins, 2, (int)ct, x, s)) return NULL;
  cm_binary_params p = {op};
  cm_array *r = cm_op_node(ot, x[0]->ndim, x[0]->shape, &cm_prim_binary, &p, sizeof p, x, 2, s);
  cm_release(x[0]);
  cm_release(x[1]);
  return r;
}

/* The named constructors of ops/binary.h. */
#define BINARY_OP(NAME, OP) \
  cm_array *cm_##NAME(cm_array *a, cm_array *b, cm_stream s) { return cm_binary(OP, a, b, s); }
BINARY_OP(add, CM_BINARY_ADD)
BINARY_OP(subtract, CM_BINARY_SUBTRACT)
BINARY_OP(multiply, CM_BINARY_MULTIPLY)
BINARY_OP(divide, CM_BINARY_DIVIDE)
BINARY_OP(floor_divide, CM_BINARY_FLOOR_DIVIDE)
BINARY_OP(remainder, CM_BINARY_REMAINDER)
BINARY_OP(power, CM_BINARY_POWER)
BINARY_OP(maximum, CM_BINARY_MAXIMUM)
BINARY_OP(minimum, CM_BINARY_MINIMUM)
BINARY_OP(arctan2, CM_BINARY_ARCTAN2)
BINARY_OP(logaddexp, CM_BINARY_LOGADDEXP)
BINARY_OP(equal, CM_BINARY_EQUAL)
BINARY_OP(not_equal, CM_BINARY_NOT_EQUAL)
BINARY_OP(less, CM_BINARY_LESS)
BINARY_OP(less_equal, CM_BINARY_LESS_EQUAL)
BINARY_OP(greater, CM_BINARY_GREATER)
BINARY_OP(greater_equal, CM_BINARY_GREATER_EQUAL)
BINARY_OP(logical_and, CM_BINARY_LOGICAL_AND)
BINARY_OP(logical_or, CM_BINARY_LOGICAL_OR)
BINARY_OP(logical_xor, CM_BINARY_LOGICAL_XOR)
BINARY_OP(bitwise_and, CM_BINARY_BITWISE_AND)
BINARY_OP(bitwise_or, CM_BINARY_BITWISE_OR)
BINARY_OP(bitwise_xor, CM_BINARY_BITWISE_XOR)
BINARY_OP(left_shift, CM_BINARY_LEFT_SHIFT)
BINARY_OP(right_shift, CM_BINARY_RIGHT_SHIFT)

/* One DivMod node with two outputs, as MLX: evaluating either computes
 * both in one pass. */
int cm_divmod(cm_array *a, cm_array *b, cm_array **quotient, cm_array **rem, cm_stream s) {
  *quotient = *rem = NULL;
  if (cm_op_stream(&s)) return -1;
  cm_dtype t = cm_promote_types(a->dtype, b->dtype);
  if (t == CM_COMPLEX64) return cm_error(CM_ERR_VALUE, "[divmod] Complex type not supported.");
  cm_array *ins[2] = {a, b}, *x[2];
  if (cm_broadcast_and_cast("divmod", ins, 2, (int)t, x, s)) return -1;
  cm_array *outs[2];
  cm_dtype dtypes[2] = {t, t};
  int ndims[2] = {x[0]->ndim, x[0]->ndim};
  const int32_t *shapes[2] = {x[0]->shape, x[0]->shape};
  int rc = cm_check_shape("divmod", x[0]->ndim, x[0]->shape);
  if (!rc) rc = cm_node_new_multi(2, dtypes, ndims, shapes, &cm_prim_divmod, NULL, 0, x, 2, s, outs);
  cm_release(x[0]);
  cm_release(x[1]);
  if (rc) return -1;
  *quotient = outs[0];
  *rem = outs[1];
  return 0;
}
