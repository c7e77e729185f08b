/* A direct float32 convolution over channels-last images (conv_nhwc.c):
 * the output accumulates in registers, tap by tap, without a patch
 * matrix.  conv.c calls it for one-group convolutions whose output
 * channels are a multiple of 8 on CPUs with AVX2 and FMA. */
#ifndef CMLX_BACKEND_CPU_CONV_NHWC_H
#define CMLX_BACKEND_CPU_CONV_NHWC_H

#include <stdbool.h>
#include <stdint.h>

/* x (N, H, W, C), w (O, KH, KW, C) and y (N, OH, OW, O), all row-major.
 * Output (oh, ow) reads input (oh * sh + kh * dh - ph, ow * sw + kw * dw -
 * pw) through tap (kh, kw), or tap (KH - 1 - kh, KW - 1 - kw) when flip;
 * inputs outside the image are zeros.  Paddings may be negative. */
typedef struct cm_conv_nhwc {
  int64_t N, H, W, C, O;
  int64_t KH, KW, OH, OW;
  int64_t sh, sw, dh, dw, ph, pw;
  bool flip;
} cm_conv_nhwc;

/* Whether cm_cpu_conv_nhwc_f32 runs d on this CPU (also false when the
 * CMLX_MATMUL_SIMD switch turns the SIMD kernels off). */
bool cm_cpu_conv_nhwc_supported(const cm_conv_nhwc *d);

/* y = the convolution; 0, or -1 with the error set (out of memory). */
int cm_cpu_conv_nhwc_f32(const cm_conv_nhwc *d, const float *x, const float *w, float *y);

/* Whether the direct weight gradient beats patches + GEMM for d (which
 * must be supported): stride 1, rows of 8 or more and a weight of at most
 * 160K elements (measured: larger ones spend more on the partial sums,
 * strided ones on reading the input). */
bool cm_cpu_conv_nhwc_wgrad_wins(const cm_conv_nhwc *d);

/* The weight gradient of that convolution: dw (O, KH, KW, C) from x and
 * the cotangent ct (N, OH, OW, O); 0, or -1 with the error set. */
int cm_cpu_conv_nhwc_wgrad_f32(const cm_conv_nhwc *d, const float *x, const float *ct, float *dw);

#endif
