/* mlx/c/cuda.h: the CUDA backend (not built yet).
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"


int mlx_cuda_is_available(bool *res) {
  if (capi_out("mlx_cuda_is_available", res)) return 1;
  *res = false;
  return 0;
}
