/* The CPU's raw memory, for its backend descriptor (backend.c). */
#ifndef CMLX_BACKEND_CPU_ALLOCATOR_H
#define CMLX_BACKEND_CPU_ALLOCATOR_H

#include "core/backend.h"

extern const cm_allocator_impl cm_cpu_allocator;

#endif
