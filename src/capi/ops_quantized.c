/* mlx/c/ops.h, quantization: adapters over src/ops/quantized.h.  An
 * empty optional array (biases, global scales, indices) is "not given";
 * an mlx_optional_int without a value takes the mode's default. */
#include "capi/capi.h"
#include "ops/quantized.h"

static int opt_int(mlx_optional_int v) { return v.has_value ? v.value : -1; }

int mlx_quantize(mlx_vector_array *res, const mlx_array w, mlx_optional_int group_size,
                 mlx_optional_int bits, const char *mode, const mlx_array global_scale,
                 const mlx_stream s) {
  if (capi_op("quantize", res, s) || capi_need("quantize", w)) return 1;
  cm_array *outs[3] = {NULL, NULL, NULL};
  int n = 0;
  if (cm_quantize(capi_arr(w), opt_int(group_size), opt_int(bits), mode, capi_arr(global_scale),
                  outs, &n, capi_stream(s)))
    return capi_fail();
  int rc = capi_vector_set_arrays(res, outs, (size_t)n);
  for (int i = 0; i < n; i++) cm_release(outs[i]);
  return rc;
}

int mlx_dequantize(mlx_array *res, const mlx_array w, const mlx_array scales,
                   const mlx_array biases, mlx_optional_int group_size, mlx_optional_int bits,
                   const char *mode, const mlx_array global_scale, mlx_optional_dtype dtype,
                   const mlx_stream s) {
  if (capi_op("dequantize", res, s) || capi_need("dequantize", w) ||
      capi_need("dequantize", scales) || (dtype.has_value && capi_dtype("dequantize", dtype.value)))
    return 1;
  return capi_set(res,
                  cm_dequantize(capi_arr(w), capi_arr(scales), capi_arr(biases),
                                opt_int(group_size), opt_int(bits), mode, capi_arr(global_scale),
                                dtype.has_value ? (int)dtype.value : -1, capi_stream(s)));
}

int mlx_quantized_matmul(mlx_array *res, const mlx_array x, const mlx_array w,
                         const mlx_array scales, const mlx_array biases, bool transpose,
                         mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
                         const mlx_stream s) {
  const char *fn = "quantized_matmul";
  if (capi_op(fn, res, s) || capi_need(fn, x) || capi_need(fn, w) || capi_need(fn, scales))
    return 1;
  return capi_set(res, cm_quantized_matmul(capi_arr(x), capi_arr(w), capi_arr(scales),
                                           capi_arr(biases), transpose, opt_int(group_size),
                                           opt_int(bits), mode, capi_stream(s)));
}

int mlx_gather_qmm(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array scales,
                   const mlx_array biases, const mlx_array lhs_indices, const mlx_array rhs_indices,
                   bool transpose, mlx_optional_int group_size, mlx_optional_int bits,
                   const char *mode, bool sorted_indices, const mlx_stream s) {
  const char *fn = "gather_qmm";
  if (capi_op(fn, res, s) || capi_need(fn, x) || capi_need(fn, w) || capi_need(fn, scales))
    return 1;
  return capi_set(res, cm_gather_qmm(capi_arr(x), capi_arr(w), capi_arr(scales), capi_arr(biases),
                                     capi_arr(lhs_indices), capi_arr(rhs_indices), transpose,
                                     opt_int(group_size), opt_int(bits), mode, sorted_indices,
                                     capi_stream(s)));
}

int mlx_qqmm(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array w_scales,
             mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
             const mlx_array global_scale_x, const mlx_array global_scale_w, const mlx_stream s) {
  if (capi_op("qqmm", res, s) || capi_need("qqmm", x) || capi_need("qqmm", w)) return 1;
  return capi_set(res, cm_qqmm(capi_arr(x), capi_arr(w), capi_arr(w_scales), opt_int(group_size),
                               opt_int(bits), mode, capi_arr(global_scale_x),
                               capi_arr(global_scale_w), capi_stream(s)));
}

int mlx_to_fp8(mlx_array *res, const mlx_array x, const mlx_stream s) {
  if (capi_op("to_fp8", res, s) || capi_need("to_fp8", x)) return 1;
  return capi_set(res, cm_to_fp8(capi_arr(x), capi_stream(s)));
}

int mlx_from_fp8(mlx_array *res, const mlx_array x, mlx_dtype dtype, const mlx_stream s) {
  if (capi_op("from_fp8", res, s) || capi_need("from_fp8", x) || capi_dtype("from_fp8", dtype))
    return 1;
  return capi_set(res, cm_from_fp8(capi_arr(x), (cm_dtype)dtype, capi_stream(s)));
}
