/* Matrix products: matmul and addmm, with MLX 0.32's rules.
 *
 * Shapes: both operands need at least one dimension ("[matmul] Got 0
 * dimension input. Inputs must have at least one dimension.").  A 1-D a
 * is a row (1, K) and a 1-D b a column (K, 1); the added axis is dropped
 * from the result.  The last axis of a must match the second-to-last of
 * b (ValueError "[matmul] Last dimension of first input with shape (2,3)
 * must match second to last dimension of second input with shape (4,5).",
 * shapes printed after the 1-D expansion).  Batch axes broadcast:
 * (3,4) @ (2,4,5) -> (2,3,5); (2,1,3,4) @ (5,4,5) -> (2,5,3,5).
 *
 * Dtypes: the operands promote to a common type, which must be inexact
 * ("[matmul] Only inexact types are supported but int32 and int32 were
 * provided which results in int32, which is not a floating point type.");
 * int32 @ float32 is float32.  float16/bfloat16 are computed in float32
 * and rounded once at the end; float32/float64 use sgemm/dgemm and
 * complex64 cgemm.
 *
 * addmm(c, a, b, alpha, beta) = alpha * (a @ b) + beta * c: c promotes
 * with a and b (c int32 with float32 a, b gives float32) and must
 * broadcast to the product's shape without growing it ("[addmm] input c
 * must broadcast to the output shape"); with K == 0 the result is
 * beta * c, and beta == 0 ignores c. */
#ifndef CMLX_OPS_MATMUL_H
#define CMLX_OPS_MATMUL_H

#include "ops/common.h"

cm_array *cm_matmul(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_addmm(cm_array *c, cm_array *a, cm_array *b, float alpha, float beta, cm_stream s);

#endif
