/* Elementwise binary ops with broadcasting and MLX's type promotion.  One
 * primitive (Binary) carries an op code; comparisons give bool; divide on
 * integers gives float32 (floor_divide keeps integers).  Python's weak
 * scalars are resolved by the caller before arrays reach these. */
#ifndef CMLX_OPS_BINARY_H
#define CMLX_OPS_BINARY_H

#include "ops/common.h"

typedef enum cm_binary_op {
  CM_BINARY_ADD,
  CM_BINARY_SUBTRACT,
  CM_BINARY_MULTIPLY,
  CM_BINARY_DIVIDE,
  CM_BINARY_FLOOR_DIVIDE,
  CM_BINARY_REMAINDER,
  CM_BINARY_POWER,
  CM_BINARY_MAXIMUM,
  CM_BINARY_MINIMUM,
  CM_BINARY_ARCTAN2,
  CM_BINARY_LOGADDEXP,
  CM_BINARY_EQUAL,
  CM_BINARY_NOT_EQUAL,
  CM_BINARY_LESS,
  CM_BINARY_LESS_EQUAL,
  CM_BINARY_GREATER,
  CM_BINARY_GREATER_EQUAL,
  CM_BINARY_LOGICAL_AND,
  CM_BINARY_LOGICAL_OR,
  CM_BINARY_LOGICAL_XOR,
  CM_BINARY_BITWISE_AND,
  CM_BINARY_BITWISE_OR,
  CM_BINARY_BITWISE_XOR,
  CM_BINARY_LEFT_SHIFT,
  CM_BINARY_RIGHT_SHIFT,
  CM_BINARY_NUM_OPS
} cm_binary_op;

cm_array *cm_binary(cm_binary_op op, cm_array *a, cm_array *b, cm_stream s);

cm_array *cm_add(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_subtract(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_multiply(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_divide(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_floor_divide(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_remainder(cm_array *a, cm_array *b, cm_stream s);
/* divmod: two outputs (quotient, remainder); 0 or -1. */
int cm_divmod(cm_array *a, cm_array *b, cm_array **quotient, cm_array **rem, cm_stream s);
cm_array *cm_power(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_maximum(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_minimum(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_arctan2(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_logaddexp(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_equal(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_not_equal(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_less(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_less_equal(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_greater(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_greater_equal(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_logical_and(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_logical_or(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_logical_xor(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_bitwise_and(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_bitwise_or(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_bitwise_xor(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_left_shift(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_right_shift(cm_array *a, cm_array *b, cm_stream s);

#endif
