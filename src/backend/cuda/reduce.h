/* Reductions (sum, prod, max, min, all, any) on the GPU. */
#ifndef CMLX_BACKEND_CUDA_REDUCE_H
#define CMLX_BACKEND_CUDA_REDUCE_H

#include <stdbool.h>

#include "core/dtype.h"
#include "primitives/primitive.h"

int cm_cuda_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* CUDA C for a reduction of op (cm_reduce_op) from in to out dtype over
 * kd kept and rd reduced axes (a kernel named cm_reduce); NULL with an
 * error when the op and dtype have no GPU kernel. */
char *cm_cuda_reduce_source(int op, cm_dtype in, cm_dtype out, int kd, int rd);

#endif
