/* CPU kernels for the layout primitives that copy (the views that share
 * a buffer are backend/views.h). */
#ifndef CMLX_BACKEND_CPU_LAYOUT_H
#define CMLX_BACKEND_CPU_LAYOUT_H

#include "primitives/primitive.h"

/* out = in[0] converted to out's dtype, broadcast to out's shape if needed,
 * written row-contiguous (or in place over a donated input). */
int cm_cpu_copy(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
