/* Raw memory for arrays on the GPU.  The core keeps the buffer cache, the
 * counters and the limits (core/allocator.c); this file only says where a
 * block comes from.
 *
 * Every block is unified memory, as MLX's CUDA allocator gives the host:
 * cudaMallocManaged where the device supports concurrent managed access,
 * pinned host memory (cudaMallocHost) where it does not (MLX's rule for
 * Windows, WSL and Tegra).  So an array a GPU kernel wrote is readable by
 * CPU code (tolist, NumPy, the buffer protocol) once its stream finished,
 * with no copy by the user.  A managed request is never larger than the
 * memory the card has free: the driver would accept it and the first
 * kernel touching it would fail (or thrash), so it is refused up front and
 * the core reports a MemoryError.  Blocks of at most CM_SMALL_CELL bytes
 * come from the small pool (small_pool.h).
 *
 * The memory limit defaults to 0.95 of device memory, as MLX's. */
#include "backend/cuda/allocator.h"

#include <pthread.h>

#include "backend/cuda/device.h"
#include "backend/cuda/runtime.h"
#include "backend/cuda/small_pool.h"

static bool use_managed(void) {
  int n = cm_cuda_device_count();
  for (int i = 0; i < n; i++)
    if (!cm_cuda_device(i)->concurrent_access) return false;
  return n > 0;
}

static void *unified_alloc(size_t size) {
  void *p = NULL;
  if (use_managed()) {
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      return NULL;
    }
    if (size > free_bytes) return NULL;
    if (cudaMallocManaged(&p, size, cudaMemAttachGlobal) != cudaSuccess) p = NULL;
  } else if (cudaMallocHost(&p, size) != cudaSuccess) {
    p = NULL;
  }
  if (!p) (void)cudaGetLastError();
  return p;
}

static void unified_free(void *p) {
  if (use_managed()) (void)cudaFree(p);
  else (void)cudaFreeHost(p);
}

static void *slab_alloc(size_t size, void *ctx) {
  (void)ctx;
  return unified_alloc(size);
}
static void slab_free(void *p, size_t size, void *ctx) {
  (void)size, (void)ctx;
  unified_free(p);
}

static cm_small_pool pool;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static void pool_init(void) { cm_small_pool_init(&pool, slab_alloc, slab_free, NULL); }

static void *cuda_raw_alloc(size_t size, void *ctx) {
  (void)ctx;
  if (cm_cuda_device_count() == 0) return NULL;
  if (size <= CM_SMALL_CELL) {
    pthread_once(&pool_once, pool_init);
    void *cell = cm_small_pool_alloc(&pool);
    if (cell) return cell;
  }
  return unified_alloc(size ? size : 1);
}

static void cuda_raw_free(void *ptr, size_t size, void *ctx) {
  (void)ctx;
  if (!ptr) return;
  if (size <= CM_SMALL_CELL) {
    pthread_once(&pool_once, pool_init);
    if (cm_small_pool_free(&pool, ptr)) return;
  }
  unified_free(ptr);
}

static size_t cuda_total_memory(void *ctx) {
  (void)ctx;
  const cm_cuda_device_props *d = cm_cuda_device(0);
  return d ? d->total_memory : 0;
}

const cm_allocator_impl cm_cuda_allocator = {
    .name = "cuda",
    .raw_alloc = cuda_raw_alloc,
    .raw_free = cuda_raw_free,
    .total_memory = cuda_total_memory,
    .default_limit_fraction = 0.95,
    .default_cache_limit = NULL, /* MLX's CUDA allocator may cache up to the limit */
};
