/* mlx/c/ops.h: the operations the core does not have yet (convolution,
 * ...).  Implemented ops live in the other ops_*.c files.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

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

int mlx_number_of_elements(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                           bool inverted, mlx_dtype dtype, const mlx_stream s) {
  return capi_not_impl(__func__);
}

