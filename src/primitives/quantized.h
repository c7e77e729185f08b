/* The quantization primitives (MLX's fast::Quantize, QuantizedMatmul,
 * GatherQMM, fast::ConvertFP8) and their one parameter block.
 *
 * Packed layout (MLX's, bit for bit): the last axis of a weight matrix is
 * cut into groups of group_size values; each value's code takes `bits`
 * bits of a little-endian bit stream per row, stored as uint32 words (so
 * element i of a row sits at bit i * bits of the row's bytes; for 3, 5 and
 * 6 bits a code may straddle two bytes).  Affine codes q give
 * scale * q + bias per group; mxfp4/nvfp4 codes are E2M1 (sign bit 3) and
 * mxfp8 codes E4M3, times a per-group scale that is E8M0 (mxfp, 2^(s-127))
 * or E4M3 (nvfp4, times global_scale / 2688 when a global scale is given).
 *
 * Inputs, by primitive:
 *   Quantize          [w]                           -> wq, scales, biases
 *   FpQuantize        [w, (global_scale)]            -> wq, scales (uint8)
 *   Dequantize        [w, scales, biases] (affine) or [w, scales, (global)]
 *   QuantizedMatmul   [x, w, scales, (biases)]       x, scales, biases in out's dtype
 *   GatherQMM         [x, w, scales, (biases), lhs_indices, rhs_indices]
 *   ConvertFP8        [x]                            to or from E4M3 bytes */
#ifndef CMLX_PRIMITIVES_QUANTIZED_H
#define CMLX_PRIMITIVES_QUANTIZED_H

#include "primitives/primitive.h"

typedef enum cm_qmode {
  CM_QMODE_AFFINE = 0,
  CM_QMODE_MXFP4 = 1,
  CM_QMODE_MXFP8 = 2,
  CM_QMODE_NVFP4 = 3,
} cm_qmode;

typedef struct cm_quant_params {
  int32_t mode; /* a cm_qmode */
  int32_t group_size, bits;
  int32_t transpose;  /* QuantizedMatmul, GatherQMM: w is (N, K) packed along K */
  int32_t sorted;     /* GatherQMM: the indices were given as sorted */
  int32_t has_global; /* a global scale is the last quantization input */
  /* Dequantize (affine): the dtypes whose rounding MLX's composition goes
   * through, scales * q in t1 (scales' dtype), + biases in t2 */
  int32_t t1, t2;
  int32_t to_fp8; /* ConvertFP8: the direction */
} cm_quant_params;
CM_PARAMS_ACCESSOR(cm_quant_params, cm_quant_params_of)

extern const cm_prim cm_prim_quantize;
extern const cm_prim cm_prim_fp_quantize;
extern const cm_prim cm_prim_dequantize;
extern const cm_prim cm_prim_quantized_matmul;
extern const cm_prim cm_prim_gather_qmm;
extern const cm_prim cm_prim_convert_fp8;

#endif
