/* The CUDA backend's raw memory (core/backend.h's cm_allocator_impl). */
#ifndef CMLX_BACKEND_CUDA_ALLOCATOR_H
#define CMLX_BACKEND_CUDA_ALLOCATOR_H

#include "core/backend.h"

extern const cm_allocator_impl cm_cuda_allocator;

#endif
