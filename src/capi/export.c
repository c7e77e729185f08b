/* mlx/c/export.h: exporting and importing functions.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int mlx_export_function(const char *file, const mlx_closure fun, const mlx_vector_array args,
                        bool shapeless) {
  return capi_not_impl(__func__);
}

int mlx_export_function_kwargs(const char *file, const mlx_closure_kwargs fun,
                               const mlx_vector_array args, const mlx_map_string_to_array kwargs,
                               bool shapeless) {
  return capi_not_impl(__func__);
}

mlx_function_exporter mlx_function_exporter_new(const char *file, const mlx_closure fun,
                                                bool shapeless) {
  capi_not_impl(__func__);
  return (mlx_function_exporter){0};
}

int mlx_function_exporter_free(mlx_function_exporter xfunc) {
  return 0;
}

int mlx_function_exporter_apply(const mlx_function_exporter xfunc, const mlx_vector_array args) {
  return capi_not_impl(__func__);
}

int mlx_function_exporter_apply_kwargs(const mlx_function_exporter xfunc,
                                       const mlx_vector_array args,
                                       const mlx_map_string_to_array kwargs) {
  return capi_not_impl(__func__);
}

mlx_imported_function mlx_imported_function_new(const char* file) {
  capi_not_impl(__func__);
  return (mlx_imported_function){0};
}

int mlx_imported_function_free(mlx_imported_function xfunc) {
  return 0;
}

int mlx_imported_function_apply(mlx_vector_array *res, const mlx_imported_function xfunc,
                                const mlx_vector_array args) {
  return capi_not_impl(__func__);
}

int mlx_imported_function_apply_kwargs(mlx_vector_array *res, const mlx_imported_function xfunc,
                                       const mlx_vector_array args,
                                       const mlx_map_string_to_array kwargs) {
  return capi_not_impl(__func__);
}
