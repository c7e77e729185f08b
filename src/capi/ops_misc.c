/* mlx/c/ops.h: where, clip, astype, broadcasting, contiguous copies,
 * depends.  Adapters over src/ops/ternary.h and src/ops/common.h. */
#include <stdlib.h>

#include "capi/capi.h"
#include "ops/common.h"
#include "ops/ternary.h"

int mlx_where(mlx_array *res, const mlx_array condition, const mlx_array x, const mlx_array y,
              const mlx_stream s) {
  if (capi_op("where", res, s)) return 1;
  if (capi_need("where", condition) || capi_need("where", x) || capi_need("where", y)) return 1;
  return capi_set(res, cm_where(capi_arr(condition), capi_arr(x), capi_arr(y), capi_stream(s)));
}

/* An empty a_min / a_max means "no bound on that side". */
int mlx_clip(mlx_array *res, const mlx_array a, const mlx_array a_min, const mlx_array a_max,
             const mlx_stream s) {
  if (capi_op("clip", res, s)) return 1;
  if (capi_need("clip", a)) return 1;
  return capi_set(res, cm_clip(capi_arr(a), capi_arr(a_min), capi_arr(a_max), capi_stream(s)));
}

int mlx_astype(mlx_array *res, const mlx_array a, mlx_dtype dtype, const mlx_stream s) {
  if (capi_op("astype", res, s)) return 1;
  if (capi_need("astype", a) || capi_dtype("astype", dtype)) return 1;
  return capi_set(res, cm_astype(capi_arr(a), (cm_dtype)dtype, capi_stream(s)));
}

int mlx_broadcast_to(mlx_array *res, const mlx_array a, const int *shape, size_t shape_num,
                     const mlx_stream s) {
  if (capi_op("broadcast_to", res, s)) return 1;
  int nd;
  if (capi_need("broadcast_to", a) || capi_shape("broadcast_to", shape, shape_num, &nd)) return 1;
  return capi_set(res, cm_broadcast_to(capi_arr(a), nd, (const int32_t *)shape, capi_stream(s)));
}

int mlx_contiguous(mlx_array *res, const mlx_array a, bool allow_col_major, const mlx_stream s) {
  if (capi_op("contiguous", res, s)) return 1;
  if (capi_need("contiguous", a)) return 1;
  return capi_set(res, cm_contiguous(capi_arr(a), allow_col_major, capi_stream(s)));
}

/* Arrays are immutable, so a contiguous array may stand for its copy. */
int mlx_copy(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (capi_op("copy", res, s)) return 1;
  if (capi_need("copy", a)) return 1;
  return capi_set(res, cm_contiguous(capi_arr(a), false, capi_stream(s)));
}

/* mlx-c's depends has no stream argument: the default stream. */
int mlx_depends(mlx_vector_array *res, const mlx_vector_array inputs,
                const mlx_vector_array dependencies) {
  size_t nin, ndeps;
  cm_array *const *ins, *const *deps;
  if (capi_vector_arrays("mlx_depends", inputs, &ins, &nin) ||
      capi_vector_arrays("mlx_depends", dependencies, &deps, &ndeps))
    return 1;
  int n, nd;
  if (capi_list("depends", ins ? (const void *)ins : (const void *)"", nin, &n) ||
      capi_list("depends", deps ? (const void *)deps : (const void *)"", ndeps, &nd))
    return 1;
  cm_array **outs = malloc(sizeof *outs * (size_t)(n ? n : 1));
  if (!outs) return capi_errorf("[depends] Out of memory.");
  if (cm_depends(n, ins, nd, deps, CM_STREAM_DEFAULT, outs)) {
    free(outs);
    return capi_fail();
  }
  int rc = capi_vector_set_arrays(res, outs, (size_t)n);
  for (int i = 0; i < n; i++) cm_release(outs[i]);
  free(outs);
  return rc;
}
