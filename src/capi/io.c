/* mlx/c/io.h: loading and saving arrays.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"



int mlx_load_reader(mlx_array* res, mlx_io_reader in_stream, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_load(mlx_array* res, const char* file, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_load_gguf(mlx_io_gguf* gguf, const char* file, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_load_safetensors_reader(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1,
                                mlx_io_reader in_stream, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_load_safetensors(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1,
                         const char *file, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a) {
  return capi_not_impl(__func__);
}

int mlx_save(const char* file, const mlx_array a) {
  return capi_not_impl(__func__);
}

int mlx_save_gguf(const char* file, mlx_io_gguf gguf) {
  return capi_not_impl(__func__);
}

int mlx_save_safetensors_writer(mlx_io_writer in_stream, const mlx_map_string_to_array param,
                                const mlx_map_string_to_string metadata) {
  return capi_not_impl(__func__);
}

int mlx_save_safetensors(const char *file, const mlx_map_string_to_array param,
                         const mlx_map_string_to_string metadata) {
  return capi_not_impl(__func__);
}
