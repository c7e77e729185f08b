/* Kernel of the Load primitive (primitives/load.h). */
#ifndef CMLX_BACKEND_CPU_LOAD_H
#define CMLX_BACKEND_CPU_LOAD_H

#include "core/array.h"

int cm_cpu_load(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
