/* CPU kernel of RandomBits (primitives/random.h). */
#ifndef CMLX_BACKEND_CPU_RANDOM_H
#define CMLX_BACKEND_CPU_RANDOM_H

#include "primitives/primitive.h"

/* in[0]: the keys, uint32 of shape (..., 2), any layout; the output is
 * row-contiguous. */
int cm_cpu_random_bits(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
