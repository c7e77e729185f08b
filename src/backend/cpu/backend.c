/* The CPU backend: its descriptor and its registration.  The kernel table
 * is kernels.c; the allocator is the host's memory (allocator.c); fused
 * programs become generated C (fusion.c, fused.c, jit*.c). */
#include "backend/cpu/allocator.h"
#include "backend/cpu/fusion.h"
#include "backend/cpu/kernels.h"
#include "core/backend.h"

static int cpu_device_count(void) { return 1; }

static const cm_backend cpu_backend = {
    .name = "cpu",
    .device = CM_CPU,
    .device_count = cpu_device_count,
    .allocator = &cm_cpu_allocator,
    .fusion = &cm_cpu_fusion_impl,
    .reduce_into = cm_cpu_reduce_into,
};

void cm_backend_cpu_register(void) {
  cm_backend_register(&cpu_backend);
  cm_cpu_kernels_register();
}
