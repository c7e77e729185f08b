/* mlx/c/ops.h: the operations the core does not have yet.  Implemented ops
 * live in the other ops_*.c files.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int mlx_number_of_elements(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                           bool inverted, mlx_dtype dtype, const mlx_stream s) {
  return capi_not_impl(__func__);
}

