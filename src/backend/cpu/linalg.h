/* CPU kernels of the linear algebra primitives, through LAPACK (the
 * routines OpenBLAS ships). */
#ifndef CMLX_BACKEND_CPU_LINALG_H
#define CMLX_BACKEND_CPU_LINALG_H

#include "primitives/primitive.h"

/* out is U; fills U, S, Vt (cm_output(out, 0..2)). */
int cm_cpu_svd(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
