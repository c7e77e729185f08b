/* cmlx: mlx-c compatible C API.  CUDA backend queries. */
#ifndef MLX_CUDA_H
#define MLX_CUDA_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

int mlx_cuda_is_available(bool* res);

#ifdef __cplusplus
}
#endif

#endif
