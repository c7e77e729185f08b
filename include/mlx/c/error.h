/* cmlx: mlx-c compatible C API.  Error handling: every function returning int reports failure through the
 * handler set here and returns nonzero. */
#ifndef MLX_ERROR_H
#define MLX_ERROR_H


#ifdef __cplusplus
extern "C" {
#endif

typedef void (*mlx_error_handler_func)(const char* msg, void* data);
void mlx_set_error_handler( mlx_error_handler_func handler, void* data, void (*dtor)(void*));
void _mlx_error(const char* file, const int line, const char* fmt, ...);
#define mlx_error(...) _mlx_error(__FILE__, __LINE__, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
