/* The CUDA backend's kernel table (kernels.c). */
#ifndef CMLX_BACKEND_CUDA_KERNELS_H
#define CMLX_BACKEND_CUDA_KERNELS_H

#include <stddef.h>

#include "core/backend.h"

void cm_cuda_kernels_register(void);
/* The table itself (docs and tests list what runs on the GPU). */
size_t cm_cuda_kernel_table(const cm_kernel_entry **table);

#endif
