/* The CPU backend: its descriptor and its registration.  The kernel table
 * is kernels.c; the allocator is the host's memory (allocator.c); fused
 * programs become generated C (fusion.c, fused.c, jit*.c). */
#include "backend/cpu/allocator.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fusion.h"
#include "backend/cpu/kernels.h"
#include "core/backend.h"

static int cpu_device_count(void) { return 1; }

/* What MLX's CPU build reports: the architecture and the processor's
 * name (NULL where unknown: the front doors choose the fallback). */
static int cpu_device_info(int index, cm_device_info_entry *out) {
  (void)index;
  out[0] = (cm_device_info_entry){.key = "architecture", .str = cm_cpu_arch(), .is_string = true};
  out[1] = (cm_device_info_entry){.key = "device_name", .str = cm_cpu_model(), .is_string = true};
  return 2;
}

static const cm_backend cpu_backend = {
    .name = "cpu",
    .device = CM_CPU,
    .device_count = cpu_device_count,
    .allocator = &cm_cpu_allocator,
    .fusion = &cm_cpu_fusion_impl,
    .reduce_into = cm_cpu_reduce_into,
    .device_info = cpu_device_info,
};

void cm_backend_cpu_register(void) {
  cm_backend_register(&cpu_backend);
  cm_cpu_kernels_register();
}
