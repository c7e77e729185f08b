/* cmlx: mlx-c compatible C API.  Devices (cpu, gpu) and their properties. */
#ifndef MLX_DEVICE_H
#define MLX_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlx_device_ { void* ctx; } mlx_device;
typedef enum mlx_device_type_ { MLX_CPU, MLX_GPU } mlx_device_type;
mlx_device mlx_device_new(void);
mlx_device mlx_device_new_type(mlx_device_type type, int index);
int mlx_device_free(mlx_device dev);
int mlx_device_set(mlx_device* dev, const mlx_device src);
int mlx_device_tostring(mlx_string* str, mlx_device dev);
bool mlx_device_equal(mlx_device lhs, mlx_device rhs);
int mlx_device_get_index(int* index, mlx_device dev);
int mlx_device_get_type(mlx_device_type* type, mlx_device dev);
int mlx_get_default_device(mlx_device* dev);
int mlx_set_default_device(mlx_device dev);
int mlx_device_is_available(bool* avail, mlx_device dev);
int mlx_device_count(int* count, mlx_device_type type);
typedef struct mlx_device_info_ { void* ctx; } mlx_device_info;
mlx_device_info mlx_device_info_new(void);
int mlx_device_info_get(mlx_device_info* info, mlx_device dev);
int mlx_device_info_free(mlx_device_info info);
int mlx_device_info_has_key( bool* exists, mlx_device_info info, const char* key);
int mlx_device_info_is_string( bool* is_string, mlx_device_info info, const char* key);
int mlx_device_info_get_string( const char** value, mlx_device_info info, const char* key);
int mlx_device_info_get_size( size_t* value, mlx_device_info info, const char* key);
int mlx_device_info_get_keys(mlx_vector_string* keys, mlx_device_info info);

#ifdef __cplusplus
}
#endif

#endif
