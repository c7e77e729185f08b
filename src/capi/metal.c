/* mlx/c/metal.h: Metal (Apple only).
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"


int mlx_metal_is_available(bool *res) {
  if (capi_out("mlx_metal_is_available", res)) return 1;
  *res = false;
  return 0;
}

int mlx_metal_start_capture(const char* path) {
  return capi_not_impl(__func__);
}

int mlx_metal_stop_capture(void) {
  return capi_not_impl(__func__);
}
