/* CPU kernels of Matmul and AddMM (through CBLAS). */
#ifndef CMLX_BACKEND_CPU_MATMUL_H
#define CMLX_BACKEND_CPU_MATMUL_H

#include "primitives/primitive.h"

/* in[0] (..., M, K) @ in[1] (..., K, N) with equal batch shapes (the op
 * broadcasts them as views); AddMM adds in[2] (..., M, N): out = alpha *
 * a @ b + beta * c, with alpha and beta in p (a cm_matmul_params).  All
 * inputs have out's dtype (float16, bfloat16, float32, float64 or
 * complex64).  The output is row-contiguous. */
int cm_cpu_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
