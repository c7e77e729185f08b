/* cmlx: mlx-c compatible C API.  Memory counters and limits. */
#ifndef MLX_MEMORY_H
#define MLX_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int mlx_clear_cache(void);
int mlx_get_active_memory(size_t* res);
int mlx_get_cache_memory(size_t* res);
int mlx_get_memory_limit(size_t* res);
int mlx_get_peak_memory(size_t* res);
int mlx_reset_peak_memory(void);
int mlx_set_cache_limit(size_t* res, size_t limit);
int mlx_set_memory_limit(size_t* res, size_t limit);
int mlx_set_wired_limit(size_t* res, size_t limit);

#ifdef __cplusplus
}
#endif

#endif
