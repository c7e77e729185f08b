/* Binary op constructors: decide the compute and output dtypes the way MLX
 * 0.32 does (checked pair by pair against it), cast and broadcast the
 * inputs to them, and build one Binary node. */
#include "ops/binary.h"

#include "primitives/binary.h"

/* Python-level names, for error messages. */
static const char *const op_names[CM_BINARY_NUM_OPS] = {
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "maximum",
    "minimum", "arctan2", "logaddexp", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift"};

static bool bits_ok(cm_dtype t) { return t == CM_BOOL || cm_dtype_is_integral(t); }

static int bits_error(cm_binary_op op, cm_dtype a, cm_dtype b) {
  /* MLX raises this as a RuntimeError (std::runtime_error), not ValueError */
  return cm_error(CM_ERR_RUNTIME, "[%s] Only allowed on integer or boolean types but got types %s and %s.",
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

cm_array *cm_add(cm_array *a, cm_array *b, cm_stream s) { return cm_binary(CM_BINARY_ADD, a, b, s); }
cm_array *cm_subtract(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_SUBTRACT, a, b, s);
}
cm_array *cm_multiply(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_MULTIPLY, a, b, s);
}
cm_array *cm_divide(cm_array *a, cm_array *b, cm_stream s) { return cm_binary(CM_BINARY_DIVIDE, a, b, s); }
cm_array *cm_floor_divide(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_FLOOR_DIVIDE, a, b, s);
}
cm_array *cm_remainder(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_REMAINDER, a, b, s);
}

/* MLX has one DivMod primitive with two outputs; two nodes compute the
 * same values. */
int cm_divmod(cm_array *a, cm_array *b, cm_array **quotient, cm_array **rem, cm_stream s) {
  *quotient = *rem = NULL;
  if (cm_promote_types(a->dtype, b->dtype) == CM_COMPLEX64)
    return cm_error(CM_ERR_VALUE, "[divmod] Complex type not supported.");
  cm_array *q = cm_floor_divide(a, b, s);
  if (!q) return -1;
  cm_array *r = cm_remainder(a, b, s);
  if (!r) {
    cm_release(q);
    return -1;
  }
  *quotient = q;
  *rem = r;
  return 0;
}

cm_array *cm_power(cm_array *a, cm_array *b, cm_stream s) { return cm_binary(CM_BINARY_POWER, a, b, s); }
cm_array *cm_maximum(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_MAXIMUM, a, b, s);
}
cm_array *cm_minimum(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_MINIMUM, a, b, s);
}
cm_array *cm_arctan2(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_ARCTAN2, a, b, s);
}
cm_array *cm_logaddexp(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_LOGADDEXP, a, b, s);
}
cm_array *cm_equal(cm_array *a, cm_array *b, cm_stream s) { return cm_binary(CM_BINARY_EQUAL, a, b, s); }
cm_array *cm_not_equal(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_NOT_EQUAL, a, b, s);
}
cm_array *cm_less(cm_array *a, cm_array *b, cm_stream s) { return cm_binary(CM_BINARY_LESS, a, b, s); }
cm_array *cm_less_equal(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_LESS_EQUAL, a, b, s);
}
cm_array *cm_greater(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_GREATER, a, b, s);
}
cm_array *cm_greater_equal(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_GREATER_EQUAL, a, b, s);
}
cm_array *cm_logical_and(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_LOGICAL_AND, a, b, s);
}
cm_array *cm_logical_or(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_LOGICAL_OR, a, b, s);
}
cm_array *cm_logical_xor(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_LOGICAL_XOR, a, b, s);
}
cm_array *cm_bitwise_and(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_BITWISE_AND, a, b, s);
}
cm_array *cm_bitwise_or(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_BITWISE_OR, a, b, s);
}
cm_array *cm_bitwise_xor(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_BITWISE_XOR, a, b, s);
}
cm_array *cm_left_shift(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_LEFT_SHIFT, a, b, s);
}
cm_array *cm_right_shift(cm_array *a, cm_array *b, cm_stream s) {
  return cm_binary(CM_BINARY_RIGHT_SHIFT, a, b, s);
}
