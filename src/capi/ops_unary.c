/* mlx/c/ops.h, elementwise unary ops: adapters over src/ops/unary.h, one
 * per row of ops/unary_ops.h whose mlxc column is MLXC; the OWN rows and
 * stop_gradient (not an op code) by hand. */
#include "capi/capi.h"
#include "ops/unary.h"

/* An adapter for a row mlx-c does not declare must not compile (its
 * mlxc column is wrong); a declared one whose prototype differs never does. */
#pragma GCC diagnostic error "-Wmissing-prototypes"

#define UNARY(NAME, CM)                                                   \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;          \
    return capi_set(res, CM(capi_arr(a), capi_stream(s)));                \
  }
#define CM_X(CODE, name, Name, out, checks, grad, ctor, mlxc, ...) \
  CM_IF_##mlxc(UNARY(name, cm_##name))
CM_UNARY_OPS(CM_X)
#undef CM_X

UNARY(stop_gradient, cm_stop_gradient)

int mlx_round(mlx_array *res, const mlx_array a, int decimals, const mlx_stream s) {
  if (capi_op("round", res, s)) return 1;
  if (capi_need("round", a)) return 1;
  return capi_set(res, cm_round(capi_arr(a), decimals, capi_stream(s)));
}

int mlx_nan_to_num(mlx_array *res, const mlx_array a, float nan, mlx_optional_float posinf,
                   mlx_optional_float neginf, const mlx_stream s) {
  if (capi_op("nan_to_num", res, s)) return 1;
  if (capi_need("nan_to_num", a)) return 1;
  return capi_set(res, cm_nan_to_num(capi_arr(a), nan, posinf.has_value, posinf.value,
                                     neginf.has_value, neginf.value, capi_stream(s)));
}
