/* The quantized product x @ W^T on AMX tiles (quantized_amx.c). */
#ifndef CMLX_BACKEND_CPU_QUANTIZED_AMX_H
#define CMLX_BACKEND_CPU_QUANTIZED_AMX_H

#include "backend/cpu/quantized_mm.h"

/* out (M x N, float32) = x @ W^T for x (M x K, float32 holding float16 or
 * bfloat16 values, c->xdt) and W 4- or 8-bit affine with group size 32,
 * 64 or 128.  1 when done; 0 when the tiles do not apply (no AMX, another mode
 * or shape, too little work, values they cannot carry), out untouched;
 * -1 after reporting an error. */
int cm_q_qmm_amx(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, float *out);

#endif
