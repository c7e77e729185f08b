/* mlx/c/ops.h, elementwise binary ops: adapters over src/ops/binary.h,
 * one per row of ops/binary_ops.h whose mlxc column is MLXC. */
#include "capi/capi.h"
#include "ops/binary.h"

/* An adapter for a row mlx-c does not declare must not compile (its
 * mlxc column is wrong); a declared one whose prototype differs never does. */
#pragma GCC diagnostic error "-Wmissing-prototypes"

#define BINARY(NAME)                                                                         \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a) || capi_need(#NAME, b)) return 1;      \
    return capi_set(res, cm_##NAME(capi_arr_live(a), capi_arr_live(b), capi_stream(s)));     \
  }
#define CM_X(CODE, name, Name, dtype, grad, mlxc, ...) CM_IF_##mlxc(BINARY(name))
CM_BINARY_OPS(CM_X)
#undef CM_X

/* divmod: the vector (quotient, remainder). */
int mlx_divmod(mlx_vector_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) {
  if (capi_op("divmod", res, s)) return 1;
  if (capi_need("divmod", a) || capi_need("divmod", b)) return 1;
  cm_array *out[2];
  if (cm_divmod(capi_arr(a), capi_arr(b), &out[0], &out[1], capi_stream(s))) return capi_fail();
  int rc = capi_vector_set_arrays(res, out, 2);
  cm_release(out[0]);
  cm_release(out[1]);
  return rc;
}
