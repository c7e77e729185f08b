/* Matmul and AddMM: batched matrix products, a (..., M, K) @ b (..., K,
 * N), with the batch shapes already broadcast by the op (as views, so
 * nothing is copied).  AddMM also takes c (..., M, N) and computes
 * alpha * a @ b + beta * c; beta == 0 ignores c entirely (a NaN in c does
 * not leak through), as BLAS and MLX do.
 *
 * Derivatives: d(a) = cotan @ b^T, d(b) = a^T @ cotan (times alpha for
 * AddMM), d(c) = beta * cotan; tangents ta @ b + a @ tb (+ beta tc).  The
 * results have the inputs' broadcast shapes; the Broadcast nodes the op
 * made then sum them back to the original shapes. */
#ifndef CMLX_PRIMITIVES_MATMUL_H
#define CMLX_PRIMITIVES_MATMUL_H

#include "ops/matmul.h"
#include "primitives/primitive.h"

typedef struct cm_matmul_params {
  float alpha, beta; /* Matmul: 1, 0 */
} cm_matmul_params;

extern const cm_prim cm_prim_matmul;
extern const cm_prim cm_prim_addmm;

#endif
