/* cmlx: mlx-c compatible C API.  Streams: ordered queues of work on one device. */
#ifndef MLX_STREAM_H
#define MLX_STREAM_H

#include <stdbool.h>
#include "mlx/c/device.h"
#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlx_stream_ { void* ctx; } mlx_stream;
mlx_stream mlx_stream_new(void);
mlx_stream mlx_stream_new_device(mlx_device dev);
int mlx_stream_set(mlx_stream* stream, const mlx_stream src);
int mlx_stream_free(mlx_stream stream);
int mlx_stream_tostring(mlx_string* str, mlx_stream stream);
bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs);
int mlx_stream_get_device(mlx_device* dev, mlx_stream stream);
int mlx_stream_get_index(int* index, mlx_stream stream);
int mlx_synchronize(mlx_stream stream);
int mlx_get_default_stream(mlx_stream* stream, mlx_device dev);
int mlx_set_default_stream(mlx_stream stream);
mlx_stream mlx_default_cpu_stream_new(void);
mlx_stream mlx_default_gpu_stream_new(void);

#ifdef __cplusplus
}
#endif

#endif
