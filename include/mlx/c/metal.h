/* cmlx: mlx-c compatible C API.  Metal backend (Apple only; reports unavailable here). */
#ifndef MLX_METAL_H
#define MLX_METAL_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

int mlx_metal_is_available(bool* res);
int mlx_metal_start_capture(const char* path);
int mlx_metal_stop_capture(void);

#ifdef __cplusplus
}
#endif

#endif
