/* CPU kernels of the Unary and StopGradient primitives. */
#ifndef CMLX_BACKEND_CPU_UNARY_H
#define CMLX_BACKEND_CPU_UNARY_H

#include "primitives/primitive.h"

/* out = op(in[0]) elementwise; the op code and constants are in p
 * (a cm_unary_params). */
int cm_cpu_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* out shares in[0]'s buffer and layout. */
int cm_cpu_stop_gradient(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
