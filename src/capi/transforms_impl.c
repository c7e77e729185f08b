/* mlx/c/transforms_impl.h: vmap tracing internals.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* The stubs ignore their arguments. */
#pragma GCC diagnostic ignored "-Wunused-parameter"



int mlx_detail_vmap_replace(mlx_vector_array* res, const mlx_vector_array inputs, const mlx_vector_array s_inputs, const mlx_vector_array s_outputs, const int* in_axes, size_t in_axes_num, const int* out_axes, size_t out_axes_num) {
  return capi_not_impl(__func__);
}

int mlx_detail_vmap_trace(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun, const mlx_vector_array inputs, const int* in_axes, size_t in_axes_num) {
  return capi_not_impl(__func__);
}
