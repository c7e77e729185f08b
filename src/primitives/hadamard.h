/* The Hadamard primitive (MLX's Hadamard(scale)): one floating input,
 * transformed along its last axis of n = m * 2^k (checked by the op).
 * Its own inverse up to scale: vjp = jvp = the same transform of the
 * cotangent / tangent. */
#ifndef CMLX_PRIMITIVES_HADAMARD_H
#define CMLX_PRIMITIVES_HADAMARD_H

#include "primitives/primitive.h"

typedef struct cm_hadamard_params {
  float scale;
} cm_hadamard_params;
CM_PARAMS_ACCESSOR(cm_hadamard_params, cm_hadamard_params_of)

extern const cm_prim cm_prim_hadamard;

/* n = m * 2^k with m in {1, 12, 20, 28} (the first of 12, 20, 28 that
 * divides n, as MLX picks it): *m and *pow2 (= 2^k); -1 with MLX's
 * ValueError otherwise. */
int cm_hadamard_decompose(int n, int *m, int *pow2);
/* Sloane's Hadamard matrix of order m (12, 20 or 28): m rows of m '+' or
 * '-', row after row; NULL for other m. */
const char *cm_hadamard_matrix(int m);

#endif
