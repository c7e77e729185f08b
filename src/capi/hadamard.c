/* mlx_hadamard_transform (mlx/c/ops.h) over ops/hadamard.h. */
#include "ops/hadamard.h"
#include "capi/capi.h"

int mlx_hadamard_transform(mlx_array *res, const mlx_array a, mlx_optional_float scale,
                           const mlx_stream s) {
  if (capi_op("hadamard_transform", res, s) || capi_need("hadamard_transform", a)) return 1;
  return capi_set(res,
                  cm_hadamard_transform(capi_arr(a), scale.has_value, scale.value, capi_stream(s)));
}
