/* mlx/c/memory.h over the allocator's counters (src/core/allocator.h). */
#include "capi/capi.h"

int mlx_clear_cache(void) {
  cm_memory_clear_cache();
  return 0;
}

int mlx_get_active_memory(size_t *res) {
  if (capi_out("mlx_get_active_memory", res)) return 1;
  *res = cm_memory_active();
  return 0;
}

int mlx_get_cache_memory(size_t *res) {
  if (capi_out("mlx_get_cache_memory", res)) return 1;
  *res = cm_memory_cache();
  return 0;
}

int mlx_get_memory_limit(size_t *res) {
  if (capi_out("mlx_get_memory_limit", res)) return 1;
  *res = cm_memory_limit();
  return 0;
}

int mlx_get_peak_memory(size_t *res) {
  if (capi_out("mlx_get_peak_memory", res)) return 1;
  *res = cm_memory_peak();
  return 0;
}

int mlx_reset_peak_memory(void) {
  cm_memory_reset_peak();
  return 0;
}

int mlx_set_cache_limit(size_t *res, size_t limit) {
  if (capi_out("mlx_set_cache_limit", res)) return 1;
  *res = cm_memory_set_cache_limit(limit);
  return 0;
}

int mlx_set_memory_limit(size_t *res, size_t limit) {
  if (capi_out("mlx_set_memory_limit", res)) return 1;
  *res = cm_memory_set_limit(limit);
  return 0;
}

int mlx_set_wired_limit(size_t *res, size_t limit) {
  if (capi_out("mlx_set_wired_limit", res)) return 1;
  *res = cm_memory_set_wired_limit(limit);
  return 0;
}
