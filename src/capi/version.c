/* mlx/c/version.h: the MLX version whose behaviour this library mirrors. */
#include "capi/capi.h"

int mlx_version(mlx_string *str_) {
  if (capi_out("mlx_version", str_)) return 1;
  return capi_string_set(str_, "0.32.4");
}
