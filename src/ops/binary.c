/* Binary op constructors: decide the compute and output dtypes the way MLX
 * 0.32 does (checked pair by pair against it), cast and broadcast the
 * inputs to them, and build one Binary node. */
#include "ops/binary.h"

#include "primitives/binary.h"
#include "primitives/divmod.h"

static bool bits_ok(cm_dtype t) { return t == CM_BOOL || cm_dtype_is_integral(t); }

static int bits_error(const char *name, cm_dtype a, cm_dtype b) {
  /* MLX raises this as a RuntimeError (std::runtime_error), not ValueError */
  return cm_error(CM_ERR_RUNTIME,
                  "[%s] Only allowed on integer or boolean types but got types %s and %s.", name,
                  cm_dtype_name(a), cm_dtype_name(b));
}

/* The dtype rules of the table's dtype column: from the operand dtypes a,
 * b and their promotion t, the compute dtype (what the kernel sees) and
 * the output dtype, or MLX's error.  name is the op's, for messages; the
 * op code may change (logical_xor is NotEqual on bools, as in MLX). */
#define DTYPE_RULE(RULE)                                                                       \
  static inline int dtype_##RULE(cm_binary_op *op, const char *name, cm_dtype a, cm_dtype b, \
                                 cm_dtype t, cm_dtype *ct, cm_dtype *ot)
#define UNUSED_ARGS (void)op, (void)name, (void)a, (void)b

DTYPE_RULE(PROMOTE) {
  UNUSED_ARGS;
  *ct = *ot = t;
  return 0;
}
DTYPE_RULE(TO_FLOAT) { /* ints and bool -> float32 */
  UNUSED_ARGS;
  *ct = *ot = cm_float_result_type(t);
  return 0;
}
DTYPE_RULE(TO_FLOAT_REAL) {
  if (t == CM_COMPLEX64) return cm_error(CM_ERR_VALUE, "[%s] Not supported for complex64.", name);
  return dtype_TO_FLOAT(op, name, a, b, t, ct, ot);
}
DTYPE_RULE(REAL_ONLY) {
  if (t == CM_COMPLEX64) return cm_error(CM_ERR_VALUE, "[%s] Complex type not supported.", name);
  return dtype_PROMOTE(op, name, a, b, t, ct, ot);
}
DTYPE_RULE(COMPARE) {
  UNUSED_ARGS;
  *ct = t;
  *ot = CM_BOOL;
  return 0;
}
DTYPE_RULE(LOGICAL) {
  UNUSED_ARGS, (void)t;
  *ct = *ot = CM_BOOL;
  return 0;
}
DTYPE_RULE(LOGICAL_XOR) {
  *op = CM_BINARY_NOT_EQUAL;
  return dtype_LOGICAL(op, name, a, b, t, ct, ot);
}
DTYPE_RULE(BITS) {
  if (!bits_ok(t)) return bits_error(name, a, b);
  return dtype_PROMOTE(op, name, a, b, t, ct, ot);
}
DTYPE_RULE(SHIFT_L) {
  if (!bits_ok(t)) return bits_error(name, a, b);
  return dtype_PROMOTE(op, name, a, b, t == CM_BOOL ? CM_UINT8 : t, ct, ot);
}
DTYPE_RULE(SHIFT_R) {
  /* MLX casts before it checks, so its message names the promoted type */
  if (!bits_ok(t)) return bits_error(name, t, t);
  return dtype_PROMOTE(op, name, a, b, t == CM_BOOL ? CM_UINT8 : t, ct, ot);
}

/* Compute and output dtypes of op on (a, b), by the op's row. */
static int resolve(cm_binary_op *op, cm_dtype a, cm_dtype b, cm_dtype *ct, cm_dtype *ot) {
  cm_dtype t = cm_promote_types(a, b);
  switch (*op) {
#define CM_X(CODE, name, Name, dtype, ...) \
  case CM_BINARY_##CODE: return dtype_##dtype(op, #name, a, b, t, ct, ot);
    CM_BINARY_OPS(CM_X)
#undef CM_X
  default: return cm_error(CM_ERR_VALUE, "[binary] Invalid op %d.", (int)*op);
  }
}

cm_array *cm_binary(cm_binary_op op, cm_array *a, cm_array *b, cm_stream s) {
  if ((unsigned)op >= CM_BINARY_NUM_OPS)
    return cm_error(CM_ERR_VALUE, "[binary] Invalid op %d.", (int)op), NULL;
  if (cm_op_stream(&s)) return NULL;
  cm_dtype ct = CM_BOOL, ot = CM_BOOL;
  if (resolve(&op, a->dtype, b->dtype, &ct, &ot)) return NULL;
  cm_array *ins[2] = {a, b}, *x[2];
  if (cm_broadcast_and_cast(ins, 2, (int)ct, x, s)) return NULL;
  cm_binary_params p = {op};
  cm_array *r = cm_op_node(ot, x[0]->ndim, x[0]->shape, &cm_prim_binary, &p, sizeof p, x, 2, s);
  cm_release(x[0]);
  cm_release(x[1]);
  return r;
}

/* The named constructors of ops/binary.h. */
#define CM_X(CODE, name, ...)                                  \
  cm_array *cm_##name(cm_array *a, cm_array *b, cm_stream s) { \
    return cm_binary(CM_BINARY_##CODE, a, b, s);               \
  }
CM_BINARY_OPS(CM_X)
#undef CM_X

/* One DivMod node with two outputs, as MLX: evaluating either computes
 * both in one pass. */
int cm_divmod(cm_array *a, cm_array *b, cm_array **quotient, cm_array **rem, cm_stream s) {
  *quotient = *rem = NULL;
  if (cm_op_stream(&s)) return -1;
  cm_dtype t = cm_promote_types(a->dtype, b->dtype);
  if (t == CM_COMPLEX64) return cm_error(CM_ERR_VALUE, "[divmod] Complex type not supported.");
  cm_array *ins[2] = {a, b}, *x[2];
  if (cm_broadcast_and_cast(ins, 2, (int)t, x, s)) return -1;
  cm_array *outs[2];
  cm_dtype dtypes[2] = {t, t};
  int ndims[2] = {x[0]->ndim, x[0]->ndim};
  const int32_t *shapes[2] = {x[0]->shape, x[0]->shape};
  int rc = cm_check_shape("divmod", x[0]->ndim, x[0]->shape);
  if (!rc)
    rc = cm_node_new_multi(2, dtypes, ndims, shapes, &cm_prim_divmod, NULL, 0, x, 2, s, outs);
  cm_release(x[0]);
  cm_release(x[1]);
  if (rc) return -1;
  *quotient = outs[0];
  *rem = outs[1];
  return 0;
}
