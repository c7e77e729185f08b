/* mlx/c/ops.h, creation ops: full, zeros, ones (and _like), arange,
 * linspace, eye, identity, tri.  Thin adapters over src/ops/creation.h. */
#include "capi/capi.h"
#include "ops/creation.h"

int mlx_full(mlx_array *res, const int *shape, size_t shape_num, const mlx_array vals,
             mlx_dtype dtype, const mlx_stream s) {
  if (capi_op("full", res, s)) return 1;
  int nd;
  if (capi_shape("full", shape, shape_num, &nd) || capi_need("full", vals) ||
      capi_dtype("full", dtype))
    return 1;
  return capi_set(
      res, cm_full(nd, (const int32_t *)shape, capi_arr(vals), (cm_dtype)dtype, capi_stream(s)));
}

int mlx_full_like(mlx_array *res, const mlx_array a, const mlx_array vals, mlx_dtype dtype,
                  const mlx_stream s) {
  if (capi_op("full_like", res, s)) return 1;
  if (capi_need("full_like", a) || capi_need("full_like", vals) || capi_dtype("full_like", dtype))
    return 1;
  return capi_set(res, cm_full_like(capi_arr(a), capi_arr(vals), (cm_dtype)dtype, capi_stream(s)));
}

int mlx_zeros(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
              const mlx_stream s) {
  if (capi_op("zeros", res, s)) return 1;
  int nd;
  if (capi_shape("zeros", shape, shape_num, &nd) || capi_dtype("zeros", dtype)) return 1;
  return capi_set(res, cm_zeros(nd, (const int32_t *)shape, (cm_dtype)dtype, capi_stream(s)));
}

int mlx_ones(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
             const mlx_stream s) {
  if (capi_op("ones", res, s)) return 1;
  int nd;
  if (capi_shape("ones", shape, shape_num, &nd) || capi_dtype("ones", dtype)) return 1;
  return capi_set(res, cm_ones(nd, (const int32_t *)shape, (cm_dtype)dtype, capi_stream(s)));
}

int mlx_zeros_like(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (capi_op("zeros_like", res, s)) return 1;
  if (capi_need("zeros_like", a)) return 1;
  return capi_set(res, cm_zeros_like(capi_arr(a), capi_stream(s)));
}

int mlx_ones_like(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (capi_op("ones_like", res, s)) return 1;
  if (capi_need("ones_like", a)) return 1;
  return capi_set(res, cm_ones_like(capi_arr(a), capi_stream(s)));
}

int mlx_arange(mlx_array *res, double start, double stop, double step, mlx_dtype dtype,
               const mlx_stream s) {
  if (capi_op("arange", res, s)) return 1;
  return capi_set(res, cm_arange(start, stop, step, (cm_dtype)dtype, capi_stream(s)));
}

int mlx_linspace(mlx_array *res, double start, double stop, int num, mlx_dtype dtype,
                 const mlx_stream s) {
  if (capi_op("linspace", res, s)) return 1;
  return capi_set(res, cm_linspace(start, stop, num, (cm_dtype)dtype, capi_stream(s)));
}

int mlx_eye(mlx_array *res, int n, int m, int k, mlx_dtype dtype, const mlx_stream s) {
  if (capi_op("eye", res, s)) return 1;
  return capi_set(res, cm_eye(n, m, k, (cm_dtype)dtype, capi_stream(s)));
}

int mlx_identity(mlx_array *res, int n, mlx_dtype dtype, const mlx_stream s) {
  if (capi_op("identity", res, s)) return 1;
  return capi_set(res, cm_identity(n, (cm_dtype)dtype, capi_stream(s)));
}

int mlx_tri(mlx_array *res, int n, int m, int k, mlx_dtype type, const mlx_stream s) {
  if (capi_op("tri", res, s)) return 1;
  return capi_set(res, cm_tri(n, m, k, (cm_dtype)type, capi_stream(s)));
}
