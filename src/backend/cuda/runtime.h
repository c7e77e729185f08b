/* What every file of the CUDA backend shares: the CUDA runtime's header
 * and the check that turns a CUDA error into the core's error state.
 * The runtime is linked statically (libcudart_static), so the library
 * loads on a machine without a driver; there every call fails and the
 * backend reports no device. */
#ifndef CMLX_BACKEND_CUDA_RUNTIME_H
#define CMLX_BACKEND_CUDA_RUNTIME_H

#include <cuda_runtime_api.h>

#include "core/error.h"

/* 0 when e is cudaSuccess; else -1 with a RuntimeError naming what failed
 * and CUDA's description of e (the sticky error is cleared where CUDA
 * allows it). */
int cm_cuda_check(cudaError_t e, const char *what);

#endif
