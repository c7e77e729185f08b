/* mlx/c/ops.h, elementwise unary ops: adapters over src/ops/unary.h. */
#include "capi/capi.h"
#include "ops/unary.h"

#define UNARY(NAME, CM)                                                \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_stream s) { \
    if (capi_need(#NAME, a)) return 1;                                 \
    return capi_set(res, CM(capi_arr(a), capi_stream(s)));             \
  }

UNARY(abs, cm_abs)
UNARY(negative, cm_negative)
UNARY(sign, cm_sign)
UNARY(square, cm_square)
UNARY(sqrt, cm_sqrt)
UNARY(rsqrt, cm_rsqrt)
UNARY(reciprocal, cm_reciprocal)
UNARY(exp, cm_exp)
UNARY(expm1, cm_expm1)
UNARY(log, cm_log)
UNARY(log2, cm_log2)
UNARY(log10, cm_log10)
UNARY(log1p, cm_log1p)
UNARY(sin, cm_sin)
UNARY(cos, cm_cos)
UNARY(tan, cm_tan)
UNARY(arcsin, cm_arcsin)
UNARY(arccos, cm_arccos)
UNARY(arctan, cm_arctan)
UNARY(sinh, cm_sinh)
UNARY(cosh, cm_cosh)
UNARY(tanh, cm_tanh)
UNARY(arcsinh, cm_arcsinh)
UNARY(arccosh, cm_arccosh)
UNARY(arctanh, cm_arctanh)
UNARY(sigmoid, cm_sigmoid)
UNARY(erf, cm_erf)
UNARY(erfinv, cm_erfinv)
UNARY(floor, cm_floor)
UNARY(ceil, cm_ceil)
UNARY(isnan, cm_isnan)
UNARY(isinf, cm_isinf)
UNARY(isfinite, cm_isfinite)
UNARY(isposinf, cm_isposinf)
UNARY(isneginf, cm_isneginf)
UNARY(logical_not, cm_logical_not)
UNARY(bitwise_invert, cm_bitwise_invert)
UNARY(real, cm_real)
UNARY(imag, cm_imag)
UNARY(conjugate, cm_conjugate)
UNARY(degrees, cm_degrees)
UNARY(radians, cm_radians)
UNARY(stop_gradient, cm_stop_gradient)

int mlx_round(mlx_array *res, const mlx_array a, int decimals, const mlx_stream s) {
  if (capi_need("round", a)) return 1;
  return capi_set(res, cm_round(capi_arr(a), decimals, capi_stream(s)));
}

int mlx_nan_to_num(mlx_array *res, const mlx_array a, float nan, mlx_optional_float posinf,
                   mlx_optional_float neginf, const mlx_stream s) {
  if (capi_need("nan_to_num", a)) return 1;
  return capi_set(res, cm_nan_to_num(capi_arr(a), nan, posinf.has_value, posinf.value, neginf.has_value,
                                     neginf.value, capi_stream(s)));
}
