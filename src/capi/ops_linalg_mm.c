/* mlx/c/ops.h, matrix products: adapters over src/ops/matmul.h. */
#include "capi/capi.h"
#include "ops/matmul.h"

int mlx_matmul(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) {
  if (capi_op("matmul", res, s)) return 1;
  if (capi_need("matmul", a) || capi_need("matmul", b)) return 1;
  return capi_set(res, cm_matmul(capi_arr(a), capi_arr(b), capi_stream(s)));
}

int mlx_addmm(mlx_array *res, const mlx_array c, const mlx_array a, const mlx_array b,
              float alpha, float beta, const mlx_stream s) {
  if (capi_op("addmm", res, s)) return 1;
  if (capi_need("addmm", c) || capi_need("addmm", a) || capi_need("addmm", b)) return 1;
  return capi_set(res, cm_addmm(capi_arr(c), capi_arr(a), capi_arr(b), alpha, beta,
                                capi_stream(s)));
}
