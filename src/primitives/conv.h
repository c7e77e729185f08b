/* Convolution: one primitive for every convolution MLX has (conv1d/2d/3d,
 * conv_general, the transposed convolutions and convolve are all op
 * compositions around it).
 *
 * Inputs: in (N, S_1..S_d, C) and wt (O, K_1..K_d, C / groups), both of
 * the output's dtype (the op casts them).  Output (N, Y_1..Y_d, O) with,
 * on every spatial axis (all sizes computed in 64 bits),
 *   Y = (1 + idil * (S - 1) + pad_lo + pad_hi - (1 + kdil * (K - 1))) / stride + 1
 * and
 *   out[n, y, o] = sum over taps k and channels c of the group of o of
 *                  wt[o, flip ? K-1-k : k, c] * xd[n, y * stride + k * kdil - pad_lo, c]
 * where xd is the input dilated by idil (idil - 1 zeros between elements)
 * and zero outside it.  Paddings are non-negative here: the op slices the
 * input for negative ones, as MLX does.
 *
 * The parameter block is variable-length: the header and one entry per
 * spatial axis (cm_conv_params_size bytes), compared and saved byte by
 * byte (no padding, no pointers). */
#ifndef CMLX_PRIMITIVES_CONV_H
#define CMLX_PRIMITIVES_CONV_H

#include "primitives/primitive.h"

#define CM_CONV_MAX_SPATIAL 3

/* The node computes the convolution, or its gradient with respect to the
 * weight: inputs (in, cotangent (N, Y..., O)), output the weight's shape
 * (O, K..., C / groups), dW[o, k, c] = sum over n, y of
 * cotan[n, y, o] * xd[n, y * stride + k' * kdil - pad_lo, c] (k' the tap k
 * reads, as above).  The same patches as the forward, so one kernel
 * serves both. */
enum { CM_CONV_FORWARD = 0, CM_CONV_WEIGHT_GRAD = 1 };

typedef struct cm_conv_axis {
  int32_t stride, pad_lo, pad_hi, kdil, idil;
} cm_conv_axis;

typedef struct cm_conv_params {
  int32_t ndim;                         /* spatial axes, 1..3 */
  int32_t groups;                       /* >= 1, divides C and O */
  int32_t flip;                         /* 0 or 1 */
  int32_t kind;                         /* CM_CONV_FORWARD or CM_CONV_WEIGHT_GRAD */
  cm_conv_axis ax[CM_CONV_MAX_SPATIAL]; /* ndim are stored */
} cm_conv_params;
CM_PARAMS_ACCESSOR_VAR(cm_conv_params, cm_conv_params_of, ax)

/* The block's size from its header; SIZE_MAX for an impossible header. */
size_t cm_conv_params_size(const cm_params *p);

/* A full struct from a block of any valid length (a node stores only
 * cm_conv_params_size bytes, so `*p` would read past it). */
cm_conv_params cm_conv_params_copy(const cm_conv_params *p);

/* The output length of one spatial axis (64 bits; may be <= 0). */
int64_t cm_conv_out_len(int64_t in_len, int64_t k_len, const cm_conv_axis *a);

extern const cm_prim cm_prim_conv;

#endif
