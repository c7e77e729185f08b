/* mlx/c/ops.h, elementwise binary ops: adapters over src/ops/binary.h. */
#include "capi/capi.h"
#include "ops/binary.h"

#define BINARY(NAME, CM)                                                                   \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) { \
    if (capi_need(#NAME, a) || capi_need(#NAME, b)) return 1;                              \
    return capi_set(res, CM(capi_arr(a), capi_arr(b), capi_stream(s)));                    \
  }

BINARY(add, cm_add)
BINARY(subtract, cm_subtract)
BINARY(multiply, cm_multiply)
BINARY(divide, cm_divide)
BINARY(floor_divide, cm_floor_divide)
BINARY(remainder, cm_remainder)
BINARY(power, cm_power)
BINARY(maximum, cm_maximum)
BINARY(minimum, cm_minimum)
BINARY(arctan2, cm_arctan2)
BINARY(logaddexp, cm_logaddexp)
BINARY(equal, cm_equal)
BINARY(not_equal, cm_not_equal)
BINARY(less, cm_less)
BINARY(less_equal, cm_less_equal)
BINARY(greater, cm_greater)
BINARY(greater_equal, cm_greater_equal)
BINARY(logical_and, cm_logical_and)
BINARY(logical_or, cm_logical_or)
BINARY(bitwise_and, cm_bitwise_and)
BINARY(bitwise_or, cm_bitwise_or)
BINARY(bitwise_xor, cm_bitwise_xor)
BINARY(left_shift, cm_left_shift)
BINARY(right_shift, cm_right_shift)

/* divmod: the vector (quotient, remainder). */
int mlx_divmod(mlx_vector_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) {
  if (capi_need("divmod", a) || capi_need("divmod", b)) return 1;
  cm_array *out[2];
  if (cm_divmod(capi_arr(a), capi_arr(b), &out[0], &out[1], capi_stream(s))) return capi_fail();
  int rc = capi_vector_set_arrays(res, out, 2);
  cm_release(out[0]);
  cm_release(out[1]);
  return rc;
}
