/* CPU kernel of the Select primitive (where). */
#ifndef CMLX_BACKEND_CPU_TERNARY_H
#define CMLX_BACKEND_CPU_TERNARY_H

#include "primitives/primitive.h"

/* out = in[0] ? in[1] : in[2]; in[0] is bool, in[1] and in[2] have out's
 * dtype, all have out's shape. */
int cm_cpu_select(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
