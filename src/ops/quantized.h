/* Quantization ops with MLX 0.32's signatures, defaults, dtypes and errors:
 * quantize, dequantize, quantized_matmul, gather_qmm, qqmm, to_fp8 and
 * from_fp8.  The packed layout is in primitives/quantized.h.
 *
 * Modes and their defaults (group_size / bits < 0 take them):
 *   "affine"  group 64, 4 bits; groups 32/64/128, bits 1, 2, 3, 4, 5, 6, 8;
 *             scales and biases in w's dtype
 *   "mxfp4"   group 32, 4 bits, E8M0 scales (uint8), no biases
 *   "mxfp8"   group 32, 8 bits, E8M0 scales
 *   "nvfp4"   group 16, 4 bits, E4M3 scales, optional float32 global scale
 * Any other mode is MLX's ValueError "[quantize] Invalid quantization mode
 * 'xyz'.".  Dequantize gives the promoted type of scales and biases
 * (affine) or bfloat16 (fp modes; float32 with a global scale, as MLX's
 * arithmetic promotes), unless dtype says otherwise.
 *
 * quantized_matmul(x, w, ...) is x @ dequantize(w).T (transpose) or
 * x @ dequantize(w); affine promotes x with the scales, fp modes keep x's
 * dtype.  Batch axes of x and w broadcast when both have them.
 * gather_qmm picks x's and w's matrices by lhs/rhs indices (default: every
 * batch index), output shape indices.shape + (M, N); with neither it is
 * quantized_matmul.  qqmm (CPU: x with one row, w quantized) quantizes x in
 * the same mode and multiplies. */
#ifndef CMLX_OPS_QUANTIZED_H
#define CMLX_OPS_QUANTIZED_H

#include "ops/common.h"

/* outs receive wq, scales and, for affine, biases (*nout = 3 or 2). */
int cm_quantize(cm_array *w, int group_size, int bits, const char *mode, cm_array *global_scale,
                cm_array **outs, int *nout, cm_stream s);
/* dtype < 0: the default dtype. */
cm_array *cm_dequantize(cm_array *w, cm_array *scales, cm_array *biases, int group_size, int bits,
                        const char *mode, cm_array *global_scale, int dtype, cm_stream s);
cm_array *cm_quantized_matmul(cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                              bool transpose, int group_size, int bits, const char *mode,
                              cm_stream s);
cm_array *cm_gather_qmm(cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                        cm_array *lhs_indices, cm_array *rhs_indices, bool transpose,
                        int group_size, int bits, const char *mode, bool sorted_indices,
                        cm_stream s);
/* gather_qmm with MLX's per-expert nvfp4 global scale (NULL: none), which the
 * mlx-c 0.6 signature above does not have. */
cm_array *cm_gather_qmm_global(cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                               cm_array *lhs_indices, cm_array *rhs_indices, bool transpose,
                               int group_size, int bits, const char *mode,
                               cm_array *global_scale, bool sorted_indices, cm_stream s);
cm_array *cm_qqmm(cm_array *x, cm_array *w, cm_array *scales, int group_size, int bits,
                  const char *mode, cm_array *global_scale_x, cm_array *global_scale_w,
                  cm_stream s);
/* MLX's CPU build has no gather_qqmm kernel: NotImplementedError naming it. */
cm_array *cm_gather_qqmm(cm_array *x, cm_array *w, cm_stream s);
cm_array *cm_to_fp8(cm_array *x, cm_stream s);
cm_array *cm_from_fp8(cm_array *x, cm_dtype dtype, cm_stream s);

#endif
