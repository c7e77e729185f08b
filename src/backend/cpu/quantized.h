/* CPU kernels of the quantization primitives (primitives/quantized.h),
 * and the code/scale conversions they share.
 *
 * quantized.c: Quantize, FpQuantize, Dequantize, ConvertFP8.
 * quantized_mm.c: QuantizedMatmul and GatherQMM, which read the packed
 * weights directly (a small tile at a time for large products). */
#ifndef CMLX_BACKEND_CPU_QUANTIZED_H
#define CMLX_BACKEND_CPU_QUANTIZED_H

#include "primitives/quantized.h"

int cm_cpu_quantize(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_fp_quantize(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_dequantize(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_convert_fp8(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_quantized_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_gather_qmm(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* E4M3 as MLX's CPU converts it: round to nearest even, anything at or
 * above 464 (NaN and infinities too) saturates to 448 (0x7E). */
uint8_t cm_fp8_encode(float f);
/* The 256 values of E4M3 codes (0x7F and 0xFF are NaN), built on first
 * use. */
const float *cm_fp8_table(void);
/* The 16 values of E2M1 codes. */
extern const float cm_fp4_values[16];
/* The float a scale code stands for: E4M3 for group size 16 (nvfp4),
 * E8M0 (2^(s-127); 0 reads as 2^-127) otherwise. */
float cm_fp_scale(uint8_t s, int group_size);

/* ---- shared by quantized.c and quantized_mm.c ---- */
/* a's elements as a row-contiguous block of dtype t: a's own data when it
 * is already that, else a malloc'd copy (*owned set; free it).  NULL with
 * the error set when out of memory. */
void *cm_q_dense(const cm_array *a, cm_dtype t, bool *owned);
/* The values of n codes (n a multiple of 8) of a bit stream at p: the
 * codes themselves (lut NULL) or lut[code]. */
void cm_q_decode(const uint8_t *p, int n, int bits, const float *lut, float *dst);
/* v rounded to dtype t (float16/bfloat16; others keep the float). */
float cm_q_round(float v, cm_dtype t);

#endif
