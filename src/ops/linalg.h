/* Linear algebra the core needs before the linalg family exists (issue 9
 * builds the rest of mx.linalg on this): the SVD, as MLX's linalg::svd
 * with compute_uv, which multivariate_normal uses for the square root of
 * a covariance. */
#ifndef CMLX_OPS_LINALG_H
#define CMLX_OPS_LINALG_H

#include "ops/common.h"

/* a (..., M, N) of float32 or float64 = U diag(S) Vt: outs[0] = U
 * (..., M, M), outs[1] = S (..., min(M, N)), descending, outs[2] = Vt
 * (..., N, N); new references.  A CPU stream only.  0 or -1. */
int cm_linalg_svd(cm_array *a, cm_array **outs, cm_stream s);

#endif
