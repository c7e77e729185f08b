/* CPU kernel of the Hadamard primitive (primitives/hadamard.h). */
#ifndef CMLX_BACKEND_CPU_HADAMARD_H
#define CMLX_BACKEND_CPU_HADAMARD_H

#include "primitives/primitive.h"

/* p is a cm_hadamard_params; the output is row-contiguous. */
int cm_cpu_hadamard(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
