/* Elementwise binary ops with broadcasting and MLX's type promotion.  One
 * primitive (Binary) carries an op code; comparisons give bool; divide on
 * integers gives float32 (floor_divide keeps integers).  Python's weak
 * scalars are resolved by the caller before arrays reach these. */
#ifndef CMLX_OPS_BINARY_H
#define CMLX_OPS_BINARY_H

#include "ops/binary_ops.h"
#include "ops/common.h"

/* The op codes, in the table's order (ops/binary_ops.h). */
typedef enum cm_binary_op {
#define CM_X(CODE, ...) CM_BINARY_##CODE,
  CM_BINARY_OPS(CM_X)
#undef CM_X
  CM_BINARY_NUM_OPS
} cm_binary_op;

cm_array *cm_binary(cm_binary_op op, cm_array *a, cm_array *b, cm_stream s);

/* cm_add, cm_subtract, ...: cm_binary with the row's code. */
#define CM_X(CODE, name, ...) cm_array *cm_##name(cm_array *a, cm_array *b, cm_stream s);
CM_BINARY_OPS(CM_X)
#undef CM_X

/* divmod: two outputs (quotient, remainder); 0 or -1. */
int cm_divmod(cm_array *a, cm_array *b, cm_array **quotient, cm_array **rem, cm_stream s);

#endif
