#ifndef CMLX_BACKEND_CPU_CREATION_H
#define CMLX_BACKEND_CPU_CREATION_H

#include "primitives/primitive.h"

int cm_cpu_arange(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_linspace(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_eye(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_number_of_elements(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_tri(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
