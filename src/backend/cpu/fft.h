/* CPU kernel of the FFT primitive (primitives/fft.h). */
#ifndef CMLX_BACKEND_CPU_FFT_H
#define CMLX_BACKEND_CPU_FFT_H

#include "primitives/primitive.h"

/* p is a cm_fft_params; the output is row-contiguous. */
int cm_cpu_fft(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
