/* Matmul and AddMM on the GPU through cuBLASLt. */
#ifndef CMLX_BACKEND_CUDA_MATMUL_H
#define CMLX_BACKEND_CUDA_MATMUL_H

#include "primitives/primitive.h"

int cm_cuda_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
