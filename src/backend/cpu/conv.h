/* CPU kernel of Convolution (primitives/conv.h for the definition). */
#ifndef CMLX_BACKEND_CPU_CONV_H
#define CMLX_BACKEND_CPU_CONV_H

#include "primitives/primitive.h"

/* in[0] (N, S..., C), in[1] (O, K..., C / groups), both of out's dtype
 * (float16, bfloat16, float32, float64 or complex64), any layout; the
 * output is row-contiguous. */
int cm_cpu_conv(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
