/* CPU kernels for the shape and view primitives (primitives/shape.h). */
#ifndef CMLX_BACKEND_CPU_SHAPE_H
#define CMLX_BACKEND_CPU_SHAPE_H

#include "primitives/primitive.h"

/* Views: out shares in[0]'s buffer (Reshape copies when it must). */
int cm_cpu_reshape(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_dynamic_slice(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_as_strided(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_view(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Materialising copies. */
int cm_cpu_slice_update(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_dynamic_slice_update(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_pad(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_concatenate(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_window(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
