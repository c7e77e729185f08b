/* CPU kernels for the layout primitives. */
#ifndef CMLX_BACKEND_CPU_LAYOUT_H
#define CMLX_BACKEND_CPU_LAYOUT_H

#include "primitives/primitive.h"

/* out shares in[0]'s buffer with zero strides on broadcast axes. */
int cm_cpu_broadcast(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* out = in[0] converted to out's dtype, broadcast to out's shape if needed,
 * written row-contiguous (or in place over a donated input). */
int cm_cpu_copy(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* out shares in[0]'s data and layout. */
int cm_cpu_identity(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Depends (several outputs): output k shares in[k]'s data and layout. */
int cm_cpu_depends(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
