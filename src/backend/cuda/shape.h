/* The CUDA backend's kernels for the shape primitives that may copy (the
 * pure views are backend/views.h). */
#ifndef CMLX_BACKEND_CUDA_SHAPE_H
#define CMLX_BACKEND_CUDA_SHAPE_H

#include "primitives/primitive.h"

int cm_cuda_reshape(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_as_strided(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_view(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_slice_update(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_pad(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_concatenate(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

#endif
