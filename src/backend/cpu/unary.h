#ifndef CMLX_BACKEND_CPU_UNARY_H
#define CMLX_BACKEND_CPU_UNARY_H

#include "primitives/primitive.h"

int cm_cpu_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
