/* mlx/c/ops.h: the operations the core does not have yet (convolution,
 * einsum, fp8, quantization, ...).  Implemented ops live in the other ops_*.c files.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int mlx_block_masked_mm(mlx_array *res, const mlx_array a, const mlx_array b, int block_size,
                        const mlx_array mask_out, const mlx_array mask_lhs,
                        const mlx_array mask_rhs, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv1d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride,
               int padding, int dilation, int groups, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv2d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0,
               int stride_1, int padding_0, int padding_1, int dilation_0, int dilation_1,
               int groups, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv3d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0,
               int stride_1, int stride_2, int padding_0, int padding_1, int padding_2,
               int dilation_0, int dilation_1, int dilation_2, int groups, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv_general(mlx_array *res, const mlx_array input, const mlx_array weight,
                     const int *stride, size_t stride_num, const int *padding_lo,
                     size_t padding_lo_num, const int *padding_hi, size_t padding_hi_num,
                     const int *kernel_dilation, size_t kernel_dilation_num,
                     const int *input_dilation, size_t input_dilation_num, int groups, bool flip,
                     const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv_transpose1d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride,
                         int padding, int dilation, int output_padding, int groups,
                         const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv_transpose2d(mlx_array *res, const mlx_array input, const mlx_array weight,
                         int stride_0, int stride_1, int padding_0, int padding_1, int dilation_0,
                         int dilation_1, int output_padding_0, int output_padding_1, int groups,
                         const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_conv_transpose3d(mlx_array *res, const mlx_array input, const mlx_array weight,
                         int stride_0, int stride_1, int stride_2, int padding_0, int padding_1,
                         int padding_2, int dilation_0, int dilation_1, int dilation_2,
                         int output_padding_0, int output_padding_1, int output_padding_2,
                         int groups, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_dequantize(mlx_array *res, const mlx_array w, const mlx_array scales,
                   const mlx_array biases, mlx_optional_int group_size, mlx_optional_int bits,
                   const char *mode, const mlx_array global_scale, mlx_optional_dtype dtype,
                   const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_einsum(mlx_array *res, const char *subscripts, const mlx_vector_array operands,
               const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_from_fp8(mlx_array* res, const mlx_array x, mlx_dtype dtype, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_gather_mm(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_array lhs_indices,
                  const mlx_array rhs_indices, bool sorted_indices, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_gather_qmm(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array scales,
                   const mlx_array biases, const mlx_array lhs_indices, const mlx_array rhs_indices,
                   bool transpose, mlx_optional_int group_size, mlx_optional_int bits,
                   const char *mode, bool sorted_indices, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_number_of_elements(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                           bool inverted, mlx_dtype dtype, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_qqmm(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array w_scales,
             mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
             const mlx_array global_scale_x, const mlx_array global_scale_w, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_quantize(mlx_vector_array *res, const mlx_array w, mlx_optional_int group_size,
                 mlx_optional_int bits, const char *mode, const mlx_array global_scale,
                 const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_quantized_matmul(mlx_array *res, const mlx_array x, const mlx_array w,
                         const mlx_array scales, const mlx_array biases, bool transpose,
                         mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
                         const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_segmented_mm(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_array segments,
                     const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_tensordot(mlx_array *res, const mlx_array a, const mlx_array b, const int *axes_a,
                  size_t axes_a_num, const int *axes_b, size_t axes_b_num, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_tensordot_axis(mlx_array *res, const mlx_array a, const mlx_array b, int axis,
                       const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_to_fp8(mlx_array* res, const mlx_array x, const mlx_stream s) {
  return capi_not_impl(__func__);
}

