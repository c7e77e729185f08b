/* The linear algebra primitives (MLX's QRF, SVD, Inverse, Cholesky, Eig,
 * Eigh, LUF, plus Solve, cmlx's one-call LAPACK solve).  Factorisations
 * with several results are multi-output nodes (siblings).  As in MLX they
 * have no derivatives; SVD, Inverse, Cholesky, Eig and Eigh batch under
 * vmap by moving the batch axis in front. */
#ifndef CMLX_PRIMITIVES_LINALG_H
#define CMLX_PRIMITIVES_LINALG_H

#include <stdint.h>

#include "primitives/primitive.h"

typedef struct cm_svd_params {
  int32_t compute_uv; /* 1: outputs U, S, Vt; 0: S only */
} cm_svd_params;

typedef struct cm_upper_params {
  int32_t upper; /* Cholesky: the factor is upper triangular */
} cm_upper_params;

typedef struct cm_inverse_params {
  int32_t tri;   /* triangular inverse (tri_inv) */
  int32_t upper; /* ... of the upper triangle */
} cm_inverse_params;
CM_PARAMS_ACCESSOR(cm_inverse_params, cm_inverse_params_of)

typedef struct cm_eig_params {
  int32_t vectors; /* also the eigenvectors (second output) */
} cm_eig_params;

typedef struct cm_eigh_params {
  int32_t vectors;
  int32_t upper; /* UPLO 'U': read the upper triangle */
} cm_eigh_params;
CM_PARAMS_ACCESSOR(cm_eigh_params, cm_eigh_params_of)

extern const cm_prim cm_prim_svd;
extern const cm_prim cm_prim_qrf;
extern const cm_prim cm_prim_luf;
extern const cm_prim cm_prim_cholesky;
extern const cm_prim cm_prim_inverse;
extern const cm_prim cm_prim_solve;
extern const cm_prim cm_prim_eig;
extern const cm_prim cm_prim_eigh;

#endif
