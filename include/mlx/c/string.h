/* cmlx: mlx-c compatible C API.  Owned strings. */
#ifndef MLX_STRING_H
#define MLX_STRING_H


#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlx_string_ { void* ctx; } mlx_string;
mlx_string mlx_string_new(void);
mlx_string mlx_string_new_data(const char* str);
int mlx_string_set(mlx_string* str, const mlx_string src);
const char* mlx_string_data(mlx_string str);
int mlx_string_free(mlx_string str);

#ifdef __cplusplus
}
#endif

#endif
