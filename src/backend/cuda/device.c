/* Device discovery (device.h).  The runtime is asked once; a failure
 * (no driver, no GPU, a driver older than the runtime) means no device,
 * which is what MLX's CUDA build reports on such a machine. */
#include "backend/cuda/device.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/runtime.h"

#define MAX_DEVICES 64

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int count;
static cm_cuda_device_props props[MAX_DEVICES];
static _Thread_local int current = -1;

int cm_cuda_check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 0;
  (void)cudaGetLastError(); /* clears the error unless it is sticky */
  return cm_error(CM_ERR_RUNTIME, "[cuda] %s failed: %s (%s).", what, cudaGetErrorString(e),
                  cudaGetErrorName(e));
}

static void read_props(int i, cm_cuda_device_props *p) {
  struct cudaDeviceProp dp;
  memset(p, 0, sizeof *p);
  if (cudaGetDeviceProperties(&dp, i) != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(p->name, sizeof p->name, "CUDA device %d", i);
    return;
  }
  snprintf(p->name, sizeof p->name, "%s", dp.name);
  p->major = dp.major;
  p->minor = dp.minor;
  snprintf(p->arch, sizeof p->arch, "sm_%d%d", dp.major, dp.minor);
  p->total_memory = dp.totalGlobalMem;
  p->sm_count = dp.multiProcessorCount;
  p->max_threads_per_block = dp.maxThreadsPerBlock;
  p->max_shared_per_block = dp.sharedMemPerBlock;
  p->managed_memory = dp.managedMemory != 0;
  p->concurrent_access = dp.concurrentManagedAccess != 0;
  int pools = 0;
  if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, i) != cudaSuccess) {
    (void)cudaGetLastError();
    pools = 0;
  }
  p->memory_pools = pools != 0;
}

static void discover(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    n = 0;
  }
  if (n > MAX_DEVICES) n = MAX_DEVICES;
  for (int i = 0; i < n; i++) read_props(i, &props[i]);
  count = n;
}

int cm_cuda_device_count(void) {
  pthread_once(&once, discover);
  return count;
}

const cm_cuda_device_props *cm_cuda_device(int index) {
  return index >= 0 && index < cm_cuda_device_count() ? &props[index] : NULL;
}

int cm_cuda_use_device(int index) {
  if (index == current) return 0;
  if (cm_cuda_check(cudaSetDevice(index), "cudaSetDevice")) return -1;
  current = index;
  return 0;
}
