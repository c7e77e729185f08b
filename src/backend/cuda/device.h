/* The GPUs the CUDA runtime finds, and their properties, read once. */
#ifndef CMLX_BACKEND_CUDA_DEVICE_H
#define CMLX_BACKEND_CUDA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cm_cuda_device_props {
  char name[256];
  char arch[16]; /* "sm_90" */
  int major, minor;
  size_t total_memory;
  int sm_count;
  int max_threads_per_block;
  size_t max_shared_per_block;
  bool managed_memory;    /* cudaMallocManaged works */
  bool concurrent_access; /* host and device may touch managed memory at once */
  bool memory_pools;      /* cudaMallocAsync works */
} cm_cuda_device_props;

/* Devices present (0 without a driver or a GPU: never an error). */
int cm_cuda_device_count(void);
/* Properties of device index, or NULL when out of range. */
const cm_cuda_device_props *cm_cuda_device(int index);
/* Make index the calling thread's current device (a no-op when it is);
 * 0 or -1 with a RuntimeError. */
int cm_cuda_use_device(int index);

#endif
