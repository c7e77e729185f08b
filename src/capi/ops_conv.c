/* mlx/c/ops.h, convolutions: adapters over src/ops/conv.h (mlx-c has no
 * convolve; it is Python-only in MLX as well). */
#include "capi/capi.h"
#include "ops/conv.h"

static int conv_args(const char *op, mlx_array *res, const mlx_array in, const mlx_array wt,
                     const mlx_stream s) {
  if (capi_op(op, res, s)) return 1;
  return capi_need(op, in) || capi_need(op, wt);
}

int mlx_conv1d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride,
               int padding, int dilation, int groups, const mlx_stream s) {
  if (conv_args("conv1d", res, input, weight, s)) return 1;
  return capi_set(res, cm_conv1d(capi_arr(input), capi_arr(weight), stride, padding, dilation,
                                 groups, capi_stream(s)));
}

int mlx_conv2d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0,
               int stride_1, int padding_0, int padding_1, int dilation_0, int dilation_1,
               int groups, const mlx_stream s) {
  if (conv_args("conv2d", res, input, weight, s)) return 1;
  int st[2] = {stride_0, stride_1}, pd[2] = {padding_0, padding_1};
  int dl[2] = {dilation_0, dilation_1};
  return capi_set(
      res, cm_conv_nd(capi_arr(input), capi_arr(weight), 2, st, pd, dl, groups, capi_stream(s)));
}

int mlx_conv3d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride_0,
               int stride_1, int stride_2, int padding_0, int padding_1, int padding_2,
               int dilation_0, int dilation_1, int dilation_2, int groups, const mlx_stream s) {
  if (conv_args("conv3d", res, input, weight, s)) return 1;
  int st[3] = {stride_0, stride_1, stride_2}, pd[3] = {padding_0, padding_1, padding_2};
  int dl[3] = {dilation_0, dilation_1, dilation_2};
  return capi_set(
      res, cm_conv_nd(capi_arr(input), capi_arr(weight), 3, st, pd, dl, groups, capi_stream(s)));
}

/* A (pointer, count) list; 0, or 1 after reporting. */
static int conv_list(const int *v, size_t num, cm_conv_list *out) {
  int n;
  if (capi_list("conv_general", v, num, &n)) return 1;
  *out = (cm_conv_list){n, v};
  return 0;
}

int mlx_conv_general(mlx_array *res, const mlx_array input, const mlx_array weight,
                     const int *stride, size_t stride_num, const int *padding_lo,
                     size_t padding_lo_num, const int *padding_hi, size_t padding_hi_num,
                     const int *kernel_dilation, size_t kernel_dilation_num,
                     const int *input_dilation, size_t input_dilation_num, int groups, bool flip,
                     const mlx_stream s) {
  if (conv_args("conv_general", res, input, weight, s)) return 1;
  cm_conv_list st, lo, hi, kd, id;
  if (conv_list(stride, stride_num, &st) || conv_list(padding_lo, padding_lo_num, &lo) ||
      conv_list(padding_hi, padding_hi_num, &hi) ||
      conv_list(kernel_dilation, kernel_dilation_num, &kd) ||
      conv_list(input_dilation, input_dilation_num, &id))
    return 1;
  return capi_set(res, cm_conv_general(capi_arr(input), capi_arr(weight), st, lo, hi, kd, id,
                                       groups, flip, capi_stream(s)));
}

int mlx_conv_transpose1d(mlx_array *res, const mlx_array input, const mlx_array weight, int stride,
                         int padding, int dilation, int output_padding, int groups,
                         const mlx_stream s) {
  if (conv_args("conv_transpose1d", res, input, weight, s)) return 1;
  return capi_set(res, cm_conv_transpose_nd(capi_arr(input), capi_arr(weight), 1, &stride, &padding,
                                            &dilation, &output_padding, groups, capi_stream(s)));
}

int mlx_conv_transpose2d(mlx_array *res, const mlx_array input, const mlx_array weight,
                         int stride_0, int stride_1, int padding_0, int padding_1, int dilation_0,
                         int dilation_1, int output_padding_0, int output_padding_1, int groups,
                         const mlx_stream s) {
  if (conv_args("conv_transpose2d", res, input, weight, s)) return 1;
  int st[2] = {stride_0, stride_1}, pd[2] = {padding_0, padding_1};
  int dl[2] = {dilation_0, dilation_1}, op[2] = {output_padding_0, output_padding_1};
  return capi_set(res, cm_conv_transpose_nd(capi_arr(input), capi_arr(weight), 2, st, pd, dl, op,
                                            groups, capi_stream(s)));
}

int mlx_conv_transpose3d(mlx_array *res, const mlx_array input, const mlx_array weight,
                         int stride_0, int stride_1, int stride_2, int padding_0, int padding_1,
                         int padding_2, int dilation_0, int dilation_1, int dilation_2,
                         int output_padding_0, int output_padding_1, int output_padding_2,
                         int groups, const mlx_stream s) {
  if (conv_args("conv_transpose3d", res, input, weight, s)) return 1;
  int st[3] = {stride_0, stride_1, stride_2}, pd[3] = {padding_0, padding_1, padding_2};
  int dl[3] = {dilation_0, dilation_1, dilation_2};
  int op[3] = {output_padding_0, output_padding_1, output_padding_2};
  return capi_set(res, cm_conv_transpose_nd(capi_arr(input), capi_arr(weight), 3, st, pd, dl, op,
                                            groups, capi_stream(s)));
}
