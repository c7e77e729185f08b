/* The CUDA backend: its descriptor and its registration.  Built only with
 * -DCMLX_CUDA=ON (make build-cuda).  On a machine without a GPU (or
 * driver) it registers with no device: the GPU is then unavailable, as in
 * MLX's CUDA build there, and everything on the CPU works unchanged. */
#include "backend/cuda/allocator.h"
#include "backend/cuda/device.h"
#include "backend/cuda/encoder.h"
#include "backend/cuda/kernels.h"
#include "core/backend.h"

/* MLX's keys for a CUDA device (mx.device_info()). */
static int cuda_device_info(int index, cm_device_info_entry *out) {
  const cm_cuda_device_props *d = cm_cuda_device(index);
  if (!d) return 0;
  int n = 0;
  out[n++] = (cm_device_info_entry){.key = "device_name", .str = d->name, .is_string = true};
  out[n++] = (cm_device_info_entry){.key = "architecture", .str = d->arch, .is_string = true};
  out[n++] = (cm_device_info_entry){.key = "compute_capability_major", .num = d->major};
  out[n++] = (cm_device_info_entry){.key = "compute_capability_minor", .num = d->minor};
  out[n++] = (cm_device_info_entry){.key = "total_memory", .num = (int64_t)d->total_memory};
  out[n++] = (cm_device_info_entry){.key = "memory_size", .num = (int64_t)d->total_memory};
  return n;
}

static const cm_backend cuda_backend = {
    .name = "cuda",
    .device = CM_GPU,
    .device_count = cm_cuda_device_count,
    .allocator = &cm_cuda_allocator,
    .fusion = NULL, /* fused regions stay unfused on the GPU for now */
    .reduce_into = NULL,
    .device_info = cuda_device_info,
    .finish = cm_cuda_finish,
};

void cm_backend_cuda_register(void) {
  cm_backend_register(&cuda_backend);
  cm_cuda_kernels_register();
}
