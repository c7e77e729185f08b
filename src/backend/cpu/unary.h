/* CPU kernels of the Unary primitive (StopGradient is a view: backend/views.h). */
#ifndef CMLX_BACKEND_CPU_UNARY_H
#define CMLX_BACKEND_CPU_UNARY_H

#include "primitives/primitive.h"

/* out = op(in[0]) elementwise; the op code and constants are in p
 * (a cm_unary_params). */
int cm_cpu_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
