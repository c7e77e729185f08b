/* CPU kernels of the linear algebra primitives, through LAPACK (the
 * routines OpenBLAS ships).  Multi-output kernels get the first output
 * and fill every sibling. */
#ifndef CMLX_BACKEND_CPU_LINALG_H
#define CMLX_BACKEND_CPU_LINALG_H

#include "primitives/linalg.h"

/* U, S, Vt (compute_uv) or S alone */
int cm_cpu_svd(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Q, R */
int cm_cpu_qrf(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* LU, pivots, row order */
int cm_cpu_luf(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_cholesky(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_inverse(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* X with A X = B (in[0] A, in[1] B, batches equal) */
int cm_cpu_solve(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* values (and vectors) */
int cm_cpu_eig(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_eigh(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
