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
CM_PARAMS_ACCESSOR(cm_matmul_params, cm_matmul_params_of)

extern const cm_prim cm_prim_matmul;
extern const cm_prim cm_prim_addmm;

/* MLX's ValueError for a product whose inner sizes (or batch shapes) do
 * not fit, naming op and both shapes; returns -1.  The ops' checks and
 * the shapeless replays of Matmul, AddMM and GatherMM share it. */
int cm_mm_shape_error(const char *op, const cm_array *a, const cm_array *b);

#endif
