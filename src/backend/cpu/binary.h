/* CPU kernel of the Binary primitive. */
#ifndef CMLX_BACKEND_CPU_BINARY_H
#define CMLX_BACKEND_CPU_BINARY_H

#include "primitives/primitive.h"

/* out = op(in[0], in[1]); the inputs share out's shape and one dtype. */
int cm_cpu_binary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
