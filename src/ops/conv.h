/* Convolutions with MLX 0.32's rules: conv1d/2d/3d, conv_general, the
 * transposed convolutions and NumPy's convolve.
 *
 * Layout is channels-last: input (N, ..., C_in), weight (C_out, ...,
 * C_in / groups), output (N, ..., C_out).  The number of spatial axes is
 * the input's rank minus two (1 to 3; "[conv] Only works for inputs with
 * 1-3 spatial dimensions. ..."), so conv2d of a 3-D input is a 1-D
 * convolution whose two-entry lists are then refused ("[conv] Invalid
 * strides (1,1) for 1D convolution."), as in MLX.
 *
 * Lists (conv_general): an empty list takes the default (stride 1, padding
 * 0, dilations 1), a one-entry list applies to every axis, otherwise one
 * entry per spatial axis.  Negative padding crops the input.  groups != 1
 * needs 1-D or 2-D; C_in must divide by groups, and so must C_out when
 * groups > 1 (MLX's ValueErrors); groups == 0 is a ValueError.
 *
 * Dtypes: the input must be floating ("[conv] Invalid input array with
 * type int32. Convolution currently only supports floating point types");
 * the weight promotes with it (an int32 weight with float32 input is
 * float32, a complex64 weight makes the convolution complex64).
 * float16/bfloat16 are computed in float32.
 *
 * Transposed convolution (MLX's conv_transpose_general): a convolution of
 * the input dilated by stride, with the flipped kernel, padding
 * dilation * (K - 1) - padding below and the rest, plus output_padding,
 * above.  convolve(a, v, mode): the 1-D convolution of NumPy (the longer
 * operand slides, the kernel flipped), modes "full", "same", "valid". */
#ifndef CMLX_OPS_CONV_H
#define CMLX_OPS_CONV_H

#include <stdbool.h>

#include "ops/common.h"

/* A list argument: n entries (0: default, 1: every axis). */
typedef struct cm_conv_list {
  int n;
  const int *v;
} cm_conv_list;

cm_array *cm_conv_general(cm_array *in, cm_array *wt, cm_conv_list stride, cm_conv_list pad_lo,
                          cm_conv_list pad_hi, cm_conv_list kernel_dilation,
                          cm_conv_list input_dilation, int groups, bool flip, cm_stream s);

/* conv1d/2d/3d: n-entry stride, padding and dilation (n = 1, 2, 3);
 * cm_conv_nd is the common form (n entries each). */
cm_array *cm_conv_nd(cm_array *in, cm_array *wt, int n, const int *stride, const int *padding,
                     const int *dilation, int groups, cm_stream s);
cm_array *cm_conv1d(cm_array *in, cm_array *wt, int stride, int padding, int dilation, int groups,
                    cm_stream s);

/* conv_transpose1d/2d/3d: n entries each. */
cm_array *cm_conv_transpose_nd(cm_array *in, cm_array *wt, int n, const int *stride,
                               const int *padding, const int *dilation, const int *output_padding,
                               int groups, cm_stream s);

/* A Convolution node straight from a parameter block (primitives/conv.h),
 * for transform rules: none of MLX's argument checks, paddings may be
 * negative (cropping the dilated input).  The inputs are promoted to a
 * common dtype; an empty output axis is a ValueError. */
typedef struct cm_conv_params cm_conv_params;
cm_array *cm_conv_from_params(cm_array *in, cm_array *wt, const cm_conv_params *p, cm_stream s);
/* The gradient of that convolution with respect to its weight, whose
 * spatial sizes are kshape (p->ndim of them): a Convolution node of kind
 * CM_CONV_WEIGHT_GRAD over (in, cotan). */
cm_array *cm_conv_weight_grad(cm_array *in, cm_array *cotan, const int32_t *kshape,
                              const cm_conv_params *p, cm_stream s);

/* mode: "full", "same" or "valid" ("[convolve] Invalid mode."). */
cm_array *cm_convolve(cm_array *a, cm_array *v, const char *mode, cm_stream s);

#endif
