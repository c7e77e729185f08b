/* CPU kernels of the Binary and DivMod primitives. */
#ifndef CMLX_BACKEND_CPU_BINARY_H
#define CMLX_BACKEND_CPU_BINARY_H

#include "primitives/primitive.h"

/* out = op(in[0], in[1]); the inputs share out's shape and one dtype. */
int cm_cpu_binary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* DivMod: outputs 0 and 1 of out's node get floor_divide and remainder. */
int cm_cpu_divmod(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
